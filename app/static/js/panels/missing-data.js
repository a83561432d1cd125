// The model's weights that are not here: external data files its tensors name that were not
// uploaded with it (a .onnx picked without its .bin), or that hold too few bytes. The graph is
// shown and can be edited meanwhile; running it, its tensors' values and whole downloads need
// them, so the panel says which files and takes them (POST .../data-files: a new revision).
import { el } from "../widgets/dom.js";
import { canEdit, editForm, submit } from "../editing/edit-forms.js";
import { formatBytes } from "../lib/format.js";
import { checkRow, mono, plural } from "../widgets/ui.js";

function held(m) {
  const names = m.names.slice(0, 3).join(", ");
  return m.tensors > 3 ? `${names} and ${m.tensors - 3} more` : names;
}

function attachForm(missing, ctx) {
  const input = el("input", { type: "file", name: "file", multiple: true, "aria-label": "External data files to attach" });
  const { form } = editForm("ed-attach-data", [
    el("div", { class: "ed-row" }, input, submit(missing.length === 1 ? `Attach ${missing[0].location}` : "Attach")),
  ], async () => {
    if (!input.files || !input.files.length) throw new Error(`Choose ${missing.map((m) => m.location).join(", ")} on your disk.`);
    // one file missing, one picked: it is that file, whatever it is called now (its size is checked)
    const one = missing.length === 1 && input.files.length === 1 ? missing[0].location : null;
    await ctx.actions.attachDataFiles([...input.files], one);
  });
  return form;
}

/** The "Weights" row of the validation section, or null when every file is here. */
export function missingDataCheck(missing, ctx) {
  if (!missing || !missing.length) return null;
  const total = missing.reduce((n, m) => n + m.tensors, 0);
  const row = checkRow(false, "Weights", `missing for ${plural(total, "tensor")}`);
  row.classList.replace("bad", "warn");  // the graph is sound: its data is what's missing
  const icon = row.querySelector(".check-icon");
  if (icon) icon.textContent = "!";
  row.classList.add("missing-data");
  row.append(el("ul", { class: "missing-files" }, missing.map((m) => el("li", { "data-location": m.location },
    mono(m.location), ` — ${m.reason}: the data of ${held(m)} (${formatBytes(Number(m.bytes))})`)))); // a hostile length past 2^53 comes as a BigInt
  row.append(el("div", { class: "muted runtime-note" },
    "The graph is shown and can be edited. onnxruntime's check ran on zeros in their place; "
    + "Run, these tensors' values and whole downloads need the files."));
  // a location outside the model's folder names no file that can ever be attached
  const attachable = missing.filter((m) => !m.reason.startsWith("a place outside"));
  if (attachable.length && canEdit(ctx) && ctx.actions.attachDataFiles) row.append(attachForm(attachable, ctx));
  return row;
}
