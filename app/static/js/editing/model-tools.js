// Whole-model editing in the model panel: the model fields (doc_string, producer, domain,
// model_version), opset conversion, float16 conversion, int8 quantization (dynamic, or static
// on calibration samples), 4-bit weights by blocks (weight-only-form.js), simplification,
// shape inference, clean-up, subgraph extraction, another model joined before or after
// (compose-form.js), graph inputs, and the download choices. A tool's report (the server's
// "changes") stays shown in the panel for the revision it made.
import { el } from "../widgets/dom.js";
import { parseJSON } from "../lib/api.js";
import { actionBar, canEdit, checkbox, disclosure, editForm, field, loadCatalog, select, submit, textInput } from "./edit-forms.js";
import { addInputForm } from "./io-panel.js";
import { callout, mono } from "../widgets/ui.js";
import { formatBytes, formatShape, formatValueType, plural } from "../lib/format.js";
import { inputsFromNpz } from "../lib/arrays-upload.js";
import { composeForm } from "./compose-form.js";
import { weightCheck } from "./weight-check.js";
import { weightOnlyForm } from "./weight-only-form.js";
import { fixedShapeOps, symbolicDims } from "../lib/input-dims.js";
import { followFirstAxes } from "../lib/dim-fields.js";
import { targetForm } from "./target-form.js";

const reports = new Map(); // model id -> {revision, title, lines}

/** Run `ops` as a tool; `compare`: its report offers to run the result against the revision it
 * was made from (a conversion that changes numbers: how far did the outputs move?). */
async function runTool(ctx, title, ops, { compare = false } = {}) {
  const base = ctx.summary ? ctx.summary.revision : null;
  // whole-model tools rewrite the graph: the drawing starts over at its top
  const result = await ctx.actions.edit(ops, { home: true });
  if (!result || !ctx.summary || result.unchanged) return;
  const report = { revision: result.revision, title, lines: result.changes || [], base: compare ? base : null };
  reports.set(ctx.summary.id, report);
  // the panel was redrawn before the edit resolved: put the report into the one on screen
  const tools = document.getElementById("model-tools");
  if (tools && !tools.querySelector(".ed-report")) {
    const heading = tools.querySelector("h3");
    const box = reportFor({ id: ctx.summary.id, revision: result.revision }, ctx);
    if (heading && box) heading.after(box);
  }
}

/** The report of the tool that made the revision on screen, if one did. */
function reportFor(summary, ctx = null) {
  const r = reports.get(summary.id);
  if (!r || r.revision !== summary.revision) return null;
  const check = r.base !== null && r.base !== undefined && ctx
    ? el("button", { type: "button", class: "btn btn-small ed-report-run", onclick: () => ctx.actions.openRun(r.base) }, `Compare its outputs with revision ${r.base}…`)
    : null;
  return callout("ok", `${r.title} — saved as revision ${r.revision}`, el("ul", { class: "ed-report" }, r.lines.map((line) => el("li", {}, line))), check);
}

// ------------------------------------------------------------------ model fields

const FIELDS = [
  ["producer_name", "Producer name"],
  ["producer_version", "Producer version"],
  ["domain", "Domain"],
  ["model_version", "Model version"],
];

export function modelFieldsForm(summary, ctx) {
  const inputs = {};
  const rows = FIELDS.map(([name, label]) => {
    const value = summary[name] === undefined || summary[name] === null ? "" : String(summary[name]);
    inputs[name] = textInput(name, value, { class: name === "model_version" ? "mono" : "", inputmode: name === "model_version" ? "numeric" : null });
    return field(label, inputs[name]);
  });
  const doc = el("textarea", { name: "doc_string", rows: 4, class: "ed-doc", spellcheck: "true" });
  doc.value = summary.doc_string || "";
  const { form } = editForm("ed-model-fields", [
    el("div", { class: "ed-grid2" }, rows),
    field("Documentation (doc_string, Markdown)", doc),
    el("div", { class: "ed-actions" }, submit("Save fields")),
  ], async () => {
    const ops = [];
    for (const [name, label] of FIELDS) {
      const text = inputs[name].value;
      const old = summary[name] === undefined || summary[name] === null ? "" : String(summary[name]);
      if (text === old) continue;
      let value = text;
      if (name === "model_version") {
        if (!/^-?\d+$/.test(text.trim())) throw new Error(`${label} must be a whole number.`);
        value = parseJSON(text.trim());
      }
      ops.push({ op: "set_model_field", field: name, value });
    }
    if (doc.value !== (summary.doc_string || "")) ops.push({ op: "set_model_field", field: "doc_string", value: doc.value });
    if (!ops.length) throw new Error("Nothing changed.");
    await ctx.actions.edit(ops);
  }, { id: "model-fields" });
  return form;
}

// ------------------------------------------------------------------ tools

// the domains besides ai.onnx whose versions onnx defines (their import can be moved); the
// others (com.microsoft) are onnxruntime's, which onnx's schemas can't check
const CONVERTED_DOMAINS = ["ai.onnx.ml", "ai.onnx.preview.training"];

function importedVersion(summary, domain) {
  const o = (summary.opset_import || []).find((x) => (domain === "" ? !x.domain || x.domain === "ai.onnx" : x.domain === domain));
  return o ? Number(o.version) : null;
}

/** A domain's row: "<domain> opset N → [version] Convert". */
function opsetRow(domain, current, ctx) {
  const name = domain || "ai.onnx";
  const picker = select("version", [[String(current), `${current} (current)`]], String(current), { class: "mono", "aria-label": `Target ${name} opset version` });
  picker.id = domain ? `opset-version-${domain.replaceAll(".", "-")}` : "opset-version";
  loadCatalog().then(({ LATEST_OPSET }) => {
    const latest = Math.max(LATEST_OPSET[domain] || current, current);
    const option = (v) => el("option", { value: String(v), selected: v === current }, v === current ? `${v} (current)` : String(v));
    const range = (from, to) => Array.from({ length: Math.max(0, from - to + 1) }, (_, k) => option(from - k));
    // going down rarely works: onnx's converter has adapters for few operators' older versions
    picker.replaceChildren(
      ...(latest > current ? [el("optgroup", { label: "newer" }, ...range(latest, current + 1))] : []),
      option(current),
      ...(current > 1 ? [el("optgroup", { label: domain ? "older" : "older (often refused: few operators convert down)" }, ...range(current - 1, 1))] : []),
    );
  }).catch(() => {});
  const { form } = editForm("ed-opset", [
    el("div", { class: "ed-row" }, el("label", { class: "ed-label ed-inline-label", for: picker.id }, `${name} opset ${current} →`), picker,
      submit("Convert")),
  ], async () => {
    const version = Number(picker.value);
    if (version === current) throw new Error(`The model is already at ${name} opset ${current}: pick another version.`);
    // an adapter may rewrite an operator (Upsample -> Resize, Split's attribute -> input): did the outputs move?
    await runTool(ctx, "Opset conversion", [{ op: "convert_opset", version, ...(domain ? { domain } : {}) }], { compare: true });
  }, { id: domain ? `convert-opset-${domain.replaceAll(".", "-")}` : "convert-opset" });
  return form;
}

function opsetForm(summary, ctx) {
  const current = importedVersion(summary, "");
  const others = CONVERTED_DOMAINS.map((d) => [d, importedVersion(summary, d)]).filter(([, v]) => v !== null);
  if (current === null && !others.length) return el("p", { class: "muted" }, "The model imports no ai.onnx opset: there is nothing to convert.");
  return el("div", { class: "opset-forms" },
    el("p", { class: "ed-hint muted" }, current !== null
      ? "onnx.version_converter rewrites the operators for the new opset; it refuses, with its reason, when one can't be converted."
      : "The model imports no ai.onnx opset."),
    current !== null ? opsetRow("", current, ctx) : null,
    others.length ? el("p", { class: "ed-hint muted" }, "Other domains: the import moves where each node fits its operator's definition there (the converter knows only ai.onnx); the checks and a run confirm it.") : null,
    ...others.map(([d, v]) => opsetRow(d, v, ctx)));
}

function inferForm(ctx) {
  const { form } = editForm("ed-infer", [
    el("p", { class: "ed-hint muted" }, "Stores the types and shapes ONNX shape inference finds as value_info (in every graph), dims it leaves unknown named after the inputs' where onnxruntime's symbolic inference can (batch×sequence). What the model already declares stays."),
    el("div", { class: "ed-actions" }, submit("Run shape inference")),
  ], () => runTool(ctx, "Shape inference", [{ op: "infer_shapes" }]), { id: "infer-shapes" });
  return form;
}

function cleanupForm(ctx) {
  const unread = (ctx.summary && ctx.summary.unread_inputs) || [];
  const { form } = editForm("ed-cleanup", [
    el("p", { class: "ed-hint muted" }, "Removes from the main graph what no graph output depends on:"),
    checkbox("nodes", "Dead nodes", true),
    checkbox("initializers", "Unused initializers", true),
    checkbox("value_info", "Stale value_info", true, "entries of values no longer there"),
    (ctx.summary && (ctx.summary.functions || []).length) ? checkbox("functions", "Uncalled functions", true, "model-local functions no node calls") : null,
    checkbox("initializer_inputs", "Weights listed as inputs", false, "graph inputs repeating an initializer (old exports): the weights become constants, as quantization and folding need"),
    // an input nothing reads (a flag frozen, then simplified): offered, not ticked — its callers
    // feed it, and would have to stop (QA45 #9)
    unread.length ? checkbox("unread_inputs", `Inputs nothing reads (${unread.join(", ")})`, false, "callers stop feeding them") : null,
    el("div", { class: "ed-actions" }, submit("Clean up")),
  ], async (f) => {
    const op = { op: "cleanup" };
    for (const k of ["nodes", "initializers", "value_info", "functions", "initializer_inputs", "unread_inputs"]) {
      if (f.elements[k]) op[k] = f.elements[k].checked; // "functions" only for a model that has some
    }
    if (!op.nodes && !op.initializers && !op.value_info && !op.functions && !op.initializer_inputs && !op.unread_inputs) throw new Error("Tick at least one thing to clean up.");
    await runTool(ctx, "Clean-up", [op]);
  }, { id: "cleanup" });
  return form;
}

function names(text) {
  return String(text || "").split(/[\n,]+/).map((s) => s.trim()).filter(Boolean);
}

function float16Form(ctx) {
  const blockOps = textInput("op_block_list", "", { class: "mono", placeholder: "onnxruntime's list (ops without float16 kernels)", "aria-label": "Operators kept in float32" });
  const blockNodes = textInput("node_block_list", "", { class: "mono", placeholder: "none", "aria-label": "Nodes kept in float32" });
  const { form } = editForm("ed-float16", [
    el("p", { class: "ed-hint muted" }, "Halves the weights and computes in float16 (onnxruntime's converter): values past float16's range are clamped; operators without float16 kernels stay float32 with Cast nodes around them."),
    checkbox("keep_io_types", "Keep float32 inputs and outputs", true, "Cast nodes at the edges"),
    field("Operators kept in float32", blockOps, "Operator types, comma separated; empty: onnxruntime's list."),
    field("Nodes kept in float32", blockNodes, "Node names, comma separated."),
    el("div", { class: "ed-actions" }, submit("Convert to float16")),
  ], async (f) => {
    /** @type {{op: string, keep_io_types: boolean, op_block_list?: string[], node_block_list?: string[]}} */
    const op = { op: "convert_float16", keep_io_types: f.elements.keep_io_types.checked };
    if (names(blockOps.value).length) op.op_block_list = names(blockOps.value);
    if (names(blockNodes.value).length) op.node_block_list = names(blockNodes.value);
    await runTool(ctx, "Converted to float16", [op], { compare: true });
  }, { id: "convert-float16" });
  return form;
}

function extractForm(ctx) {
  const graph = ctx.graph && !ctx.graph.path ? ctx.graph : null;
  const inits = new Set(((graph && graph.initializers) || []).map((t) => t.name));
  const ins = graph ? (graph.inputs || []).map((v) => v.name).filter((n) => !inits.has(n)) : [];
  const outs = graph ? (graph.outputs || []).map((v) => v.name) : [];
  const area = (name, list, label) => {
    const a = el("textarea", { name, rows: Math.min(5, Math.max(2, list.length)), class: "mono ed-names", spellcheck: "false", "aria-label": label });
    a.value = list.join("\n");
    return a;
  };
  const inputs = area("inputs", ins, "Input tensor names");
  const outputs = area("outputs", outs, "Output tensor names");
  const { form } = editForm("ed-extract", [
    el("p", { class: "ed-hint muted" }, "Keeps only the nodes that compute the outputs from the inputs (onnx.utils.extract_model). One tensor name a line; any tensor of the main graph."),
    el("div", { class: "ed-grid2" }, field("Inputs", inputs), field("Outputs", outputs)),
    el("div", { class: "ed-actions" }, submit("Extract subgraph")),
  ], async () => {
    const i = names(inputs.value);
    const o = names(outputs.value);
    if (!o.length) throw new Error("Name at least one output tensor.");
    await runTool(ctx, "Subgraph extracted", [{ op: "extract_subgraph", inputs: i, outputs: o }]);
  }, { id: "extract-subgraph" });
  return form;
}

/** Every symbolic dim of the main graph's inputs given a size, in one edit (fix_dims; an
 * unnamed dim by its input's whole shape): what a fixed-shape compiler needs first, and what lets
 * Simplify fold the shape computations. Costs has the same button beside its counts (QA37 #11). */
function staticForm(ctx) {
  const graph = ctx.graph && !ctx.graph.path && ctx.graph.kind !== "function" ? ctx.graph : null;
  const weights = new Set(((graph && graph.initializers) || []).map((t) => t.name));
  const fed = graph ? (graph.inputs || []).filter((v) => !weights.has(v.name)) : [];
  const dims = symbolicDims(fed, {});
  if (!dims.length) return el("p", { class: "ed-hint muted", id: "make-static" }, "Every input's shape is static already: nothing to fix.");
  const fields = dims.map((d) => el("input", { type: "number", min: "0", step: "1", name: d, required: true, "aria-label": d, class: "ed-dim-size" }));
  followFirstAxes(fields);
  const { form } = editForm("ed-static", [
    el("p", { class: "ed-hint muted" }, "A size for each dim the inputs leave open, written into their shapes in one edit; every shape that follows is inferred again. Simplify then folds the shape computations an export leaves."),
    el("div", { class: "ed-grid2" }, dims.map((d, i) => field(d, fields[i]))),
    el("div", { class: "ed-actions" }, submit("Make static")),
  ], async () => {
    const sizes = {};
    for (const f of fields) {
      if (!/^\d+$/.test(f.value)) throw new Error(`Give ${f.name} a whole size.`);
      sizes[f.name] = Number(f.value);
    }
    await runTool(ctx, "Made static", fixedShapeOps(graph, sizes));
  }, { id: "make-static" });
  return form;
}

function addModelForm(ctx) {
  const graph = ctx.graph && !ctx.graph.path && ctx.graph.kind !== "function" ? ctx.graph : null;
  if (!graph) return el("p", { class: "muted" }, "Open the main graph (the breadcrumb's first step) to add a model to it.");
  return composeForm(ctx, graph, (title, ops) => runTool(ctx, title, ops, { compare: false }));
}

function simplifyForm(ctx) {
  // onnxruntime's CPU provider runs float16 operators behind Casts of its own, which its optimizer
  // merges with the model's: said before it is pressed, not only in the refusal (QA38 #5)
  const half = ((ctx.graph && ctx.graph.initializers) || []).some((t) => t.dtype === "FLOAT16");
  const { form } = editForm("ed-simplify", [
    el("p", { class: "ed-hint muted" }, "onnxruntime's basic graph optimizations, in standard ONNX operators: constants folded into initializers, redundant nodes removed (Identity, Dropout, no-op Slice…), Conv fused with a following BatchNormalization, Add or Mul. Fix the inputs' symbolic dims first to fold the shape computations an export leaves."),
    half ? callout("warn", "Float16 weights", " onnxruntime's CPU provider runs float16 operators in float32 behind Casts of its own, and its optimizer can merge those with the model's, so Simplify may be refused: simplify the float32 model, then convert it to float16.") : null,
    el("div", { class: "ed-actions" }, submit("Simplify")),
  ], () => runTool(ctx, "Simplified", [{ op: "simplify" }], { compare: true }), { id: "simplify" });
  return form;
}

const INT8_HINTS = {
  dynamic: "Dynamic quantization (onnxruntime's): weights stored in 8 bits, activations quantized as the model runs — no calibration data. What onnxruntime recommends for transformers and RNNs; for convolutional models, static (a dynamically quantized Conv often runs slower than in float). Run → \"Compare with revision\" shows how far the outputs move.",
  static: "Static quantization (onnxruntime's): the model runs on your samples to measure each activation's range, then weights and activations are quantized — 8 bits, or 16-bit activations and 4- or 16-bit weights — as QDQ pairs (what TensorRT, QNN and onnxruntime's int8 kernels take) or QLinear operators. Simplify first: it folds BatchNormalization into the Conv before it. Run → \"Compare with revision\" then shows each node's error.",
};

/** The graph inputs a static quantization needs samples of: a file picker each. */
function calibrationRows(ctx) {
  const graph = ctx.graph && !ctx.graph.path && ctx.graph.kind !== "function" ? ctx.graph : null;
  const inits = new Set(((graph && graph.initializers) || []).map((t) => t.name));
  return (graph ? graph.inputs || [] : []).filter((v) => !inits.has(v.name)).map((input) => {
    const file = el("input", { type: "file", accept: ".npy", class: "q-npy", "aria-label": `Calibration .npy for ${input.name}` });
    const row = el("li", { class: "q-input", "data-name": input.name },
      el("div", {}, mono(input.name), " ", el("span", { class: "muted" }, `${input.dtype || "?"} ${formatShape(input.shape)}`)), file);
    return { row, file, name: input.name };
  });
}

function int8Form(ctx) {
  const mode = select("mode", [["dynamic", "Dynamic — no data needed"], ["static", "Static — calibrated on your samples"]], "dynamic", { "aria-label": "Quantization" });
  const EIGHT = [["QInt8", "int8 (signed)"], ["QUInt8", "uint8"]];
  const WIDER = [["QInt16", "int16 (static QDQ)"], ["QUInt16", "uint16 (static QDQ)"], ["QInt4", "int4 (static QDQ)"], ["QUInt4", "uint4 (static QDQ)"]];
  const weight = select("weight_type", EIGHT, "QInt8", { "aria-label": "Weight type" });
  const activation = select("activation_type", [["QUInt8", "uint8"], ["QInt8", "int8 (signed)"], ["QUInt16", "uint16 — A16W8, for NPUs (QDQ)"], ["QInt16", "int16 (QDQ)"]], "QUInt8", { "aria-label": "Activation type" });
  const format = select("quant_format", [["QDQ", "QDQ (Q/DQ pairs)"], ["QOperator", "QOperator (QLinear…)"]], "QDQ", { "aria-label": "Format" });
  const method = select("calibrate_method", [["MinMax", "min–max"], ["Entropy", "entropy"], ["Percentile", "percentile (99.999 %)"]], "MinMax", { "aria-label": "Calibration method" });
  const opTypes = textInput("op_types", "", { class: "mono", placeholder: "every one it can: MatMul, Conv, Gather…", "aria-label": "Operators quantized" });
  const exclude = textInput("nodes_to_exclude", "", { class: "mono", placeholder: "none", "aria-label": "Nodes left in float" });
  const rows = calibrationRows(ctx);
  const npz = el("input", { type: "file", accept: ".npz", class: "q-npz", "aria-label": "Calibration .npz for every input" });
  const hint = el("p", { class: "ed-hint muted" }, INT8_HINTS.dynamic);
  const calibration = el("div", { class: "q-static", hidden: true },
    el("div", { class: "ed-field" }, el("span", { class: "ed-label" }, "Calibration samples"),
      rows.length ? el("ul", { class: "q-inputs" }, rows.map((r) => r.row)) : el("p", { class: "muted" }, "The model has no graph input to feed."),
      rows.length > 1 ? el("label", { class: "q-npz-label" }, "or all of them from one .npz ", npz) : null,
      el("div", { class: "ed-hint muted" }, "An .npy per input: one sample of the input's shape, or samples stacked along a new first axis (for a batch-1 input, the rows of a batch are samples)", rows.length > 1 ? "; or an .npz with an array per input, named after it (numpy.savez)" : "", ". A few dozen representative inputs are enough.")),
    el("div", { class: "ed-grid2" }, field("Format", format), field("Activations", activation)),
    field("Activation ranges", method, "How each activation's range is chosen from the values seen."));
  mode.addEventListener("change", () => {
    calibration.hidden = mode.value !== "static";
    hint.textContent = INT8_HINTS[mode.value];
    // 4- and 16-bit weights: static quantization's QDQ pairs only (dynamic is 8 bits)
    const kept = weight.value;
    weight.replaceChildren(...(mode.value === "static" ? [...EIGHT, ...WIDER] : EIGHT).map(([v, text]) => el("option", { value: v, selected: v === kept }, text)));
    if (!weight.value) weight.value = "QInt8";
  });
  const bitsOf = { QInt8: 8, QUInt8: 8, QInt16: 16, QUInt16: 16, QInt4: 4, QUInt4: 4 };
  const check = weightCheck(ctx, {
    bits: () => bitsOf[/** @type {keyof typeof bitsOf} */ (weight.value)] || 8,
    perChannel: (on) => { /** @type {HTMLInputElement} */ (form.elements.namedItem("per_channel")).checked = on; },
    exclude: (list) => { exclude.value = [...new Set([...names(exclude.value), ...list])].join(", "); },
  });
  const { form } = editForm("ed-int8", [
    field("Quantization", mode),
    hint,
    check,
    calibration,
    field("Weights", weight),
    checkbox("per_channel", "Per channel", false, "a scale per output channel"),
    checkbox("reduce_range", "Reduce range", false, "7-bit weights, for CPUs without VNNI"),
    field("Operators", opTypes, "Operator types, comma separated; empty: every one onnxruntime quantizes."),
    field("Nodes left in float", exclude, "Node names, comma separated."),
    el("div", { class: "ed-actions" }, submit("Quantize")),
  ], async (f) => {
    /** @type {Record<string, any>} */
    const op = { op: "quantize_dynamic", weight_type: weight.value, per_channel: f.elements.per_channel.checked, reduce_range: f.elements.reduce_range.checked };
    if (names(opTypes.value).length) op.op_types = names(opTypes.value);
    if (names(exclude.value).length) op.nodes_to_exclude = names(exclude.value);
    if (mode.value === "static") {
      const chosen = (input) => input.files && input.files[0];
      const fromNpz = chosen(npz) ? await inputsFromNpz(ctx.actions.uploadBlob, chosen(npz), rows.map((r) => r.name)) : {};
      const missing = rows.filter((r) => !chosen(r.file) && !fromNpz[r.name]).map((r) => r.name);
      if (missing.length) throw new Error(`Choose an .npy of calibration samples for ${missing.join(", ")}.`);
      const given = {};
      for (const r of rows) given[r.name] = { npy: chosen(r.file) ? (await ctx.actions.uploadBlob(chosen(r.file))).blob : fromNpz[r.name] };
      Object.assign(op, { op: "quantize_static", calibration: given, quant_format: format.value, activation_type: activation.value, calibrate_method: method.value });
    }
    await runTool(ctx, mode.value === "static" ? "Quantized (static)" : "Quantized", [op], { compare: true });
  }, { id: "quantize-dynamic" });
  return form;
}

/** The "Tools" section's content: a report of the last tool run, and a bar of tool forms. */
export function modelTools(summary, ctx) {
  return [
    reportFor(summary, ctx),
    actionBar([
      { key: "static", label: "Make static…", build: () => staticForm(ctx) },
      { key: "opset", label: "Convert opset…", build: () => opsetForm(summary, ctx) },
      { key: "float16", label: "Float16…", build: () => float16Form(ctx) },
      { key: "int8", label: "Quantize…", build: () => int8Form(ctx) },
      { key: "int4", label: "4-bit weights…", build: () => weightOnlyForm(ctx, runTool) },
      { key: "simplify", label: "Simplify…", build: () => simplifyForm(ctx) },
      { key: "infer", label: "Shape inference…", build: () => inferForm(ctx) },
      { key: "cleanup", label: "Clean up…", build: () => cleanupForm(ctx) },
      { key: "extract", label: "Extract subgraph…", build: () => extractForm(ctx) },
      { key: "compose", label: "Add a model…", build: () => addModelForm(ctx) },
      { key: "target", label: "Check a target…", build: () => targetForm(ctx) },
    ], { cls: "model-tools" }),
  ];
}

// ------------------------------------------------------------------ inputs and outputs

const IO_SHOWN = 12; // inputs (outputs) listed with their types; the rest on a click (a decoder's past key/values)

/** Graph values one a line, each its name (a link to its panel) and its type and shape. */
function ioList(kind, values, ctx) {
  const item = (v) => el("li", { "data-io-item": `${kind}:${v.name}` },
    el("button", { type: "button", class: "linklike mono", "data-io-link": `${kind}:${v.name}`, onclick: () => ctx.actions.select(`${kind}:${v.name}`) }, v.name),
    " ", el("span", { class: "tensor-type" }, formatValueType(v) || "type not declared"));
  const list = el("ul", { class: "io-list" }, values.slice(0, IO_SHOWN).map(item));
  if (values.length > IO_SHOWN) {
    const more = el("button", { type: "button", class: "linklike io-list-more" }, `+${values.length - IO_SHOWN} more`);
    more.addEventListener("click", () => { more.parentElement.replaceWith(...values.slice(IO_SHOWN).map(item)); });
    list.append(el("li", {}, more));
  }
  return list;
}

/** Why a model lists weights among its inputs: IR < 4 lists every initializer so; from IR 4
 * on, one listed is a default the caller may replace. */
export function weightInputsWhy(ir) {
  return typeof ir === "number" && ir < 4 ? `IR ${ir} lists initializers as inputs` : "initializers listed as inputs, which a caller may override";
}

/** The main graph's inputs and outputs with their types (what a model takes and gives is the
 * first thing asked of it); editing, the hint that a click edits one, and adding an input. */
export function ioOverview(ctx) {
  const graph = ctx.graph && !ctx.graph.path && ctx.graph.kind !== "function" ? ctx.graph : null;
  const parts = [];
  const editing = canEdit(ctx);
  if (graph) {
    const inits = new Set((graph.initializers || []).map((t) => t.name));
    // IR < 4 lists every initializer as an input too: those are weights, not what a caller gives
    const ins = (graph.inputs || []).filter((v) => !inits.has(v.name));
    const weights = (graph.inputs || []).length - ins.length;
    parts.push(el("dl", { class: "props" },
      el("dt", {}, "Inputs"), el("dd", {}, ins.length ? ioList("input", ins, ctx) : el("span", { class: "muted" }, "none"),
        weights ? el("div", { class: "muted io-weights" }, `also ${plural(weights, "weight")} (${weightInputsWhy(ctx.summary && ctx.summary.ir_version)})`) : null),
      el("dt", {}, "Outputs"), el("dd", {}, ioList("output", graph.outputs || [], ctx))));
    if (editing) parts.push(el("p", { class: "ed-hint muted" }, "Click one to change its type and shape, rename or remove it."));
  }
  if (editing) parts.push(disclosure("+ Add graph input…", () => addInputForm(ctx), { cls: "ed-add-input-toggle" }));
  return parts;
}

// ------------------------------------------------------------------ downloads

export function downloadChoices(summary, ctx) {
  const rev = summary.revision;
  const external = (summary.external_files || []).length > 0;
  const link = (layout, label, hint) => el("li", { "data-layout": layout },
    el("a", { class: "btn btn-small ed-download", href: ctx.downloadHref({ revision: rev, layout }), download: "" }, label),
    el("span", { class: "muted ed-hint" }, hint));
  // weights not uploaded: the stored model names files it doesn't hold, so no download is whole
  const missing = (summary.missing_data || []).map((m) => m.location);
  const lacking = missing.length ? el("li", { class: "field-error ed-downloads-missing" },
    `${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not here: "As stored" names ${missing.length === 1 ? "it" : "them"} without holding ${missing.length === 1 ? "it" : "them"}, the others can't be made. Attach ${missing.length === 1 ? "it" : "them"} under Validation first.`) : null;
  return el("ul", { class: "ed-downloads" },
    lacking,
    link("as_stored", "As stored", external ? "a .zip: the .onnx with its external data files"
      : rev === 0 ? "the .onnx file uploaded, byte for byte" : "the .onnx file, its weights where the upload had them"),
    summary.embeddable === false // one .onnx can't hold it (QA40: a 500 after 22 s)
      ? el("li", { "data-layout": "embedded" }, el("span", { class: "btn btn-small ed-download disabled", "aria-disabled": "true" }, "Embedded"),
        el("span", { class: "muted ed-hint" }, `not for this model: at ${formatBytes(summary.size)} it is past protobuf's 2 GiB limit for one .onnx — take External data`))
      : link("embedded", "Embedded", "one .onnx with every weight inside (under 2 GiB)"),
    link("external", "External data", "a .zip: the .onnx plus one .data file with every tensor over 1 KiB"),
    el("li", {}, el("a", { class: "btn btn-small ed-download", href: ctx.textHref(), download: "" }, "ONNX text"),
      el("span", { class: "muted ed-hint" }, mono(".onnxtxt"), " — the text syntax of onnx.printer; weights over 1 KiB are named in the ",
        mono(".data"), " file the External data download holds (unpack both in one folder, or upload them together)")),
    withTests(summary, ctx));
}

// the model zoo's layout: the model and a test_data_set_N/ per reference case, for whoever gets it next
function withTests(summary, ctx) {
  const cases = ((summary.validation || {}).reference || {}).cases || [];
  if (!cases.length) return null;
  return el("li", { "data-layout": "tests" },
    el("a", { class: "btn btn-small ed-download", id: "download-with-tests", href: ctx.downloadHref({ revision: summary.revision, tests: true }), download: "" }, "With its test data"),
    el("span", { class: "muted ed-hint" }, "a .zip as the model zoo packs one: the model and a ", mono("test_data_set_N/"), " per reference case"));
}
