// The panel of one tensor name of the graph on screen — a graph input or output, an
// initializer (dense or sparse), an intermediate value: its type (declared or inferred), its
// doc_string and metadata_props, quantization annotations, values, producer and readers.
// Editing: a graph input/output's type and shape (io-panel.js), renaming a tensor of the main
// graph or a body everywhere, making it a graph output (in a body: in place of one, as a body's
// outputs are positional), and an initializer's values (replace from .npy or JSON, save as .npy,
// delete when unused).
import { el, clear } from "../widgets/dom.js";
import { canEdit, disclosure, editForm, select, submit } from "../editing/edit-forms.js";
import { metadataEditor } from "../editing/metadata-editor.js";
import { ioRemoveForms, ioSections } from "../editing/io-panel.js";
import { qdqPairOf, removeQdqForm } from "../editing/node-edit.js";
import { npyDownload, npyFilename, renameTensorForm, tensorValueForms } from "../editing/tensor-edit.js";
import { splitForm } from "../editing/split-form.js";
import { formatDims, formatNumber, formatType, nodeLabel } from "../lib/format.js";
import { bodyOf } from "../lib/address.js";
import { markdownBlock } from "../lib/markdown.js";
import { tensorView } from "./tensor-view.js";
import { boxLabel, tensorNameLink } from "./tensor-rows.js";
import { keyValueList, mono, plural, propertyList, section, tag } from "../widgets/ui.js";

/** Everything the graph JSON says about `name`. */
export function tensorFacts(graph, name) {
  const find = (list) => (list || []).find((v) => v.name === name) || null;
  return {
    input: find(graph.inputs),
    output: find(graph.outputs),
    valueInfo: find(graph.value_info),
    inferred: find(graph.inferred_value_info),
    initializer: find(graph.initializers),
    outer: find(graph.outer_value_info), // read from an enclosing graph (or, in a training graph, the main one)
    typedAt: graph.typed_at || null, // in a function's body: the call its inferred types are as at
  };
}

function shapeText(shape) {
  const dims = formatDims(shape);
  if (dims === null) return "";
  return dims === "scalar" ? "scalar (rank 0)" : `[${shape.map((d) => (d === null ? "?" : String(d))).join(", ")}]`;
}

/** `nameCell`: the Name row's value (the name, or the form renaming it). */
function typeSection(name, facts, nameCell = mono(name)) {
  const declared = facts.input || facts.output || facts.valueInfo;
  const known = (v) => v && (v.dtype || (v.type && v.type.kind && v.type.kind !== "unknown"));
  // what the model stores (its declaration, an initializer's own dtype and dims) before what inference adds
  const stored = known(declared) ? declared : facts.initializer && facts.initializer.dtype ? facts.initializer : null;
  const v = stored || (known(facts.inferred) ? facts.inferred : facts.outer);
  if (!v || !(v.dtype || known(v))) {
    return section("Type", propertyList([["Name", nameCell], ["Type", el("span", { class: "muted" }, "not declared in this graph")]]));
  }
  const at = facts.typedAt;
  const source = v === facts.inferred && at ? `inferred as at the call ${nodeLabel(at.name, at.node)}${at.differ ? " (other calls take other types)" : ""}`
    : v === facts.inferred ? "inferred by ONNX shape inference (not stored in the model)"
    : v === facts.initializer ? "the initializer's own" : v === facts.valueInfo ? "declared in value_info"
      : v === facts.outer ? (v.from ? `the graph it comes from (${v.from})` : "the main graph, where it is defined") : "declared by the graph";
  const nonTensor = v.type && v.type.kind && v.type.kind !== "tensor";
  return section("Type", propertyList([
    ["Name", nameCell],
    nonTensor ? ["Type", mono(formatType(v.type), "type-proto")] : null,
    !nonTensor ? ["Data type", v.dtype ? mono(v.dtype) : ""] : null,
    !nonTensor ? ["Shape", v.shape === null || v.shape === undefined ? (v.dtype ? "unknown rank" : "") : mono(shapeText(v.shape))] : null,
    v.type && v.type.denotation ? ["Denotation", mono(v.type.denotation)] : null,
    v.type && v.type.dim_denotations ? ["Axes denote", mono(v.type.dim_denotations.map((d) => d || "?").join(" × "))] : null,
    facts.initializer && facts.initializer.sparse ? ["Storage", `sparse · ${formatNumber(facts.initializer.nnz)} non-zero values`] : null,
    facts.initializer && facts.initializer.external ? ["Storage", "external data file"] : null,
    ["Type from", el("span", { class: "muted" }, source)],
  ]));
}

function docAndMetadata(name, facts, graph, ctx) {
  const out = [];
  const entries = [facts.input, facts.output, facts.valueInfo, facts.initializer].filter(Boolean);
  const docs = [...new Set(entries.map((e) => e.doc_string).filter(Boolean))];
  for (const doc of docs) out.push(section("Documentation", markdownBlock(doc, { cls: "doc" })));
  // one entry a key: set_metadata with `tensor` sets it on each of the value's entries
  const props = [...new Map(entries.flatMap((e) => e.metadata_props || []).map((p) => [p.key, p])).values()];
  const meta = props.length ? section(`Metadata (${props.length})`, keyValueList(props, { cls: "value-metadata" })) : null;
  // a value the graph declares (not a function's, which has only names): its metadata edited here
  if (canEdit(ctx) && entries.length && graph.kind !== "function") {
    const box = meta || section("Metadata (0)");
    box.append(disclosure(props.length ? "Edit…" : "Add…",
      () => metadataEditor(props, ctx, { target: graph.path || "", tensor: name, idPrefix: "value-metadata-edit" }), { cls: "ed-value-meta-toggle" }));
    out.push(box);
  } else if (meta) {
    out.push(meta);
  }
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

/** Does this box's node read `name`: as an input, or through its branches or body (its graph
 * JSON's `captures`: what they read from this graph, at any depth)? */
function readsValue(b, name) {
  return b.kind === "node" && ((b.node.inputs || []).includes(name) || (b.node.captures || []).includes(name));
}

/** Only its bodies read `name` (not one of its own inputs). */
function capturesOnly(b, name) {
  return b.kind === "node" && !(b.node.inputs || []).includes(name) && (b.node.captures || []).includes(name);
}

function producedAndRead(name, ctx) {
  const { model } = ctx;
  const producer = model.producer.get(name);
  const readers = [...model.boxes.values()].filter((b) => readsValue(b, name) || (b.kind === "output" && b.name === name));
  const link = (id) => el("button", { type: "button", class: "linklike", onclick: () => ctx.actions.select(id) }, boxLabel(model, id, ctx.graph));
  const reader = (b) => capturesOnly(b, name)
    ? el("span", { class: "reader-capture" }, link(b.id), el("span", { class: "muted" }, ` (in its ${b.node.op_type === "If" ? "branches" : "body"})`))
    : link(b.id);
  const rows = [];
  const graph = ctx.graph || {};
  const op = holderOp(graph);
  if (producer && model.boxes.get(producer)?.kind === "node") rows.push(["Produced by", link(producer)]);
  else if (producer && model.boxes.get(producer)?.kind === "input") {
    // a body's input is its Loop's or Scan's to give, each iteration (the Role section says what)
    rows.push(["Produced by", op ? `the ${op}, as it runs this body (a body input)` : "the caller (graph input)"]);
  }
  rows.push(["Read by", readers.length ? el("span", {}, readers.map((b, i) => [i ? ", " : "", reader(b)]))
    : el("span", { class: "muted" }, "nothing in this graph")]);
  // read inside a node's bodies: which nodes, in which of them (a merged decoder's weights)
  if (readers.some((b) => capturesOnly(b, name)) && ctx.actions.loadReaders) rows.push(["Inside", innerReaders(name, ctx)]);
  return section("Connections", propertyList(rows));
}

const INNER_SHOWN = 8; // readers inside bodies listed; the rest counted

/** The nodes inside bodies that read `name` from this graph, each a link to it in its graph. */
function innerReaders(name, ctx) {
  const holder = el("span", { class: "muted inner-readers" }, "…");
  const graph = ctx.graph || {};
  ctx.actions.loadReaders(name, graph.path || "").then((answer) => {
    const inner = answer.readers.filter((r) => r.graph !== answer.path);
    clear(holder);
    holder.classList.remove("muted");
    holder.append(...inner.slice(0, INNER_SHOWN).map((r, i) => [i ? ", " : "",
      el("a", { class: "inner-reader", href: ctx.nodeHref(r.graph, r.node), "data-node": r.node }, `${r.op_type} ${nodeLabel(r.name, r.node)}`),
      el("span", { class: "muted" }, ` (${bodyOf(r.node)})`)]).flat());
    const more = inner.length - INNER_SHOWN + (answer.truncated ? 1 : 0);
    if (more > 0) holder.append(el("span", { class: "muted" }, `, and ${answer.truncated ? "more" : plural(more, "more reader")}`));
  }).catch(() => { holder.textContent = "could not be listed"; });
  return holder;
}

/** How a DequantizeLinear's scale applies, in words: "per tensor", "per channel along axis 0",
 * "by blocks of 32 along axis 1" (its attributes at their defaults when left out: axis 1). */
function dequantizeWords(node, scaleShape) {
  const attr = (n, d) => { const a = (node.attributes || []).find((x) => x.name === n); return a && typeof a.value === "number" ? a.value : d; };
  const block = attr("block_size", 0);
  if (block > 0) return `by blocks of ${block} along axis ${attr("axis", 1)}`;
  if (!scaleShape || scaleShape.length === 0 || (scaleShape.length === 1 && scaleShape[0] === 1)) return "per tensor";
  return `per channel along axis ${attr("axis", 1)}`;
}

/** "Dequantized values" of a value a DequantizeLinear writes from constants (an int8 or int4
 * weight, its scale and zero point): what its reader multiplies by, computed by the server
 * (views/dequantized.py), which the model holds nowhere as such. */
function dequantizedSection(name, ctx) {
  const graph = ctx.graph || {};
  const producer = ctx.model && ctx.model.producer.get(name);
  const box = producer && ctx.model.boxes.get(producer);
  const node = box && box.kind === "node" ? box.node : null;
  if (!node || node.op_type !== "DequantizeLinear" || !["", "ai.onnx"].includes(node.domain || "")) return null;
  const inits = new Map((graph.initializers || []).map((t) => [t.name, t]));
  const [q, scale, zero] = node.inputs || [];
  if (!inits.has(q) || !inits.has(scale) || (zero && !inits.has(zero))) return null;
  const ref = graph.path ? `@${graph.path}:${name}` : name;
  const how = dequantizeWords(node, inits.get(scale).shape);
  return section("Dequantized values",
    el("p", { class: "muted dequantized-formula" }, "(", mono(q), zero ? [" − ", mono(zero)] : "", ") × ", mono(scale), `, ${how}: what its readers compute with, as float32`),
    tensorView(ref, ctx.actions.loadTensor));
}

/** "Dequantized values" of a MatMulNBits' packed weights (its B): the N×K values of `bits` bits
 * two (or more) to a byte, each block's scale and zero point applied (views/dequantized.py), where
 * the Values above show the bytes they are packed in. */
function unpackedSection(name, ctx) {
  const graph = ctx.graph || {};
  const reader = ctx.model && [...ctx.model.boxes.values()].find((b) => b.kind === "node" && b.node.op_type === "MatMulNBits"
    && b.node.domain === "com.microsoft" && (b.node.inputs || [])[1] === name);
  if (!reader) return null;
  const attr = (n, d) => { const a = (reader.node.attributes || []).find((x) => x.name === n); return a && typeof a.value === "number" ? a.value : d; };
  const [bits, block] = [attr("bits", 4), attr("block_size", 0)];
  const zero = (reader.node.inputs || [])[3];
  const ref = `${graph.path ? `@${graph.path}:` : ""}${name}#dequantized`;
  return section("Dequantized values",
    el("p", { class: "muted dequantized-formula" }, `${attr("N", "N")} rows of ${attr("K", "K")} values of ${bits} bits, `,
      `${8 / bits} to a byte below: (q − `, zero ? mono(zero) : `${2 ** (bits - 1)}`, ") × ", mono((reader.node.inputs || [])[2] || "scales"),
      `, by blocks of ${block} along K — what the MatMulNBits computes with (the transpose of a MatMul's K × N weight)`),
    tensorView(ref, ctx.actions.loadTensor));
}

/** The value a QuantizeLinear → DequantizeLinear pair writes (the drawing's "· QDQ UINT8" edge,
 * what a click on it opens): the pair removed from here, as from either node's panel. */
function qdqSection(name, ctx) {
  const producer = ctx.model && ctx.model.producer.get(name);
  const box = producer && ctx.model.boxes.get(producer);
  if (!box || box.kind !== "node" || box.node.op_type !== "DequantizeLinear") return null;
  const pair = qdqPairOf(box.node, ctx.graph);
  if (!pair) return null;
  return section("QDQ pair", el("p", { class: "muted" }, "A QuantizeLinear → DequantizeLinear pair writes this value: ", mono(pair.q.inputs[0]), " quantized and back."),
    removeQdqForm(pair, ctx));
}

function sizeOf(shape) {
  return (shape || []).reduce((a, d) => a * Number(d), 1);
}

/** Replace an initializer's values (set_initializer) from an uploaded .npy or JSON. */
function replaceValuesSection(name, init, ctx) {
  const graphPath = (ctx.graph && ctx.graph.path) || "";
  const apply = (value, { allowTypeChange, fileDtype }) => {
    const op = { op: "set_initializer", name, value };
    if (graphPath) op.graph = graphPath;
    if (allowTypeChange) op.allow_type_change = true;
    if (allowTypeChange && value.npy && fileDtype) op.dtype = fileDtype; // keep the file's own dtype
    return ctx.actions.edit([op]);
  };
  const s = section("Replace values", tensorValueForms({ ...init, size: init.size ?? sizeOf(init.shape) }, ctx, apply, { what: "initializer" }));
  s.classList.add("ed-section");
  s.id = "initializer-edit";
  return s;
}

/** Whether `name` is a value of the graph on screen (the main graph or a body, not a model
 * function) that rename_tensor can rename: not one it reads from an enclosing graph. */
function ownTensor(name, facts, ctx) {
  const graph = ctx.graph || {};
  if (graph.kind === "function") return false;
  if (facts.input || facts.initializer) return true;
  const producer = ctx.model && ctx.model.producer.get(name);
  if (producer && ctx.model.boxes.get(producer)?.kind === "node") return true;
  return !!facts.output && !graph.path; // a body's output from outside it is not its own
}

/** A body's value made one of its outputs, in place of the one chosen (add_output with replace). */
function replaceOutputForm(name, graph, ctx, dtype) {
  const outputs = (graph.outputs || []).map((o) => o.name);
  // first the output of its own element type (a Loop body's BOOL condition first was always refused)
  const fits = (graph.outputs || []).find((o) => dtype && o.dtype === dtype);
  const which = select("replace", outputs.map((o) => [o, o]), fits ? fits.name : outputs[0], { class: "mono", "aria-label": "The output it replaces" });
  const { form } = editForm("ed-inline ed-replace-output", [
    el("div", { class: "ed-row" }, submit("Make it the output", "btn btn-small"), el("span", { class: "muted" }, "in place of"), which),
    el("div", { class: "ed-hint muted" }, "A body's outputs are positional (one per output of its If or Loop): this tensor takes the chosen one's place."),
  ], () => ctx.actions.edit([{ op: "add_output", graph: graph.path, tensor: name, replace: which.value }]));
  return form;
}

/** The operator holding the body on screen ("Loop", "Scan", "If"), or "" in the main graph. */
function holderOp(graph) {
  const crumbs = graph.breadcrumb || [];
  return graph.path && crumbs.length ? crumbs[crumbs.length - 1].op_type || "" : "";
}

/** A Loop's or Scan's body value collected each iteration (add_output without replace). */
function scanOutputForm(name, graph, op, ctx) {
  const { form } = editForm("ed-inline ed-scan-output", [
    el("div", { class: "ed-row" }, submit("Collect each iteration", "btn btn-small"),
      el("span", { class: "muted ed-hint" }, `A new scan output: the ${op} stacks this value from every iteration into a new output of its own.`)),
  ], () => ctx.actions.edit([{ op: "add_output", graph: graph.path, tensor: name }]));
  return form;
}

/** The Name row's rename form (rename_tensor, everywhere), where the name is shown, as a node's
 * is (QA34: a graph input's rename sat two screens down, under "Edit tensor"); the panel follows
 * the new name. */
function renameRow(name, ctx) {
  const graph = ctx.graph || {};
  const sel = ctx.selection && ctx.selection.id === name ? ctx.selection : { kind: "tensor", id: name };
  const form = renameTensorForm(name, ctx, (to) => ({ kind: sel.kind, id: to }));
  form.title = `Renamed everywhere: ${graph.path
    ? "its producer, readers, this graph's inputs/outputs, value_info and the bodies inside it follow; other graphs keep their names."
    : "its producer, readers, graph inputs/outputs, value_info and subgraphs follow."}`;
  return form;
}

/** Add as graph output, delete an unused initializer, remove a graph input or output. */
function tensorEditSection(name, facts, ctx, box) {
  const graph = ctx.graph || {};
  const parts = [];
  if (ownTensor(name, facts, ctx)) {
    if (graph.path && !facts.output && (graph.outputs || []).length) {
      const typed = facts.valueInfo || facts.inferred || facts.input || null;
      parts.push(replaceOutputForm(name, graph, ctx, typed && typed.dtype));
      const op = holderOp(graph);
      if (op === "Loop" || op === "Scan") parts.push(scanOutputForm(name, graph, op, ctx));
    } else if (!facts.output) {
      const { form } = editForm("ed-inline ed-add-output", [
        el("div", { class: "ed-row" }, submit("Add as graph output", "btn btn-small"),
          el("span", { class: "muted ed-hint" }, "The model then returns this tensor too.")),
      ], () => ctx.actions.edit([{ op: "add_output", tensor: name }]));
      parts.push(form);
      // a value a node of the main graph computes: a place to cut the model in two
      if (!graph.path && !facts.input && !facts.initializer) parts.push(splitForm(name, ctx));
    }
  } else if (!graph.path && box && box.kind === "outer") {
    // a name produced nowhere: nothing to edit
  } else if (graph.path && graph.kind !== "function" && !facts.initializer) {
    parts.push(el("p", { class: "muted ed-hint" }, "It comes from a graph around this one: rename it there."));
  }
  if (facts.initializer && !facts.initializer.sparse && graph.kind !== "function") {
    const readers = ctx.model ? [...ctx.model.boxes.values()].filter((b) => readsValue(b, name)).length : 0;
    const used = readers > 0 || !!facts.output;
    const op = { op: "delete_initializer", name };
    if (graph.path) op.graph = graph.path;
    const { form } = editForm("ed-inline ed-delete-initializer", [
      el("div", { class: "ed-row" }, el("button", { type: "submit", class: "btn btn-small btn-danger", disabled: used }, "Delete initializer"),
        el("span", { class: "muted ed-hint" }, used ? `In use (${plural(readers, "reader")}${facts.output ? ", a graph output" : ""}): remove its readers first.` : "Nothing reads it.")),
    ], () => ctx.actions.edit([op], { selection: null }));
    parts.push(form);
  }
  parts.push(...ioRemoveForms(name, facts, ctx));
  if (!parts.length) return null;
  const s = section("Edit tensor", ...parts);
  s.classList.add("ed-section");
  s.id = "tensor-edit";
  return s;
}

const KIND_LABEL = { input: "Graph input", output: "Graph output" };

/** A body's input or output: the part it plays for its Loop, Scan or If (the graph JSON's
 * `role`, loop_roles.py), with what it pairs with: "Carried: h0 on entry (the Loop's input 3),
 * hidden_out after each iteration; the Loop's final_hidden (output 1) after the last." */
function roleSection(facts, graph) {
  const roles = [facts.input, facts.output].filter((v) => v && v.role).map((v) => v.role);
  if (!roles.length) return null;
  const op = holderOp(graph) || "node";
  // "Carried: h0 on entry …": the word before the colon stands out, as the node panel's tag does
  const words = (text) => {
    const at = text.indexOf(": ");
    return at > 0 && at < 24 ? [el("strong", { class: "value-role-kind" }, text.slice(0, at + 1)), text.slice(at + 1)] : [text];
  };
  const s = section(`Role in the ${op}`, ...roles.map((r) => el("div", { class: "value-role", "data-role": r.kind },
    el("span", { class: "value-role-text" }, words(r.text)))));
  s.id = "value-role";
  return s;
}

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
  if (!kind && !facts.initializer && facts.outer && facts.outer.initializer) kind = "Initializer of an enclosing graph";
  if (!kind) kind = facts.initializer ? (facts.initializer.sparse ? "Sparse initializer" : "Initializer") : facts.input ? "Graph input" : facts.output ? "Graph output" : "Value";
  const op = holderOp(graph); // a body's own inputs and outputs are its node's, not a caller's
  if (op && (kind === "Graph input" || kind === "Graph output")) kind = `${op} ${op === "If" ? "branch" : "body"} ${kind === "Graph input" ? "input" : "output"}`;
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, kind),
    el("h2", { class: "panel-title mono" }, name),
    // an initializer's type is its own, never inference's (the Type section says so too)
    facts.inferred && !facts.valueInfo && !(facts.initializer && facts.initializer.dtype) ? el("div", { class: "panel-subtitle" }, tag("type inferred")) : null));
  const role = roleSection(facts, graph);
  if (role) root.append(role);
  const editing = canEdit(ctx);
  root.append(typeSection(name, facts, editing && ownTensor(name, facts, ctx) ? renameRow(name, ctx) : mono(name)));
  root.append(...docAndMetadata(name, facts, graph, ctx));
  const quant = quantizationSection(name, graph, ctx);
  if (quant) root.append(quant);
  // an initializer listed as a graph input too (IR < 4): its values first, the input's
  // declaration after them (QA28: the panel opened on "Graph input: type and shape")
  const io = editing ? ioSections(name, facts, ctx) : [];
  if (!facts.initializer) root.append(...io);
  // a MatMulNBits' packed weights: the values it computes with first, then the bytes they are packed in
  const unpacked = facts.initializer ? unpackedSection(name, ctx) : null;
  if (unpacked) root.append(unpacked);
  if (facts.initializer && facts.initializer.ref) {
    const init = facts.initializer;
    const values = section(unpacked ? "Values as stored (packed bytes)" : "Values", tensorView(init.ref, ctx.actions.loadTensor));
    if (!init.sparse) values.append(npyDownload({ ...init, size: init.size ?? sizeOf(init.shape) }, ctx, npyFilename(name)));
    root.append(values);
    if (editing && !init.sparse && graph.kind !== "function") root.append(replaceValuesSection(name, init, ctx));
  }
  if (facts.initializer) root.append(...io);
  else if (facts.outer && facts.outer.initializer) root.append(enclosingWeightSection(name, facts.outer, ctx));
  const dequantized = facts.initializer ? null : dequantizedSection(name, ctx);
  if (dequantized) root.append(dequantized);
  const quantized = editing ? qdqSection(name, ctx) : null;
  if (quantized) root.append(quantized);
  if (ctx.model) root.append(producedAndRead(name, ctx));
  const edits = editing ? tensorEditSection(name, facts, ctx, box) : null;
  if (edits) root.append(edits);
  if (box && box.kind === "outer" && !box.id.startsWith("init:")) {
    root.append(el("p", { class: "muted panel-note" }, box.enclosing
      ? "Nothing in this graph produces this name: it is read from an enclosing graph."
      : "Nothing in this graph produces this name, and this graph has no enclosing scope."));
  }
}

/** A weight this graph reads from an enclosing graph (a merged decoder's branches read all of
 * theirs from the main graph): its values, and where it is held (edited there). */
function enclosingWeightSection(name, outer, ctx) {
  const init = outer.initializer;
  const where = outer.from ? `the graph ${outer.from}` : "the main graph";
  const s = section("Values", tensorView(init.ref, ctx.actions.loadTensor));
  s.append(npyDownload({ ...init, size: init.size ?? sizeOf(init.shape) }, ctx, npyFilename(name)));
  s.append(el("p", { class: "muted panel-note" }, `An initializer of ${where}, read here by name: its values are replaced there.`));
  return s;
}

/** The panel of a box that stands for a value (graph input/output, outer-scope value). */
export function renderValuePanel(root, box, ctx) {
  renderTensorPanel(root, box.name, ctx, box);
}
