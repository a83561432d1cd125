// Building blocks every sidebar panel uses: sections, property lists, key/value lists,
// callouts, inline-form error handling. Text goes in through dom.js (text nodes only).
import { el, clear, withBreaks } from "./dom.js";

export function section(title, ...children) {
  return el("section", { class: "panel-section" }, el("h3", {}, title), ...children);
}

/** A <dl> of [label, value] rows; empty values show as a muted dash. Falsy rows are skipped. */
export function propertyList(rows) {
  return el("dl", { class: "props" }, rows.filter(Boolean).map(([k, v]) => [
    el("dt", {}, k),
    el("dd", {}, v === "" || v === null || v === undefined ? el("span", { class: "muted" }, "—") : v),
  ]));
}

export function mono(text, cls = "") {
  return el("code", { class: `mono ${cls}`.trim() }, text);
}

export { plural } from "../lib/format.js";

export { breakable } from "./dom.js";

/** A file name with line-break opportunities after "_", "-" and "/", never inside its
 * extension ("…_quantized_final.onnx" breaks as "…_quantized_" / "final.onnx"). */
export function breakableFileName(name) {
  return withBreaks(name, /(?<=[/_-])/);
}

/** A cost or formula ("1.2 M·batch·seq + 12", "+2.05 K (+0.4 %)") that wraps between its terms
 * first, then before a "·" inside a term too long for the line, and inside a size's name only
 * where that name alone is wider than the line: never between a number and its unit. */
export function breakableFormula(text) {
  // terms and their factors are inline blocks (app.css .formula-term): each moves whole to the
  // next line where it fits there, and wraps inside itself only where it is wider than the line,
  // a size's name after a "_" first ("past_sequence_" / "length" in a node table's column)
  return text.split(/\s(?=[+−]\s|\()/).flatMap((term, i) => {
    const factors = term.split(/(?=·)/).flatMap((f, k) => [k ? el("wbr") : null, el("span", { class: "formula-factor" }, withBreaks(f, /(?<=_)/))]);
    return [i ? " " : null, el("span", { class: "formula-term" }, factors)];
  });
}

/** Read-only list of {key, value} pairs (metadata_props, bindings, quantization parameters). */
export function keyValueList(pairs, { keyLabel = "Key", valueLabel = "Value", cls = "", formatValue = plainValue } = {}) {
  return el("table", { class: `kv-table ${cls}`.trim() },
    el("thead", {}, el("tr", {}, el("th", {}, keyLabel), el("th", {}, valueLabel))),
    el("tbody", {}, (pairs || []).map(({ key, value }) => el("tr", { "data-key": key },
      el("td", { class: "mono" }, key), el("td", { class: "mono" }, formatValue(value))))));
}

function plainValue(value) {
  return value === "" ? el("span", { class: "muted" }, "(empty)") : value;
}

/** Long or multi-line values (torch's stack traces, FX dumps) folded to their first line. */
export function foldedValue(value) {
  const firstLine = String(value).split("\n", 1)[0];
  if (value.length <= 160 && firstLine === value) return plainValue(value);
  return el("details", { class: "value-long" },
    el("summary", {}, firstLine.length > 100 ? `${firstLine.slice(0, 100)}…` : firstLine),
    el("pre", { class: "value-full" }, value));
}

/**
 * A section whose body says `waiting` until `load()` answers, then holds what `fill(answer)`
 * gives (nulls left out: append() would write them as "null"), or the error's words.
 */
export function loadedSection(title, id, waiting, load, fill) {
  const body = el("div", { class: "muted", id }, waiting);
  load().then((answer) => {
    clear(body);
    body.classList.remove("muted");
    body.append(...fill(answer).filter(Boolean));
  }).catch((err) => {
    body.className = "field-error";
    body.textContent = err.message || String(err);
  });
  return section(title, body);
}

/** A coloured note: kind "warn" | "bad" | "ok" | "info". */
export function callout(kind, title, ...children) {
  return el("div", { class: `callout callout-${kind}`, role: kind === "bad" || kind === "warn" ? "note" : null },
    title ? el("strong", { class: "callout-title" }, title) : null, ...children);
}

/** One line of a verdict: ok true (✓), false (✗) or null (not run, pending: –); `message` is a
 * tool's own words (monospace) unless `prose` (a hint of ours). */
export function checkRow(ok, title, detail, message, { prose = false } = {}) {
  return el("div", { class: `check ${ok === null ? "skipped" : ok ? "ok" : "bad"}` },
    el("div", { class: "check-head" },
      el("span", { class: "check-icon", "aria-hidden": "true" }, ok === null ? "–" : ok ? "✓" : "✗"),
      el("strong", {}, title), el("span", { class: "check-verdict" }, detail)),
    message ? el("div", { class: `verdict-message${prose ? " prose" : ""}` }, message) : null);
}

export function tag(text, cls = "") {
  return el("span", { class: `tag ${cls}`.trim() }, text);
}

export function fieldError() {
  return el("div", { class: "field-error", role: "alert", hidden: true });
}

let errorIds = 0;

/** The field beside an error box (its form or row of one or two) marked invalid and described by
 * it while it shows, so a screen reader coming back to the field hears why (QA41 #11). */
function markInvalid(box, invalid) {
  const scope = box.parentElement;
  if (!scope) return;
  if (!box.id) box.id = `field-error-${++errorIds}`;
  const fields = [...scope.querySelectorAll("input:not([type=hidden]), select, textarea")];
  if (fields.length > 2) return; // a form of many fields: the error names the one at fault
  for (const f of fields) {
    const described = (f.getAttribute("aria-describedby") || "").split(" ").filter((x) => x && x !== box.id);
    if (invalid) described.push(box.id);
    if (described.length) f.setAttribute("aria-describedby", described.join(" "));
    else f.removeAttribute("aria-describedby");
    if (invalid) f.setAttribute("aria-invalid", "true");
    else f.removeAttribute("aria-invalid");
  }
}

/** An error in `box`: its first cause in one line, further causes folded under "N more". */
export function showError(box, message, details = []) {
  box.textContent = message;
  box.hidden = !message;
  markInvalid(box, !!message);
  if (message && details.length) {
    const more = document.createElement("details");
    more.className = "error-more";
    const summary = document.createElement("summary");
    summary.textContent = `${details.length} more`;
    const list = document.createElement("ul");
    for (const d of details) {
      const item = document.createElement("li");
      item.textContent = d;
      list.append(item);
    }
    more.append(summary, list);
    box.append(more);
  }
}

/** Run an async action from a form: disable its controls, show the error inline on failure. */
export async function runInline(form, errorBox, action) {
  const controls = [...form.querySelectorAll("input, button, textarea")];
  controls.forEach((c) => { c.disabled = true; });
  showError(errorBox, "");
  form.classList.add("pending");
  try {
    await action();
  } catch (err) {
    showError(errorBox, err.message || String(err));
  } finally {
    form.classList.remove("pending");
    controls.forEach((c) => { if (c.isConnected) c.disabled = false; });
  }
}

/** A link that opens a graph path (subgraph, function, training graph) via the URL hash. */
export function graphLink(ctx, path, label, cls = "subgraph-link") {
  return el("a", { class: cls, href: ctx.graphHref(path), "data-path": path }, label);
}
