// The page's side of the worker: starts it, times each test and the whole run, stops,
// interrupts or restarts it.

const GRACE_MS = 2500; // after a test's timeout interrupt, how long before the worker is restarted
// Once Python says the interrupt has landed ("interrupted"), it is alive and unwinding: it gets this
// long to finish the test before the worker is restarted (a busy machine can stall it for seconds).
const WIND_DOWN_MS = 10_000;
const RESENDS = 2; // an interrupt Python read without its handler running is sent again, this often
const STOP_GRACE_MS = 500; // after Stop (or the run's budget), how long Python gets to wind down
const LATER_TIMEOUT_MS = 1000; // after one timeout in a run, later tests get this long
const HALT_STOP = 1;
const HALT_BUDGET = 2;

export const outOfMemory = (functionName) =>
  `${functionName} ran out of memory (MemoryError): it keeps more and more data. ` +
  "Python was restarted; look for a list that grows in a loop that never ends.";

export class PythonWorker {
  constructor({ functionName, testTimeout, runBudget, onProgress = () => {}, onState = () => {} }) {
    this.outOfMemory = outOfMemory(functionName);
    this.limitMs = testTimeout * 1000;
    this.budgetMs = runBudget * 1000;
    this.onProgress = onProgress;
    this.onState = onState;
    this.nextId = 1;
    this.restarts = 0;
    this.state = "loading";
    this.idle = Promise.resolve(); // settles once the worker has finished a run that was stopped
    this.halt = null; // ends the current run early: set while a run is going on
    this.start();
  }

  setState(state, details = {}) {
    this.state = state;
    this.onState({ state, ...details });
  }

  start() {
    // An interrupt needs memory shared with the worker, which needs a cross-origin isolated
    // page (COOP/COEP headers). Without it, a timeout or Stop restarts the worker instead.
    const shared = self.crossOriginIsolated ? new SharedArrayBuffer(8) : null;
    this.interrupt = shared ? new Uint8Array(shared, 0, 1) : null;
    this.haltFlag = shared ? new Uint8Array(shared, 4, 1) : null;
    this.waiting = shared ? new Uint8Array(shared, 5, 1) : null;
    this.pending = new Map();
    const early = self.kitEarlyWorker;
    self.kitEarlyWorker = null;
    this.worker = early ? early.worker : new Worker("worker.js", { type: "module" });
    this.ready = new Promise((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    this.ready.catch(() => {});
    this.worker.onmessage = (event) => this.handle(event.data);
    this.worker.onerror = (event) => {
      event.preventDefault();
      this.fail(`the Python worker could not start: ${event.message || "unknown error"}`);
    };
    this.worker.postMessage({ type: "init", shared, slowWarmUp: self.kitSlowWarmUp || 0 });
    if (early) for (const message of early.messages) this.handle(message);
  }

  /** Ends the worker, whatever it is doing, and starts a fresh Python. */
  restart() {
    this.worker.terminate();
    this.restarts += 1;
    for (const call of this.pending.values()) call.reject(new Error("Python was restarted"));
    this.pending.clear();
    this.setState("restarting");
    this.start();
  }

  fail(message) {
    this.readyReject(new Error(message));
    this.setState("failed", { message });
    for (const call of this.pending.values()) call.reject(new Error(message));
    this.pending.clear();
  }

  handle(message) {
    if (message.type === "progress") this.onProgress(message.step, message.fraction);
    else if (message.type === "ready") {
      this.timings = Object.fromEntries(
        Object.entries(message.timings || {}).map(([k, v]) => [k, typeof v === "number" ? (v - performance.timeOrigin) / 1000 : v]),
      );
      this.readyResolve(message.seconds);
      if (this.state !== "busy") this.setState("ready", { seconds: message.seconds, interruptible: Boolean(this.interrupt) });
    } else if (message.type === "warming") {
      this.timings = { ...this.timings, warming: (message.at - performance.timeOrigin) / 1000 };
    } else if (message.type === "warmed") {
      this.timings = { ...this.timings, warm: (message.at - performance.timeOrigin) / 1000, warmUnwound: message.unwound };
    } else if (message.type === "failed") this.fail(`Python could not start: ${message.message}`);
    else {
      const call = this.pending.get(message.id);
      if (!call) return;
      if (message.type === "event") call.onEvent(message.kind, message.data);
      else {
        this.pending.delete(message.id);
        if (message.type === "done") {
          this.lastCall = { ...message.times, sent: call.sent, done: performance.timeOrigin + performance.now() };
          call.resolve(message.result);
        }
        else call.reject(Object.assign(new Error(message.message), { python: true }));
      }
    }
  }

  call(message, onEvent = () => {}) {
    const id = this.nextId++;
    if (this.haltFlag) this.haltFlag[0] = 0;
    // The worker's warm-up run, if still going, ends at its next call. The worker, not the page,
    // clears the interrupt byte, just before it starts this call.
    if (this.waiting) this.waiting[0] = 1;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent, sent: performance.timeOrigin + performance.now() });
      this.worker.postMessage({ ...message, id });
    });
  }

  /** Interrupt, then if that does not land, restart: resolves with what `restarted()` returns. */
  watchdog(restarted) {
    let timer = null;
    let timeouts = 0;
    let reject = null;
    let interrupt = ""; // "sent": the restart is pending; "landed": Python said the interrupt landed
    let resent = 0; // how often this interrupt was sent again
    const killed = new Promise((_, r) => (reject = r));
    const clear = () => {
      clearTimeout(timer);
      interrupt = "";
    };
    const kill = () => {
      const byte = this.interrupt ? this.interrupt[0] : null;
      if (byte === 0 && interrupt === "sent" && resent < RESENDS) {
        // Python read the interrupt yet never said it landed: seen, rarely, on a loaded machine.
        // A loop in C code never reads it (the byte stays 2); this Python may be fine: send it again.
        resent += 1;
        this.interrupt[0] = 2;
        timer = setTimeout(kill, GRACE_MS);
        return;
      }
      // Why the last watchdog restart happened, for the tests: an interrupt byte still 2 was never
      // read by Python (a loop in C code); 0 without `landed` was read, yet no handler ran.
      this.lastRestart = { byte, landed: interrupt === "landed", resent };
      reject(restarted()); // first, so the run settles with its report rather than an error
      this.restart();
    };
    const fire = () => {
      timeouts += 1;
      if (!this.interrupt) return kill();
      this.interrupt[0] = 2; // SIGINT: Python raises KeyboardInterrupt at its next bytecode
      interrupt = "sent";
      resent = 0;
      timer = setTimeout(kill, GRACE_MS);
    };
    return {
      arm: () => {
        clear();
        timer = setTimeout(fire, timeouts ? Math.min(LATER_TIMEOUT_MS, this.limitMs) : this.limitMs);
      },
      clear,
      /** Python says the interrupt landed: the restart waits for its unwinding, up to WIND_DOWN_MS. */
      landed: () => {
        if (!interrupt) return;
        interrupt = "landed";
        clearTimeout(timer);
        timer = setTimeout(kill, WIND_DOWN_MS);
      },
      killed,
    };
  }

  /** One call at a time: a call's timer must not run while it waits behind another. */
  serialized(task) {
    const result = (this.queue || Promise.resolve()).then(() => this.idle).then(task, task);
    this.queue = result.catch(() => {});
    return result;
  }

  runTests(code, onEvent = () => {}) {
    return this.serialized(() => this.runTestsNow(code, onEvent));
  }

  tryIt(code, args, kwargs) {
    return this.serialized(() => this.tryItNow(code, args, kwargs));
  }

  /** Stop the current run at once: true if there was one. */
  stop() {
    if (!this.halt) return false;
    this.halt(HALT_STOP, "you pressed Stop");
    return true;
  }

  async runTestsNow(code, onEvent) {
    await this.ready;
    this.setState("busy");
    const collected = [];
    const finished = new Map();
    let current = null;
    let diagnosing = false;
    const started = performance.now();
    const partial = (why, currentStatus, currentMessage) =>
      this.partialReport({ collected, finished, current, started, why, currentStatus, currentMessage });
    const dog = this.watchdog(() => {
      const limit = this.limitMs / 1000;
      const why = diagnosing
        ? "Python was restarted after the diagnosis's calls ran past the time limit"
        : "Python was restarted after a test ran past the time limit";
      const message = `ran past the time limit of ${limit} s and could not be interrupted (a loop inside a built-in function?), so Python was restarted`;
      return { restarted: true, report: partial(why, "timeout", message) };
    });
    const events = (kind, data) => {
      if (kind === "collected") collected.push(...data);
      else if (kind === "start") {
        current = data;
        dog.arm();
      } else if (kind === "finish") {
        finished.set(data.name, data);
        current = null;
        dog.clear();
      } else if (kind === "diagnosing") {
        diagnosing = true;
        dog.arm(); // the probes of a failing run, under the same limit
      } else if (kind === "probed") {
        dog.clear();
      } else if (kind === "phases") {
        phases = data;
        return;
      } else if (kind === "interrupted") {
        dog.landed();
        return;
      } else if (kind === "begun") {
        if (!budget) startBudget();
        return;
      }
      if (!ended) onEvent(kind, data); // after Stop, the page shows the stopped report, not what Python still sends
    };
    let ended = false;
    let phases = null;
    let budget = null;
    this.lastCall = null;
    const call = this.call({ type: "run", code }, events);
    call.catch(() => {});
    let endEarly = null;
    const early = new Promise((resolve) => (endEarly = resolve));
    this.halt = (flag, reason) => {
      this.halt = null;
      ended = true;
      dog.clear();
      endEarly(partial(`The run ended early: ${reason}.`, "not_run", `not run: ${reason}`));
      if (!this.interrupt) {
        this.restart();
        return;
      }
      this.haltFlag[0] = flag;
      this.interrupt[0] = 2;
      // Python gets a moment to wind down; a loop in C code that ignores the interrupt is ended.
      this.setState("stopping");
      this.idle = new Promise((resolve) => {
        const timer = setTimeout(() => {
          this.restart();
          resolve();
        }, STOP_GRACE_MS);
        call.then(
          () => {
            clearTimeout(timer);
            this.setState("ready", { seconds: 0, interruptible: true });
            resolve();
          },
          () => {
            clearTimeout(timer);
            resolve();
          },
        );
      });
    };
    // The budget starts when the worker begins the run ("begun"), not while the run waits for the
    // warm-up to unwind; collection is the kit's own code, under the budget; each test's own limit
    // starts with the test.
    const startBudget = () => {
      budget = setTimeout(
        () => this.halt && this.halt(HALT_BUDGET, `the whole run used up its budget of ${this.budgetMs / 1000} s`),
        this.budgetMs,
      );
    };
    try {
      const result = await Promise.race([call, dog.killed, early]);
      this.lastRun = this.runTimings(phases);
      if (result && result.restart) {
        // Out of memory: this Python may be broken inside, so the next run gets a fresh one.
        this.restart();
        delete result.restart;
      }
      return result;
    } catch (error) {
      if (error && error.restarted) return error.report;
      if (error && error.python) {
        // Python itself broke during the run (e.g. out of memory inside pytest): start afresh.
        this.restart();
        const memory = /memory/i.test(error.message);
        const why = memory ? this.outOfMemory : `Python failed during the run (${error.message}) and was restarted.`;
        return { ...partial(why, "error", why), status: "error", advice: [why] };
      }
      throw error;
    } finally {
      this.halt = null;
      clearTimeout(budget);
      dog.clear();
      if (this.state === "busy") this.setState("ready", { seconds: 0, interruptible: Boolean(this.interrupt) });
    }
  }

  /** Seconds each part of the last run took: the round trip to the worker and Python's phases. */
  runTimings(phases) {
    const t = this.lastCall;
    if (!t) return null;
    const python = (t.ended - t.begun) / 1000;
    const inside = phases ? Object.values(phases).reduce((a, b) => a + b, 0) : python;
    return {
      begunAt: (t.begun - performance.timeOrigin) / 1000, // from the navigation, as timings() are
      waited: (t.begun - t.sent) / 1000, // the message's way in, and a warm-up still unwinding
      python,
      ...(phases || {}),
      bridge: python - inside, // the worker's calls into Python and JSON.parse of the report
      back: (t.done - t.ended) / 1000, // the report's way back to the page
    };
  }

  /** A report of a run that ended before Python could send its own. */
  partialReport({ collected, finished, current, started, why, currentStatus, currentMessage }) {
    // `collected` is the report's template from Python (name, tier, max_score of every test).
    const tests = collected.map((test) => {
      const done = finished.get(test.name);
      if (done) return done;
      const isCurrent = current && current.name === test.name;
      return {
        ...test,
        status: isCurrent ? currentStatus : "not_run",
        message: isCurrent ? currentMessage : currentStatus === "not_run" ? currentMessage : `not run: ${why}`,
        output: "",
        score: 0,
      };
    });
    return {
      submission: "submission.py",
      status: "graded",
      message: why,
      tests,
      duration: (performance.now() - started) / 1000,
      score: tests.reduce((sum, t) => sum + t.score, 0),
      max_score: tests.reduce((sum, t) => sum + t.max_score, 0),
      passed: tests.filter((t) => t.status === "pass").length,
      diagnosis: null,
      advice: [],
    };
  }

  async tryItNow(code, args, kwargs) {
    await this.ready;
    this.setState("busy");
    const dog = this.watchdog(() => ({
      restarted: true,
      report: {
        status: "timeout",
        message: `ran past the time limit of ${this.limitMs / 1000} s and could not be interrupted, so Python was restarted`,
        output: "",
      },
    }));
    dog.arm();
    try {
      return await Promise.race([this.call({ type: "try", code, args, kwargs }), dog.killed]);
    } catch (error) {
      if (error && error.restarted) return error.report;
      if (error && error.python) {
        this.restart();
        const memory = /memory/i.test(error.message);
        return { status: "error", message: memory ? this.outOfMemory : `Python failed (${error.message}) and was restarted.`, output: "" };
      }
      throw error;
    } finally {
      dog.clear();
      if (this.state === "busy") this.setState("ready", { seconds: 0, interruptible: Boolean(this.interrupt) });
    }
  }
}
