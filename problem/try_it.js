// The METEOR exercise's "Try it" panel (exercise.toml [seam] widget): the form, the check of its
// inputs against the statement, the call into the student's function, and the reference's
// breakdown of the examples (computed at build time by solutions/page.py).
// The engine's page calls mountTryIt(panel, context) once and uses what it returns.
import { breakdownSvg } from "./breakdown.js";

// The statement's rules for the parameters, in its words.
const RULES = {
  alpha: { ok: (x) => x >= 0 && x <= 1, rule: "alpha must be between 0 and 1 (0 ≤ α ≤ 1)" },
  beta: { ok: (x) => x > 0, rule: "beta must be greater than 0 (β > 0)" },
  gamma: { ok: (x) => x >= 0 && x <= 1, rule: "gamma must be between 0 and 1 (0 ≤ γ ≤ 1)" },
};

function form(data, escapeHtml) {
  const number = (name) =>
    `<label>${name} <input id="try-${name}" data-testid="try-${name}" inputmode="decimal" value="${escapeHtml(String(data.defaults[name]))}" aria-describedby="try-errors"></label>`;
  return `<form id="try-form" class="try">
        <label class="wide">Start from an example
          <select id="try-example" data-testid="try-example"><option value="">(your own input)</option></select>
        </label>
        <label class="wide">reference <input id="try-reference" data-testid="try-reference" autocomplete="off" spellcheck="false"></label>
        <label class="wide">candidate <input id="try-candidate" data-testid="try-candidate" autocomplete="off" spellcheck="false"></label>
        ${Object.keys(RULES).map(number).join("\n        ")}
        <button type="submit" class="primary" data-testid="try-run">Call ${escapeHtml(data.function)}</button>
        <ul class="try-errors wide" id="try-errors" data-testid="try-errors" hidden></ul>
      </form>
      <div id="try-result" data-testid="try-result" class="try-result"></div>
      <div id="try-breakdown" class="try-breakdown"></div>`;
}

export function mountTryIt(panel, { data, python, getCode, escapeHtml, pyFloat }) {
  panel.innerHTML = form(data, escapeHtml);
  const $ = (id) => document.getElementById(id);
  const DEFAULTS = data.defaults;
  const select = $("try-example");
  data.examples.forEach((example, i) => select.append(new Option(example.title, String(i))));
  const fields = { reference: $("try-reference"), candidate: $("try-candidate") };
  const numbers = Object.fromEntries(Object.keys(RULES).map((name) => [name, $(`try-${name}`)]));

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
      const p = { ...DEFAULTS, ...e.params };
      return e.reference === reference && e.candidate === candidate && Object.keys(RULES).every((k) => p[k] === params[k]);
    });
  }

  function showBreakdown() {
    const example = matchingExample(tryInput());
    const box = $("try-breakdown");
    if (!example) {
      box.innerHTML = `<p class="hint">The reference's breakdown is drawn for the examples in the list above; for your own input, only your function's answer is shown.</p>`;
      return null;
    }
    box.innerHTML = `<h3>How the reference scores “${example.title}”</h3><div class="svg-scroll" role="group" aria-label="breakdown" tabindex="0">${breakdownSvg(example, DEFAULTS)}</div>`;
    return example;
  }

  select.addEventListener("change", () => {
    const example = data.examples[Number(select.value)];
    if (!example) return;
    const p = { ...DEFAULTS, ...example.params };
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
    box.textContent = `Running your ${data.function}…`;
    const result = await python.tryIt(getCode(), [reference, candidate], params);
    box.dataset.status = result.status;
    const shown = Object.keys(RULES).map((k) => `, ${k}=${params[k]}`).join("");
    const callText = `${data.function}(${JSON.stringify(shorten(reference))}, ${JSON.stringify(shorten(candidate))}${shown})`;
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

  // window.kit.tryIt: the page's automation calls it with this exercise's own arguments.
  return { tryIt: (reference, candidate, params = {}) => tryIt(reference, candidate, { ...DEFAULTS, ...params }) };
}
