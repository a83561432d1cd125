// Editing the main graph's inputs and outputs in the tensor panel: element type and shape (each
// dim a number, a symbolic name such as "batch", or unknown), fixing an input to a constant,
// removing an input or an output; a Loop's, Scan's or If's body input or output: its shape; and,
// in the model panel, adding a graph input.
import { fixedShapeOps } from "../lib/input-dims.js";
import { el } from "../widgets/dom.js";
import { parseJSON, toJSON } from "../lib/api.js";
import { button, checkbox, dimText, dtypeSelect, editForm, field, parseDim, parseDims, submit, textInput } from "./edit-forms.js";
import { tensorValueForms } from "./tensor-edit.js";
import { section } from "../widgets/ui.js";

/** One dim's field; `orig` is the dim as the model has it (kept when its text is not changed). */
function dimCell(index, text, orig, onRemove) {
  const input = textInput(`dim-${index}`, text, {
    class: "mono ed-dim-input", placeholder: "?", "aria-label": `Dimension ${index}`, title: "A number, a name (dynamic), or empty (unknown)",
  });
  if (orig !== undefined) input.dataset.orig = toJSON(orig); // a dim past 2^53 is a BigInt
  // as wide as what it holds ("sequence", not "sequer"), never narrower than a short number
  const fit = () => { input.size = Math.max(4, input.value.length + 1); };
  input.addEventListener("input", fit);
  fit();
  return el("div", { class: "ed-dim", "data-dim": index },
    el("span", { class: "ed-dim-index" }, String(index)), input,
    el("button", { type: "button", class: "linklike ed-dim-remove", title: `Remove dimension ${index}`, "aria-label": `Remove dimension ${index}`, onclick: onRemove }, "×"));
}

/**
 * A shape editor: one field per dim, add/remove dims, "unknown rank". Returns {root, read()}
 * where read() gives the shape for the server (a list, or null for unknown rank). A dim whose
 * field was not changed is sent as the model has it (a "?" name or a -1 stays what it is).
 */
export function shapeEditor(shape) {
  const dims = el("div", { class: "ed-dims" });
  const unknown = checkbox("unknown_rank", "Unknown rank", shape === null || shape === undefined, "no shape at all");
  /** @returns {{text: string, orig?: string}[]} */
  const cells = () => [...dims.querySelectorAll(".ed-dim-input")].map((i) => {
    const input = /** @type {HTMLInputElement} */ (i);
    return { text: input.value, orig: input.dataset.orig };
  });
  const draw = (list) => {
    dims.replaceChildren(...list.map((c, i) => dimCell(i, c.text, c.orig === undefined ? undefined : parseJSON(c.orig), () => {
      const cur = cells();
      cur.splice(i, 1);
      draw(cur);
    })));
    if (!list.length) dims.append(el("span", { class: "muted ed-scalar" }, "scalar (rank 0)"));
  };
  draw((shape || []).map((d) => ({ text: dimText(d), orig: toJSON(d) })));
  const add = button("+ dim", { class: "btn btn-small ed-dim-add", title: "Add a dimension at the end", onclick: () => draw([...cells(), { text: "" }]) });
  const sync = () => {
    const off = unknown.querySelector("input").checked;
    dims.classList.toggle("disabled", off);
    add.disabled = off;
  };
  unknown.querySelector("input").addEventListener("change", sync);
  sync();
  const root = el("div", { class: "ed-shape" }, dims, el("div", { class: "ed-row ed-shape-controls" }, add, unknown));
  const value = (c) => {
    if (c.orig !== undefined) {
      const orig = parseJSON(c.orig);
      if (c.text.trim() === dimText(orig)) return orig;
    }
    return parseDim(c.text);
  };
  return {
    root,
    read: () => (unknown.querySelector("input").checked ? null : cells().map(value)),
  };
}

/** Whether `shape` is `was` with some of its named dims given sizes, and nothing else changed. */
function onlySizesGiven(was, shape) {
  return Array.isArray(shape) && shape.length === was.length
    && shape.every((d, i) => d === was[i] || (typeof was[i] === "string" && was[i] !== "" && Number.isSafeInteger(d)));
}

/** The named dims `shape` renames from `was` ({seq: "sequence_length"}), when renaming named
 * dims is all it does; null otherwise. */
function renamesOnly(was, shape) {
  if (!Array.isArray(shape) || shape.length !== was.length) return null;
  const named = (d) => typeof d === "string" && d !== "";
  const renames = {};
  for (let i = 0; i < shape.length; i += 1) {
    if (shape[i] === was[i]) continue;
    if (!named(shape[i]) || !named(was[i]) || (renames[was[i]] ?? shape[i]) !== shape[i]) return null;
    renames[was[i]] = shape[i];
  }
  return Object.keys(renames).length ? renames : null;
}

/** Type + shape of a graph input/output, as a form (set_io_shape). `isInput`: where a Cast goes. */
function typeForm(name, value, ctx, isInput) {
  const dtype = dtypeSelect(value.dtype || "FLOAT", { "aria-label": "Element type" });
  const shape = shapeEditor(value.shape);
  const retype = checkbox("update_types", "Re-infer value_info and output shapes", false,
    "after the change, shape inference updates the shapes the graph's value_info and outputs state");
  // a new element type for the caller only: the graph inside keeps the old one (uint8 images in)
  const cast = checkbox("cast", `Keep the graph in ${value.dtype || "its type"} (a Cast ${isInput ? "after this input" : "before this output"})`, true,
    isInput ? "the caller gives the new type; the nodes reading it read it converted back" : "the nodes compute as before; the caller gets their result converted");
  // an input's dim made dynamic (1 -> "batch"), or a named one given a size ("batch" -> 1): the
  // outputs' and value_info's dims would contradict it (a fixed 1, or a "batch" no input names
  // any more), so re-inferring them is ticked, unless the person ticked or unticked it themselves
  const retypeBox = retype.querySelector("input");
  let retypeChosen = false;
  retypeBox.addEventListener("change", () => { retypeChosen = true; });
  const was = value.shape || [];
  const named = (d) => typeof d === "string" && d !== "";
  const madeDynamic = (dims) => (dims || []).some((d, i) => named(d) && !named(was[i]));
  shape.root.addEventListener("input", () => {
    if (retypeChosen || !isInput) return; // an output's own shape is the one given, not re-inferred
    let dims;
    try { dims = shape.read(); } catch { return; } // a dim being typed: judged once it reads
    retypeBox.checked = (dims || []).some((d, i) => d !== was[i] && (named(d) || named(was[i])));
  });
  // a named dim renamed (seq -> sequence_length): in every declaration naming it, by default
  // (QA29: one input renamed left the others, and the outputs, saying seq)
  const mainGraph = ctx.mainGraph && ctx.graph === ctx.mainGraph;
  const everywhere = checkbox("everywhere", "Rename it everywhere: every input, output and value_info naming it", true,
    "one rename_dim edit; unticked, only this one's shape changes");
  everywhere.hidden = true;
  // renamed everywhere, nothing is left to re-infer: that box is for a shape changed here alone
  const syncEverywhere = () => { retype.hidden = !everywhere.hidden && everywhere.querySelector("input").checked; };
  everywhere.addEventListener("change", syncEverywhere);
  shape.root.addEventListener("input", () => {
    let dims;
    try { dims = shape.read(); } catch { return; }
    everywhere.hidden = !mainGraph || !renamesOnly(was, dims);
    syncEverywhere();
  });
  const syncCast = () => { cast.hidden = !value.dtype || dtype.value === value.dtype; };
  dtype.addEventListener("change", syncCast);
  syncCast();
  const { form } = editForm("ed-io-type", [
    field("Element type", dtype),
    cast,
    el("div", { class: "ed-field" }, el("div", { class: "ed-label" }, "Shape"), shape.root,
      el("div", { class: "ed-hint muted" }, "Each dim: a number, a name such as ", el("code", {}, "batch"), " (dynamic), or empty (unknown).")),
    everywhere,
    retype,
    el("div", { class: "ed-actions" }, submit("Save type and shape")),
  ], async () => {
    const op = { op: "set_io_shape", name, shape: shape.read(), dtype: dtype.value };
    const renames = renamesOnly(was, op.shape);
    if (mainGraph && renames && !everywhere.hidden && everywhere.querySelector("input").checked && op.dtype === (value.dtype || op.dtype)) {
      await ctx.actions.edit(Object.entries(renames).map(([from, to]) => ({ op: "rename_dim", from, to })));
      return;
    }
    // chosen by the person: as they chose; a dim made dynamic: re-infer; else left to the server,
    // which re-infers where value_info still says the dims before or outputs name a dim no input
    // has any more (what the box, ticked for a named dim given a size, shows it will do)
    if (retypeChosen) op.update_types = retypeBox.checked;
    else if (retypeBox.checked && madeDynamic(op.shape)) op.update_types = true;
    if (!cast.hidden && cast.querySelector("input").checked) op.cast = true;
    // a named dim given a size: the other inputs naming it take it too, in the same edit (an
    // encoder's attention_mask with its input_ids: one alone no longer fits the other)
    const sizes = {};
    (op.shape || []).forEach((d, i) => { if (isInput && named(was[i]) && Number.isSafeInteger(d)) sizes[was[i]] = d; });
    const main = isInput && ctx.mainGraph && ctx.graph === ctx.mainGraph;
    // only named dims given sizes ("batch" -> 1): sent as that, every input naming them, which
    // a recipe replays at the next export's own other sizes (a whole shape would set them too)
    if (main && Object.keys(sizes).length && onlySizesGiven(value.shape || [], op.shape) && !op.cast && op.dtype === value.dtype) {
      await ctx.actions.edit([{ op: "fix_dims", dims: sizes, ...(op.update_types !== undefined ? { update_types: op.update_types } : {}) }]);
      return;
    }
    const others = main
      ? fixedShapeOps({ ...ctx.mainGraph, inputs: (ctx.mainGraph.inputs || []).filter((v) => v.name !== name) }, sizes) : [];
    // the answer names the nodes that still hard-code a changed dim (a Reshape to [1, -1])
    await ctx.actions.edit([op, ...others]);
  }, { "data-io-name": name });
  return form;
}

/** The shape (and, for a scan output, the element type) of a body's input or output, as a form
 * (set_io_shape with `graph`): what its node feeds a carried value, a state or a scanned slice
 * fixes its element type, and an If branch's output keeps the other branch's. */
function bodyTypeForm(name, value, ctx, graph, role) {
  const free = role && role.kind === "scan_output";
  const dtype = free ? dtypeSelect(value.dtype || "FLOAT", { "aria-label": "Element type" }) : null;
  const shape = shapeEditor(value.shape);
  const retype = checkbox("update_types", "Re-infer the shapes after it", false,
    "after the change, shape inference updates value_info and the bodies' and outputs' shapes");
  const fixedWhy = !role ? "" : role.kind === "branch_output" ? " · kept: the other branch gives this type too"
    : role.kind === "scan_output" ? "" : ` · kept: the ${holderName(graph)} feeds it this type`;
  const { form } = editForm("ed-io-type ed-body-io-type", [
    dtype ? field("Element type", dtype)
      : el("div", { class: "ed-field" }, el("div", { class: "ed-label" }, "Element type"),
        el("div", { class: "ed-hint muted" }, el("code", {}, value.dtype || "unknown"), fixedWhy)),
    el("div", { class: "ed-field" }, el("div", { class: "ed-label" }, "Shape"), shape.root,
      el("div", { class: "ed-hint muted" }, "Each dim: a number, a name such as ", el("code", {}, "batch"), " (dynamic), or empty (unknown).",
        role && (role.kind === "carried" || role.kind === "state") ? " A carried value may change size between iterations: free a dim the export fixed." : "")),
    retype,
    el("div", { class: "ed-actions" }, submit("Save shape")),
  ], async () => {
    const op = { op: "set_io_shape", graph: graph.path, name, shape: shape.read() };
    if (dtype && dtype.value !== value.dtype) op.dtype = dtype.value;
    if (retype.querySelector("input").checked) op.update_types = true;
    await ctx.actions.edit([op]);
  }, { "data-io-name": name });
  return form;
}

/** The operator holding the body on screen ("Loop"), from the breadcrumb; "node" elsewhere. */
function holderName(graph) {
  const crumbs = graph.breadcrumb || [];
  return (crumbs.length && crumbs[crumbs.length - 1].op_type) || "node";
}

/** The section editing a body's input or output (set_io_shape with `graph`); the iteration
 * number and the condition are scalars by the spec, and say so instead. */
function bodyIoSections(name, facts, ctx, graph) {
  const value = facts.input || facts.output;
  const role = value.role || null;
  const side = facts.input ? "input" : "output";
  const nonTensor = value.type && value.type.kind && !["tensor", "unknown"].includes(value.type.kind);
  const fixed = role && (role.kind === "iteration" || role.kind === "condition");
  const body = nonTensor ? el("p", { class: "muted" }, "This value is not a tensor: its type is not edited here.")
    : fixed ? el("p", { class: "muted" }, `The ${role.kind === "iteration" ? "iteration number is an INT64" : "condition is a BOOL"} scalar, by the ONNX spec: nothing to change.`)
      : bodyTypeForm(name, value, ctx, graph, role);
  const free = role && role.kind === "scan_output" && !nonTensor;
  const edit = section(`Body ${side}: ${free ? "type and shape" : "shape"}`, body);
  edit.classList.add("ed-section");
  edit.id = "io-edit";
  return [edit];
}

/**
 * Sections for a graph input and/or output `name` (facts from tensorFacts): its type and shape,
 * removing it (the main graph's); a body's input or output, its shape. Empty in a function.
 */
export function ioSections(name, facts, ctx) {
  const graph = ctx.graph || {};
  if (graph.kind === "function" || !(facts.input || facts.output)) return [];
  if (graph.path) return graph.path.includes("/") ? bodyIoSections(name, facts, ctx, graph) : [];
  const value = facts.input || facts.output;
  const kind = facts.input && facts.output ? "input and output" : facts.input ? "input" : "output";
  const out = [];
  const nonTensor = value.type && value.type.kind && !["tensor", "unknown"].includes(value.type.kind);
  const edit = section(`Graph ${kind}: type and shape`,
    nonTensor ? el("p", { class: "muted" }, "This value is not a tensor: its type is not edited here.")
      : typeForm(name, value, ctx, !!facts.input && !facts.output));
  edit.classList.add("ed-section");
  edit.id = "io-edit";
  out.push(edit);
  if (facts.input && !facts.initializer && !nonTensor && value.dtype) out.push(freezeSection(name, value, ctx));
  return out;
}

/** "Fix to a constant" (freeze_input): the input's value from an .npy or JSON, as an initializer
 * of its name; every reader then reads it, and the caller no longer gives it. */
function freezeSection(name, value, ctx) {
  const apply = (v) => ctx.actions.edit([{ op: "freeze_input", name, value: v }], { selection: { kind: "tensor", id: name } });
  const s = section("Fix to a constant",
    el("p", { class: "muted ed-hint" }, "The input becomes a constant of this name that every reader reads, and the caller no longer gives it — a flag such as ",
      el("code", {}, "use_cache_branch"), ", a mask, a size. ", el("b", {}, "Simplify"), " (model panel, Tools) then folds what it makes constant."),
    tensorValueForms({ dtype: value.dtype, shape: value.shape }, ctx, apply, { typeChange: false, cast: true, fit: true, what: "input" }));
  s.classList.add("ed-section");
  s.id = "freeze-input";
  return s;
}

/** "Remove this graph output/input" forms for a main-graph input/output (for the Edit tensor section). */
export function ioRemoveForms(name, facts, ctx) {
  const graph = ctx.graph || {};
  if (graph.path || graph.kind === "function") return [];
  const actions = [];
  if (facts.output) {
    const only = (graph.outputs || []).length <= 1;
    const { form } = editForm("ed-inline ed-remove-output", [
      el("div", { class: "ed-row" }, el("button", { type: "submit", class: "btn btn-small btn-danger", disabled: only }, "Remove this graph output"),
        el("span", { class: "muted ed-hint" }, only ? "It is the graph's only output: a model needs one." : "The tensor and the node computing it stay.")),
    ], () => ctx.actions.edit([{ op: "remove_output", name }], { selection: { kind: "tensor", id: name } }));
    actions.push(form);
  }
  if (facts.input) {
    const { form } = editForm("ed-inline ed-remove-input", [
      el("div", { class: "ed-row" }, el("button", { type: "submit", class: "btn btn-small btn-danger" }, "Remove this graph input"),
        el("span", { class: "muted ed-hint" }, facts.initializer ? "Its initializer keeps supplying the value." : "Only when nothing reads it.")),
    ], () => ctx.actions.edit([{ op: "remove_input", name }], { selection: facts.initializer ? { kind: "tensor", id: name } : null }));
    actions.push(form);
  }
  return actions;
}

/** "Add a graph input" (add_input): a name, an element type, a shape. For the model panel. */
export function addInputForm(ctx) {
  const name = textInput("name", "", { class: "mono", placeholder: "new input name", "aria-label": "Input name" });
  const dtype = dtypeSelect("FLOAT", { "aria-label": "Element type" });
  const shape = textInput("shape", "", { class: "mono", placeholder: "e.g. batch, 3, 224, 224", "aria-label": "Shape" });
  const { form } = editForm("ed-add-input", [
    el("div", { class: "ed-grid2" }, field("Name", name), field("Element type", dtype)),
    field("Shape", shape, "Comma-separated dims: numbers, names (dynamic) or ? (unknown); empty for a scalar."),
    el("div", { class: "ed-actions" }, submit("Add input")),
  ], async () => {
    if (!name.value.trim()) throw new Error("Give the input a name.");
    await ctx.actions.edit([{ op: "add_input", name: name.value, dtype: dtype.value, shape: parseDims(shape.value) }],
      { selection: { kind: "input", id: name.value } });
  }, { id: "add-input" });
  return form;
}
