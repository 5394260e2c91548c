// Exploratory (not committed): a run's phases under Node, with variants set in Python.
import { existsSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { SNAPSHOT, bootPython } from "../src/boot.js";
const [siteDir, file, rounds] = process.argv.slice(2);
const site = resolve(siteDir);
const { loadPyodide } = await import(pathToFileURL(join(site, "pyodide/pyodide.mjs")).href);
const pyodide = await bootPython({
  loadPyodide,
  locate: (path) => join(site, path) + (path.endsWith("/") ? "/" : ""),
  fetchBytes: async (path) => new Uint8Array(readFileSync(path)),
  snapshot: Promise.resolve(new Uint8Array(gunzipSync(readFileSync(join(site, SNAPSHOT))))),
});
const session = pyodide.pyimport("page_session");
const code = readFileSync(file, "utf8");
const variants = {
  plain: "import os, gc; os.environ.pop('PYTEST_ADDOPTS', None); gc.enable()",
  noplugins: "import os, gc; gc.enable(); os.environ['PYTEST_ADDOPTS'] = '-p no:doctest -p no:junitxml -p no:pastebin -p no:legacypath -p no:faulthandler -p no:stepwise -p no:python_path -p no:setuponly -p no:setupplan -p no:debugging'",
  nogc: "import os, gc; os.environ.pop('PYTEST_ADDOPTS', None); gc.disable()",
};
const all = {};
for (let i = 0; i < Number(rounds || 5); i++) {
  for (const [name, setup] of Object.entries(variants)) {
    pyodide.runPython(setup);
    let phases = null;
    const t = performance.now();
    const report = JSON.parse(session.run_tests(code, (kind, data) => { if (kind === "phases") phases = JSON.parse(data); }));
    const total = (performance.now() - t) / 1000;
    if (i === 0) continue; // the first round warms
    (all[name] ||= []).push({ total, ...phases, passed: report.passed });
  }
}
pyodide.runPython("import gc; gc.enable()");
const med = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, runs] of Object.entries(all)) {
  const keys = Object.keys(runs[0]);
  console.log(name, Object.fromEntries(keys.map((k) => [k, Number(med(runs.map((r) => r[k])).toFixed(3))])));
}
