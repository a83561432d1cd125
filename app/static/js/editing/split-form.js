// Split the model at a tensor (POST .../split): two new models, one up to the tensor and one from
// it on, for a compiler's node budget or a pipeline over two devices (QA37 #9). The model on
// screen stays as it is; the answer links the two parts.
import { el } from "../widgets/dom.js";
import * as api from "../lib/api.js";
import { editForm, submit } from "./edit-forms.js";
import { plural } from "../lib/format.js";

/** The form under a value of the main graph a node computes (not a graph output). */
export function splitForm(name, ctx) {
  const said = el("div", { class: "split-result", role: "status" });
  const { form } = editForm("ed-inline ed-split", [
    el("div", { class: "ed-row" }, submit("Split the model here", "btn btn-small"),
      el("span", { class: "muted ed-hint" }, "Two new models: one up to this tensor, one from it on. This one stays as it is.")),
    said,
  ], async () => {
    said.replaceChildren();
    const { parts } = await api.splitModel(ctx.modelId, [name], ctx.summary ? ctx.summary.revision : null);
    const link = (p) => el("a", { href: api.modelPageUrl(p.id), class: "split-part", "data-model-id": p.id }, p.name);
    said.append("Made ", link(parts[0]), ` (${plural(parts[0].nodes, "node")}) and `, link(parts[1]), ` (${plural(parts[1].nodes, "node")}).`);
  }, { id: "split-here" });
  return form;
}
