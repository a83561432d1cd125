// The tensor view: dtype, shape, statistics and a window of values the user pages through
// (previous/next page, go to a flat index or a multi-index). Used in the sidebar (initializers,
// TENSOR attributes) and, wider, in the data view of tensor files.
//
// Markup hooks: .tensor-preview[data-ref] > .tp-head, .tp-stats, .tp-nav, .tp-values; the values
// are .tp-cell elements (their textContent, joined by ", ", is the .tp-values textContent).
import { el, clear } from "../widgets/dom.js";
import { formatNumber, formatTensor } from "../lib/format.js";
import { measureText } from "../pipeline/graph-model.js";
import { openModal } from "../widgets/modal.js";
import { formatValue, isFloatType, parseIndex, unravel } from "../lib/tensor-format.js";
import { histogramChart } from "../widgets/histogram.js";

const FIRST_FETCH = 256;   // values asked for before the page size is known
const CELL_FONT = '11.5px "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace';
const CELL_GAP = 12;

function toNumber(v) {
  return typeof v === "bigint" ? Number(v) : v;
}

function indexLabel(flat, shape) {
  if (!shape || shape.length === 0) return "";
  return `[${unravel(flat, shape).join(",")}]`;
}

/** Columns per row: the last dimension when it fits, else as many as the width allows. */
function chooseColumns(shape, texts, size, width, maxCols) {
  const charW = measureText("0000000000", CELL_FONT) / 10 || 7;
  const longest = Math.max(3, ...texts.map((t) => t.length));
  const label = indexLabel(Math.max(0, size - 1), shape).length;
  const fit = Math.max(1, Math.floor((width - label * charW - CELL_GAP) / (longest * charW + CELL_GAP)));
  const limit = Math.max(1, Math.min(maxCols, fit));
  const last = shape && shape.length ? toNumber(shape[shape.length - 1]) : size;
  if (last >= 1 && last <= limit) return last;
  for (let c = limit; c >= Math.max(2, Math.ceil(limit / 2)); c -= 1) if (last % c === 0) return c;
  return limit;
}

function stat(key, value) {
  return el("span", { class: `stat stat-${key.toLowerCase()}` },
    el("span", { class: "stat-key" }, key), " ", el("span", { class: "stat-val" }, formatNumber(value)));
}

function statsRow(t, size) {
  const s = t.stats;
  if (!s) return null;
  if (t.dtype === "BOOL") { // the mean is the share of true values
    const trues = Math.round((s.mean || 0) * size);
    return el("div", { class: "tp-stats" }, stat("true", trues), stat("false", size - trues));
  }
  const complex = t.dtype === "COMPLEX64" || t.dtype === "COMPLEX128";
  const rows = [["min", s.min], ["max", s.max], ["mean", s.mean], ["std", s.std]];
  if (isFloatType(t.dtype) || complex) rows.push(["NaN", s.nan], ["Inf", s.inf]); // integers have neither
  const zeros = s.zeros ? el("span", { class: "stat stat-zeros" }, el("span", { class: "stat-key" }, "zeros"), " ",
    el("span", { class: "stat-val" }, `${formatNumber(s.zeros)} (${share(s.zeros, size)})`)) : null;
  return el("div", { class: "tp-stats", title: complex ? "statistics of the magnitudes |z|" : null },
    complex ? el("span", { class: "stat-key" }, "|z|") : null,
    rows.filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => stat(k, v)), zeros);
}

/** `part` of `whole` as a percentage a person reads: never "0 %" or "100 %" unless exact. */
function share(part, whole) {
  const p = (100 * part) / (whole || 1);
  if (part === whole) return "100 %";
  return `${p < 0.1 ? "< 0.1" : p > 99.9 ? "> 99.9" : Number(p.toPrecision(p < 10 ? 2 : 3))} %`;
}

/**
 * A tensor view. `load(ref, offset, count)` resolves to a tensor preview (docs/api.md).
 * Options: wide (more columns, taller window), title (text above the head), shown (called once
 * the first values, or the error, are in it).
 */
export function tensorView(ref, load, { wide = false, title = "", shown = () => {} } = {}) {
  const holder = el("div", { class: `tensor-preview${wide ? " wide" : ""}`, "data-ref": ref });
  const status = el("div", { class: "muted tp-status" }, "Loading…");
  holder.append(status);
  const view = { offset: 0, cols: 1, pageSize: 0, size: 0, shape: [], dtype: "", target: null, busy: false };
  let nav = null;
  let valuesBox = null;
  let error = null;

  const fail = (err) => {
    status.remove();
    if (!error) { error = el("div", { class: "field-error" }); holder.append(error); }
    error.textContent = err.message || String(err);
    view.busy = false;
    if (nav) nav.classList.remove("pending");
  };

  const renderValues = (values, offset) => {
    clear(valuesBox);
    valuesBox.style.setProperty("--cols", String(view.cols));
    const texts = values.map((v) => formatValue(v, view.dtype));
    for (let r = 0; r * view.cols < texts.length; r += 1) {
      const start = offset + r * view.cols;
      const row = el("div", { class: "tp-row", "data-index": indexLabel(start, view.shape) });
      texts.slice(r * view.cols, (r + 1) * view.cols).forEach((text, c) => {
        const flat = start + c;
        if (flat > offset) row.append(el("span", { class: "tp-sep" }, ", "));
        row.append(el("span", {
          class: `tp-cell${flat === view.target ? " target" : ""}`, "data-flat": flat,
          title: `${indexLabel(flat, view.shape) || "scalar"} · #${flat}`,
        }, text));
      });
      valuesBox.append(row);
    }
    const end = offset + values.length;
    if (nav) {
      nav.querySelector(".tp-range").textContent = `${formatNumber(offset)}–${formatNumber(Math.max(offset, end - 1))} of ${formatNumber(view.size)}`;
      nav.querySelector(".tp-prev").disabled = offset <= 0;
      nav.querySelector(".tp-next").disabled = end >= view.size;
    }
    const target = valuesBox.querySelector(".tp-cell.target");
    if (target) target.scrollIntoView({ block: "nearest", inline: "nearest" });
  };

  const goTo = async (offset) => {
    if (view.busy) return;
    view.busy = true;
    nav.classList.add("pending");
    try {
      const t = await load(ref, offset, view.pageSize);
      if (error) { error.remove(); error = null; }
      view.offset = t.offset ?? offset;
      renderValues(t.values || [], view.offset);
    } catch (err) {
      fail(err);
      return;
    }
    view.busy = false;
    nav.classList.remove("pending");
  };

  const buildNav = () => {
    const input = el("input", {
      type: "text", name: "index", class: "mono tp-goto-input", placeholder: view.shape.length > 1 ? "e.g. 1,0,2" : "index",
      "aria-label": "Go to index (flat or one number per dimension)", autocomplete: "off", spellcheck: "false",
    });
    const goto = el("form", { class: "tp-goto" }, input, el("button", { type: "submit", class: "btn btn-small" }, "Go"));
    goto.addEventListener("submit", (e) => {
      e.preventDefault();
      const flat = parseIndex(input.value, view.shape, view.size);
      if (flat === null) {
        input.setCustomValidity("No element there");
        input.reportValidity();
        return;
      }
      input.setCustomValidity("");
      view.target = flat;
      goTo(Math.floor(flat / view.cols) * view.cols);
    });
    input.addEventListener("input", () => input.setCustomValidity(""));
    return el("div", { class: "tp-nav" },
      el("button", { type: "button", class: "btn btn-small tp-prev", title: "Previous page", "aria-label": "Previous page",
        onclick: () => { view.target = null; goTo(Math.max(0, view.offset - view.pageSize)); } }, wide ? "‹ Previous" : "‹"),
      el("span", { class: "tp-range mono" }),
      el("button", { type: "button", class: "btn btn-small tp-next", title: "Next page", "aria-label": "Next page",
        onclick: () => { view.target = null; goTo(view.offset + view.pageSize); } }, wide ? "Next ›" : "›"),
      goto);
  };

  const first = async () => {
    const t = await load(ref, 0, FIRST_FETCH);
    status.remove();
    view.size = toNumber(t.size) || 0;
    view.shape = (t.shape || []).map(toNumber);
    view.dtype = t.dtype;
    const sparse = t.sparse ? ` · sparse, ${formatNumber(t.sparse.nnz)} stored (shown densified)` : "";
    holder.append(...[
      title ? el("div", { class: "tp-title" }, title) : null,
      el("div", { class: "tp-head" },
        el("span", {}, formatTensor(t.dtype, t.shape), ` · ${formatNumber(view.size)} value${view.size === 1 ? "" : "s"}`, sparse),
        wide ? null : el("button", {
          type: "button", class: "linklike tp-expand", title: "Show this tensor in a wide window",
          onclick: () => openTensorModal(ref, load, t.name || ref),
        }, "⤢ expand")),
      statsRow(t, view.size),
      t.stats ? histogramChart(t.stats.histogram) : null,
      t.doc_string ? el("div", { class: "tp-doc muted" }, t.doc_string) : null,
    ].filter(Boolean));
    if (view.size === 0) {
      holder.append(el("div", { class: "muted" }, "No values: the tensor is empty."));
      return;
    }
    // it scrolls: keyboard-reachable (QA41 #9)
    valuesBox = el("div", { class: "tp-values mono", tabindex: "0", role: "region", "aria-label": `values of ${t.name || "the tensor"}` });
    holder.append(valuesBox);
    const values = t.values || [];
    const width = valuesBox.clientWidth || (wide ? 900 : 320);
    view.cols = chooseColumns(view.shape, values.slice(0, 64).map((v) => formatValue(v, t.dtype)), view.size, width, wide ? 20 : 10);
    const rows = Math.max(1, Math.min(Math.round((wide ? 256 : 100) / view.cols), Math.floor(FIRST_FETCH / view.cols)));
    view.pageSize = view.cols * rows; // whole rows, so every page starts a row
    if (view.size > view.pageSize) {
      nav = buildNav();
      holder.insertBefore(nav, valuesBox);
    }
    renderValues(values.slice(0, view.pageSize), 0);
  };
  first().catch(fail).finally(shown);
  return holder;
}

/** The tensor view, wide, in a modal window. */
export function openTensorModal(ref, load, name) {
  const { body } = openModal({
    id: "tensor-modal", cls: "tensor-dialog", label: `Values of ${name}`,
    title: [el("strong", {}, "Tensor "), el("span", { class: "mono" }, name)],
  });
  body.append(tensorView(ref, load, { wide: true }));
}

/** A "preview" toggle that opens (and closes) a tensor view at the end of `row`. */
export function previewToggle(ref, ctx, row, { label = "preview", wide = false } = {}) {
  let preview = null;
  return el("button", {
    type: "button", class: "linklike preview-link", "data-ref": ref, "aria-expanded": "false",
    onclick: (e) => {
      const button = e.currentTarget;
      if (preview) {
        preview.remove();
        preview = null;
        button.textContent = label;
        button.setAttribute("aria-expanded", "false");
        return;
      }
      // opened below the fold of a long panel: scrolled to, once it has its height (QA34: "nothing happened")
      const view = tensorView(ref, ctx.actions.loadTensor, { wide, shown: () => { if (preview === view) view.scrollIntoView({ block: "nearest" }); } });
      preview = view;
      row.append(preview);
      button.textContent = "hide";
      button.setAttribute("aria-expanded", "true");
    },
  }, label);
}
