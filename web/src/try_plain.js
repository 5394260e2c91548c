// The engine's own "Try it" panel, for an exercise that names no widget in exercise.toml's
// [seam]: one text field per positional parameter of its signature, and the call's answer.
// An example from the build (solutions/page.py's try_examples: title, args, score) fills the fields.

export function mountTryIt(panel, { data, python, getCode, escapeHtml }) {
  const field = (name, i) =>
    `<label class="wide">${escapeHtml(name)} <input id="try-arg-${i}" data-testid="try-arg-${i}" autocomplete="off" spellcheck="false"></label>`;
  panel.innerHTML = `<form id="try-form" class="try">
        <label class="wide">Start from an example
          <select id="try-example" data-testid="try-example"><option value="">(your own input)</option></select>
        </label>
        ${data.parameters.map(field).join("\n        ")}
        <button type="submit" class="primary" data-testid="try-run">Call ${escapeHtml(data.function)}</button>
      </form>
      <div id="try-result" data-testid="try-result" class="try-result"></div>`;
  const $ = (id) => document.getElementById(id);
  const select = $("try-example");
  const inputs = data.parameters.map((_, i) => $(`try-arg-${i}`));
  data.examples.forEach((example, i) => select.append(new Option(example.title, String(i))));
  select.addEventListener("change", () => {
    const example = data.examples[Number(select.value)];
    if (example) example.args.forEach((arg, i) => inputs[i] && (inputs[i].value = String(arg)));
  });

  async function tryIt(...args) {
    const box = $("try-result");
    box.dataset.status = "running";
    box.textContent = `Running your ${data.function}…`;
    const result = await python.tryIt(getCode(), args, {});
    box.dataset.status = result.status;
    const call = `${data.function}(${args.map((a) => JSON.stringify(a)).join(", ")})`;
    const parts = [`<div class="call"><code>${escapeHtml(call)}</code></div>`];
    if (result.status === "ok") {
      parts.push(`<div class="value">returned <code data-testid="try-value">${escapeHtml(result.value)}</code> <span class="type">(${escapeHtml(result.type)})</span></div>`);
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
    tryIt(...inputs.map((input) => input.value)).catch((error) => ($("try-result").textContent = `Could not run: ${error.message}`));
  });
  if (data.examples.length) {
    select.value = "0";
    select.dispatchEvent(new Event("change"));
  }
  return { tryIt };
}
