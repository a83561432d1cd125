// Building blocks of the editing forms in the sidebar panels: labelled fields, element-type
// pickers, shapes, operator lists (from op-catalog.js, loaded on first use), disclosures that
// open a form in place, and running a form's edit with its error shown inline in plain words.
import { el } from "../widgets/dom.js";
import { exactInteger, parseJSON } from "../lib/api.js";
import { plural } from "../lib/format.js";
import { fieldError, showError } from "../widgets/ui.js";
import { successorOf } from "../widgets/typed-keeper.js";

/** TensorProto element types, the common ones first. */
export const DTYPES = [
  "FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT8", "INT16", "INT32", "INT64",
  "UINT8", "UINT16", "UINT32", "UINT64", "BOOL", "STRING", "COMPLEX64", "COMPLEX128",
  "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0", "INT4", "UINT4", "FLOAT4E2M1",
  "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2",
];

/** Attribute types a value typed in a form can have (the server sets no others from JSON). */
export const ATTRIBUTE_TYPES = ["FLOAT", "INT", "STRING", "FLOATS", "INTS", "STRINGS", "TENSOR", "TENSORS"];

/** Whether a panel offers edits: its context carries the edit action, which it does not while an
 * earlier revision is viewed (read-only: edits are made on the current revision). */
export function canEdit(ctx) {
  return !!(ctx && ctx.actions && ctx.actions.edit);
}

let uid = 0;
/** A fresh element id (labels point at their fields). */
export function fieldId(prefix = "f") {
  uid += 1;
  return `${prefix}-${uid}`;
}

/**
 * A <label> above a control; `hint` (optional) is a muted line under it (text, or nodes: code).
 * @param {string} label @param {HTMLElement} control @param {string | Array<string | Node>} [hint]
 */
export function field(label, control, hint = "") {
  if (!control.id) control.id = fieldId("field");
  return el("div", { class: "ed-field" },
    el("label", { class: "ed-label", for: control.id }, label),
    control,
    hint ? el("div", { class: "ed-hint muted" }, hint) : null);
}

export function textInput(name, value = "", attrs = {}) {
  return el("input", { type: "text", name, value: value ?? "", autocomplete: "off", spellcheck: "false", ...attrs });
}

export function checkbox(name, label, checked = false, hint = "") {
  const input = el("input", { type: "checkbox", name, checked });
  return el("label", { class: "ed-check" }, input, el("span", {}, label, hint ? el("span", { class: "muted" }, ` — ${hint}`) : null));
}

export function select(name, options, value, attrs = {}) {
  return el("select", { name, ...attrs }, options.map((o) => {
    const [v, text] = Array.isArray(o) ? o : [o, o];
    return el("option", { value: v, selected: v === value }, text);
  }));
}

export function dtypeSelect(value = "FLOAT", attrs = {}) {
  const list = value && !DTYPES.includes(value) ? [value, ...DTYPES] : DTYPES;
  return select("dtype", list, value || "FLOAT", { class: "mono", ...attrs });
}

export function button(text, attrs = {}) {
  return el("button", { type: "button", class: "btn btn-small", ...attrs }, text);
}

export function submit(text, cls = "btn btn-small btn-primary") {
  return el("button", { type: "submit", class: cls }, text);
}

/** The "op #1 (set_attribute): " prefix the server puts before a message, taken off. */
export function plainMessage(message) {
  return String(message || "")
    .replace(/^op #\d+ \([a-z_]+\): /, "")
    // onnx's C++ assertions: "/project/onnx/x/Y.h:66: fn: Assertion `false` failed: No Adapter From Version $14 for Reshape"
    .replace(/\S+\.(?:h|cc|cpp):\d+: \w+: Assertion `[^`]*` failed: /g, "")
    .replace(/\$(\d+)/g, "$1");
}

/** @type {((ops: object[]) => Promise<any>) | null} */
let sendFix = null;

/** How a refusal's `fix` (the same batch with what else it needs, e.g. a graph output
 * re-declared) is sent when the person takes it: the model page's, set once. */
export function offerRefusalFixes(/** @type {(ops: object[]) => Promise<any>} */ send) {
  sendFix = send;
}

/** The refusal's way out as a button under its message: sends the server's batch instead. */
function fixButton(errorBox, fix) {
  const button = el("button", { type: "button", class: "btn btn-small refusal-fix" }, `${fix.label} and save`);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await sendFix(fix.ops);
    } catch (err) {
      if (errorBox.isConnected) showError(errorBox, plainMessage(err.message || String(err)));
    } finally {
      if (button.isConnected) button.disabled = false;
    }
  });
  return button;
}

/** @type {((id: string) => string) | null} */
let refusalNodeHref = null;
const nowhere = (/** @type {string} */ id) => !id; // no node is on screen: every node id is non-empty
/** @type {(id: string) => boolean} */
let refusalNodeShown = nowhere;

/** How the node a refusal is about (its id) becomes a link, and whether it is the node on
 * screen already (no link to where the person is): the model page's, set once.
 * @param {(id: string) => string} href @param {(id: string) => boolean} [shown] */
export function linkRefusalNodes(href, shown = nowhere) {
  refusalNodeHref = href;
  refusalNodeShown = shown;
}

/** In `next`, drawn in place of `form`, the error box where `box` was in it: by its place among
 * the form's error boxes (an attributes section has one per row), else the form's own. */
function boxAgain(form, box, next) {
  const k = [...form.querySelectorAll(".field-error")].indexOf(box);
  const boxes = next.querySelectorAll(".field-error");
  return (k >= 0 && boxes.length > k ? boxes[k] : null) || next.querySelector(":scope > .field-error");
}

/**
 * Run a form's async action: controls disabled meanwhile, the error (in plain words) shown in
 * `errorBox`, with a link to the node it names. Resolves to true when the action succeeded.
 */
export async function runForm(form, errorBox, action) {
  const controls = [...form.querySelectorAll("input, button, textarea, select")].filter((c) => !c.disabled);
  const focused = document.activeElement; // disabled, it loses the focus: given back after a refusal
  controls.forEach((c) => { c.disabled = true; });
  showError(errorBox, "");
  form.classList.add("pending");
  try {
    await action();
    return true;
  } catch (err) {
    // the panel drawn anew meanwhile (the model moved on: a 409): said in the form that replaced it
    const next = errorBox.isConnected ? null : successorOf(form);
    if (next) errorBox = boxAgain(form, errorBox, next) || errorBox;
    // a box beside its forms, not in them (a metadata list's): found again by its id
    if (!errorBox.isConnected && errorBox.id) errorBox = document.getElementById(errorBox.id) || errorBox;
    if (errorBox.isConnected) {
      // the server's database or bucket down (a 503): nothing was changed, the same save works soon (QA36 #6)
      const said = plainMessage(err.message || String(err)).replace(/ \(\+\d+ more\)$/, "");
      showError(errorBox, err.code === "store_unavailable" ? `Not saved: the server can't reach its storage just now — try again in a moment (${said}).` : said, err.details || []);
      if (err.node && refusalNodeHref && !refusalNodeShown(err.node)) {
        errorBox.append(el("a", { class: "inference-link refusal-node", href: refusalNodeHref(err.node), "data-node": err.node }, "Show the node ›"));
      }
      if (err.fix && sendFix) errorBox.append(fixButton(errorBox, err.fix));
      errorBox.scrollIntoView({ block: "nearest" });
    }
    return false;
  } finally {
    form.classList.remove("pending");
    controls.forEach((c) => { if (c.isConnected) c.disabled = false; });
    const lost = !document.activeElement || document.activeElement === document.body;
    if (lost && focused instanceof HTMLElement && focused.isConnected && controls.includes(focused)) focused.focus({ preventScroll: true });
  }
}

/**
 * A form that runs `action(form)` on submit. Returns {form, error}; `children` go first, then
 * the error box. `cls` classes the form.
 */
export function editForm(cls, children, action, attrs = {}) {
  const error = fieldError();
  const form = el("form", { class: `ed-form ${cls}`.trim(), novalidate: true, ...attrs }, children, error);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    runForm(form, error, () => action(form));
  });
  return { form, error };
}

const FIELD = "input:not([type=hidden]):not([type=checkbox]):not([type=file]), select, textarea";

/** An opened form's first field focused and the form scrolled into view (it may open below
 * the window's edge on a laptop); a form built once its data arrives, when it arrives, while
 * the focus is still on the button that opened it. */
function bringIn(/** @type {HTMLElement} */ body, /** @type {HTMLElement} */ opener) {
  const first = /** @type {HTMLElement | null} */ (body.querySelector(FIELD));
  body.scrollIntoView({ block: "nearest" });
  if (first) {
    first.focus({ preventScroll: true });
    return;
  }
  const later = new MutationObserver(() => {
    if (body.hidden || !body.querySelector(FIELD)) return;
    later.disconnect();
    if (document.activeElement === opener) bringIn(body, opener);
  });
  later.observe(body, { childList: true, subtree: true });
}

/** Escape in an open form closes it (a field's own Escape, putting its value back, first). */
function closesOnEscape(/** @type {HTMLElement} */ body, /** @type {() => void} */ close) {
  body.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || e.defaultPrevented || body.hidden) return;
    e.preventDefault();
    e.stopPropagation(); // not the page's Escape too, which would close the whole panel
    close();
  });
}

/**
 * A button that opens (and closes) a panel below it holding what `build()` returns; built on
 * first open. Returns the wrapper element (.ed-disclosure).
 */
export function disclosure(label, build, { cls = "", open = false, title = "" } = {}) {
  const toggle = el("button", { type: "button", class: `btn btn-small ed-toggle ${cls}`.trim(), "aria-expanded": "false", title: title || null }, label);
  const body = el("div", { class: "ed-disclosure-body", hidden: true });
  const wrap = el("div", { class: "ed-disclosure" }, toggle, body);
  let built = false;
  const set = (opened) => {
    if (opened && !built) { body.append(build()); built = true; }
    body.hidden = !opened;
    toggle.setAttribute("aria-expanded", opened ? "true" : "false");
    toggle.classList.toggle("active", opened);
    if (opened && body.isConnected) bringIn(body, toggle);
  };
  toggle.addEventListener("click", () => set(body.hidden));
  closesOnEscape(body, () => { set(false); toggle.focus(); });
  if (open) set(true);
  return wrap;
}

// ------------------------------------------------------------------ shapes

/** "batch, 3, ?, 224" -> ["batch", 3, null, 224]; "" -> [] (a scalar). */
export function parseDims(text) {
  const t = String(text || "").trim().replace(/^\[/, "").replace(/\]$/, "").trim();
  if (!t) return [];
  return t.split(",").map((s) => parseDim(s));
}

/** One dim typed in a field: a number, a symbolic name, or "" / "?" for unknown. */
export function parseDim(text) {
  const s = String(text ?? "").trim();
  if (s === "" || s === "?") return null;
  if (/^\d+$/.test(s)) return exactInteger(s);
  return s;
}

export function dimText(d) {
  return d === null || d === undefined ? "" : String(d);
}

// ------------------------------------------------------------------ tensors typed as JSON

function product(shape) {
  return shape.reduce((a, d) => a * Number(d), 1);
}

/** Nested arrays -> {shape, values} (values flat, row-major). */
function flatten(value) {
  const shape = [];
  let probe = value;
  while (Array.isArray(probe)) { shape.push(probe.length); probe = probe[0]; }
  const values = [];
  const walk = (v, depth) => {
    if (depth === shape.length) { values.push(v); return; }
    if (!Array.isArray(v) || v.length !== shape[depth]) throw new Error("The nested lists are ragged: every row must have the same length.");
    v.forEach((x) => walk(x, depth + 1));
  };
  walk(value, 0);
  return { shape, values };
}

/**
 * A tensor value typed as JSON -> {"dtype", "shape", "values"} for the server. Accepts that
 * object itself (values flat or nested), a (nested) list, or one number. `like` ({dtype, shape})
 * supplies what the text leaves out: a flat list with as many values as `like` keeps its shape.
 */
export function parseTensorJSON(text, like = {}) {
  const t = String(text || "").trim();
  if (!t) throw new Error("Type the values, e.g. [1, 2, 3] or {\"dtype\": \"FLOAT\", \"shape\": [3], \"values\": [1, 2, 3]}.");
  let v;
  try {
    v = parseJSON(t);
  } catch (err) {
    throw new Error(`This is not valid JSON: ${err.message}`, { cause: err });
  }
  let dtype = like.dtype || "FLOAT";
  let shape = null;
  if (v && typeof v === "object" && !Array.isArray(v)) {
    if (!("values" in v)) throw new Error("The object needs \"values\" (and \"dtype\", \"shape\").");
    dtype = v.dtype || dtype;
    shape = Array.isArray(v.shape) ? v.shape : null;
    v = v.values;
  }
  const flat = Array.isArray(v) ? flatten(v) : { shape: [], values: [v] };
  if (!shape) {
    const likeShape = (like.shape || []).map(Number);
    const nested = flat.shape.length > 1;
    shape = !nested && like.shape && product(likeShape) === flat.values.length ? likeShape : flat.shape;
  }
  return { dtype, shape, values: flat.values };
}

// ------------------------------------------------------------------ operators

let catalogPromise = null;
/** op-catalog.js, imported on first use. */
export function loadCatalog() {
  if (!catalogPromise) catalogPromise = import("../lib/op-catalog.js");
  return catalogPromise;
}

function importedVersion(opsetImport, domain) {
  for (const o of opsetImport || []) {
    const d = o.domain === "ai.onnx" ? "" : o.domain || "";
    if (d === domain) return Number(o.version);
  }
  return null;
}

// Domains offered when the model doesn't import them yet (an edit imports the domain with the
// node): onnx's ML operators and onnxruntime's contrib operators, not onnxruntime's internal
// layout domains.
const OFFERED_DOMAINS = new Set(["ai.onnx.ml", "com.microsoft"]);

/**
 * The model's functions (functionEntries), the operators its opset imports offer, then those of
 * OFFERED_DOMAINS it doesn't import, at their newest version: [{domain, op_type, since, deprecated, imports (the edit imports its
 * domain), attributes: [{name, type, required}], inputTypes (per input, a constant's element
 * type: a name, "" as the first input's, 0 unknown)}], sorted by name (ai.onnx first).
 */
export async function operatorsFor(opsetImport, functions = []) {
  const { OPS, LATEST_OPSET } = await loadCatalog();
  const out = [];
  for (const [domain, opType, versions] of OPS) {
    const imported = importedVersion(opsetImport, domain);
    if (imported === null && !OFFERED_DOMAINS.has(domain)) continue;
    const at = imported === null ? LATEST_OPSET[domain] : imported;
    let pick = null;
    for (const v of versions) if (v[0] <= at) pick = v;
    if (!pick || pick[1]) continue; // not there yet, or deprecated at this opset
    out.push({
      domain, op_type: opType, since: pick[0], deprecated: !!pick[1], imports: imported === null,
      attributes: pick[2].map(([name, type, required]) => ({ name, type, required: !!required })),
      inputTypes: pick[3] || [],
    });
  }
  out.sort((a, b) => (a.domain === b.domain ? a.op_type.localeCompare(b.op_type) : a.domain === "" ? -1 : b.domain === "" ? 1 : a.domain.localeCompare(b.domain)));
  return [...functionEntries(opsetImport, functions), ...out];
}

/**
 * The model-local functions a node can call, as operator entries named by domain and name
 * ("local.Block": a function may share an operator's name); one with an overload is left out
 * (an edit can't name it). The summary's functions: [{name, domain, overload, nodes, attributes}].
 */
function functionEntries(opsetImport, functions) {
  return (functions || []).filter((f) => !f.overload).map((f) => ({
    domain: f.domain || "", op_type: f.name, qualified: f.domain ? `${f.domain}.${f.name}` : f.name,
    function: true, nodes: f.nodes, since: null, deprecated: false, imports: importedVersion(opsetImport, f.domain || "") === null,
    attributes: (f.attributes || []).map((a) => ({ name: a.name, type: a.type, required: false })),
    inputTypes: [],
  }));
}

/**
 * An operator-type text field with a list of the model's operators (a <datalist>). Returns
 * {input, list, lookup(text) -> catalog entry | null, ready (Promise of the operators)}.
 */
export function operatorField(opsetImport, { name = "op_type", value = "", placeholder = "e.g. Relu", functions = [] } = {}) {
  const list = el("datalist", { id: fieldId("ops") });
  const input = textInput(name, value, { class: "mono", list: list.id, placeholder, "aria-label": "Operator type" });
  let ops = [];
  const ready = operatorsFor(opsetImport, functions).then((found) => {
    ops = found;
    const label = (o) => (o.function ? `function of this model · ${plural(o.nodes, "node")}` : o.imports ? `${o.domain} · imported with it` : o.domain ? `${o.domain} · opset ${o.since}` : `since opset ${o.since}`);
    list.append(...found.map((o) => el("option", { value: o.qualified || o.op_type }, label(o))));
    return found;
  }).catch(() => []);
  const lookup = (text) => {
    const t = String(text || "").trim();
    const named = (o) => o.qualified || o.op_type;
    return ops.find((o) => named(o) === t) || ops.find((o) => !o.function && o.op_type === t)
      || ops.find((o) => named(o).toLowerCase() === t.toLowerCase()) || null;
  };
  return { input, list, lookup, ready };
}

/**
 * A <datalist> of the value names a node of `graph` (graph JSON) can read: its inputs,
 * initializers and nodes' outputs, and the names it reads from graphs around it; `exclude`
 * (a node's own outputs, say) left out.
 */
export function tensorNameList(graph, exclude = []) {
  const names = new Set([
    ...(graph.inputs || []).map((v) => v.name),
    ...(graph.initializers || []).map((t) => t.name),
    ...(graph.nodes || []).flatMap((n) => n.outputs || []),
    ...(graph.outer_scope || []),
  ]);
  for (const name of ["", ...exclude]) names.delete(name);
  return el("datalist", { id: fieldId("tensors") }, [...names].map((name) => el("option", { value: name })));
}

/**
 * A row of buttons, each opening its own form in one shared area below (a click on the open
 * one closes it). items: [{label, build: () => Node, cls, key}]. Returns the wrapper.
 */
export function actionBar(items, { cls = "" } = {}) {
  const area = el("div", { class: "ed-action-area", hidden: true });
  const bar = el("div", { class: "ed-action-bar" });
  let openKey = null;
  const buttons = items.map((item) => {
    const b = el("button", { type: "button", class: `btn btn-small ${item.cls || ""}`.trim(), "aria-expanded": "false", "data-action": item.key }, item.label);
    b.addEventListener("click", () => {
      const closing = openKey === item.key;
      buttons.forEach((x) => { x.classList.remove("active"); x.setAttribute("aria-expanded", "false"); });
      area.replaceChildren();
      openKey = closing ? null : item.key;
      area.hidden = closing;
      if (closing) return;
      b.classList.add("active");
      b.setAttribute("aria-expanded", "true");
      area.append(item.build());
      bringIn(area, b);
    });
    return b;
  });
  closesOnEscape(area, () => {
    const b = buttons.find((x) => x.dataset.action === openKey);
    if (b) { b.click(); b.focus(); }
  });
  bar.append(...buttons);
  return el("div", { class: `ed-actionbar ${cls}`.trim() }, bar, area);
}
