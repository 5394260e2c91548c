// The page's Python, in a module worker so the page never freezes. A small message protocol:
//   page -> worker: {type: "init", shared}, {type: "run", id, code},
//                   {type: "try", id, code, args, kwargs}
//   worker -> page: {type: "progress", step, fraction}, {type: "ready", seconds},
//                   {type: "warmed", at}, {type: "failed", message}, {type: "event", id, kind, data},
//                   {type: "done", id, result}, {type: "error", id, message}
// `shared` (a SharedArrayBuffer, on a cross-origin isolated page) holds the interrupt byte at
// 0, which Pyodide reads between bytecodes, at 4 why the page wants the run to end now, and at 5
// whether the page has sent a call (which ends the warm-up run).
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { SNAPSHOT, bootPython, gunzipped } from "./boot.js";

const HALT_REASONS = { 1: "you pressed Stop", 2: "the whole run used up its time budget" };
const started = performance.now();
let session = null;
let halt = null;
let waiting = null; // set by the page when it sends a call: ends the warm-up run
// Python starts at once; the page sends its shared memory whenever it is ready to.
const booting = boot();
self.addEventListener("message", (event) => {
  if (event.data.type !== "init" || !event.data.shared) return;
  halt = new Uint8Array(event.data.shared, 4, 1);
  waiting = new Uint8Array(event.data.shared, 5, 1);
  const interrupt = new Uint8Array(event.data.shared, 0, 1);
  booting.then((pyodide) => pyodide && pyodide.setInterruptBuffer(interrupt));
});
const halted = () => (halt && halt[0] ? HALT_REASONS[halt[0]] || "stopped" : "");

async function boot() {
  try {
    const base = new URL("./", import.meta.url);
    const pyodide = await bootPython({
      snapshot: fetch(new URL(SNAPSHOT, base)).then(gunzipped),
      loadPyodide,
      locate: (path) => new URL(path, base).href,
      fetchBytes: async (url) => {
        const response = await fetch(url);
        if (!response.ok) throw new Error(`could not load ${url}: HTTP ${response.status}`);
        return new Uint8Array(await response.arrayBuffer());
      },
      progress: (step, fraction) => postMessage({ type: "progress", step, fraction }),
    });
    session = pyodide.pyimport("page_session");
    // Absolute times, so the page can measure them from its own navigation.
    const timings = Object.fromEntries(
      Object.entries({ ...pyodide.timings, workerStart: started })
        .filter(([, v]) => typeof v === "number")
        .map(([k, v]) => [k, performance.timeOrigin + v]),
    );
    timings.snapshot = Boolean(pyodide.timings.snapshot);
    postMessage({ type: "ready", seconds: (performance.now() - started) / 1000, timings });
    // Runs before any message the page sends now, so a run clicked at once waits for it.
    if (!pyodide.timings.snapshot) session.warm_up();
    // Restored from the snapshot, the tests are collected already, but this browser has compiled
    // little of Python yet: a run nobody sees does that, and ends at once when the page asks for
    // anything (that needs the shared memory, so without it there is no such run).
    else if (waiting) session.warm_up_run(() => (waiting[0] ? "the page asked for a run" : ""));
    postMessage({ type: "warmed", at: performance.timeOrigin + performance.now() });
    return pyodide;
  } catch (error) {
    postMessage({ type: "failed", message: String(error && error.message ? error.message : error) });
  }
}

self.addEventListener("message", async (event) => {
  const message = event.data;
  if (message.type === "init") return;
  await booting;
  if (!session) return;
  try {
    let result;
    if (message.type === "run") {
      const post = (kind, data) => postMessage({ type: "event", id: message.id, kind, data: JSON.parse(data) });
      result = JSON.parse(session.run_tests(message.code, post, halted));
    } else if (message.type === "try") {
      result = JSON.parse(session.try_it(message.code, JSON.stringify(message.args), JSON.stringify(message.kwargs)));
    } else {
      throw new Error(`unknown message ${message.type}`);
    }
    postMessage({ type: "done", id: message.id, result });
  } catch (error) {
    // Python itself failed (out of memory inside pytest, a fatal error): the page restarts it.
    postMessage({ type: "error", id: message.id, message: String(error && error.message ? error.message : error) });
  }
});
