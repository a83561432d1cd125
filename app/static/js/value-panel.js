// The panel of one tensor name of the graph on screen — a graph input or output, an
// initializer (dense or sparse), an intermediate value: its type (declared or inferred), its
// doc_string and metadata_props, quantization annotations, values, producer and readers.
import { el, clear } from "./dom.js";
import { formatDims, formatNumber, formatType } from "./format.js";
import { markdownBlock } from "./markdown.js";
import { tensorView } from "./tensor-view.js";
import { boxLabel, tensorNameLink } from "./tensor-rows.js";
import { keyValueList, mono, propertyList, section, tag } from "./ui.js";

/** Everything the graph JSON says about `name`. */
export function tensorFacts(graph, name) {
  const find = (list) => (list || []).find((v) => v.name === name) || null;
  return {
    input: find(graph.inputs),
    output: find(graph.outputs),
    valueInfo: find(graph.value_info),
    inferred: find(graph.inferred_value_info),
    initializer: find(graph.initializers),
  };
}

function shapeText(shape) {
  const dims = formatDims(shape);
  if (dims === null) return "";
  return dims === "scalar" ? "scalar (rank 0)" : `[${shape.map((d) => (d === null ? "?" : String(d))).join(", ")}]`;
}

function typeSection(name, facts) {
  const declared = facts.input || facts.output || facts.valueInfo;
  const known = (v) => v && (v.dtype || (v.type && v.type.kind && v.type.kind !== "unknown"));
  const v = known(declared) ? declared : known(facts.inferred) ? facts.inferred : facts.initializer;
  if (!v || !(v.dtype || known(v))) {
    return section("Type", propertyList([["Name", mono(name)], ["Type", el("span", { class: "muted" }, "not declared in this graph")]]));
  }
  const source = v === facts.inferred ? "inferred by ONNX shape inference (not stored in the model)"
    : v === facts.initializer ? "the initializer's own" : v === facts.valueInfo ? "declared in value_info" : "declared by the graph";
  const nonTensor = v.type && v.type.kind && v.type.kind !== "tensor";
  return section("Type", propertyList([
    ["Name", mono(name)],
    nonTensor ? ["Type", mono(formatType(v.type), "type-proto")] : null,
    !nonTensor ? ["Data type", v.dtype ? mono(v.dtype) : ""] : null,
    !nonTensor ? ["Shape", v.shape === null || v.shape === undefined ? (v.dtype ? "unknown rank" : "") : mono(shapeText(v.shape))] : null,
    facts.initializer && facts.initializer.sparse ? ["Storage", `sparse · ${formatNumber(facts.initializer.nnz)} non-zero values`] : null,
    facts.initializer && facts.initializer.external ? ["Storage", "external data file"] : null,
    ["Type from", el("span", { class: "muted" }, source)],
  ]));
}

function docAndMetadata(name, facts) {
  const out = [];
  const entries = [facts.input, facts.output, facts.valueInfo, facts.initializer].filter(Boolean);
  const docs = [...new Set(entries.map((e) => e.doc_string).filter(Boolean))];
  for (const doc of docs) out.push(section("Documentation", markdownBlock(doc, { cls: "doc" })));
  const props = entries.flatMap((e) => e.metadata_props || []);
  if (props.length) out.push(section(`Metadata (${props.length})`, keyValueList(props, { cls: "value-metadata" })));
  return out;
}

function quantizationSection(name, graph, ctx) {
  const own = (graph.quantization_annotation || []).filter((a) => a.tensor_name === name);
  const asParam = (graph.quantization_annotation || []).flatMap((a) => (a.quant_parameter_tensor_names || [])
    .filter((p) => p.value === name).map((p) => ({ key: p.key, tensor: a.tensor_name })));
  if (!own.length && !asParam.length) return null;
  return section("Quantization", el("div", { class: "quant" },
    own.map((a) => el("div", { class: "quant-own" },
      el("div", { class: "muted" }, "Parameters of this tensor's quantization:"),
      el("table", { class: "kv-table" }, el("tbody", {}, (a.quant_parameter_tensor_names || []).map((p) => el("tr", { "data-key": p.key },
        el("td", { class: "mono" }, p.key), el("td", {}, tensorNameLink(p.value, ctx, "")))))))),
    asParam.map((p) => el("div", { class: "quant-param" }, "This tensor is the ", mono(p.key), " of ", tensorNameLink(p.tensor, ctx, ""), "."))));
}

function producedAndRead(name, ctx) {
  const { model } = ctx;
  const producer = model.producer.get(name);
  const readers = [...model.boxes.values()].filter((b) => (b.kind === "node" && (b.node.inputs || []).includes(name))
    || (b.kind === "output" && b.name === name));
  const link = (id) => el("button", { type: "button", class: "linklike", onclick: () => ctx.actions.select(id) }, boxLabel(model, id));
  const rows = [];
  if (producer && model.boxes.get(producer)?.kind === "node") rows.push(["Produced by", link(producer)]);
  else if (producer && model.boxes.get(producer)?.kind === "input") rows.push(["Produced by", "the caller (graph input)"]);
  rows.push(["Read by", readers.length ? el("span", {}, readers.map((b, i) => [i ? ", " : "", link(b.id)]))
    : el("span", { class: "muted" }, "nothing in this graph")]);
  return section("Connections", propertyList(rows));
}

const KIND_LABEL = { input: "Graph input", output: "Graph output" };

/**
 * The panel of tensor `name`. `box` (optional) is the drawing's box for it: a graph input or
 * output, or a dashed box for a value from an enclosing graph.
 */
export function renderTensorPanel(root, name, ctx, box = null) {
  clear(root);
  const graph = ctx.graph || {};
  const facts = tensorFacts(graph, name);
  let kind = box ? KIND_LABEL[box.kind] : null;
  if (!kind && box && box.kind === "outer") kind = box.id.startsWith("init:") ? "Initializer" : box.enclosing ? "Value from an enclosing graph" : "Value produced nowhere";
  if (!kind) kind = facts.initializer ? (facts.initializer.sparse ? "Sparse initializer" : "Initializer") : facts.input ? "Graph input" : facts.output ? "Graph output" : "Value";
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, kind),
    el("h2", { class: "panel-title mono" }, name),
    facts.inferred && !facts.valueInfo ? el("div", { class: "panel-subtitle" }, tag("type inferred")) : null));
  root.append(typeSection(name, facts));
  root.append(...docAndMetadata(name, facts));
  const quant = quantizationSection(name, graph, ctx);
  if (quant) root.append(quant);
  if (facts.initializer && facts.initializer.ref) {
    root.append(section("Values", tensorView(facts.initializer.ref, ctx.actions.loadTensor)));
  }
  if (ctx.model) root.append(producedAndRead(name, ctx));
  if (box && box.kind === "outer" && !box.id.startsWith("init:")) {
    root.append(el("p", { class: "muted panel-note" }, box.enclosing
      ? "Nothing in this graph produces this name: it is read from an enclosing graph."
      : "Nothing in this graph produces this name, and this graph has no enclosing scope."));
  }
}

/** The panel of a box that stands for a value (graph input/output, outer-scope value). */
export function renderValuePanel(root, box, ctx) {
  renderTensorPanel(root, box.name, ctx, box);
}
