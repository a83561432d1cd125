// A tensor name in a panel list: its type, where it comes from or goes to (links that select
// the producing/consuming box), a preview of initializer values, and a click on the name that
// opens the tensor's own panel (metadata, quantization, values).
import { el } from "../widgets/dom.js";
import { formatValueType, nodeLabel } from "../lib/format.js";
import { previewToggle } from "./tensor-view.js";
import { breakable, tag } from "../widgets/ui.js";

/** A box in words; `graph` (graph JSON) names a function's inputs and outputs as its own. */
export function boxLabel(model, id, graph = null) {
  const box = model.boxes.get(id);
  if (!box) return id;
  const of = graph && graph.kind === "function" ? "function" : "graph";
  if (box.kind === "node") return `${box.node.op_type} ${nodeLabel(box.node.name, id)}`;
  if (box.kind === "input") return `${of} input ${box.name}`;
  if (box.kind === "output") return `${of} output ${box.name}`;
  return box.name;
}

export function tensorNameLink(name, ctx, cls = "tensor-name") {
  return el("button", {
    type: "button", class: `linklike mono ${cls}`, "data-tensor": name, title: `Open ${name}`,
    onclick: () => ctx.actions.selectTensor(name),
  }, breakable(name));
}

/**
 * One row of a node's inputs (from: true) or outputs. `ctx.selfId` is the box the panel is about.
 */
export function tensorRow(name, ctx, { from = false } = {}) {
  const { model } = ctx;
  if (!name) return el("li", { class: "muted" }, "(optional input omitted)");
  const type = model.types.get(name);
  const li = el("li", { class: "tensor-row" });
  li.append(tensorNameLink(name, ctx));
  if (type) li.append(" ", el("span", { class: "tensor-type" }, formatValueType(type)));
  const init = model.initializers.get(name);
  if (from && init && !model.producer.has(name)) {
    li.append(" ", tag(init.sparse ? "sparse initializer" : "initializer"), " ", previewToggle(init.ref || name, ctx, li));
    return li;
  }
  const links = from
    ? [model.producer.get(name)].filter(Boolean)
    : model.edges.filter((e) => e.tensor === name && e.from === ctx.selfId).map((e) => e.to);
  if (links.length) {
    li.append(el("div", { class: "tensor-links" }, el("span", { class: "muted" }, from ? "from " : "to "),
      links.map((id, i) => [i ? ", " : "", el("button", { type: "button", class: "linklike", onclick: () => ctx.actions.select(id) }, boxLabel(model, id, ctx.graph))])));
  }
  return li;
}
