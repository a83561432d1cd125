// metadata_props as an editable list: change or delete a value, add a key. The model's by
// default; `target` (a node id, "" for the main graph, or a graph/function path) edits another's.
import { breakable, el } from "../widgets/dom.js";
import { runForm } from "./edit-forms.js";
import { fieldError, showError } from "../widgets/ui.js";

const LONG_VALUE = 40; // characters: a value longer than its column holds on a line or two

/** A value's field: a textarea as tall as what it holds as wrapped in its width (up to 12 lines,
 * then it scrolls; app.css), so a JSON or multi-line value keeps its newlines (an <input> dropped
 * them on save) and a long one-line value is seen whole, not its first line (QA27); Enter saves,
 * Shift+Enter is a new line. */
function valueField(value, label, placeholder = "") {
  const field = /** @type {HTMLTextAreaElement} */ (el("textarea", {
    name: "value", rows: "1", "aria-label": label, autocomplete: "off", spellcheck: "false",
    class: "meta-value", placeholder, title: "Enter saves; Shift+Enter starts a new line",
  }));
  field.value = value;
  const fit = () => {
    if (!field.isConnected) return;
    field.style.height = "auto"; // its one row, so scrollHeight is what the text takes
    field.style.height = `${field.scrollHeight + field.offsetHeight - field.clientHeight}px`;
  };
  let width = -1; // refitted when laid out and when its width (so its wrapping) changes
  new ResizeObserver(([entry]) => {
    if (entry.contentRect.width !== width) { width = entry.contentRect.width; fit(); }
  }).observe(field);
  field.addEventListener("input", fit);
  field.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.shiftKey || e.isComposing) return;
    e.preventDefault();
    field.form?.requestSubmit();
  });
  return field;
}

/**
 * props: [{key, value}]. Options: target (see above; undefined = the model), idPrefix (element
 * ids: <prefix>, <prefix>-add, <prefix>-error).
 * @param {Array<{key: string, value: string}>} props
 * @param {any} ctx
 * @param {{target?: string, tensor?: string, idPrefix?: string}} [options]
 */
export function metadataEditor(props, ctx, { target, tensor, idPrefix = "metadata" } = {}) {
  const save = (key, value) => (target === undefined
    ? ctx.actions.setMetadata(key, value)
    : ctx.actions.edit([{ op: "set_metadata", key, value, target, ...(tensor ? { tensor } : {}) }]));
  const error = fieldError();
  error.id = `${idPrefix}-error`;
  const list = el("div", { class: "meta-list", id: idPrefix },
    el("div", { class: "meta-row meta-header" }, el("span", {}, "Key"), el("span", {}, "Value"), el("span", {})));
  for (const { key, value } of props) {
    const input = valueField(value, `Value of ${key}`);
    const del = el("button", { type: "button", class: "btn btn-small btn-danger", title: `Delete ${key}` }, "Delete");
    // a long or multi-line value (a JSON config) gets the panel's width, under its key
    const long = value.length > LONG_VALUE || value.includes("\n");
    const form = el("form", { class: `meta-row${long ? " meta-long" : ""}`, "data-meta-key": key },
      el("span", { class: "meta-key mono", title: key }, breakable(key)), input,
      el("span", { class: "meta-actions" }, el("button", { type: "submit", class: "btn btn-small", "aria-label": `Save ${key}` }, "Save"), del));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      runForm(form, error, () => save(key, input.value));
    });
    del.addEventListener("click", () => runForm(form, error, () => save(key, null)));
    list.append(form);
  }
  if (!props.length) list.append(el("p", { class: "muted meta-empty" }, "No metadata yet."));

  const keyInput = el("input", { type: "text", name: "key", placeholder: "new key", "aria-label": "New metadata key", autocomplete: "off" });
  const valueInput = valueField("", "New metadata value", "value");
  const addForm = el("form", { class: "meta-row meta-add", id: `${idPrefix}-add` }, keyInput, valueInput,
    el("span", { class: "meta-actions" }, el("button", { type: "submit", class: "btn btn-small btn-primary" }, "Add")));
  addForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!keyInput.value.trim()) { showError(error, "Give the new entry a key."); keyInput.focus(); return; }
    if (props.some((p) => p.key === keyInput.value)) {
      showError(error, `There is already a key "${keyInput.value}": change its value above.`);
      return;
    }
    runForm(addForm, error, () => save(keyInput.value, valueInput.value));
  });
  return el("div", { class: "meta-editor", "data-target": target === undefined ? "model" : target }, list, addForm, error);
}
