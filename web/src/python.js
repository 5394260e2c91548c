// The page's side of the worker: starts it, times each test, interrupts or restarts it.

const GRACE_MS = 1500; // after an interrupt, how long before the worker is restarted
const LATER_TIMEOUT_MS = 1000; // after one timeout in a run, later tests get this long

export class PythonWorker {
  constructor({ testTimeout, tiers, onProgress = () => {}, onState = () => {} }) {
    this.limitMs = testTimeout * 1000;
    this.tiers = tiers;
    this.onProgress = onProgress;
    this.onState = onState;
    this.nextId = 1;
    this.restarts = 0;
    this.start();
  }

  start() {
    // An interrupt needs memory shared with the worker, which needs a cross-origin isolated
    // page (COOP/COEP headers). Without it, a timeout restarts the worker instead.
    this.interrupt = self.crossOriginIsolated ? new Uint8Array(new SharedArrayBuffer(1)) : null;
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
    this.worker.postMessage({ type: "init", interruptBuffer: this.interrupt });
    if (early) for (const message of early.messages) this.handle(message);
  }

  fail(message) {
    this.readyReject(new Error(message));
    this.onState({ state: "failed", message });
    for (const call of this.pending.values()) call.reject(new Error(message));
    this.pending.clear();
  }

  handle(message) {
    if (message.type === "progress") this.onProgress(message.step, message.fraction);
    else if (message.type === "ready") {
      this.timings = Object.fromEntries(
        Object.entries(message.timings || {}).map(([k, v]) => [k, (v - performance.timeOrigin) / 1000]),
      );
      this.readyResolve(message.seconds);
      this.onState({ state: "ready", seconds: message.seconds, interruptible: Boolean(this.interrupt) });
    } else if (message.type === "failed") this.fail(`Python could not start: ${message.message}`);
    else {
      const call = this.pending.get(message.id);
      if (!call) return;
      if (message.type === "event") call.onEvent(message.kind, message.data);
      else {
        this.pending.delete(message.id);
        if (message.type === "done") call.resolve(message.result);
        else call.reject(new Error(message.message));
      }
    }
  }

  call(message, onEvent = () => {}) {
    const id = this.nextId++;
    if (this.interrupt) this.interrupt[0] = 0;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent });
      this.worker.postMessage({ ...message, id });
    });
  }

  /** Interrupt, then if that does not land, restart: resolves with what `restarted()` returns. */
  watchdog(restarted) {
    let timer = null;
    let timeouts = 0;
    let reject = null;
    const killed = new Promise((_, r) => (reject = r));
    const clear = () => clearTimeout(timer);
    const kill = () => {
      this.worker.terminate();
      this.restarts += 1;
      reject(restarted()); // first, so the run settles with its report rather than an error
      for (const call of this.pending.values()) call.reject(new Error("Python was restarted"));
      this.pending.clear();
      this.onState({ state: "restarting" });
      this.start();
    };
    const fire = () => {
      timeouts += 1;
      if (!this.interrupt) return kill();
      this.interrupt[0] = 2; // SIGINT: Python raises KeyboardInterrupt at its next bytecode
      timer = setTimeout(kill, GRACE_MS);
    };
    return {
      arm: () => {
        clear();
        timer = setTimeout(fire, timeouts ? Math.min(LATER_TIMEOUT_MS, this.limitMs) : this.limitMs);
      },
      clear,
      killed,
    };
  }

  /** One call at a time: a call's timer must not run while it waits behind another. */
  serialized(task) {
    const result = (this.queue || Promise.resolve()).then(task, task);
    this.queue = result.catch(() => {});
    return result;
  }

  runTests(code, onEvent = () => {}) {
    return this.serialized(() => this.runTestsNow(code, onEvent));
  }

  tryIt(code, reference, candidate, params) {
    return this.serialized(() => this.tryItNow(code, reference, candidate, params));
  }

  async runTestsNow(code, onEvent) {
    await this.ready;
    const collected = [];
    const finished = new Map();
    let current = null;
    let diagnosing = false;
    const started = performance.now();
    const dog = this.watchdog(() => this.restartedReport(collected, finished, current, started, diagnosing));
    const events = (kind, data) => {
      if (kind === "collected") collected.push(...data);
      else if (kind === "start") {
        current = data;
        dog.arm();
      } else if (kind === "finish") {
        finished.set(data.name, data);
        dog.clear();
      } else if (kind === "diagnosing") {
        diagnosing = true;
        dog.arm(); // the probes of a failing run, under the same limit
      } else if (kind === "probed") {
        dog.clear();
      }
      onEvent(kind, data);
    };
    dog.arm(); // also covers collection, in case the worker hangs before the first test
    try {
      return await Promise.race([this.call({ type: "run", code }, events), dog.killed]);
    } catch (error) {
      if (error && error.restarted) return error.report;
      throw error;
    } finally {
      dog.clear();
    }
  }

  restartedReport(collected, finished, current, started, diagnosing = false) {
    const limit = this.limitMs / 1000;
    const tests = collected.map((test) => {
      const max = this.tiers[test.tier] ? this.tiers[test.tier].points : 0;
      const done = finished.get(test.name);
      if (done) return done;
      const timedOut = current && current.name === test.name;
      return {
        name: test.name,
        tier: test.tier,
        status: timedOut ? "timeout" : "not_run",
        message: timedOut
          ? `ran past the time limit of ${limit} s and could not be interrupted (a loop inside a built-in function?), so Python was restarted`
          : "not run: Python was restarted after a timeout",
        output: "",
        score: 0,
        max_score: max,
      };
    });
    const report = {
      submission: "submission.py",
      status: "graded",
      message: diagnosing
        ? "Python was restarted after the diagnosis's calls ran past the time limit"
        : "Python was restarted after a test ran past the time limit",
      tests,
      duration: (performance.now() - started) / 1000,
      score: tests.reduce((sum, t) => sum + t.score, 0),
      max_score: tests.reduce((sum, t) => sum + t.max_score, 0),
      passed: tests.filter((t) => t.status === "pass").length,
      diagnosis: null,
    };
    return { restarted: true, report };
  }

  async tryItNow(code, reference, candidate, params) {
    await this.ready;
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
      return await Promise.race([this.call({ type: "try", code, reference, candidate, params }), dog.killed]);
    } catch (error) {
      if (error && error.restarted) return error.report;
      throw error;
    } finally {
      dog.clear();
    }
  }
}
