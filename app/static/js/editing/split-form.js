// Split the model at a tensor (POST .../split): two new models, one up to the tensor and one from
// it on, for a compiler's node budget or a pipeline over two devices (QA37 #9). The model on
// screen stays as it is; the answer links the two parts. A cut that leaves nodes on both sides
// (a skip connection around it) is said first, with the cut that separates them (QA39 #2).
import { el } from "../widgets/dom.js";
import * as api from "../lib/api.js";
import { editForm, submit } from "./edit-forms.js";
import { plural } from "../lib/format.js";

/** The form under a value of the main graph a node computes (not a graph output). */
export function splitForm(name, ctx) {
  const said = el("div", { class: "split-result", role: "status" });
  const revision = () => (ctx.summary ? ctx.summary.revision : null);
  const made = ({ parts }) => {
    const link = (p) => el("a", { href: api.modelPageUrl(p.id), class: "split-part", "data-model-id": p.id }, p.name);
    said.replaceChildren("Made ", link(parts[0]), ` (${plural(parts[0].nodes, "node")}) and `, link(parts[1]), ` (${plural(parts[1].nodes, "node")}).`);
  };
  const { form } = editForm("ed-inline ed-split", [
    el("div", { class: "ed-row" }, submit("Split the model here", "btn btn-small"),
      el("span", { class: "muted ed-hint" }, "Two new models: one up to this tensor, one from it on. This one stays as it is.")),
    said,
  ], async () => {
    said.replaceChildren();
    const plan = await api.splitModel(ctx.modelId, [name], revision(), { dryRun: true });
    if (!plan.both) {
      made(await api.splitModel(ctx.modelId, [name], revision()));
      return;
    }
    const at = [name, ...plan.crossing];
    const anyway = el("button", { type: "button", class: "btn btn-small split-anyway" }, "Split here anyway");
    const apart = el("button", { type: "button", class: "btn btn-small btn-primary split-apart" }, `Split at ${at.join(", ")}`);
    const go = (cut) => async () => {
      anyway.disabled = true;
      apart.disabled = true;
      try {
        made(await api.splitModel(ctx.modelId, cut, revision()));
      } catch (err) {
        said.replaceChildren(el("div", { class: "field-error" }, err.message || String(err)));
      }
    };
    anyway.addEventListener("click", go([name]));
    apart.addEventListener("click", go(at));
    said.replaceChildren(
      el("p", { class: "split-overlap" }, `This cut leaves ${plural(plan.both, "node")} on both sides: the second part would compute ${plan.crossing.join(", ")} again from the graph's inputs. Cutting at ${plan.crossing.join(", ")} too separates them.`),
      el("div", { class: "ed-row" }, apart, anyway));
  }, { id: "split-here" });
  return form;
}
