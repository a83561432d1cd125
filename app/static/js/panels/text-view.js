// The model in ONNX text syntax (GET /api/models/<id>/text), in a modal monospace viewer with
// line numbers, a copy button and a download link. Very long texts are shown in part first.
import { el, clear } from "../widgets/dom.js";
import { formatNumber } from "../lib/format.js";
import { openModal } from "../widgets/modal.js";

const FIRST_LINES = 3000;
const MAX_LINE = 600; // characters of a line shown at first (initializer values make huge lines)

// A light colouring of the text syntax: string literals, type words, operator names.
const TOKENS = new RegExp([
  String.raw`("(?:[^"\\]|\\.)*")`,
  String.raw`\b(float|double|bool|string|u?int(?:2|4|8|16|32|64)|float16|bfloat16|float8\w*|float4e2m1|complex(?:64|128)|seq|map|optional|sparse_tensor|tensor|ints|floats|strings|int|graph|graphs|type_protos?)\b(?=\s*[\[(,>\s]|$)`,
  String.raw`(?<== )([A-Za-z_][\w.]*)(?= ?[<(])`,
].join("|"), "g");
const TOKEN_CLASS = [null, "tk-str", "tk-type", "tk-op"];

function colour(text) {
  // the server's comments at the top (what the text leaves out, whether it parses back): words, not syntax
  if (text.startsWith("#")) return [text];
  const out = [];
  let last = 0;
  for (const m of text.matchAll(TOKENS)) {
    const k = m.findIndex((g, i) => i > 0 && g !== undefined);
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(el("span", { class: TOKEN_CLASS[k] }, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function lineNodes(lines, start) {
  return lines.map((line, i) => {
    const row = el("div", { class: "tl", "data-line": start + i + 1 });
    if (line.length <= MAX_LINE) {
      row.append(...colour(line));
      return row;
    }
    const rest = el("button", { type: "button", class: "linklike tl-cut", title: "Show the whole line" },
      ` … ${formatNumber(line.length - MAX_LINE)} more characters`);
    rest.addEventListener("click", () => {
      row.replaceChildren(...colour(line));
    });
    row.append(...colour(line.slice(0, MAX_LINE)), rest);
    return row;
  });
}

// onnx.printer writes a 16-bit or 8-bit float tensor's values as the integers of their bits
const BITS_TYPES = /\b(float16|bfloat16|float8\w*|float4e2m1)\[[^\]]*\] (?:"(?:[^"\\]|\\.)*"|[^\s=]+) =\s*\{/;

function renderText(body, text) {
  clear(body);
  const lines = text.replace(/\n$/, "").split("\n");
  const box = el("div", { class: "text-lines mono", tabindex: "0", "aria-label": "Model text" });
  box.append(...lineNodes(lines.slice(0, FIRST_LINES), 0));
  const bits = BITS_TYPES.exec(text);
  if (bits) {
    body.append(el("p", { class: "muted text-bits-note" }, `${bits[1]} values are written as the integers of their bits `
      + "(onnx.printer's text syntax): the tensor panel shows them as numbers."));
  }
  body.append(box);
  if (lines.length > FIRST_LINES) {
    const more = el("button", { type: "button", class: "btn btn-small text-more" },
      `Show the other ${formatNumber(lines.length - FIRST_LINES)} lines`);
    more.addEventListener("click", () => {
      box.append(...lineNodes(lines.slice(FIRST_LINES), FIRST_LINES));
      more.remove();
    });
    body.append(more);
  }
  return lines.length;
}

/** What a text naming a .data file needs said: its weights are references into that file,
 * which the external layout's download holds (the server prints the model as it has it). */
function dataNote(text, dataHref) {
  const m = /"location": "([^"]+)"/.exec(text);
  if (!m) return null;
  return el("div", { class: "muted text-note" }, "Weights over 1 KiB are references into ", el("span", { class: "mono" }, m[1]),
    dataHref ? [", as in ", el("a", { href: dataHref, download: "" }, "the download with external data"), " (that file beside the .onnx)."] : ".");
}

/**
 * Open the viewer. `load()` resolves to the text; `downloadHref` is the ?download=1 address,
 * `dataHref` the download the weights it references are in.
 */
export function openTextView({ title, load, downloadHref, dataHref = "" }) {
  const info = el("span", { class: "muted text-info" });
  let text = "";
  const copy = el("button", { type: "button", class: "btn btn-small text-copy", disabled: true }, "Copy");
  const { dialog, body } = openModal({
    id: "text-view",
    cls: "text-dialog",
    label: "Model in ONNX text syntax",
    title: [el("strong", {}, "Text form"), " ", el("span", { class: "mono" }, title), " ", info],
    actions: [copy, el("a", { class: "btn btn-small btn-primary text-download", href: downloadHref, download: "" }, "Download .onnxtxt")],
  });
  body.append(el("div", { class: "muted text-status" }, "Loading the text form…"));
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      copy.textContent = "Copied";
    } catch {
      copy.textContent = "Copy failed";
    }
    setTimeout(() => { copy.textContent = "Copy"; }, 1500);
  });
  load().then((t) => {
    text = t;
    const n = renderText(body, t);
    const note = dataNote(t, dataHref);
    if (note) body.prepend(note);
    info.textContent = `· ${formatNumber(n)} line${n === 1 ? "" : "s"}`;
    copy.disabled = false;
    dialog.dataset.state = "ready";
  }).catch((err) => {
    clear(body);
    body.append(el("div", { class: "field-error" }, err.message || String(err)));
    dialog.dataset.state = "error";
  });
  return dialog;
}
