// One node attribute in the node panel: an inline editor for the scalar and list types, a
// readable view of every other AttributeProto type (tensors with a preview, sparse tensors,
// subgraphs as links, TypeProtos in ONNX notation), and `ref_attr_name` references inside
// function bodies shown as a reference to the function's attribute. An attribute the operator
// doesn't require can be deleted; TENSOR attributes get their values replaced from an uploaded
// .npy or JSON, TENSORS from a JSON list. The typed fields' changes are saved together
// (editing/attribute-batch.js): several attributes that must change at once are one edit.
import { el } from "../widgets/dom.js";
import { parseJSON, toJSON } from "../lib/api.js";
import { canEdit, disclosure, dtypeSelect, editForm, field, parseTensorJSON, plainMessage, submit } from "../editing/edit-forms.js";
import { attributeBatch } from "../editing/attribute-batch.js";
import { tensorValueForms } from "../editing/tensor-edit.js";
import { attributeEditText, attributeValueName, dtypeNumber, formatInteger, formatNumber, formatTensor, isDtypeAttribute, onnxType } from "../lib/format.js";
import { markdownBlock } from "../lib/markdown.js";
import { previewToggle } from "./tensor-view.js";
import { fieldError, graphLink, mono, showError, tag } from "../widgets/ui.js";

const EDITABLE = new Set(["FLOAT", "INT", "STRING", "FLOATS", "INTS", "STRINGS"]);

/** Text typed in an attribute's field -> the JSON value sent to the server. */
export function parseAttributeInput(type, text) {
  const scalar = (s) => {
    const t = s.trim();
    if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(t)) {
      const v = parseJSON(t); // keeps big integers exact (BigInt)
      // 1e400: past any double, so past any FLOAT (the server refuses 1e39 the same way); an
      // infinite value is typed as one
      if (typeof v === "number" && !Number.isFinite(v)) {
        throw new Error(type.startsWith("INT") ? `${t} is no 64-bit integer.` : `${t} is beyond the largest FLOAT (3.40282e+38); type Infinity for an infinite value.`);
      }
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

function graphInfo(g) {
  const bits = [g.name, typeof g.nodes === "number" ? `${g.nodes} node${g.nodes === 1 ? "" : "s"}` : ""].filter(Boolean);
  return bits.length ? el("span", { class: "muted" }, ` ${bits.join(" · ")}`) : null;
}

function tensorLine(v, ctx, holder, sparse) {
  const type = sparse ? `sparse ${formatTensor(v.dtype, v.shape)}` : formatTensor(v.dtype, v.shape);
  return [
    mono(type),
    sparse && v.nnz !== undefined ? el("span", { class: "muted" }, ` · ${formatNumber(v.nnz)} non-zero`) : null,
    v.name ? el("span", { class: "muted" }, " · ", mono(v.name)) : null,
    v.external ? [" ", tag("external data")] : null,
    v.ref && holder ? [" ", previewToggle(v.ref, ctx, holder)] : null,
  ];
}

/** A readable view of an attribute value of any type (`node`: the node holding it, for the
 * attributes whose number names a data type). */
export function attributeValueView(attr, ctx, row, node = null) {
  const v = attr.value;
  const named = attributeValueName(node, attr);
  if (named) return el("code", { class: "mono attr-enum", title: `TensorProto.DataType ${formatNumber(v)}` }, named);
  const list = (items, render) => el("ol", { class: "attr-list", start: 0 }, (items || []).map((item, k) => {
    const li = el("li", { "data-item": k });
    li.append(...[render(item, k, li)].flat(Infinity).filter((x) => x !== null && x !== undefined && x !== false));
    return li;
  }));
  switch (attr.type) {
    case "TENSOR": return el("span", {}, tensorLine(v, ctx, row, false));
    case "SPARSE_TENSOR": return el("span", {}, tensorLine(v, ctx, row, true));
    case "TENSORS": return list(v, (item, k, li) => tensorLine(item, ctx, li, false));
    case "SPARSE_TENSORS": return list(v, (item, k, li) => tensorLine(item, ctx, li, true));
    case "GRAPH": return el("span", {}, graphLink(ctx, v.path, `Open ${attr.name} ›`), graphInfo(v));
    case "GRAPHS": return list(v, (g, k) => [graphLink(ctx, g.path, `Open ${attr.name}[${k}] ›`), graphInfo(g)]);
    case "TYPE_PROTO": return mono(onnxType(v), "type-proto");
    case "TYPE_PROTOS": return list(v, (t) => mono(onnxType(t), "type-proto"));
    case "FLOATS": case "INTS": case "STRINGS":
      return mono(`[${(v || []).map((x) => (attr.type === "STRINGS" ? JSON.stringify(x) : formatNumber(x))).join(", ")}]`);
    case "STRING": return mono(JSON.stringify(v ?? ""));
    case "FLOAT": case "INT": return mono(formatNumber(v));
    default:
      return mono(v === undefined || v === null ? "(no value)" : JSON.stringify(v, (k, x) => (typeof x === "bigint" ? x.toString() : x)));
  }
}

/** What a `ref_attr_name` attribute refers to: the function attribute, with its default. */
function referenceView(attr, ctx) {
  const graph = ctx.graph || {};
  const def = (graph.attribute_defaults || []).find((a) => a.name === attr.ref_attr_name);
  // a reference no call can set (onnx's checker lets it pass): said, since it never takes a value
  const declared = def || (graph.attribute_names || []).includes(attr.ref_attr_name);
  if (graph.kind === "function" && !declared) {
    return el("div", { class: "attr-ref attr-ref-undeclared field-error" },
      `refers to ${attr.ref_attr_name}, which the function doesn't declare: no call can set it, so it is always unset (the operator's default applies)`);
  }
  if (graph.kind === "graph" && !graph.path) {
    return el("div", { class: "attr-ref attr-ref-undeclared field-error" },
      `refers to a function attribute ${attr.ref_attr_name}, but the main graph is no function: nothing sets it`);
  }
  return el("div", { class: "attr-ref" },
    el("span", { class: "muted" }, "takes the value of the function attribute "),
    graph.kind === "function"
      ? el("a", { href: ctx.graphHref(graph.path), class: "mono fn-attr-link", "data-fn-attr": attr.ref_attr_name }, attr.ref_attr_name)
      : mono(attr.ref_attr_name),
    def ? el("span", { class: "muted" }, " · default ", attributeValueView(def, ctx, null))
      : el("span", { class: "muted" }, " · no default: a call that doesn't set it leaves this unset (the operator's default applies)"));
}

/** The editor of an INT attribute holding a data type: a picker of the names, sending the number. */
function dtypeEditor(attr, node, row, error, del) {
  let held = attributeValueName(node, attr) || formatNumber(attr.value);
  const picker = dtypeSelect(held, {
    name: "value", "aria-label": `Value of ${attr.name}`, title: `TensorProto.DataType ${formatNumber(attr.value)}`,
  });
  const button = el("button", { type: "submit", class: "btn btn-small", "aria-label": `Save ${attr.name}` }, "Save");
  const form = el("form", { class: "attr-edit attr-edit-dtype" }, picker, button);
  const entry = {
    name: attr.name, mark: row, button, label: "Save", del, error,
    changed: () => picker.value !== held,
    op: () => ({ op: "set_attribute", node: node.id, name: attr.name, value: dtypeNumber(picker.value) ?? parseAttributeInput("INT", picker.value) }),
    discard: () => { picker.value = held; },
    settle: () => { held = picker.value; },
    typed: () => picker.value,
    held: () => held,
    retype: (text) => { if ([...picker.options].some((o) => o.value === text)) picker.value = text; },
  };
  return { form, entry, watch: [picker] };
}

/** The text field of a scalar or list attribute, with its Save; Escape puts the value back. */
function editor(attr, node, row, error, del, ctx) {
  if (isDtypeAttribute(node, attr)) return dtypeEditor(attr, node, row, error, del);
  let held = attributeEditText(attr);
  const input = el("input", {
    type: "text", name: "value", value: held, class: "mono", spellcheck: "false",
    "aria-label": `Value of ${attr.name}`, autocomplete: "off",
  });
  // five Saves on a Conv's panel, each named for its attribute (QA41 #11)
  const button = el("button", { type: "submit", class: "btn btn-small", "aria-label": `Save ${attr.name}` }, "Save");
  const form = el("form", { class: "attr-edit" }, input, button);
  let picker = null; // a closed set's <select>, once the schema names its values (offerChoices)
  const set = (text) => { input.value = text; if (picker) picker.value = text; };
  if (attr.type === "STRING") offerChoices(attr, node, ctx, input, (select) => { picker = select; });
  const entry = {
    name: attr.name, mark: row, button, label: "Save", del, error,
    changed: () => input.value !== held,
    op: () => ({ op: "set_attribute", node: node.id, name: attr.name, value: parseAttributeInput(attr.type, input.value) }),
    discard: () => set(held),
    settle: () => { held = input.value; },
    typed: () => input.value,
    held: () => held,
    retype: set,
  };
  return { form, entry, watch: [input] };
}

/** The values a closed-set string attribute takes (the schema's `choices`: Resize's mode) as a
 * <select> in place of its text field, every value in sight (a datalist showed only those
 * matching what the field held): picked, not typed ("bilinear" is no Resize mode). The hidden
 * field stays the value the editor reads; a value outside the set is kept, said so. */
function offerChoices(attr, node, ctx, input, shown) {
  if (!ctx || !ctx.actions || !ctx.actions.loadSchema) return;
  ctx.actions.loadSchema(node.id).then((schema) => {
    const formal = schema && schema.kind === "schema" ? (schema.attributes || []).find((a) => a.name === attr.name) : null;
    if (!formal || !formal.choices || !input.isConnected) return;
    const outside = formal.choices.includes(input.value) ? [] : [input.value];
    const select = el("select", { class: "mono attr-choice", "aria-label": `Value of ${attr.name}`, title: `One of ${formal.choices.join(", ")}` },
      outside.map((v) => el("option", { value: v }, `${v === "" ? "(empty)" : v} — not one of ${attr.name}'s values`)),
      formal.choices.map((c) => el("option", { value: c }, c)));
    select.value = input.value;
    select.addEventListener("change", () => {
      input.value = select.value;
      input.dispatchEvent(new Event("input"));
    });
    select.addEventListener("keydown", (e) => {
      if (e.key === "Escape") input.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));
    });
    input.hidden = true;
    input.before(select);
    shown(select);
  }).catch(() => { /* no schema: the text field stays, the server says what it refuses */ });
}

/** Replace a TENSOR attribute's value (from .npy or JSON) or a TENSORS attribute's list (JSON). */
function tensorReplace(attr, node, ctx) {
  const apply = (value) => ctx.actions.edit([{ op: "set_attribute", node: node.id, name: attr.name, value }]);
  if (attr.type === "TENSOR") {
    const v = attr.value || {};
    return disclosure("Replace values…", () => tensorValueForms(
      { ref: v.ref, dtype: v.dtype, shape: v.shape || [], size: (v.shape || []).reduce((a, d) => a * Number(d), 1) },
      ctx, (value) => apply(value), { typeChange: false, cast: true, what: "attribute" }), { cls: "attr-replace" });
  }
  return disclosure("Replace list…", () => {
    const area = el("textarea", {
      name: "values", class: "mono ed-json", rows: 4, spellcheck: "false",
      placeholder: "[{\"dtype\": \"FLOAT\", \"shape\": [2], \"values\": [1, 2]}, ...]",
    });
    return editForm("ed-json-form", [
      field("The tensors as a JSON list", area, "Each item: {\"dtype\", \"shape\", \"values\"} or a (nested) list of numbers (FLOAT)."),
      el("div", { class: "ed-actions" }, submit("Set list")),
    ], async () => {
      let list;
      try { list = parseJSON(area.value.trim()); } catch (err) { throw new Error(`This is not valid JSON: ${err.message}`, { cause: err }); }
      if (!Array.isArray(list)) throw new Error("Type a JSON list of tensors.");
      await apply(list.map((item) => parseTensorJSON(toJSON(item))));
    }).form;
  }, { cls: "attr-replace" });
}

const LISTS = new Set(["INTS", "FLOATS", "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSORS", "TYPE_PROTOS"]);

/** A Delete button for an attribute, shown once the operator's schema says it doesn't require
 * it (deleting If's then_branch or Cast's `to` can only be refused); a required one says so. */
function deleteButton(attr, node, ctx) {
  const del = el("button", {
    type: "button", class: "linklike attr-delete", title: `Delete the attribute ${attr.name} (the operator's default then applies)`,
    "aria-label": `Delete attribute ${attr.name}`, hidden: true,
  }, "Delete");
  ctx.actions.loadSchema(node.id).then((schema) => {
    const formal = schema && schema.kind === "schema" ? (schema.attributes || []).find((a) => a.name === attr.name) : null;
    if (!formal || !formal.required) { del.hidden = false; return; }
    const why = tag("required", "attr-required");
    why.title = `${node.op_type} requires ${attr.name}: it can't be deleted, only changed`;
    del.replaceWith(why);
  }).catch(() => { del.hidden = false; }); // no schema to ask: the server says when it is refused
  return del;
}

const ITEM_LISTS = new Set(["INTS", "FLOATS", "STRINGS"]);
const SPECIAL_FLOATS = { nan: "NaN", inf: "Infinity", "+inf": "Infinity", infinity: "Infinity", "+infinity": "Infinity", "-inf": "-Infinity", "-infinity": "-Infinity" };

/** An item of a FLOATS, INTS or STRINGS list as typed: what set_attribute_items takes, or an Error. */
function itemValue(type, text) {
  if (type === "STRINGS") return text;
  const t = text.trim();
  if (type === "FLOATS" && SPECIAL_FLOATS[t.toLowerCase()]) return SPECIAL_FLOATS[t.toLowerCase()];
  const v = t === "" ? NaN : Number(t);
  if (!Number.isFinite(v)) return new Error(type === "FLOATS" ? "a number (or NaN, inf, -inf)" : "a whole number");
  if (type === "INTS" && !Number.isSafeInteger(v)) return new Error("a whole number (of at most 15 digits here)");
  return v;
}

/**
 * One item of a list too long to edit whole (a forest's 900,000 thresholds): its number and its
 * new value, set with set_attribute_items — the list is never sent back; the value it has now is
 * said when it is among the items shown.
 */
function itemEditor(attr, node, ctx) {
  const shown = attr.value || [];
  const error = fieldError();
  const index = /** @type {HTMLInputElement} */ (el("input", { type: "number", step: "1", class: "attr-item-index", "aria-label": `Number of the item of ${attr.name} to change (0 to ${attr.truncated - 1})` }));
  const value = /** @type {HTMLInputElement} */ (el("input", { type: "text", class: "attr-item-value", "aria-label": "Its new value" }));
  const now = el("span", { class: "muted attr-item-now" });
  index.addEventListener("input", () => {
    const k = Number(index.value);
    now.textContent = index.value !== "" && Number.isInteger(k) && k >= 0 && k < shown.length ? `now ${shown[k]}` : "";
  });
  const form = el("form", { class: "attr-items" },
    el("label", {}, "Item ", index), el("label", {}, " becomes ", value), " ", submit("Set item"), " ", now, error);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const k = Number(index.value);
    if (index.value === "" || !Number.isInteger(k) || k < 0 || k >= attr.truncated) { showError(error, `an item number from 0 to ${formatInteger(attr.truncated - 1)}`); return; }
    const v = itemValue(attr.type, value.value);
    if (v instanceof Error) { showError(error, v.message); return; }
    showError(error, "");
    try {
      await ctx.actions.edit([{ op: "set_attribute_items", node: node.id, name: attr.name, items: [{ index: k, value: v }] }]);
    } catch (err) {
      showError(error, plainMessage(err.message || String(err)));
    }
  });
  return form;
}

export function attributeRow(attr, node, ctx) {
  const row = el("div", { class: "attr", "data-attr": attr.name });
  const error = fieldError();
  const editing = canEdit(ctx);
  const del = editing ? deleteButton(attr, node, ctx) : null;
  const batch = editing ? attributeBatch(node, ctx) : null;
  const edited = editing && !attr.ref_attr_name && EDITABLE.has(attr.type) && attr.truncated === undefined
    ? editor(attr, node, row, error, del, ctx) : null;
  if (del) {
    // the other fields' pending changes go with the deletion: the panel is drawn again after it
    const own = { op: "delete_attribute", node: node.id, name: attr.name };
    del.addEventListener("click", () => batch.submit(row, edited ? edited.entry : null, error, own));
  }
  // a list's length beside its type: a tree ensemble's nodes_* lists run to thousands
  const length = LISTS.has(attr.type) && Array.isArray(attr.value) ? attr.truncated ?? attr.value.length : null;
  row.append(el("div", { class: "attr-head" },
    el("span", { class: "attr-name" }, attr.name),
    el("span", { class: "attr-type" }, attr.type, length === null ? "" : ` · ${formatInteger(length)}`),
    attr.ref_attr_name ? tag("reference", "tag-ref") : null,
    edited ? tag("not saved", "tag-warn attr-unsaved") : null,
    del));
  if (attr.ref_attr_name) {
    row.append(referenceView(attr, ctx));
  } else if (edited) {
    row.append(edited.form);
    edited.form.addEventListener("submit", (e) => {
      e.preventDefault();
      batch.submit(row, edited.entry, error);
    });
    const field = edited.watch[0];
    field.addEventListener("keydown", (e) => {
      if (e.key !== "Escape") return;
      edited.entry.discard();
      showError(error, "");
      batch.refresh();
    });
    batch.track(edited.entry, edited.watch);
  } else {
    row.append(el("div", { class: "attr-value" }, attributeValueView(attr, ctx, row, node)));
    if (editing && (attr.type === "TENSOR" || attr.type === "TENSORS") && attr.truncated === undefined) {
      row.append(tensorReplace(attr, node, ctx));
    }
  }
  row.append(error);
  if (attr.truncated !== undefined) {
    const items = ITEM_LISTS.has(attr.type) && editing && !attr.ref_attr_name;
    row.append(el("div", { class: "muted attr-note" },
      `The first ${formatNumber((attr.value || []).length)} of ${formatNumber(attr.truncated)} items are shown; ${items ? "change one by its number below." : "a list this long is not edited here."}`));
    if (items) row.append(itemEditor(attr, node, ctx));
  }
  if (attr.doc_string) row.append(markdownBlock(attr.doc_string, { cls: "attr-doc" }));
  return row;
}
