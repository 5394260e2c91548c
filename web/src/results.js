// Draws a JSON report (the CLI's format) as the results panel: a summary, then one group per tier.
// What a tier is called and shows comes from the page's data (exercise.toml's [tiers]), never its name.

const CLOCK =
  '<svg viewBox="0 0 16 16" width="12" height="12" fill="none" stroke="currentColor" stroke-width="2"><circle cx="8" cy="8" r="6"/><path d="M8 4.5V8l2.5 1.5"/></svg>';
const STATUS_ICONS = { pass: "✓", fail: "✗", error: "!", timeout: CLOCK, not_run: "–" };
const STATUS_WORDS = { pass: "passed", fail: "failed", error: "error", timeout: "timed out", not_run: "not run" };

const escapeHtml = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

/** A score as Python prints a float: 0 -> "0.0". */
export const pyFloat = (x) => (Number.isInteger(x) ? x.toFixed(1) : String(x));

const points = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

/** test_rule[uppercase_reference] -> "uppercase reference"; test_case_does_not_change_the_score -> "case does not change the score". */
export function prettyName(name) {
  const param = name.match(/\[(.*)\]$/);
  const base = (param ? param[1] : name.replace(/^test_/, "")).replace(/_/g, " ");
  return base;
}

/** The diagnosis's sentence under the summary; hidden when there is none (everything passed). */
export function renderDiagnosis(element, diagnosis) {
  element.classList.remove("stale");
  element.hidden = !(diagnosis && diagnosis.text);
  element.textContent = diagnosis && diagnosis.text ? diagnosis.text : "";
  if (diagnosis) element.dataset.kind = diagnosis.kind;
  else delete element.dataset.kind;
}

export function renderRunning(summary, results, progress) {
  summary.dataset.state = "running";
  summary.innerHTML = progress.diagnosing
    ? "Looking for the mistake behind the failures…"
    : progress.total
    ? `Running tests… <b>${progress.done}/${progress.total}</b> <progress max="${progress.total}" value="${progress.done}"></progress>`
    : "Running tests…";
  results.classList.add("stale");
  const diagnosis = document.getElementById("diagnosis");
  if (diagnosis) diagnosis.classList.add("stale");
}

// Tracebacks and load errors name lines of the editor's file: make "line N" jump there.
export function linkLines(html) {
  return html.replace(
    /((?:File &quot;submission\.py&quot;, )?\bline )(\d+)/g,
    '$1<button type="button" class="line-link" data-line="$2" aria-label="go to line $2 in the editor">$2</button>',
  );
}

export { escapeHtml };

/** A value as Python shows it: floats keep their ".0"; structured values as JSON. */
function shownValue(value) {
  return typeof value === "number" ? pyFloat(value) : JSON.stringify(value);
}

function exampleDetails(test, example, returned, functionName) {
  if (!example) return "";
  const extra = Object.entries(example.kwargs)
    .map(([k, v]) => `, ${k}=${v}`)
    .join("");
  const call = `${functionName}(${example.args.map((arg) => JSON.stringify(arg)).join(", ")}${extra})`;
  const got = returned && returned.length ? returned[0] : test.status === "pass" ? shownValue(example.score) : "—";
  return `<dl class="example-io">
    <dt>input</dt><dd><code>${escapeHtml(call)}</code></dd>
    <dt>expected</dt><dd><code>${escapeHtml(shownValue(example.score))}</code></dd>
    <dt>returned</dt><dd><code class="${test.status === "pass" ? "ok" : "bad"}">${escapeHtml(got)}</code></dd>
  </dl>`;
}

/**
 * The Try it example a test of a tier that shows its inputs checks: the one whose `key` is the test's
 * parameter id (and whose `tier`, if it names one, is the test's).
 */
export function exampleOf(test, examples) {
  const key = (test.name.match(/\[(.*)\]$/) || [])[1];
  if (key === undefined) return undefined;
  return examples.find((e) => e.key === key && (e.tier === undefined || e.tier === test.tier));
}

/** The report's tests grouped by tier, in the page's order (the exercise's tiers, then any other), each with its title. */
export function tierGroups(report, data) {
  const tiers = [...new Set([...Object.keys(data.tiers), ...report.tests.map((t) => t.tier)])];
  return tiers
    .map((tier) => ({
      tier,
      title: data.tiers[tier] ? data.tiers[tier].title : tier,
      description: data.tiers[tier] ? data.tiers[tier].description : "",
      tests: report.tests.filter((t) => t.tier === tier),
    }))
    .filter((group) => group.tests.length);
}

function testItem(test, context) {
  const li = document.createElement("li");
  li.className = `test status-${test.status}`;
  li.dataset.testid = "test-result";
  li.dataset.status = test.status;
  li.dataset.tier = test.tier;
  li.dataset.name = test.name;
  const parts = [
    `<div class="test-head"><span class="icon" aria-hidden="true">${STATUS_ICONS[test.status] || "?"}</span>` +
      `<span class="name">${escapeHtml(prettyName(test.name))}</span>` +
      `<span class="verdict">${STATUS_WORDS[test.status] || test.status}</span>` +
      `<span class="pts">${points(test.score)}/${points(test.max_score)}</span></div>`,
  ];
  const showsInputs = Boolean(context.data.tiers[test.tier] && context.data.tiers[test.tier].showsInputs);
  if (showsInputs) {
    const example = exampleOf(test, context.data.examples);
    parts.push(exampleDetails(test, example, context.returned.get(test.name), context.data.function));
  }
  if (test.message && test.status !== "pass") {
    const label = showsInputs && /Falsifying example|Failing test case/.test(test.message) ? "counterexample" : "message";
    parts.push(`<div class="label">${label}</div><pre class="message">${linkLines(escapeHtml(test.message))}</pre>`);
  }
  if (test.output) {
    parts.push(
      `<details class="output"${test.status === "pass" ? "" : " open"}><summary>printed output</summary><pre>${escapeHtml(test.output)}</pre></details>`,
    );
  }
  li.innerHTML = parts.join("");
  return li;
}

export function renderReport(report, context) {
  const { summary, results, data, editor, diagnosis } = context;
  const total = report.tests.length;
  summary.dataset.state = report.passed === total && total > 0 ? "pass" : "fail";
  const time = report.duration ? ` <span class="time">in ${report.duration.toFixed(2)} s</span>` : "";
  summary.innerHTML =
    `<b>${report.passed}/${total} passed</b> · ${points(report.score)}/${points(report.max_score)} points${time}` +
    (report.message ? `<div class="run-message">${linkLines(escapeHtml(report.message))}</div>` : "");
  if (diagnosis) renderDiagnosis(diagnosis, report.diagnosis);
  results.classList.remove("stale");
  results.replaceChildren();
  for (const { tier, title, description, tests } of tierGroups(report, data)) {
    const passed = tests.filter((t) => t.status === "pass").length;
    const section = document.createElement("section");
    section.className = "tier";
    section.dataset.tier = tier;
    const got = tests.reduce((s, t) => s + t.score, 0);
    const max = tests.reduce((s, t) => s + t.max_score, 0);
    section.innerHTML =
      `<h3><span>${escapeHtml(title)}</span> <span class="count">${passed}/${tests.length} passed · ${points(got)}/${points(max)} points</span></h3>` +
      `<p class="tier-about">${escapeHtml(description)}</p>`;
    const list = document.createElement("ul");
    list.className = "tests";
    // Failures first: they are what the student came for.
    const order = (t) => (t.status === "pass" ? 1 : 0);
    for (const test of [...tests].sort((a, b) => order(a) - order(b))) list.append(testItem(test, context));
    section.append(list);
    results.append(section);
  }
}

/** Every "line N" button inside `element` (summary, advice, results) moves the editor there. */
export function jumpToLines(element, editor) {
  element.addEventListener("click", (event) => {
    const button = event.target.closest(".line-link");
    if (button) editor.goToLine(Number(button.dataset.line));
  });
}
