// The student's page: statement (prerendered), editor, test results and the "Try it" panel.
// window.kit is the API for automation: setCode, getCode, runTests, tryIt and ready.
import { PythonWorker } from "./python.js";
import { createEditor } from "./editor.js";
import { pyFloat, renderDiagnosis, renderReport, renderRunning } from "./results.js";
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

const python = new PythonWorker({
  testTimeout: data.testTimeout,
  tiers: data.tiers,
  onProgress: (step, fraction) => setStatus("loading", `${step}…`, fraction),
  onState: ({ state, seconds, message, interruptible }) => {
    if (state === "ready") {
      const note = interruptible ? "" : " (no COOP/COEP headers: a timeout restarts Python)";
      setStatus("ready", `Python ready in ${seconds.toFixed(1)} s${note}`);
    } else if (state === "restarting") setStatus("loading", "Restarting Python…", 0.05);
    else if (state === "failed") showFatal(message);
  },
});

// ---- editor ---------------------------------------------------------------------------
let saveTimer = null;
const editor = createEditor($("editor"), {
  doc: localStorage.getItem(DRAFT_KEY) ?? data.starter,
  onChange: (code) => {
    localStorage.setItem(DRAFT_KEY, code);
    $("saved").textContent = "draft saved";
    clearTimeout(saveTimer);
    saveTimer = setTimeout(() => ($("saved").textContent = ""), 1500);
  },
  onRun: () => runTests(),
});

$("reset").addEventListener("click", () => {
  if (!confirm("Replace your code with the starter code? Your draft will be lost.")) return;
  editor.setCode(data.starter);
});

// ---- tests ----------------------------------------------------------------------------
let running = null;
let lastReport = null;
const returned = new Map(); // test name -> what its calls returned, from the worker's events

async function runTests() {
  if (running) return running;
  const button = $("run");
  button.disabled = true;
  button.textContent = "Running…";
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
      renderReport(report, { summary: $("summary"), results: $("results"), diagnosis: $("diagnosis"), data, returned, editor });
      return report;
    } catch (error) {
      $("summary").dataset.state = "error";
      $("summary").textContent = `The tests could not run: ${error.message}`;
      $("results").replaceChildren();
      renderDiagnosis($("diagnosis"), null);
      throw error;
    } finally {
      running = null;
      button.disabled = false;
      button.textContent = "Run tests";
    }
  })();
  return running;
}

$("run").addEventListener("click", () => runTests().catch(() => {}));

// ---- tabs -----------------------------------------------------------------------------
function showPanel(name) {
  for (const tab of document.querySelectorAll("[role=tab]")) {
    const on = tab.dataset.panel === name;
    tab.setAttribute("aria-selected", String(on));
    $(`panel-${tab.dataset.panel}`).hidden = !on;
  }
}
for (const tab of document.querySelectorAll("[role=tab]")) tab.addEventListener("click", () => showPanel(tab.dataset.panel));

// ---- try it ---------------------------------------------------------------------------
const select = $("try-example");
data.examples.forEach((example, i) => select.append(new Option(example.title, String(i))));
const fields = { reference: $("try-reference"), candidate: $("try-candidate") };
const numbers = { alpha: $("try-alpha"), beta: $("try-beta"), gamma: $("try-gamma") };

function tryInput() {
  const params = {};
  for (const [name, input] of Object.entries(numbers)) params[name] = input.valueAsNumber;
  return { reference: fields.reference.value, candidate: fields.candidate.value, params };
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
  box.innerHTML = `<h3>How the reference scores “${example.title}”</h3><div class="svg-scroll">${breakdownSvg(example)}</div>`;
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
  const callText = `meteor_score(${JSON.stringify(reference)}, ${JSON.stringify(candidate)}, alpha=${params.alpha}, beta=${params.beta}, gamma=${params.gamma})`;
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
  const { reference, candidate, params } = tryInput();
  tryIt(reference, candidate, params).catch((error) => ($("try-result").textContent = `Could not run: ${error.message}`));
});

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

select.value = "0";
select.dispatchEvent(new Event("change"));

// ---- automation API -------------------------------------------------------------------
window.kit = {
  ready: python.ready.then(() => undefined),
  setCode: (src) => editor.setCode(src),
  getCode: () => editor.getCode(),
  runTests: () => runTests(),
  tryIt: (reference, candidate, params = {}) => tryIt(reference, candidate, { alpha: 0.9, beta: 3, gamma: 0.5, ...params }),
  lastReport: () => lastReport,
  restarts: () => python.restarts,
  // Seconds from navigation to each step of Python's start: for the benchmark.
  timings: () => ({ ...python.timings }),
};
