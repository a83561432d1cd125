// @ts-check
/** The dialog naming a model anew (two uploads of one export told apart: "v1 baseline", "v2
 * int8"): the models list's Rename and the model page's title open the same one. */
import * as api from "../lib/api.js";
import { el } from "./dom.js";
import { openModal } from "./modal.js";

/**
 * Ask for a new name for model `m`; `renamed(name)` once the server took it.
 * @param {{ id: string, name?: string }} m
 * @param {(name: string) => (void | Promise<void>)} renamed
 */
export function askModelName(m, renamed) {
  const name = m.name || m.id;
  const field = el("input", { type: "text", name: "name", value: name, class: "mono", maxlength: "200", "aria-label": "New name", required: "" });
  const error = el("p", { class: "field-error", role: "alert", hidden: true });
  const save = el("button", { type: "submit", class: "btn btn-small btn-primary confirm-rename" }, "Rename");
  const { dialog, body } = openModal({ id: "rename-model", title: `Rename ${name}`, actions: [save], label: `Rename ${name}`, cls: "modal-confirm", question: true });
  const form = el("form", { class: "rename-form" }, el("label", { class: "ed-label", for: (field.id = "rename-model-name") }, "Name"), field, error);
  body.append(form);
  save.setAttribute("form", (form.id = "rename-model-form"));
  field.focus();
  field.select();
  field.addEventListener("input", () => { error.hidden = true; }); // said of what was typed before
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!field.value.trim()) { // said here, in the page's words (the API's are about a JSON field)
      error.textContent = "Give the model a name.";
      error.hidden = false;
      return;
    }
    save.disabled = true;
    try {
      await api.renameModel(m.id, field.value);
      dialog.close();
      await renamed(field.value.trim());
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
      save.disabled = false;
    }
  });
}
