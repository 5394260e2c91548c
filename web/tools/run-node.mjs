// Runs the page's Python side under Node, from a built site: the same Pyodide, wheels, kit and
// page_session the browser uses. For the parity test and the benchmark.
//
// usage: node run-node.mjs SITE_DIR FILE.py...   prints one JSON line per file:
//        {"file", "report", "seconds"}, after a line {"boot_seconds", "snapshot"}
import { existsSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { SNAPSHOT, bootPython } from "../src/boot.js";

const [siteDir, ...files] = process.argv.slice(2);
const site = resolve(siteDir);
const { loadPyodide } = await import(pathToFileURL(join(site, "pyodide/pyodide.mjs")).href);

const started = performance.now();
const pyodide = await bootPython({
  loadPyodide,
  locate: (path) => join(site, path) + (path.endsWith("/") ? "/" : ""),
  fetchBytes: async (path) => new Uint8Array(readFileSync(path)),
  stdout: () => {},
  // As the page starts: from the build's snapshot of Python.
  snapshot: existsSync(join(site, SNAPSHOT)) ? Promise.resolve(new Uint8Array(gunzipSync(readFileSync(join(site, SNAPSHOT))))) : null,
});
console.log(JSON.stringify({ boot_seconds: (performance.now() - started) / 1000, snapshot: Boolean(pyodide.timings.snapshot) }));

const session = pyodide.pyimport("page_session");
if (pyodide.timings.snapshot) session.warm_up_run(); // as the page's worker does once ready
const runTests = session.run_tests;
for (const file of files) {
  const t = performance.now();
  const report = JSON.parse(runTests(readFileSync(file, "utf8"), () => {}));
  console.log(JSON.stringify({ file, report, seconds: (performance.now() - t) / 1000 }));
}
