// The sidebar for a name-scope group of the drawing (grouping.js): its size, what it is made
// of, what its nodes cost, the tensors crossing its border, its members; expand/collapse from
// here too.
import { el, clear } from "../widgets/dom.js";
import { CATEGORY_NAMES } from "../pipeline/graph-model.js";
import { categoryColor } from "../renderers/theme.js";
import { plural, propertyList, section } from "../widgets/ui.js";
import { HEAT_METRICS, formatMetric, groupValue } from "../pipeline/heat.js";

const MAX_MEMBERS = 60;
const MAX_TENSORS = 40;

function memberIds(g, out = new Set()) {
  for (const c of g.children) {
    if (c.box) out.add(c.box);
    else memberIds(c.group, out);
  }
  return out;
}

/** What the group's nodes cost together (GET .../stats, counted once per revision and sizes). */
function groupCostsSection(members, ctx) {
  const body = el("div", { class: "muted group-costs", id: "group-costs" }, "Counting…");
  const sec = section("Costs", body);
  ctx.actions.currentStats().then((stats) => {
    const nodes = stats ? stats.nodes.filter((n) => members.has(n.node)) : [];
    if (!nodes.length) { sec.remove(); return; }
    const row = (metric, label = HEAT_METRICS[metric]) => {
      const v = groupValue(nodes.map((n) => n[metric]), metric);
      return v === null ? null : [label, formatMetric(metric, v)];
    };
    clear(body);
    body.classList.remove("muted");
    body.append(propertyList([
      row("flops"), row("params"), row("output_bytes", "Outputs"),
      row("live_bytes", el("span", { title: "The most activations alive while its nodes run, when the graph runs in its order" }, "Memory alive")),
    ].filter(Boolean)));
  }).catch(() => sec.remove());
  return sec;
}

/**
 * @param {HTMLElement} root the sidebar
 * @param {import("../pipeline/graph-controller.js").GraphController} view
 * @param {string} id the group id
 * @param {{actions: {select: (id: string) => void, selectTensor: (name: string) => void, currentStats?: () => Promise<any>}}} ctx panel context
 */
export function renderGroupPanel(root, view, id, ctx) {
  clear(root);
  const g = view.h.groups.get(id);
  if (!g) return;
  const expanded = view.expanded.has(id);
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, g.part ? "Part of a large group" : "Group"),
    el("h2", { class: "panel-title" }, g.label),
    g.scope ? el("div", { class: "panel-subtitle mono" }, g.scope) : null));

  const toggle = el("button", { type: "button", class: "btn btn-small", "data-action": expanded ? "collapse" : "expand" }, expanded ? "Collapse" : "Expand");
  toggle.addEventListener("click", () => view.toggle(id));
  const show = el("button", { type: "button", class: "btn btn-small" }, "Show in drawing");
  show.addEventListener("click", () => view.reveal(`group:${id}`));
  root.append(el("div", { class: "panel-section group-actions" }, toggle, " ", show));

  const subgroups = g.children.filter((c) => c.group).length;
  root.append(section("Contents", propertyList([
    ["Operators", plural(g.nodeCount, "node")],
    ["Children", `${plural(g.children.length, "child", "children")}${subgroups ? ` (${plural(subgroups, "group")})` : ""}`],
    ["Depth", String(g.depth)],
  ])));

  if (ctx.actions.currentStats) root.append(groupCostsSection(memberIds(g), ctx));

  const cats = Object.entries(g.cats).sort((a, b) => b[1] - a[1]);
  const total = g.nodeCount || 1;
  root.append(section("Operator kinds",
    el("div", { class: "cat-bar" }, cats.map(([c, n]) => {
      // through the style object: a style="" attribute is refused by the page's CSP
      const bar = el("span", { title: `${CATEGORY_NAMES[c] || c}: ${n}` });
      bar.style.width = `${(100 * n) / total}%`;
      bar.style.background = categoryColor(c);
      return bar;
    })),
    el("ul", { class: "op-counts" }, Object.entries(g.ops).sort((a, b) => b[1] - a[1]).slice(0, 16).map(([op, n]) => el("li", {}, el("span", { class: "mono" }, op), el("span", { class: "muted" }, ` ×${n}`))))));

  // tensors crossing the border
  const members = memberIds(g);
  const model = view.model;
  const incoming = new Map();
  const outgoing = new Map();
  for (const e of model.edges) {
    const fin = members.has(e.from);
    const tin = members.has(e.to);
    if (!fin && tin) incoming.set(e.tensor, e.from);
    else if (fin && !tin) outgoing.set(e.tensor, (outgoing.get(e.tensor) || 0) + 1);
  }
  const tensorLink = (name) => el("button", { type: "button", class: "linklike mono", onclick: () => ctx.actions.selectTensor(name) }, name);
  const list = (entries, render) => el("ul", { class: "link-list" }, entries.slice(0, MAX_TENSORS).map(render),
    entries.length > MAX_TENSORS ? el("li", { class: "muted" }, `… and ${entries.length - MAX_TENSORS} more`) : null);
  root.append(section(`Inputs (${incoming.size})`, incoming.size
    ? list([...incoming.keys()], (name) => el("li", {}, tensorLink(name)))
    : el("p", { class: "muted" }, "Nothing comes in from outside.")));
  root.append(section(`Outputs (${outgoing.size})`, outgoing.size
    ? list([...outgoing.entries()], ([name, n]) => el("li", {}, tensorLink(name), el("span", { class: "muted" }, ` → ${plural(n, "consumer")}`)))
    : el("p", { class: "muted" }, "Nothing leaves this group.")));

  const rows = g.children.slice(0, MAX_MEMBERS).map((c) => {
    if (c.group) {
      return el("li", {}, el("button", { type: "button", class: "linklike", onclick: () => { view.reveal(`group:${c.group.id}`); view.handlers.onSelectGroup(c.group.id); } }, c.group.label),
        el("span", { class: "muted" }, ` · ${plural(c.group.nodeCount, "op")}`));
    }
    const box = model.boxes.get(c.box);
    const label = box.kind === "node" ? `${box.node.op_type}${box.node.name ? ` ${box.node.name}` : ""}` : `${box.kind} ${box.name}`;
    return el("li", {}, el("button", { type: "button", class: "linklike", onclick: () => ctx.actions.select(c.box) }, label));
  });
  root.append(section("Members", el("ul", { class: "link-list group-members" }, rows,
    g.children.length > MAX_MEMBERS ? el("li", { class: "muted" }, `… and ${g.children.length - MAX_MEMBERS} more`) : null)));
}
