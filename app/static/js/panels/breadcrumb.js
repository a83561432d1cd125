// The breadcrumb above the drawing: the path from the main graph to the graph on screen, and
// what it is (part of the first view: loaded with the page, unlike the sidebar's panels).
import { el, clear } from "../widgets/dom.js";
import { plural } from "../widgets/ui.js";

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
  // the groups at the window's centre (graph-tools.js fills it as the view moves)
  nav.append(el("span", { class: "crumb-groups", id: "crumb-groups", title: "The groups at the centre of the window" }));
  const kind = graph.kind === "function" ? "function" : "graph";
  nav.append(el("span", { class: "crumb-info muted" }, `${kind} · ${plural((graph.nodes || []).length, "node")}`));
}
