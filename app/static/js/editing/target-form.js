// Check a deployment target (GET .../target, QA37 #10): the limits a compiler or runtime puts
// on a model — the newest opset, static shapes, no control flow, its operators, a node budget —
// each a rule the model keeps or breaks, with the nodes breaking it and what fixes it. The limits
// typed are kept in this browser: the next model is held to the same target.
import { el } from "../widgets/dom.js";
import * as api from "../lib/api.js";
import { checkbox, editForm, field, submit, textInput } from "./edit-forms.js";
import { graphPathOf } from "../lib/address.js";

const KEPT = "studio.target"; // the limits last checked, in localStorage

function kept() {
  try { return JSON.parse(localStorage.getItem(KEPT) || "{}") || {}; } catch { return {}; }
}

/** The form: limits, then each rule kept (✓) or broken (✗, its nodes linked, its fix). */
export function targetForm(ctx) {
  const was = kept();
  const opset = el("input", { type: "number", name: "max_opset", min: "1", step: "1", value: was.max_opset ?? "", placeholder: "any" });
  const nodes = el("input", { type: "number", name: "max_nodes", min: "1", step: "1", value: was.max_nodes ?? "", placeholder: "any" });
  const ops = textInput("ops", was.ops ?? "", { placeholder: "any: or Conv, Relu, MatMul, …", class: "mono" });
  const flags = [
    checkbox("static", "Static shapes", !!was.static, "every input's dims known"),
    checkbox("no_control_flow", "No control flow", !!was.no_control_flow, "no If, Loop or Scan"),
    checkbox("standard", "Standard operators only", !!was.standard, "no other domain than ai.onnx"),
  ];
  const out = el("div", { class: "target-result", id: "target-result", role: "status" });
  const { form } = editForm("ed-target", [
    el("p", { class: "ed-hint muted" }, "What a compiler or runtime takes: each limit given is checked, the nodes breaking it listed with what fixes it. The limits are kept for the next model you check."),
    el("div", { class: "ed-grid2" }, field("Newest opset", opset), field("Most nodes", nodes)),
    field("Operators it takes", ops, "separated by commas; empty: any"),
    ...flags,
    el("div", { class: "ed-actions" }, submit("Check")),
    out,
  ], async () => {
    const box = (name) => form.querySelector(`input[name=${name}]`).checked;
    const limits = { max_opset: opset.value, max_nodes: nodes.value, ops: ops.value.trim(), static: box("static"), no_control_flow: box("no_control_flow"), standard: box("standard") };
    try { localStorage.setItem(KEPT, JSON.stringify(limits)); } catch { /* this page only */ }
    const answer = await api.checkTarget(ctx.modelId, limits, ctx.viewing ?? null);
    out.replaceChildren(verdict(answer, ctx));
  }, { id: "target-check" });
  return form;
}

function verdict(answer, ctx) {
  if (!answer.rules.length) return el("p", { class: "muted" }, "No limit given: nothing to check.");
  return el("div", {},
    el("p", { class: answer.ok ? "target-ok" : "target-broken" }, answer.ok ? `Keeps every limit (${answer.nodes} nodes).` : `Breaks ${answer.rules.filter((r) => !r.ok).length} of ${answer.rules.length} limits.`),
    el("ul", { class: "target-rules" }, answer.rules.map((r) => el("li", { class: r.ok ? "target-kept" : "target-broke", "data-rule": r.rule },
      el("span", { class: "target-mark", "aria-hidden": "true" }, r.ok ? "✓" : "✗"), " ", r.message,
      r.nodes && r.nodes.length ? el("div", { class: "target-nodes" }, r.nodes.map((id) => el("a", { href: ctx.nodeHref(graphPathOf(id), id), class: "cost-node", "data-node": id }, id))) : null,
      r.fix ? el("div", { class: "muted target-fix" }, r.fix) : null))));
}
