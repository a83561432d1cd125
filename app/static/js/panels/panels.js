// The sidebar panels and the breadcrumb above the drawing. Each panel lives in its own module;
// this one gathers them for model-page.js. Model strings only ever enter the page as text nodes
// (dom.js) or as sanitised Markdown (markdown.js).
import { el, clear } from "../widgets/dom.js";
import { plural } from "../widgets/ui.js";

export { parseAttributeInput } from "./attribute-view.js";
export { renderModelPanel } from "./model-panel.js";
export { renderNodePanel } from "./node-panel.js";
export { renderTensorPanel, renderValuePanel } from "./value-panel.js";

export function renderBreadcrumb(nav, graph, ctx) {
  clear(nav);
  const crumbs = graph.breadcrumb && graph.breadcrumb.length ? graph.breadcrumb : [{ path: graph.path || "", label: graph.name || "main" }];
  crumbs.forEach((c, i) => {
    if (i) nav.append(el("span", { class: "crumb-sep", "aria-hidden": "true" }, "›"));
    const last = i === crumbs.length - 1;
    nav.append(last
      ? el("span", { class: "crumb current", "aria-current": "page" }, c.label)
      : el("a", { class: "crumb", href: ctx.graphHref(c.path), "data-path": c.path }, c.label));
  });
  const kind = graph.kind === "function" ? "function" : "graph";
  nav.append(el("span", { class: "crumb-info muted" }, `${kind} · ${plural((graph.nodes || []).length, "node")}`));
}
