// Editing one node from its panel: rename it, change its operator, add an attribute (from the
// schema's attributes it doesn't set), insert a node before or after it, rewire its inputs, add a
// node reading its outputs, delete it (optionally reconnecting its readers), make one of its
// outputs a graph output.
import { el } from "../widgets/dom.js";
import { mono } from "../widgets/ui.js";
import { parseJSON, toJSON } from "../lib/api.js";
import { attributeEditText, dtypeNumber, formatFloat32, isDtypeAttribute } from "../lib/format.js";
import { parseAttributeInput } from "../panels/attribute-view.js";
import { attributeBatch } from "./attribute-batch.js";
import {
  ATTRIBUTE_TYPES, actionBar, checkbox, editForm, field, fieldId, operatorField, parseTensorJSON, select, submit,
  tensorNameList, textInput,
} from "./edit-forms.js";

/** The index of a node in its graph from its id ("n7" -> 7, "n2/then_branch/n1" -> 1), else null. */
function nodeIndex(nodeId) {
  const m = /(?:^|\/)n(\d+)$/.exec(nodeId || "");
  return m ? Number(m[1]) : null;
}

/** The id of node `index` of the graph on screen (a body's ids start with its path). */
function nodeIdIn(graph, index) {
  return graph.path ? `${graph.path}/n${index}` : `n${index}`;
}

function inMainGraph(ctx) {
  const g = ctx.graph || {};
  return !g.path && g.kind !== "function";
}

/** A value typed for an attribute of `type` -> its JSON value (throws with a message). */
export function attributeValueFrom(type, text) {
  if (type === "TENSOR") return parseTensorJSON(text);
  if (type === "TENSORS") {
    let list;
    try {
      list = parseJSON(String(text || "").trim());
    } catch (err) {
      throw new Error(`This is not valid JSON: ${err.message}`, { cause: err });
    }
    if (!Array.isArray(list)) throw new Error("Type a JSON list of tensors, e.g. [{\"dtype\": \"FLOAT\", \"shape\": [2], \"values\": [1, 2]}].");
    return list.map((item) => parseTensorJSON(toJSON(item)));
  }
  if (!["FLOAT", "INT", "STRING", "FLOATS", "INTS", "STRINGS"].includes(type)) {
    throw new Error(`${type} attributes can't be typed in here.`);
  }
  return parseAttributeInput(type, text);
}

/** A value typed for attribute `name` of `node` ({op_type, domain}): an attribute holding a data
 * type also takes its name (INT64), sent as its number. */
function typedAttributeValue(node, name, type, text) {
  const number = isDtypeAttribute(node, { name, type }) ? dtypeNumber(String(text || "").trim().toUpperCase()) : null;
  return number ?? attributeValueFrom(type, text);
}

const DTYPE_HINT = "a data type: INT64, FLOAT… or its number";

const VALUE_HINT = {
  FLOAT: "a number", INT: "an integer", STRING: "text", FLOATS: "numbers, e.g. 0.5, 1", INTS: "integers, e.g. 1, 1",
  STRINGS: "e.g. [\"a\", \"b\"] or a, b", TENSOR: "JSON, e.g. {\"dtype\": \"FLOAT\", \"shape\": [2], \"values\": [1, 2]}",
  TENSORS: "a JSON list of tensors",
};

/** Rename the node (rename_node): the Name row of the Properties list. */
export function renameNodeForm(node, ctx) {
  const input = textInput("name", node.name, { class: "mono", placeholder: "(no name)", "aria-label": "Node name" });
  const button = submit("Rename", "btn btn-small");
  // an emptied field removes the name: the button says so before it is pressed (QA28)
  input.addEventListener("input", () => { button.textContent = !input.value && node.name ? "Remove name" : "Rename"; });
  const { form } = editForm("ed-inline ed-rename-node", [
    el("div", { class: "ed-row" }, input, button),
  ], async () => {
    if (input.value === node.name) throw new Error("That is already its name.");
    await ctx.actions.edit([{ op: "rename_node", node: node.id, name: input.value }]);
  });
  return form;
}

/** Change the node's operator (set_node_op); the server says when the new one does not fit.
 * The new operator's attributes can be set on the way (one it requires), and the node's that it
 * has none of dropped. */
export function changeOpForm(node, ctx) {
  const op = operatorField(ctx.summary ? ctx.summary.opset_import : [], { placeholder: node.op_type, functions: ctx.summary ? ctx.summary.functions : [] });
  const attrsBox = el("div", { class: "ed-attrs-box" });
  const current = new Map((node.attributes || []).map((a) => [a.name, attributeEditText(a)]));
  const attrs = attributeFields(attrsBox, current);
  // the node's attributes the operator typed has none of: offered to drop, by name
  const dropBox = el("div", { class: "ed-drop-attrs" });
  let lacking = [];
  followOperator(op, attrs, (entry) => {
    const known = new Set(((entry && entry.attributes) || []).map((a) => a.name));
    lacking = entry ? [...current.keys()].filter((name) => !known.has(name)) : [];
    dropBox.replaceChildren(...(lacking.length
      ? [checkbox("drop_attributes", `Drop ${lacking.join(", ")}`, false, `${entry.op_type} has no such attribute`)] : []));
  });
  const { form } = editForm("ed-change-op", [
    field("New operator", op.input, "Its inputs, outputs and attributes must fit the new operator's schema."),
    op.list,
    attrsBox,
    dropBox,
    el("div", { class: "ed-actions" }, submit("Change operator")),
  ], async (f) => {
    const text = op.input.value.trim();
    if (!text) throw new Error("Type the new operator, e.g. Relu.");
    const entry = op.lookup(text);
    const change = { op: "set_node_op", node: node.id, op_type: entry ? entry.op_type : text };
    if (entry && entry.domain !== (node.domain || "")) change.domain = entry.domain;
    const given = attrs.read();
    if (Object.keys(given).length) change.attributes = given;
    const dropping = lacking.length && f.elements.drop_attributes && f.elements.drop_attributes.checked;
    if (dropping) change.drop_attributes = true;
    else if (lacking.length) throw new Error(`${change.op_type} has no attribute ${lacking.join(", ")}: tick “Drop ${lacking.join(", ")}” to drop it.`);
    await ctx.actions.edit([change]);
  });
  return form;
}

/**
 * The attribute fields follow the operator typed; `onEntry(entry)` hears of each new one.
 * @param {(entry: any) => void} [onEntry]
 */
function followOperator(op, attrs, onEntry = undefined) {
  let shown;
  const onOp = () => {
    const entry = op.lookup(op.input.value);
    if (entry === shown) return; // same operator: keep what was typed in its attribute fields
    shown = entry;
    if (onEntry) onEntry(entry);
    attrs.show(entry);
  };
  op.input.addEventListener("input", onOp);
  op.input.addEventListener("change", onOp);
  op.ready.then(onOp);
}

/** Add an attribute: the schema's attributes the node doesn't set, or any name for an operator
 * without a schema. Saved with the node's other attribute changes pending (attribute-batch.js). */
export function addAttributeForm(node, ctx) {
  const holder = el("div", { class: "ed-add-attr" }, el("div", { class: "muted" }, "Loading the operator's attributes…"));
  const set = new Set((node.attributes || []).map((a) => a.name));
  const batch = attributeBatch(node, ctx);
  const build = (schema) => {
    // a call of a model-local function: the function's attributes are its schema's
    const known = !!schema && (schema.kind === "schema" || (schema.kind === "function" && Array.isArray(schema.attributes)));
    const free = (known ? schema.attributes : []).filter((a) => !set.has(a.name));
    if (known && !free.length) {
      holder.replaceChildren(el("p", { class: "muted" }, schema.attributes.length
        ? `This node already sets every attribute ${node.op_type} has.` : `${node.op_type} has no attributes.`));
      return;
    }
    const value = textInput("value", "", { class: "mono", "aria-label": "Value of the new attribute" });
    const desc = el("div", { class: "ed-hint muted ed-attr-desc" });
    let nameCtl;
    let typeCtl = null;
    // a function attribute whose type nothing says (no default, no reference) is typed by hand
    const chosen = () => (known ? free.find((a) => a.name === nameCtl.value) || null : null);
    const typeOf = () => (chosen() && chosen().type) || typeCtl.value;
    const describe = () => {
      const a = known ? free.find((x) => x.name === nameCtl.value) : null;
      const type = typeOf();
      value.placeholder = (isDtypeAttribute(node, { name: nameCtl.value, type }) ? DTYPE_HINT : VALUE_HINT[type]) || "";
      const def = a && a.default !== null && a.default !== undefined ? ` Default: ${defaultText(a)}.` : "";
      desc.textContent = a ? `${a.type || type}${a.required ? " · required" : ""}.${def} ${a.description || ""}`.trim() : `${type}: ${VALUE_HINT[type] || ""}`;
      // a closed set's values (Resize's mode) offered as the empty field's suggestions
      choices.replaceChildren(...((a && a.choices) || []).map((c) => el("option", { value: c })));
      if (a && a.choices) value.setAttribute("list", choices.id); else value.removeAttribute("list");
    };
    const choices = el("datalist", { id: `add-attr-choices-${node.id}`.replace(/[^\w-]/g, "_") });
    typeCtl = select("type", ATTRIBUTE_TYPES, "INT", { "aria-label": "Attribute type" });
    typeCtl.addEventListener("change", describe);
    const typeField = field("Type", typeCtl);
    if (known) {
      nameCtl = select("name", free.map((a) => [a.name, `${a.name} (${a.type || "type not declared"}${a.required ? ", required" : ""})`]), free[0].name, { class: "mono", "aria-label": "Attribute" });
    } else {
      nameCtl = textInput("name", "", { class: "mono", placeholder: "attribute name", "aria-label": "Attribute name" });
    }
    const showType = () => { typeField.hidden = known && !!(chosen() && chosen().type); };
    nameCtl.addEventListener("change", () => { showType(); describe(); });
    const button = submit("Add attribute");
    // its value typed is one of the panel's pending changes: Add attribute saves the others with
    // it, and their Save (or Enter) saves it with theirs
    const entry = {
      get name() { return nameCtl.value.trim() || "a new attribute"; },
      isNew: true, mark: null, button, label: "Add attribute", error: null,
      changed: () => value.value.trim() !== "",
      op: () => {
        const name = nameCtl.value.trim();
        if (!name) throw new Error("Give the attribute a name.");
        const type = typeOf();
        const op = { op: "set_attribute", node: node.id, name, value: typedAttributeValue(node, name, type, value.value) };
        if (!(chosen() && chosen().type)) op.type = type;
        return op;
      },
      discard: () => { value.value = ""; },
      settle: () => { value.value = ""; },
    };
    const { form, error } = editForm("ed-add-attr-form", [
      el("div", { class: "ed-grid2" }, field(known ? "Attribute" : "Name", nameCtl), typeField),
      desc,
      field("Value", value),
      choices,
      el("div", { class: "ed-actions" }, button),
    ], () => batch.save(entry), { id: "add-attribute" });
    Object.assign(entry, { mark: form, error });
    batch.track(entry, [value, nameCtl]);
    showType();
    describe();
    holder.replaceChildren(form);
  };
  ctx.actions.loadSchema(node.id).then(build).catch(() => build(null));
  return holder;
}

/** Parse "a, b" into tensor names. */
function names(text) {
  return String(text || "").split(",").map((s) => s.trim()).filter(Boolean);
}

/** `text` split at its commas outside brackets and quotes: "a, =[1, 2], b" -> three parts. */
function topLevelParts(text) {
  const parts = [];
  let depth = 0, quote = false, start = 0;
  const t = String(text || "");
  for (let i = 0; i < t.length; i += 1) {
    const c = t[i];
    if (quote) { if (c === "\\") i += 1; else if (c === '"') quote = false; continue; }
    if (c === '"') quote = true;
    else if (c === "[" || c === "{") depth += 1;
    else if (c === "]" || c === "}") depth -= 1;
    else if (c === "," && depth === 0) { parts.push(t.slice(start, i)); start = i + 1; }
  }
  parts.push(t.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}

/**
 * Inputs typed in a form: tensor names, or `=VALUE` for a new constant (=255, =[0.5, 2]) at input
 * slot `first` + its position. Its element type is what the operator's schema fixes for that slot
 * (`entry.inputTypes`: TopK's K INT64), else the first input's (`dtype`), unless an object names
 * its own. Returns the names to read and the add_initializer ops making the constants, for the
 * same batch as the node.
 */
function readsWithConstants(text, { graph, dtype, base, entry, first = 0 }) {
  const reads = [];
  const constants = [];
  const types = (entry && entry.inputTypes) || [];
  const slotType = (i) => {
    const t = types.length ? types[Math.min(i, types.length - 1)] : 0; // the last formal may repeat
    return typeof t === "string" && t ? t : dtype || "FLOAT";
  };
  for (const [k, part] of topLevelParts(text).entries()) {
    if (!part.startsWith("=")) { reads.push(part); continue; }
    let value;
    try {
      value = parseTensorJSON(part.slice(1), { dtype: slotType(first + k) });
    } catch (err) {
      throw new Error(`${part}: ${err.message}`, { cause: err });
    }
    const name = freshName(graph, `${base}_const`, constants.map((c) => c.name));
    /** @type {{op: string, name: string, value: object, graph?: string}} */
    const add = { op: "add_initializer", name, value };
    if (graph.path) add.graph = graph.path;
    constants.push(add);
    reads.push(name);
  }
  return { reads, constants };
}

/**
 * One field per schema attribute of the chosen operator; read() -> {name: value} of those filled
 * in. `current` (name -> text) prefills the fields of a node's own attributes (Change op): one of
 * them emptied reads as null, the operator's default then applying.
 */
function attributeFields(container, current = new Map()) {
  let rows = [];
  let shown = null;
  const show = (entry) => {
    container.replaceChildren();
    rows = [];
    shown = entry;
    if (!entry) return;
    const attrs = entry.attributes || [];
    if (!attrs.length) { container.append(el("div", { class: "ed-hint muted" }, `${entry.op_type} has no attributes.`)); return; }
    const hint = attrs.some((a) => current.has(a.name)) ? " — the node's values filled in; empty for the default" : " — leave empty for the default";
    container.append(el("div", { class: "ed-label" }, `Attributes of ${entry.op_type}`, el("span", { class: "muted" }, hint)));
    const grid = el("div", { class: "ed-attr-grid" });
    for (const a of attrs) {
      const settable = ATTRIBUTE_TYPES.includes(a.type);
      const hint = isDtypeAttribute(entry, a) ? DTYPE_HINT : VALUE_HINT[a.type] || a.type;
      const input = textInput(`attr-${a.name}`, settable ? current.get(a.name) ?? "" : "", {
        class: "mono", "data-attr-name": a.name, disabled: !settable,
        // a function's attribute nothing types (no default, no reference in the body): its type is the caller's, in Add attribute
        placeholder: settable ? (a.required ? `required · ${hint}` : hint) : a.type ? "not set here" : "type not declared: set it with Add attribute",
        "aria-label": `Attribute ${a.name}`,
      });
      grid.append(el("label", { class: "mono ed-attr-name", for: (input.id = fieldId("ins")) }, a.name,
        el("span", { class: "attr-type" }, ` ${a.type || "untyped"}`)), input);
      if (settable) rows.push({ a, input });
    }
    container.append(grid);
  };
  const read = () => {
    const out = {};
    for (const { a, input } of rows) {
      if (current.has(a.name) && input.value === current.get(a.name)) continue; // the node's own, left as it is
      if (input.value.trim() === "") { // (the form's controls are disabled while it runs)
        // a required one left empty: said here, not by the checker after the edit is sent
        if (a.required) throw new Error(`${shown.op_type} requires ${a.name}: give it a value.`);
        if (current.has(a.name)) out[a.name] = null; // emptied: the node's own value goes
        continue;
      }
      try {
        out[a.name] = typedAttributeValue(shown, a.name, a.type, input.value);
      } catch (err) {
        throw new Error(`Attribute ${a.name}: ${err.message}`, { cause: err });
      }
    }
    return out;
  };
  return { show, read };
}

/**
 * A new node's operator (with the model's operators to pick from), domain, name and the chosen
 * operator's attribute fields, which follow the operator typed.
 */
function newNodeFields(ctx) {
  const op = operatorField(ctx.summary ? ctx.summary.opset_import : [], { functions: ctx.summary ? ctx.summary.functions : [] });
  const domain = textInput("domain", "", { class: "mono", placeholder: "ai.onnx", "aria-label": "Domain" });
  const name = textInput("name", "", { class: "mono", placeholder: "optional", "aria-label": "Name of the new node" });
  const attrsBox = el("div", { class: "ed-attrs-box" });
  const attrs = attributeFields(attrsBox);
  followOperator(op, attrs, (entry) => { if (entry) domain.value = entry.domain; });
  return { op, domain, name, attrs, attrsBox };
}

/**
 * The insert form. where = "after": a node on this node's first output, for all its readers;
 * "before": on one input of this node, feeding only this node.
 */
function insertForm(node, ctx, where) {
  const graph = ctx.graph || {};
  const index = nodeIndex(node.id);
  const inputs = (node.inputs || []).filter(Boolean);
  const { op, domain, name, attrs, attrsBox } = newNodeFields(ctx);
  const extra = textInput("inputs", "", { class: "mono", placeholder: "optional, e.g. scale, bias", "aria-label": "Extra inputs" });
  const tensorCtl = where === "before"
    ? select("tensor", inputs.map((n) => [n, n]), inputs[0], { class: "mono", "aria-label": "Input to insert on" })
    : null;
  // unnamed, the new node goes in this node's name scope (its group in the drawing): drawn
  // beside it, not outside the group with its edges running out and back in
  const scope = (node.scope || []).at(-1) || "";
  if (scope) name.placeholder = `optional: ${scope}/<operator> by default`;
  const explain = where === "after"
    ? ["This node's output becomes ", el("code", {}, `${node.outputs[0]}_pre`), "; the new node reads it and writes ", el("code", {}, node.outputs[0]),
      ", so every reader (and a graph output) keeps its name; a graph output takes the new node's type. Deleting the new node with Reconnect puts it back."]
    : ["The new node reads the chosen input; only this node reads the new node's output."];
  const { form } = editForm(`ed-insert ed-insert-${where}`, [
    el("p", { class: "ed-hint muted ed-explain" }, explain),
    tensorCtl ? field("On input", tensorCtl) : null,
    el("div", { class: "ed-grid2" }, field("Operator", op.input), field("Domain", domain)),
    op.list,
    field("Name", name),
    field("Extra inputs", extra, ["Read after the main input: a tensor's name, or ", el("code", {}, "=value"), " for a new constant of the type its input takes (",
      el("code", {}, "=255"), ", ", el("code", {}, "=[0.5, 2]"), ")."]),
    attrsBox,
    el("div", { class: "ed-actions" }, submit(where === "after" ? "Insert after" : "Insert before")),
  ], async () => {
    const opType = op.input.value.trim();
    if (!opType) throw new Error("Choose the operator of the new node, e.g. Relu.");
    const entry = op.lookup(opType);
    const insert = { op: "insert_node", tensor: where === "after" ? node.outputs[0] : tensorCtl.value, op_type: entry ? entry.op_type : opType };
    if (graph.path) insert.graph = graph.path;
    if (domain.value.trim() && domain.value.trim() !== "ai.onnx") insert.domain = domain.value.trim();
    if (name.value.trim()) insert.name = name.value.trim();
    else if (scope) insert.name = freeNodeName(graph, `${scope}/${insert.op_type}`);
    const base = (name.value.trim() || insert.op_type).toLowerCase();
    const more = readsWithConstants(extra.value, { graph, dtype: ctx.model && ctx.model.types.get(insert.tensor)?.dtype, base, entry, first: 1 });
    if (more.reads.length) insert.inputs = more.reads;
    const values = attrs.read();
    if (Object.keys(values).length) insert.attributes = values;
    let selection;
    if (where === "after") {
      selection = { kind: "node", id: nodeIdIn(graph, index + 1) }; // placed right after its producer: this node
    } else {
      insert.consumers = [node.id];
      const producer = (graph.nodes || []).findIndex((n) => (n.outputs || []).includes(insert.tensor));
      selection = { kind: "node", id: nodeIdIn(graph, producer < 0 ? 0 : producer + 1) };
    }
    await ctx.actions.edit([...more.constants, insert], { selection });
  });
  return form;
}

/** `base`, or `base_1`, `base_2`…: the first name no node of `graph` (graph JSON) has. */
function freeNodeName(graph, base) {
  const taken = new Set((graph.nodes || []).map((n) => n.name));
  let name = base;
  for (let k = 1; taken.has(name); k += 1) name = `${base}_${k}`;
  return name;
}

/** `base`, or `base_1`, `base_2`…: the first name no value of `graph` (graph JSON) has, nor `also`. */
function freshName(graph, base, also = []) {
  const taken = new Set([
    ...(graph.inputs || []).map((v) => v.name), ...(graph.outputs || []).map((v) => v.name),
    ...(graph.initializers || []).map((t) => t.name),
    ...(graph.nodes || []).flatMap((n) => [...(n.inputs || []), ...(n.outputs || [])]),
    ...also,
  ]);
  let name = base;
  for (let k = 1; taken.has(name); k += 1) name = `${base}_${k}`;
  return name;
}

/** The label of input slot `i` under the operator's schema: "B (optional)", "inputs #2". */
function slotLabel(schema, i) {
  const params = schema && schema.kind === "schema" ? schema.inputs || [] : [];
  if (!params.length) return `Input ${i}`;
  const p = params[Math.min(i, params.length - 1)];
  if (i >= params.length && p.option !== "variadic") return null;
  const name = p.option === "variadic" ? `${p.name} #${i - params.length + 2}` : p.name;
  return p.option === "optional" ? `${name} (optional)` : name;
}

/**
 * Rewire (set_node_input): each input slot of the node as a tensor name to read, with the
 * graph's names to pick from, and one more slot while the schema takes more; an optional input
 * left empty is left out. Only the slots changed are sent.
 */
function rewireForm(node, ctx) {
  const current = [...(node.inputs || [])];
  const list = tensorNameList(ctx.graph || {}, node.outputs || []);
  const holder = el("div", { class: "ed-rewire-slots" }, el("div", { class: "muted" }, "Loading the operator's inputs…"));
  /** @type {HTMLInputElement[]} */
  let fields = [];
  const build = (schema) => {
    const max = schema && schema.kind === "schema" ? schema.max_inputs : current.length;
    const count = Math.min(Math.max(current.length + (max > current.length ? 1 : 0), 1), current.length + 1);
    fields = [];
    const rows = [];
    for (let i = 0; i < count; i += 1) {
      const label = slotLabel(schema, i);
      if (label === null) break;
      const input = textInput(`input-${i}`, current[i] || "", {
        class: "mono", list: list.id, "data-index": String(i), placeholder: i < current.length ? "(left out)" : "add an input: a tensor name",
        "aria-label": `Input ${i} (${label})`,
      });
      fields.push(input);
      rows.push(field(label, input));
    }
    holder.replaceChildren(...rows);
  };
  ctx.actions.loadSchema(node.id).then(build).catch(() => build(null));
  const { form } = editForm("ed-rewire", [
    el("p", { class: "ed-hint muted ed-explain" }, "Type or pick the tensor each input reads: a graph input, an initializer or another node's output. Nodes are reordered when needed so each comes after what it reads."),
    holder,
    list,
    el("div", { class: "ed-actions" }, submit("Rewire")),
  ], async () => {
    const ops = fields.map((input, i) => [i, input.value.trim()])
      .filter(([i, tensor]) => tensor !== (current[i] || ""))
      .map(([index, tensor]) => ({ op: "set_node_input", node: node.id, index, tensor }));
    if (!ops.length) throw new Error("Nothing changed: type the name of another tensor for an input.");
    await ctx.actions.edit(ops);
  });
  return form;
}

/**
 * Add a node (add_node) that reads this node's first output (or other tensors) and writes new
 * ones, rewiring nothing: a branch beside the graph, to make a graph output or to wire in next.
 */
function addNodeForm(node, ctx) {
  const graph = ctx.graph || {};
  const { op, domain, name, attrs, attrsBox } = newNodeFields(ctx);
  const reads = textInput("inputs", (node.outputs || []).filter(Boolean)[0] || "", { class: "mono", "aria-label": "Inputs of the new node" });
  const outs = textInput("outputs", "", { class: "mono", placeholder: "new names (fresh ones if empty)", "aria-label": "Outputs of the new node" });
  const output = checkbox("output", "Make its first output a graph output", inMainGraph(ctx));
  const { form } = editForm("ed-add-node", [
    el("p", { class: "ed-hint muted ed-explain" }, "A new node reading tensors of this graph and writing new ones; no reader of this node changes."),
    el("div", { class: "ed-grid2" }, field("Operator", op.input), field("Domain", domain)),
    op.list,
    field("Name", name),
    field("Inputs", reads, ["Tensor names, comma separated, in the operator's order; ", el("code", {}, "=value"), " makes a new constant (",
      el("code", {}, "=1e-5"), ", ", el("code", {}, "=[1, -1]"), ")."]),
    field("Outputs", outs, "New tensor names, comma separated."),
    inMainGraph(ctx) ? output : null,
    attrsBox,
    el("div", { class: "ed-actions" }, submit("Add node")),
  ], async (f) => {
    const opType = op.input.value.trim();
    if (!opType) throw new Error("Choose the operator of the new node, e.g. Relu.");
    const entry = op.lookup(opType);
    /** @type {{op: string, op_type: string, inputs: string[], graph?: string, domain?: string, name?: string, attributes?: object, outputs?: string[]}} */
    const firstRead = topLevelParts(reads.value).find((r) => !r.startsWith("="));
    const typed = readsWithConstants(reads.value, {
      graph, dtype: firstRead && ctx.model ? ctx.model.types.get(firstRead)?.dtype : null, base: (name.value.trim() || opType).toLowerCase(), entry,
    });
    const add = { op: "add_node", op_type: entry ? entry.op_type : opType, inputs: typed.reads };
    if (graph.path) add.graph = graph.path;
    if (domain.value.trim() && domain.value.trim() !== "ai.onnx") add.domain = domain.value.trim();
    if (name.value.trim()) add.name = name.value.trim();
    const values = attrs.read();
    if (Object.keys(values).length) add.attributes = values;
    /** @type {object[]} */
    const ops = [...typed.constants, add];
    const written = names(outs.value);
    if (f.elements.output && f.elements.output.checked) {
      // the graph output needs its name now: the first typed, else a fresh one
      if (!written.length) written.push(freshName(graph, `${(add.name || add.op_type).toLowerCase()}_out`));
      ops.push({ op: "add_output", tensor: written[0] });
    }
    if (written.length) add.outputs = written;
    const at = (graph.nodes || []).length; // appended: every other node keeps its id
    await ctx.actions.edit(ops, { selection: { kind: "node", id: nodeIdIn(graph, at) } });
  });
  return form;
}

/** Whether deleting `node` with Reconnect leaves nothing dangling: it reads something, and no
 * output but its first is read in its graph (a Dropout's unused mask: QA28 found Delete refused
 * by default there, Reconnect unticked for its two outputs). */
function reconnectsWhole(node, graph) {
  if (!(node.inputs || []).some(Boolean)) return false;
  const rest = new Set((node.outputs || []).slice(1).filter(Boolean));
  if (!rest.size) return true;
  const read = new Set([...((graph && graph.nodes) || []).flatMap((n) => n.inputs || []), ...((graph && graph.outputs) || []).map((o) => o.name)]);
  return ![...rest].some((name) => read.has(name));
}

function deleteForm(node, ctx) {
  const reconnect = checkbox("reconnect", "Reconnect", reconnectsWhole(node, ctx.graph),
    "its first input that is no weight or constant feeds its readers");
  // its weights (or the constant an insert made for it) go with it unless kept
  const keep = checkbox("keep_initializers", "Keep its initializers", false, "those only it reads; they go with it otherwise");
  const { form } = editForm("ed-delete-node", [
    reconnect,
    el("p", { class: "ed-hint muted" }, "Without it, readers of its outputs are left without an input; the server refuses that when it breaks the model."),
    keep,
    el("div", { class: "ed-actions" }, el("button", { type: "submit", class: "btn btn-small btn-danger" }, "Delete node")),
  ], async (f) => {
    const op = { op: "delete_node", node: node.id };
    if (f.elements.reconnect.checked) op.reconnect = true;
    if (f.elements.keep_initializers.checked) op.keep_initializers = true;
    await ctx.actions.edit([op], { selection: null });
  });
  return form;
}

const STANDARD_DOMAIN = new Set(["", "ai.onnx"]);

/** The QuantizeLinear → DequantizeLinear pair `node` is half of, on a value or a weight: the
 * QuantizeLinear and every DequantizeLinear reading it (onnxruntime writes one per reader), or
 * null when its quantized value goes anywhere else. */
export function qdqPairOf(node, graph) {
  const nodes = (graph && graph.nodes) || [];
  const std = (n) => n && STANDARD_DOMAIN.has(n.domain || "");
  let q = null;
  if (node.op_type === "QuantizeLinear" && std(node)) q = node;
  else if (node.op_type === "DequantizeLinear" && std(node)) q = nodes.find((n) => (n.outputs || []).includes((node.inputs || [])[0])) || null;
  if (!q || q.op_type !== "QuantizeLinear" || !std(q)) return null;
  const quantized = (q.outputs || [])[0];
  const outputs = new Set(((graph && graph.outputs) || []).map((o) => o.name));
  if (!quantized || outputs.has(quantized)) return null;
  const readers = nodes.filter((n) => (n.inputs || []).includes(quantized));
  const pair = readers.length && readers.every((n) => n.op_type === "DequantizeLinear" && std(n) && n.inputs[0] === quantized
    && (n.outputs || []).length === 1 && !outputs.has(n.outputs[0]));
  return pair ? { q, dqs: readers } : null;
}

/** Remove a QDQ pair in one edit: each half alone breaks the types between them (the reader of a
 * DequantizeLinear gets uint8), so the DequantizeLinears go, then the QuantizeLinear, each
 * reconnecting, the later positions first (a node's id is its position). */
export function removeQdqForm(pair, ctx) {
  const source = pair.q.inputs[0];
  const { form } = editForm("ed-remove-qdq", [
    el("p", { class: "ed-hint muted" }, "The QuantizeLinear and its ", pair.dqs.length === 1 ? "DequantizeLinear" : `${pair.dqs.length} DequantizeLinears`,
      " go: their readers read ", mono(source), " in float again; the scale and zero point go with them unless something else reads them."),
    el("div", { class: "ed-actions" }, el("button", { type: "submit", class: "btn btn-small btn-danger" }, "Remove the pair")),
  ], async () => {
    const ops = [...pair.dqs, pair.q].sort((a, b) => (nodeIndex(b.id) ?? 0) - (nodeIndex(a.id) ?? 0))
      .map((n) => ({ op: "delete_node", node: n.id, reconnect: true }));
    await ctx.actions.edit(ops, { selection: null });
  });
  return form;
}

/** "Write out": the node (or every node of its operator) replaced by the primitives its ONNX
 * definition gives (the write_out edit), for a runtime or an older opset without the operator. */
function writeOutForm(node, ctx) {
  const same = ((ctx.graph || {}).nodes || []).filter((n) => n.op_type === node.op_type && ["", "ai.onnx"].includes(n.domain || "")).length;
  const every = checkbox("every", `Every ${node.op_type} node of the model`, false, "in the main graph and its bodies");
  const { form } = editForm("ed-write-out", [
    el("p", { class: "ed-hint muted" }, `onnx defines ${node.op_type} by other operators: this node is replaced by those, reading and writing what it does — for a runtime or an older opset without ${node.op_type}.`),
    same > 1 ? every : null,
    el("div", { class: "ed-actions" }, el("button", { type: "submit", class: "btn btn-small" }, "Write out")),
  ], async (f) => {
    const all = f.elements.every && f.elements.every.checked;
    await ctx.actions.edit([all ? { op: "write_out", op_types: [node.op_type] } : { op: "write_out", nodes: [node.id] }], { selection: null });
  });
  return form;
}

/** "Unroll": a Loop or Scan that runs a known number of times replaced by its body once per iteration
 * (the unroll_loop edit), for a target without control flow; the server says why it can't. */
function unrollForm(node, ctx) {
  const { form } = editForm("ed-unroll", [
    el("p", { class: "ed-hint muted" }, `The ${node.op_type} is replaced by its body's nodes, once per iteration, each reading what the one before computed; its outputs keep their names. `,
      node.op_type === "Loop" ? "It must run a known number of times: its trip count a constant, its condition true throughout."
        : "Its sequence length must be known: its first scan input's size along its scan axis."),
    el("div", { class: "ed-actions" }, el("button", { type: "submit", class: "btn btn-small" }, "Unroll")),
  ], async () => {
    await ctx.actions.edit([{ op: "unroll_loop", node: node.id }], { selection: null });
  });
  return form;
}

/** The "Edit node" section's buttons: insert before/after, change operator, delete. */
export function nodeActions(node, ctx) {
  // the main graph and its bodies (If branches, Loop and Scan bodies); not a model function
  const inserts = (ctx.graph || {}).kind !== "function" && nodeIndex(node.id) !== null;
  const items = [];
  if (inserts && (node.outputs || []).length) items.push({ key: "insert-after", label: "Insert after", build: () => insertForm(node, ctx, "after") });
  if (inserts && (node.inputs || []).some(Boolean)) items.push({ key: "insert-before", label: "Insert before", build: () => insertForm(node, ctx, "before") });
  items.push({ key: "rewire", label: "Rewire", build: () => rewireForm(node, ctx) });
  items.push({ key: "add-node", label: "Add node", build: () => addNodeForm(node, ctx) });
  items.push({ key: "change-op", label: "Change op", build: () => changeOpForm(node, ctx) });
  items.push({ key: "delete", label: "Delete", cls: "btn-danger", build: () => deleteForm(node, ctx) });
  const pair = qdqPairOf(node, ctx.graph);
  if (pair) items.push({ key: "remove-qdq", label: "Remove QDQ pair", cls: "btn-danger", build: () => removeQdqForm(pair, ctx) });
  items.push({ key: "write-out", label: "Write out", build: () => writeOutForm(node, ctx) });
  if (["Loop", "Scan"].includes(node.op_type) && ["", "ai.onnx"].includes(node.domain || "") && (ctx.graph || {}).kind !== "function") {
    items.push({ key: "unroll", label: "Unroll", build: () => unrollForm(node, ctx) });
  }
  const bar = actionBar(items, { cls: "node-actions" });
  // offered where onnx defines the operator by others (the schema says so once loaded)
  const writeOut = /** @type {HTMLElement | null} */ (bar.querySelector("[data-action=write-out]"));
  if (writeOut) {
    writeOut.hidden = true;
    if (ctx.actions.loadSchema) ctx.actions.loadSchema(node.id).then((s) => { writeOut.hidden = !(s && s.has_body); }).catch(() => {});
  }
  if (!inserts) bar.append(el("div", { class: "ed-hint muted" }, "Inserting nodes works in the main graph and its bodies, not in a model function."));
  return bar;
}

/** "Add as graph output" next to an output tensor of a main-graph node (add_output). */
export function addOutputButton(name, ctx) {
  const outputs = new Set(((ctx.graph || {}).outputs || []).map((o) => o.name));
  if (!inMainGraph(ctx)) return null;
  if (outputs.has(name)) return el("span", { class: "tag tag-set ed-is-output" }, "graph output");
  const { form } = editForm("ed-inline ed-add-output", [
    el("button", { type: "submit", class: "linklike ed-add-output-btn", title: `Make ${name} an output of the model` }, "Add as graph output"),
  ], () => ctx.actions.edit([{ op: "add_output", tensor: name }]), { "data-tensor": name });
  return form;
}

/** A schema default as the operator's documentation writes it: a FLOAT's shortest float32
 * decimal (LeakyRelu's alpha 0.01, not 0.009999999776482582: QA28). */
function defaultText(a) {
  const one = (v) => (typeof v === "bigint" ? v.toString() : a.type === "FLOAT" || a.type === "FLOATS" ? formatFloat32(v) : JSON.stringify(v));
  return Array.isArray(a.default) ? `[${a.default.map(one).join(", ")}]` : one(a.default);
}
