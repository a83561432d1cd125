// The model's metadata_props as an editable list: change or delete a value, add a key.
import { el } from "./dom.js";
import { fieldError, runInline, showError } from "./ui.js";

export function metadataEditor(props, ctx) {
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
