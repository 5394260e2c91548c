// The student's page: statement (prerendered), editor, test results and the "Try it" panel.
// window.kit is the API for automation: setCode, getCode, runTests, tryIt and ready.
import { PythonWorker } from "./python.js";
import { createEditor } from "./editor.js";
import { escapeHtml, jumpToLines, linkLines, pyFloat, renderDiagnosis, renderReport, renderRunning } from "./results.js";
import { mountTryIt } from "exercise-widget"; // the build points it at the exercise's widget

const data = JSON.parse(document.getElementById("page-data").textContent);
const $ = (id) => document.getElementById(id);
const DRAFT_KEY = `meteor-kit:${data.id}:draft`;

// ---- status and loading ---------------------------------------------------------------
const status = document.querySelector("[data-testid=status]");
function setStatus(state, text, fraction) {
  status.dataset.state = state;
  $("status-text").textContent = text;
  const bar = $("load-progress");
  bar.hidden = fraction === undefined;
  if (fraction !== undefined) bar.value = fraction;
}

function showFatal(message) {
  setStatus("failed", message);
  $("summary").textContent = `Python could not start, so the tests cannot run: ${message}. Reload the page to try again.`;
  $("summary").dataset.state = "error";
}

// Whatever goes wrong, say it on the page rather than leave it blank or silent.
function showError(message) {
  $("summary").dataset.state = "error";
  $("summary").textContent = `Something went wrong on this page: ${message}`;
}
window.addEventListener("error", (event) => showError(event.message || "an unexpected error"));
window.addEventListener("unhandledrejection", (event) =>
  showError(event.reason && event.reason.message ? event.reason.message : String(event.reason)),
);

// "ready" only while Python is: busy during a run, stopping, restarting, or failed.
let firstReady = null;
const python = new PythonWorker({
  functionName: data.function,
  testTimeout: data.testTimeout,
  runBudget: data.runBudget,
  onProgress: (step, fraction) => setStatus("loading", `${step}…`, fraction),
  onState: ({ state, seconds, message, interruptible }) => {
    if (state === "ready") {
      if (firstReady === null) firstReady = seconds;
      const note = interruptible ? "" : " (no COOP/COEP headers: a timeout restarts Python)";
      setStatus("ready", `Python ready${firstReady ? ` (started in ${firstReady.toFixed(1)} s)` : ""}${note}`);
    } else if (state === "busy") setStatus("busy", "Python is running your code…");
    else if (state === "stopping") setStatus("busy", "Stopping…");
    else if (state === "restarting") setStatus("loading", "Restarting Python…", 0.05);
    else if (state === "failed") showFatal(message);
  },
});

// ---- drafts ---------------------------------------------------------------------------
// localStorage may be missing or throw on every access (all cookies blocked): the page then
// works without drafts and says so.
const drafts = (() => {
  try {
    const store = window.localStorage;
    const probe = `${DRAFT_KEY}:probe`;
    store.setItem(probe, "1");
    store.removeItem(probe);
    return store;
  } catch {
    return null;
  }
})();
function note(text) {
  $("storage-note").hidden = !text;
  $("storage-note").textContent = text;
}
if (!drafts) note("Your browser blocks this page's storage, so your draft will not be kept: copy your code somewhere before you close or reload the page.");
function saveDraft(code) {
  if (!drafts) return;
  try {
    drafts.setItem(DRAFT_KEY, code);
  } catch {
    note("Your draft could not be saved (the browser's storage is full or blocked): copy your code somewhere before you close the page.");
  }
}
function loadDraft() {
  try {
    return drafts ? drafts.getItem(DRAFT_KEY) : null;
  } catch {
    return null;
  }
}

// ---- editor ---------------------------------------------------------------------------
let saveTimer = null;
let applyingOtherTab = false;
const editor = createEditor($("editor"), {
  doc: loadDraft() ?? data.starter,
  describedBy: "editor-help",
  onChange: (code) => {
    if (applyingOtherTab) return;
    saveDraft(code);
    // Shown, not announced: a screen reader should not hear this on every keystroke.
    $("saved").textContent = drafts ? "draft saved" : "";
    clearTimeout(saveTimer);
    saveTimer = setTimeout(() => ($("saved").textContent = ""), 1500);
  },
  onRun: () => runTests().catch(() => {}),
});

// Two tabs on the same page keep one draft: the other tab's edit replaces this one's.
window.addEventListener("storage", (event) => {
  if (event.key !== DRAFT_KEY || event.newValue === null || event.newValue === editor.getCode()) return;
  applyingOtherTab = true;
  try {
    editor.setCode(event.newValue);
  } finally {
    applyingOtherTab = false;
  }
  $("saved").textContent = "updated from your other tab";
});

$("reset").addEventListener("click", () => {
  if (!confirm("Replace your code with the starter code? Your draft will be lost.")) return;
  editor.setCode(data.starter);
});

// ---- tests ----------------------------------------------------------------------------
let running = null;
let lastReport = null;
const returned = new Map(); // test name -> what its calls returned, from the worker's events

function announce(text) {
  // A polite live region, written once a run ends: the summary, read out without moving focus.
  $("announce").textContent = "";
  setTimeout(() => ($("announce").textContent = text), 50);
}

function renderAdvice(list) {
  const box = $("advice");
  box.innerHTML = (list || []).map((text) => `<li>${linkLines(escapeHtml(text))}</li>`).join("");
  box.hidden = !(list && list.length);
}
jumpToLines($("panel-results"), editor);

async function runTests() {
  if (running) return running;
  const button = $("run");
  // Not disabled: a disabled button drops the keyboard focus to <body>.
  button.setAttribute("aria-disabled", "true");
  button.textContent = "Running…";
  $("stop").hidden = false;
  showPanel("results");
  const code = editor.getCode();
  const progress = { total: 0, done: 0 };
  returned.clear();
  renderRunning($("summary"), $("results"), progress, python);
  running = (async () => {
    try {
      const report = await python.runTests(code, (kind, event) => {
        if (kind === "collected") progress.total = event.length;
        if (kind === "diagnosing") progress.diagnosing = true;
        if (kind === "finish") {
          progress.done += 1;
          returned.set(event.name, event.returned);
        }
        renderRunning($("summary"), $("results"), progress, python);
      });
      lastReport = report;
      const rendering = performance.now();
      // A file that could not load: the advice says why, once; the summary does not repeat it.
      const shown = report.status === "error" && report.advice && report.advice.length ? { ...report, message: "" } : report;
      renderReport(shown, { summary: $("summary"), results: $("results"), diagnosis: $("diagnosis"), data, returned, editor });
      renderAdvice(report.advice);
      if (python.lastRun) python.lastRun.render = (performance.now() - rendering) / 1000;
      announce(
        [$("summary").textContent, ...(report.advice || []), report.diagnosis ? report.diagnosis.text : ""].filter(Boolean).join(". "),
      );
      return report;
    } catch (error) {
      $("summary").dataset.state = "error";
      $("summary").textContent = `The tests could not run: ${error.message}`;
      $("results").replaceChildren();
      renderDiagnosis($("diagnosis"), null);
      renderAdvice([]);
      announce($("summary").textContent);
      throw error;
    } finally {
      running = null;
      button.removeAttribute("aria-disabled");
      button.textContent = "Run tests";
      if (document.activeElement === $("stop")) button.focus();
      $("stop").hidden = true;
    }
  })();
  return running;
}

$("run").addEventListener("click", () => runTests().catch(() => {}));
$("stop").addEventListener("click", () => python.stop());

// ---- tabs -----------------------------------------------------------------------------
// The WAI-ARIA tabs pattern: one tab in the Tab order, arrows/Home/End move and select.
const tabs = [...document.querySelectorAll("[role=tab]")];
function showPanel(name) {
  for (const tab of tabs) {
    const on = tab.dataset.panel === name;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`panel-${tab.dataset.panel}`).hidden = !on;
  }
}
for (const tab of tabs) {
  tab.addEventListener("click", () => showPanel(tab.dataset.panel));
  tab.addEventListener("keydown", (event) => {
    const i = tabs.indexOf(tab);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const target = tabs[(next + tabs.length) % tabs.length];
    showPanel(target.dataset.panel);
    target.focus();
  });
}

// ---- try it ---------------------------------------------------------------------------
// The exercise's own panel (exercise.toml [seam] widget), or the engine's plain one.
const tryPanel = mountTryIt($("panel-try"), { data, python, getCode: () => editor.getCode(), escapeHtml, pyFloat });

// ---- automation API -------------------------------------------------------------------
window.kit = {
  ready: python.ready.then(() => undefined),
  setCode: (src) => editor.setCode(src),
  getCode: () => editor.getCode(),
  runTests: () => runTests(),
  stop: () => python.stop(),
  // For tests: a shorter budget for the whole run than exercise.toml's.
  setRunBudget: (seconds) => (python.budgetMs = seconds * 1000),
  state: () => python.state,
  drafts: () => Boolean(drafts),
  tryIt: (...args) => tryPanel.tryIt(...args),
  lastReport: () => lastReport,
  restarts: () => python.restarts,
  lastRestart: () => python.lastRestart || null, // for tests: what the watchdog saw when it last restarted Python
  // Seconds from navigation to each step of Python's start, and what each part of the last run
  // took: for the benchmark.
  timings: () => ({ ...python.timings }),
  runTimings: () => (python.lastRun ? { ...python.lastRun } : null),
};

// ---- offline --------------------------------------------------------------------------
// Once Python is up and idle (so it never competes with the first load nor with a run), a
// service worker caches the whole site: a reload, a run and a restart of Python then work with
// the server gone.
const IDLE_MS = 1000;
async function untilIdle() {
  for (;;) {
    if (running) await running.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    if (!running) return;
  }
}
window.kit.offline = python.ready.then(untilIdle).then(async () => {
  if (!("serviceWorker" in navigator)) return false;
  try {
    await navigator.serviceWorker.register("sw.js");
    await navigator.serviceWorker.ready;
    return true;
  } catch {
    return false; // e.g. a private window that forbids it: the page still works online
  }
});
window.kit.offline.catch(() => {});

// ---- scrollable regions ---------------------------------------------------------------
// A region that scrolls must be reachable from the keyboard (WCAG 2.1.1): give it a tab stop
// while it scrolls, and none while it does not, so the Tab key does not stop everywhere.
// The breakdown's picture keeps its tab stop: it scrolls on phones, and its size can change
// without a mutation (fonts, a theme) after the last look.
const SCROLLERS = "#statement, #statement pre, #statement table, .katex-display, .test pre, .try-result pre";
function markScrollables() {
  for (const el of document.querySelectorAll(SCROLLERS)) {
    const scrolls = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
    if (scrolls) el.tabIndex = 0;
    else el.removeAttribute("tabindex");
  }
}
markScrollables();
window.addEventListener("resize", markScrollables);
new MutationObserver(() => requestAnimationFrame(markScrollables)).observe(document.querySelector(".work"), { childList: true, subtree: true });
