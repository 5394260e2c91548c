// The page's Python, in a module worker so the page never freezes. A small message protocol:
//   page -> worker: {type: "init", shared}, {type: "run", id, code},
//                   {type: "try", id, code, args, kwargs}
//   worker -> page: {type: "progress", step, fraction}, {type: "ready", seconds},
//                   {type: "warming", at}, {type: "warmed", at, unwound}, {type: "failed", message}, {type: "event", id, kind, data},
//                   {type: "done", id, result, times}, {type: "error", id, message}
// `times` are when the worker got the call, began it (after the warm-up) and ended it.
// `shared` (a SharedArrayBuffer, on a cross-origin isolated page) holds the interrupt byte at
// 0, which Pyodide reads between bytecodes, at 4 why the page wants the run to end now, and at 5
// whether the page has sent a call while the warm-up ran.
//
// The warm-up: restored from the snapshot, Python runs the tests once, unseen, right after
// "ready", so the first real run finds the WebAssembly behind them compiled. A call never overlaps
// it: the page sets the byte at 5 when it sends one, the warm-up ends at its next test or its next
// call into the function it tests (never by an interrupt, which could land anywhere in pytest and
// leave it half torn down), and the worker starts the call once it has unwound (about 0.05 s),
// saying so ("begun") for the page's timers. Only the worker clears the interrupt byte, just before each call.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { SNAPSHOT, bootPython, gunzipped } from "./boot.js";

const HALT_REASONS = { 1: "you pressed Stop", 2: "the whole run used up its time budget" };
const started = performance.now();
let session = null;
let halt = null;
let interrupt = null;
let waiting = null;
let slowWarmUp = 0; // tests only: seconds the warm-up works first without looking at the page
// The warm-up is work nobody asked for, so it waits this long after "ready" first: a run clicked
// at once goes first (cold) instead of waiting behind pytest's start and collection inside the
// warm-up, which cannot give way (0.4-0.8 s). A call ends the wait at once (`goFirst`).
const WARM_UP_AFTER_MS = 500;
let goFirst = () => {};
let initialized = null;
const init = new Promise((resolve) => (initialized = resolve));
// Python starts at once; the page sends its shared memory whenever it is ready to.
const booting = boot();
const warming = booting.then(warmUp);
self.addEventListener("message", (event) => {
  if (event.data.type !== "init") return;
  if (event.data.shared) {
    halt = new Uint8Array(event.data.shared, 4, 1);
    interrupt = new Uint8Array(event.data.shared, 0, 1);
    waiting = new Uint8Array(event.data.shared, 5, 1);
  }
  slowWarmUp = Number(event.data.slowWarmUp) || 0;
  initialized();
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
    return pyodide;
  } catch (error) {
    postMessage({ type: "failed", message: String(error && error.message ? error.message : error) });
  }
}

/** Whether the page sends a call within `ms` (or has sent one already): the call then ends the wait. */
function calledWithin(ms) {
  if (waiting && waiting[0]) return Promise.resolve(true);
  return new Promise((resolve) => {
    goFirst = () => resolve(true);
    setTimeout(() => resolve(false), ms);
  }).finally(() => (goFirst = () => {}));
}

/**
 * The run nobody sees (see the top): it ends at its next call once the page asks for anything.
 * `unwound` (for the page's timings): how long it took to give way once asked.
 */
async function warmUp(pyodide) {
  if (!pyodide) return;
  let unwound = 0;
  await init;
  try {
    // Started the long way, the tests are collected once (short); restored, they are run once.
    // Without the shared memory there is no warm-up run: nothing could end it early.
    if (!pyodide.timings.snapshot) session.warm_up();
    else if (waiting && !(await calledWithin(WARM_UP_AFTER_MS))) {
      postMessage({ type: "warming", at: performance.timeOrigin + performance.now() });
      unwound = session.warm_up_run(() => (waiting[0] ? "the page asked for a run" : ""), slowWarmUp);
    }
  } catch (error) {
    console.warn(`the warm-up run failed, which only makes the first run slower: ${error}`);
  }
  if (interrupt) pyodide.setInterruptBuffer(interrupt);
  postMessage({ type: "warmed", at: performance.timeOrigin + performance.now(), unwound });
}

self.addEventListener("message", async (event) => {
  const message = event.data;
  if (message.type === "init") return;
  const now = () => performance.timeOrigin + performance.now(); // absolute, so the page can compare
  const received = now();
  goFirst();
  await warming;
  if (!session) return;
  // An interrupt meant for an earlier call (a timeout or Stop as it ended) must not reach this one:
  // cleared here, and raised now if CPython had already taken it in.
  if (interrupt) interrupt[0] = 0;
  try {
    session.settle();
  } catch {
    // the stale interrupt, raised and dropped
  }
  const begun = now();
  if (message.type === "run") postMessage({ type: "event", id: message.id, kind: "begun", data: {} });
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
    postMessage({ type: "done", id: message.id, result, times: { received, begun, ended: now() } });
  } catch (error) {
    // Python itself failed (out of memory inside pytest, a fatal error): the page restarts it.
    postMessage({ type: "error", id: message.id, message: String(error && error.message ? error.message : error) });
  }
});
