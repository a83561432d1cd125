// The sidebar: model properties + metadata, node details + attribute editing, graph
// inputs/outputs, tensor previews; and the breadcrumb above the drawing.
// Model strings only ever enter the page as text nodes (dom.js).
import { el, clear } from "./dom.js";
import { parseJSON } from "./api.js";
import {
  attributeEditText, formatBytes, formatDims, formatNumber, formatTensor, formatType, formatValueType,
} from "./format.js";

const EDITABLE = new Set(["FLOAT", "INT", "STRING", "FLOATS", "INTS", "STRINGS"]);
const PREVIEW_COUNT = 100;

function section(title, ...children) {
  return el("section", { class: "panel-section" }, el("h3", {}, title), ...children);
}

function propertyList(rows) {
  return el("dl", { class: "props" }, rows.filter(Boolean).map(([k, v]) => [
    el("dt", {}, k),
    el("dd", {}, v === "" || v === null || v === undefined ? el("span", { class: "muted" }, "—") : v),
  ]));
}

function mono(text, cls = "") {
  return el("code", { class: `mono ${cls}`.trim() }, text);
}

function fieldError() {
  return el("div", { class: "field-error", role: "alert", hidden: true });
}

function showError(box, message) {
  box.textContent = message;
  box.hidden = !message;
}

/** Run an async action from a form: disable its controls, show the error inline on failure. */
async function runInline(form, errorBox, action) {
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

// ---------------------------------------------------------------- tensor previews

function tensorPreview(ref, ctx) {
  const holder = el("div", { class: "tensor-preview", "data-ref": ref });
  const status = el("div", { class: "muted" }, "Loading…");
  holder.append(status);
  let offset = 0;
  let valuesBox = null;
  const load = async () => {
    const t = await ctx.actions.loadTensor(ref, offset, PREVIEW_COUNT);
    status.remove();
    if (!valuesBox) {
      const s = t.stats || {};
      holder.append(
        el("div", { class: "tp-head" }, formatTensor(t.dtype, t.shape), " · ", `${formatNumber(t.size)} values`),
        t.stats ? el("div", { class: "tp-stats" }, [
          ["min", s.min], ["max", s.max], ["mean", s.mean], ["std", s.std], ["NaN", s.nan], ["Inf", s.inf],
        ].filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => el("span", { class: "stat" },
          el("span", { class: "stat-key" }, k), " ", el("span", { class: "stat-val" }, formatNumber(v))))) : null,
      );
      valuesBox = el("div", { class: "tp-values mono" });
      holder.append(valuesBox);
    }
    const values = t.values || [];
    const show = t.dtype === "STRING" ? (v) => JSON.stringify(v) : formatNumber;
    valuesBox.append(document.createTextNode(`${offset > 0 ? ", " : ""}${values.map(show).join(", ")}`));
    offset = (t.offset || 0) + values.length;
    const old = holder.querySelector(".tp-more");
    if (old) old.remove();
    const size = typeof t.size === "bigint" ? Number(t.size) : t.size;
    if (typeof size === "number" && offset < size && values.length > 0) {
      holder.append(el("div", { class: "tp-more" }, el("span", { class: "muted" }, `${offset} of ${size} shown · `),
        el("button", { type: "button", class: "linklike", onclick: () => load().catch(fail) }, "show more")));
    }
  };
  const fail = (err) => {
    status.remove();
    holder.append(el("div", { class: "field-error" }, err.message || String(err)));
  };
  load().catch(fail);
  return holder;
}

/** A "preview" toggle that opens (and closes) a tensor preview at the end of `row`. */
function previewLink(ref, ctx, row) {
  let preview = null;
  return el("button", {
    type: "button", class: "linklike preview-link", "data-ref": ref,
    onclick: (e) => {
      if (preview) { preview.remove(); preview = null; e.currentTarget.textContent = "preview"; return; }
      preview = tensorPreview(ref, ctx);
      row.append(preview);
      e.currentTarget.textContent = "hide";
    },
  }, "preview");
}

// ---------------------------------------------------------------- attributes

/** Text typed in an attribute's field -> the JSON value sent to the server. */
export function parseAttributeInput(type, text) {
  const scalar = (s) => {
    const t = s.trim();
    if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(t)) {
      const v = parseJSON(t); // keeps big integers exact (BigInt)
      if (typeof v === "number" && !Number.isFinite(v)) return v > 0 ? "Infinity" : "-Infinity"; // 1e400
      return v;
    }
    if (t !== "" && Number.isFinite(Number(t))) return Number(t); // "1.", ".5", "+3"
    if (/^[+-]?nan$/i.test(t)) return "NaN";
    if (/^[+-]?inf(inity)?$/i.test(t)) return t.startsWith("-") ? "-Infinity" : "Infinity";
    return t; // not a number: the server says what is wrong with it
  };
  switch (type) {
    case "STRING": return text;
    case "INT": case "FLOAT": return scalar(text);
    case "STRINGS": {
      const t = text.trim();
      if (t.startsWith("[")) {
        try { return JSON.parse(t); } catch { throw new Error("Not a valid JSON list of strings, e.g. [\"a\", \"b\"]."); }
      }
      return t === "" ? [] : t.split(",").map((s) => s.trim());
    }
    default: { // INTS, FLOATS
      const t = text.trim().replace(/^\[/, "").replace(/\]$/, "").trim();
      return t === "" ? [] : t.split(/[\s,]+/).filter(Boolean).map(scalar);
    }
  }
}

function attributeValueView(attr, node, ctx, row) {
  const v = attr.value;
  const t = attr.type;
  const graphLink = (g, label) => el("a", { class: "subgraph-link", href: ctx.graphHref(g.path), "data-path": g.path }, label);
  switch (t) {
    case "TENSOR":
    case "SPARSE_TENSOR":
      return el("span", {}, mono(formatTensor(v.dtype, v.shape)),
        t === "SPARSE_TENSOR" && v.nnz !== undefined ? el("span", { class: "muted" }, ` · ${v.nnz} non-zero`) : null,
        " ", v.ref ? previewLink(v.ref, ctx, row) : null);
    case "TENSORS":
    case "SPARSE_TENSORS":
      return el("ol", { class: "attr-list" }, (v || []).map((item) => {
        const li = el("li", {}, mono(formatTensor(item.dtype, item.shape)));
        if (item.ref) li.append(" ", previewLink(item.ref, ctx, li));
        return li;
      }));
    case "GRAPH":
      return el("span", {}, graphLink(v, `Open ${attr.name} ›`), graphInfo(v));
    case "GRAPHS":
      return el("ol", { class: "attr-list" }, (v || []).map((g, k) => el("li", {}, graphLink(g, `Open ${attr.name}[${k}] ›`), graphInfo(g))));
    case "TYPE_PROTO":
      return mono(formatType(v));
    case "TYPE_PROTOS":
      return el("ol", { class: "attr-list" }, (v || []).map((item) => el("li", {}, mono(formatType(item)))));
    default:
      return mono(v === undefined ? "" : JSON.stringify(v, (k, x) => (typeof x === "bigint" ? x.toString() : x)));
  }
}

function graphInfo(g) {
  const bits = [g.name, typeof g.nodes === "number" ? `${g.nodes} node${g.nodes === 1 ? "" : "s"}` : ""].filter(Boolean);
  return bits.length ? el("span", { class: "muted" }, ` ${bits.join(" · ")}`) : null;
}

function attributeRow(attr, node, ctx) {
  const row = el("div", { class: "attr", "data-attr": attr.name });
  row.append(el("div", { class: "attr-head" },
    el("span", { class: "attr-name" }, attr.name),
    el("span", { class: "attr-type" }, attr.type)));
  if (attr.ref_attr_name) {
    row.append(el("div", { class: "muted" }, "refers to the function attribute ", mono(attr.ref_attr_name)));
  }
  if (EDITABLE.has(attr.type) && !attr.ref_attr_name) {
    const initial = attributeEditText(attr);
    const input = el("input", {
      type: "text", name: "value", value: initial, class: "mono", spellcheck: "false",
      "aria-label": `Value of ${attr.name}`, autocomplete: "off",
    });
    const save = el("button", { type: "submit", class: "btn btn-small" }, "Save");
    const error = fieldError();
    const form = el("form", { class: "attr-edit" }, input, save);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      runInline(form, error, async () => {
        const value = parseAttributeInput(attr.type, input.value);
        await ctx.actions.setAttribute(node.id, attr.name, value);
      });
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { input.value = initial; showError(error, ""); }
    });
    row.append(form, error);
  } else {
    row.append(el("div", { class: "attr-value" }, attributeValueView(attr, node, ctx, row)));
  }
  return row;
}

// ---------------------------------------------------------------- tensors lists

function tensorRow(name, ctx, { from = false } = {}) {
  const { model } = ctx;
  if (!name) return el("li", { class: "muted" }, "(optional input omitted)");
  const type = model.types.get(name);
  const li = el("li", { class: "tensor-row" });
  li.append(mono(name, "tensor-name"));
  if (type) li.append(" ", el("span", { class: "tensor-type" }, formatValueType(type)));
  const init = model.initializers.get(name);
  if (from && init && !model.producer.has(name)) {
    li.append(" ", el("span", { class: "tag" }, "initializer"), " ", previewLink(init.ref || name, ctx, li));
    return li;
  }
  const links = from
    ? [model.producer.get(name)].filter(Boolean)
    : model.edges.filter((e) => e.tensor === name && e.from === ctx.selfId).map((e) => e.to);
  if (links.length) {
    li.append(el("div", { class: "tensor-links" }, el("span", { class: "muted" }, from ? "from " : "to "),
      links.map((id, i) => [i ? ", " : "", el("button", { type: "button", class: "linklike", onclick: () => ctx.actions.select(id) }, boxLabel(model, id))])));
  }
  return li;
}

function boxLabel(model, id) {
  const box = model.boxes.get(id);
  if (!box) return id;
  if (box.kind === "node") return box.node.name ? `${box.node.op_type} ${box.node.name}` : `${box.node.op_type} (${id})`;
  if (box.kind === "input") return `graph input ${box.name}`;
  if (box.kind === "output") return `graph output ${box.name}`;
  return box.name;
}

// ---------------------------------------------------------------- panels

export function renderNodePanel(root, node, ctx) {
  clear(root);
  const c = { ...ctx, selfId: node.id };
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, "Node"),
    el("h2", { class: "panel-title" }, node.op_type),
    node.name ? el("div", { class: "panel-subtitle mono" }, node.name) : null));
  const fn = node.function ? { path: node.function, name: node.op_type }
    : (ctx.functions || []).find((f) => f.name === node.op_type && (f.domain || "") === (node.domain || "")
      && (f.overload || "") === (node.overload || ""));
  root.append(section("Properties", propertyList([
    ["Name", node.name ? mono(node.name) : ""],
    ["Operator", mono(node.op_type)],
    fn ? ["Defined by", el("a", { class: "subgraph-link", href: ctx.graphHref(fn.path), "data-path": fn.path }, `model function ${fn.name} ›`)] : null,
    ["Domain", node.domain ? mono(node.domain) : mono("ai.onnx (default)")],
    ["Node id", mono(node.id)],
  ])));
  if (node.doc_string) root.append(section("Documentation", el("pre", { class: "doc" }, node.doc_string)));
  const attrs = node.attributes || [];
  root.append(section(`Attributes (${attrs.length})`,
    attrs.length ? el("div", { class: "attrs" }, attrs.map((a) => attributeRow(a, node, c)))
      : el("p", { class: "muted" }, "This node has no attributes.")));
  root.append(section(`Inputs (${(node.inputs || []).length})`,
    el("ol", { class: "tensor-list" }, (node.inputs || []).map((n) => tensorRow(n, c, { from: true })))));
  root.append(section(`Outputs (${(node.outputs || []).length})`,
    el("ol", { class: "tensor-list" }, (node.outputs || []).map((n) => tensorRow(n, c)))));
}

export function renderValuePanel(root, box, ctx) {
  clear(root);
  const v = box.data || { name: box.name };
  const outerKind = box.enclosing ? "Value from an enclosing graph" : box.id.startsWith("init:") ? "Initializer" : "Value produced nowhere";
  const kind = { input: "Graph input", output: "Graph output", outer: outerKind }[box.kind] || "Value";
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, kind),
    el("h2", { class: "panel-title mono" }, box.name)));
  const type = v.type && v.type.kind && v.type.kind !== "tensor" ? formatType(v.type) : "";
  const dims = formatDims(v.shape);
  const declared = Boolean(v.dtype || (v.type && v.type.kind && v.type.kind !== "unknown"));
  root.append(section("Type", declared ? propertyList([
    ["Name", mono(box.name)],
    ["Data type", v.dtype ? mono(v.dtype) : ""],
    ["Shape", dims === null ? (v.dtype ? "unknown rank" : "") : mono(dims === "scalar" ? "scalar (rank 0)" : `[${(v.shape || []).map((d) => (d === null ? "?" : String(d))).join(", ")}]`)],
    type ? ["Type", mono(type)] : null,
  ]) : propertyList([["Name", mono(box.name)], ["Type", el("span", { class: "muted" }, "not declared in this graph")]])));
  if (v.ref) root.append(section("Values", el("div", {}, tensorPreview(v.ref, ctx))));
  const c = { ...ctx, selfId: box.id };
  if (box.kind === "output") {
    root.append(section("Produced by", el("ol", { class: "tensor-list" }, tensorRow(box.name, c, { from: true }))));
  } else {
    root.append(section("Read by", el("ol", { class: "tensor-list" }, tensorRow(box.name, c))));
  }
  if (box.kind === "outer" && !box.id.startsWith("init:")) {
    root.append(el("p", { class: "muted panel-note" }, box.enclosing
      ? "Nothing in this graph produces this name: it is read from an enclosing graph."
      : "Nothing in this graph produces this name, and this graph has no enclosing scope."));
  }
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** What the sidebar says about a subgraph or function on screen. */
function graphSection(graph, ctx) {
  const crumbs = graph.breadcrumb || [];
  const parent = crumbs.length > 1 ? crumbs[crumbs.length - 2] : null;
  const outer = graph.outer_scope || [];
  return section(graph.kind === "function" ? "Function on screen" : "Subgraph on screen", propertyList([
    ["Name", graph.name ? mono(graph.name) : ""],
    ["Path", mono(graph.path)],
    graph.domain ? ["Domain", mono(graph.domain)] : null,
    ["Contents", [plural((graph.nodes || []).length, "node"), plural((graph.inputs || []).length, "input"),
      plural((graph.outputs || []).length, "output")].join(" · ")],
    outer.length ? ["Reads from outside", el("span", {}, outer.map((n, i) => [i ? ", " : "", mono(n)]))] : null,
    (graph.attribute_names || []).length ? ["Attributes", mono(graph.attribute_names.join(", "))] : null,
    parent ? ["Back to", el("a", { href: ctx.graphHref(parent.path), "data-path": parent.path }, parent.label)] : null,
  ]), graph.doc_string ? el("pre", { class: "doc graph-doc" }, graph.doc_string) : null);
}

function opsetText(list) {
  return (list || []).map((o) => `${o.domain || "ai.onnx"} v${formatNumber(o.version)}`).join(", ");
}

export function renderModelPanel(root, summary, ctx) {
  clear(root);
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, "Model"),
    el("h2", { class: "panel-title" }, summary.name || summary.graph_name || "model"),
    el("div", { class: "panel-subtitle" }, `revision ${summary.revision} · ${formatBytes(summary.size)}`)));

  if (ctx.graph && ctx.graph.path) root.append(graphSection(ctx.graph, ctx));

  const v = summary.validation || {};
  root.append(el("div", { class: `verdict ${v.ok ? "ok" : "bad"}`, id: "validation" },
    el("strong", {}, v.ok ? "✓ Valid" : "✗ Fails onnx.checker"),
    v.ok || !v.message ? null : el("div", { class: "verdict-message" }, v.message)));

  const counts = summary.counts || {};
  root.append(section("Properties", propertyList([
    ["IR version", summary.ir_version === undefined ? "" : mono(formatNumber(summary.ir_version))],
    ["Opsets", opsetText(summary.opset_import)],
    ["Producer", [summary.producer_name, summary.producer_version].filter(Boolean).join(" ")],
    ["Domain", summary.domain ? mono(summary.domain) : ""],
    ["Model version", summary.model_version === undefined ? "" : formatNumber(summary.model_version)],
    ["Graph", summary.graph_name ? mono(summary.graph_name) : ""],
    ["Contents", [
      plural(counts.nodes ?? 0, "node"), plural(counts.initializers ?? 0, "initializer"),
      plural(counts.inputs ?? 0, "input"), plural(counts.outputs ?? 0, "output"),
      counts.subgraphs ? plural(counts.subgraphs, "subgraph") : "", counts.functions ? plural(counts.functions, "function") : "",
    ].filter(Boolean).join(" · ")],
  ])));

  if (summary.doc_string) root.append(section("Documentation", el("pre", { class: "doc" }, summary.doc_string)));
  if (ctx.graph && !ctx.graph.path && ctx.graph.doc_string) {
    root.append(section("Main graph documentation", el("pre", { class: "doc" }, ctx.graph.doc_string)));
  }

  root.append(section("Metadata", metadataEditor(summary.metadata_props || [], ctx)));

  const fns = summary.functions || [];
  if (fns.length) {
    root.append(section(`Functions (${fns.length})`, el("ul", { class: "link-list" }, fns.map((f) => el("li", {},
      el("a", { href: ctx.graphHref(f.path), "data-path": f.path }, f.name),
      f.domain ? el("span", { class: "muted" }, ` · ${f.domain}`) : null,
      f.overload ? el("span", { class: "muted" }, ` · overload ${f.overload}`) : null)))));
  }
  const training = (summary.training || []).filter((t) => t.init || t.algo);
  if (training.length) {
    root.append(section("Training", el("ul", { class: "link-list" }, training.map((t) => el("li", {},
      `#${t.index}: `,
      t.init ? el("a", { href: ctx.graphHref(t.init), "data-path": t.init }, "initialization") : null,
      t.init && t.algo ? " · " : "",
      t.algo ? el("a", { href: ctx.graphHref(t.algo), "data-path": t.algo }, "algorithm") : null)))));
  }
}

function metadataEditor(props, ctx) {
  const error = fieldError();
  error.id = "metadata-error";
  const list = el("div", { class: "meta-list", id: "metadata" },
    el("div", { class: "meta-row meta-header" }, el("span", {}, "Key"), el("span", {}, "Value"), el("span", {})));
  for (const { key, value } of props) {
    const input = el("input", { type: "text", name: "value", value, "aria-label": `Value of ${key}`, autocomplete: "off" });
    const del = el("button", { type: "button", class: "btn btn-small btn-danger", title: `Delete ${key}` }, "Delete");
    const form = el("form", { class: "meta-row", "data-meta-key": key },
      el("span", { class: "meta-key mono", title: key }, key), input,
      el("span", { class: "meta-actions" }, el("button", { type: "submit", class: "btn btn-small" }, "Save"), del));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      runInline(form, error, () => ctx.actions.setMetadata(key, input.value));
    });
    del.addEventListener("click", () => runInline(form, error, () => ctx.actions.setMetadata(key, null)));
    list.append(form);
  }
  if (!props.length) list.append(el("p", { class: "muted meta-empty" }, "No metadata yet."));

  const keyInput = el("input", { type: "text", name: "key", placeholder: "new key", "aria-label": "New metadata key", autocomplete: "off" });
  const valueInput = el("input", { type: "text", name: "value", placeholder: "value", "aria-label": "New metadata value", autocomplete: "off" });
  const addForm = el("form", { class: "meta-row meta-add", id: "metadata-add" }, keyInput, valueInput,
    el("span", { class: "meta-actions" }, el("button", { type: "submit", class: "btn btn-small btn-primary" }, "Add")));
  addForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!keyInput.value.trim()) { showError(error, "Give the new entry a key."); keyInput.focus(); return; }
    runInline(addForm, error, () => ctx.actions.setMetadata(keyInput.value, valueInput.value));
  });
  return el("div", { class: "meta-editor" }, list, addForm, error);
}

// ---------------------------------------------------------------- breadcrumb

export function renderBreadcrumb(nav, graph, ctx) {
  clear(nav);
  const crumbs = graph.breadcrumb && graph.breadcrumb.length ? graph.breadcrumb : [{ path: graph.path || "", label: graph.name || "main" }];
  crumbs.forEach((c, i) => {
    if (i) nav.append(el("span", { class: "crumb-sep", "aria-hidden": "true" }, "›"));
    const last = i === crumbs.length - 1;
    nav.append(last
      ? el("span", { class: "crumb current", "aria-current": "page" }, c.label)
      : el("a", { class: "crumb", href: ctx.graphHref(c.path), "data-path": c.path }, c.label));
  });
  const kind = graph.kind === "function" ? "function" : "graph";
  nav.append(el("span", { class: "crumb-info muted" }, `${kind} · ${plural((graph.nodes || []).length, "node")}`));
}
