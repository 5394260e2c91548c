// Starts Python with the kit inside: shared by the page's worker and the Node runs (tests, bench).
// `locate(path)` gives where a file of the built site is (a URL in the browser, a file path in
// Node), `fetchBytes(path)` reads it, and `progress(step, fraction)` says how far loading has got.

const HOME = "/home/pyodide";
const KIT = `${HOME}/kit`;

export async function bootPython({ loadPyodide, locate, fetchBytes, progress = () => {}, stdout = () => {} }) {
  progress("Loading Python", 0.05);
  // Fetch the zips while the interpreter starts.
  const packages = fetchBytes(locate("py/site-packages.zip"));
  const kit = fetchBytes(locate("py/kit.zip"));
  const cache = fetchBytes(locate("py/hypothesis-cache.zip"));
  const table = fetchBytes(locate("py/diagnosis-table.json"));
  const pyodide = await loadPyodide({
    indexURL: locate("pyodide/"),
    stdLibURL: locate("py/stdlib.zip"),
    stdout,
    stderr: stdout,
    stdin: () => null,
    env: { HOME, HYPOTHESIS_STORAGE_DIRECTORY: `${HOME}/.hypothesis` },
  });
  const timings = { pyodide: performance.now() };
  progress("Loading pytest and hypothesis", 0.6);
  pyodide.FS.mkdirTree(`${HOME}/lib`);
  pyodide.FS.writeFile(`${HOME}/lib/site-packages.zip`, await packages);
  pyodide.unpackArchive(await kit, "zip", { extractDir: KIT });
  pyodide.FS.writeFile(`${KIT}/diagnosis-table.json`, await table);
  pyodide.unpackArchive(await cache, "zip", { extractDir: `${HOME}/.hypothesis` });
  pyodide.runPython(`
import os, sys
sys.path[:0] = ["${KIT}", "${HOME}/lib/site-packages.zip"]
os.chdir("${KIT}")
`);
  timings.files = performance.now();
  pyodide.runPython("import pytest, hypothesis");
  timings.imports = performance.now();
  progress("Loading the tests", 0.85);
  pyodide.runPython("import page_session");
  timings.session = performance.now();
  pyodide.timings = timings;
  return pyodide;
}
