// Build step: a memory snapshot of the page's Python, taken once its start is done (pytest,
// hypothesis and the kit imported, the tests collected once), so the page restores it instead
// of doing all that on every start. The same Pyodide build runs in Node and in the browser, so
// its memory is the same in both. Taken from the built site, with the site's own files.
//
// usage: node snapshot.mjs SITE_DIR STARTER.py OUT_FILE.gz
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { bootPython } from "../src/boot.js";

const [siteDir, starterPath, out] = process.argv.slice(2);
const site = resolve(siteDir);
const { loadPyodide } = await import(pathToFileURL(join(site, "pyodide/pyodide.mjs")).href);
const pyodide = await bootPython({
  loadPyodide,
  locate: (path) => join(site, path) + (path.endsWith("/") ? "/" : ""),
  fetchBytes: async (path) => new Uint8Array(readFileSync(path)),
  stdout: (text) => console.error(text),
  makeSnapshot: true,
});
// What the page's start does after the imports (collect the tests once), then two runs: the
// starter (every test fails at once) and a function that always answers 0.0 (it passes some
// properties and fails the rest). What a run needs the first time (lazy imports, caches, the
// failure and diagnosis paths) is then in the snapshot too. Neither is a solution, and a run
// leaves nothing that changes a later run's verdicts (hypothesis is derandomized, no database).
pyodide.globals.set("starter", readFileSync(starterPath, "utf8"));
pyodide.runPython(`
import gc, page_session
page_session.warm_up()
always_zero = f"def {page_session.EXERCISE.function}(*args, **kwargs):\\n    return 0.0\\n"
for source in (starter, always_zero):
    page_session.run_tests(source, lambda kind, data: None)
del starter, always_zero, source
# Everything loaded now stays for the page's life: the collector never scans it again.
gc.collect()
gc.freeze()
`);
writeFileSync(out, gzipSync(pyodide.makeMemorySnapshot(), { level: 6 }));
