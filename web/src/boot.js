// Starts Python with the kit inside: shared by the page's worker and the Node runs (tests, bench).
// `locate(path)` gives where a file of the built site is (a URL in the browser, a file path in
// Node), `fetchBytes(path)` reads it, and `progress(step, fraction)` says how far loading has got.
//
// The fast way in is the build's memory snapshot (py/python.snapshot.gz, web/tools/snapshot.mjs):
// Python as it stands after importing pytest, hypothesis and the kit and collecting the tests
// once, so a start skips all of that. The snapshot holds Python's memory, not its files, so the
// same files are written again; if it cannot be used, Python starts the long way.

const HOME = "/home/pyodide";
const KIT = `${HOME}/kit`;
export const SNAPSHOT = "py/python.snapshot.gz";

export async function bootPython({
  loadPyodide,
  locate,
  fetchBytes,
  progress = () => {},
  stdout = () => {},
  snapshot = null, // a promise of the snapshot's bytes (decompressed), or null to start the long way
  makeSnapshot = false, // for web/tools/snapshot.mjs
}) {
  progress("Loading Python", 0.05);
  // Fetch the zips while the interpreter starts.
  const packages = fetchBytes(locate("py/site-packages.zip"));
  const kit = fetchBytes(locate("py/kit.zip"));
  const cache = fetchBytes(locate("py/hypothesis-cache.zip"));
  const table = fetchBytes(locate("py/diagnosis-table.json"));
  const options = {
    indexURL: locate("pyodide/"),
    stdLibURL: locate("py/stdlib.zip"),
    stdout,
    stderr: stdout,
    stdin: () => null,
    env: { HOME, HYPOTHESIS_STORAGE_DIRECTORY: `${HOME}/.hypothesis` },
  };
  const files = async (pyodide) => {
    pyodide.FS.mkdirTree(`${HOME}/lib`);
    pyodide.FS.writeFile(`${HOME}/lib/site-packages.zip`, await packages);
    pyodide.unpackArchive(await kit, "zip", { extractDir: KIT });
    pyodide.FS.writeFile(`${KIT}/diagnosis-table.json`, await table);
    pyodide.unpackArchive(await cache, "zip", { extractDir: `${HOME}/.hypothesis` });
  };
  const restored = snapshot && (await fromSnapshot(loadPyodide, options, snapshot, files));
  if (restored) {
    restored.timings.snapshot = true;
    return restored;
  }
  const pyodide = await loadPyodide({ ...options, _makeSnapshot: makeSnapshot });
  const timings = { pyodide: performance.now() };
  progress("Loading pytest and hypothesis", 0.6);
  await files(pyodide);
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

/** Python restored from the snapshot, or null (and a note on the console) if that fails. */
async function fromSnapshot(loadPyodide, options, snapshot, files) {
  try {
    const marks = {};
    const bytes = await snapshot;
    marks.snapshotBytes = performance.now();
    const create = (await import(`${options.indexURL}pyodide.asm.mjs`)).default;
    const pyodide = await loadPyodide({
      ...options,
      _loadSnapshot: bytes,
      // This build of Pyodide makes its memory inside the module and ignores INITIAL_MEMORY:
      // grow it to the snapshot's size before Pyodide copies the snapshot in.
      createPyodideModule: async (settings) => {
        marks.createModule = performance.now();
        const module = await create(settings);
        marks.moduleMade = performance.now();
        module.growMemory(bytes.length);
        return module;
      },
    });
    const timings = { ...marks, pyodide: performance.now() };
    await files(pyodide);
    // The working directory lives with the files, outside Python's memory.
    pyodide.runPython(`import os; os.chdir("${KIT}")`);
    timings.files = timings.imports = timings.session = performance.now();
    pyodide.timings = timings;
    return pyodide;
  } catch (error) {
    console.warn(`Python's snapshot could not be used, so Python starts the long way: ${error}`);
    return null;
  }
}

/** The bytes of a gzip file, decompressed as they arrive. */
export async function gunzipped(response) {
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const stream = response.body.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
