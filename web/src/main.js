// The student's page: statement (prerendered), editor, test results and the "Try it" panel.
// window.kit is the API for automation: setCode, getCode, runTests, tryIt and ready.
import { PythonWorker } from "./python.js";
import { createEditor } from "./editor.js";
import { escapeHtml, jumpToLines, linkLines, pyFloat, renderDiagnosis, renderReport, renderRunning } from "./results.js";
import { breakdownSvg } from "./breakdown.js";

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
  testTimeout: data.testTimeout,
  runBudget: data.runBudget,
  tiers: data.tiers,
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
      // A file that could not load: the advice says why, once; the summary does not repeat it.
      const shown = report.status === "error" && report.advice && report.advice.length ? { ...report, message: "" } : report;
      renderReport(shown, { summary: $("summary"), results: $("results"), diagnosis: $("diagnosis"), data, returned, editor });
      renderAdvice(report.advice);
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
const select = $("try-example");
data.examples.forEach((example, i) => select.append(new Option(example.title, String(i))));
const fields = { reference: $("try-reference"), candidate: $("try-candidate") };
const numbers = { alpha: $("try-alpha"), beta: $("try-beta"), gamma: $("try-gamma") };

const DEFAULTS = { alpha: 0.9, beta: 3, gamma: 0.5 };
// The statement's rules for the parameters, in its words.
const RULES = {
  alpha: { ok: (x) => x >= 0 && x <= 1, rule: "alpha must be between 0 and 1 (0 ≤ α ≤ 1)" },
  beta: { ok: (x) => x > 0, rule: "beta must be greater than 0 (β > 0)" },
  gamma: { ok: (x) => x >= 0 && x <= 1, rule: "gamma must be between 0 and 1 (0 ≤ γ ≤ 1)" },
};

/** A parameter's value: empty means its default; `error` says what is wrong, in the statement's words. */
function readNumber(name) {
  const text = numbers[name].value.trim();
  if (text === "") return { value: DEFAULTS[name] };
  const value = Number(text);
  if (!Number.isFinite(value)) return { error: `${name} must be a number, like ${DEFAULTS[name]} (leave it empty for the default ${DEFAULTS[name]})` };
  if (!RULES[name].ok(value)) return { error: `${RULES[name].rule}; got ${text}` };
  return { value };
}

function tryInput() {
  const params = {};
  const errors = [];
  for (const name of Object.keys(numbers)) {
    const { value, error } = readNumber(name);
    if (error) errors.push(error);
    params[name] = value;
    numbers[name].setAttribute("aria-invalid", String(Boolean(error)));
  }
  return { reference: fields.reference.value, candidate: fields.candidate.value, params, errors };
}

function showTryErrors(errors) {
  const box = $("try-errors");
  box.replaceChildren(...errors.map((text) => Object.assign(document.createElement("li"), { textContent: text })));
  box.hidden = !errors.length;
}

/** At most `limit` characters of a long input in the echo of the call. */
function shorten(text, limit = 120) {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length} characters in all)`;
}

function matchingExample({ reference, candidate, params }) {
  return data.examples.find((e) => {
    const p = { alpha: 0.9, beta: 3, gamma: 0.5, ...e.params };
    return e.reference === reference && e.candidate === candidate && ["alpha", "beta", "gamma"].every((k) => p[k] === params[k]);
  });
}

function showBreakdown() {
  const example = matchingExample(tryInput());
  const box = $("try-breakdown");
  if (!example) {
    box.innerHTML = `<p class="hint">The reference's breakdown is drawn for the examples in the list above; for your own input, only your function's answer is shown.</p>`;
    return null;
  }
  box.innerHTML = `<h3>How the reference scores “${example.title}”</h3><div class="svg-scroll" role="group" aria-label="breakdown" tabindex="0">${breakdownSvg(example)}</div>`;
  return example;
}

select.addEventListener("change", () => {
  const example = data.examples[Number(select.value)];
  if (!example) return;
  const p = { alpha: 0.9, beta: 3, gamma: 0.5, ...example.params };
  fields.reference.value = example.reference;
  fields.candidate.value = example.candidate;
  for (const [name, input] of Object.entries(numbers)) input.value = String(p[name]);
  showBreakdown();
  $("try-result").replaceChildren();
});
for (const input of [...Object.values(fields), ...Object.values(numbers)]) {
  input.addEventListener("input", () => {
    const example = showBreakdown();
    select.value = example ? String(data.examples.indexOf(example)) : "";
  });
}

async function tryIt(reference, candidate, params) {
  const box = $("try-result");
  box.dataset.status = "running";
  box.textContent = "Running your meteor_score…";
  const result = await python.tryIt(editor.getCode(), reference, candidate, params);
  box.dataset.status = result.status;
  const callText = `meteor_score(${JSON.stringify(shorten(reference))}, ${JSON.stringify(shorten(candidate))}, alpha=${params.alpha}, beta=${params.beta}, gamma=${params.gamma})`;
  const parts = [`<div class="call"><code>${escapeHtml(callText)}</code></div>`];
  if (result.status === "ok") {
    parts.push(`<div class="value">returned <code data-testid="try-value">${escapeHtml(result.value)}</code> <span class="type">(${escapeHtml(result.type)})</span></div>`);
    const example = matchingExample({ reference, candidate, params });
    if (example) {
      const same = Number(result.value) === example.score;
      parts.push(`<div class="compare ${same ? "pass" : "fail"}">the reference returns <code>${pyFloat(example.score)}</code>${same ? " ✓" : ""}</div>`);
    }
  } else {
    parts.push(`<div class="value">${escapeHtml(result.message)}</div>`);
    if (result.traceback) parts.push(`<pre class="traceback">${escapeHtml(result.traceback)}</pre>`);
  }
  if (result.output) parts.push(`<div class="output-label">printed</div><pre class="output">${escapeHtml(result.output)}</pre>`);
  box.innerHTML = parts.join("");
  return result;
}

$("try-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const { reference, candidate, params, errors } = tryInput();
  showTryErrors(errors);
  if (errors.length) {
    $("try-result").replaceChildren();
    return;
  }
  tryIt(reference, candidate, params).catch((error) => ($("try-result").textContent = `Could not run: ${error.message}`));
});


select.value = "0";
select.dispatchEvent(new Event("change"));

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
  tryIt: (reference, candidate, params = {}) => tryIt(reference, candidate, { alpha: 0.9, beta: 3, gamma: 0.5, ...params }),
  lastReport: () => lastReport,
  restarts: () => python.restarts,
  // Seconds from navigation to each step of Python's start: for the benchmark.
  timings: () => ({ ...python.timings }),
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
