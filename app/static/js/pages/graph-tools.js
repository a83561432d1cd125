// The drawing's own controls: expand/collapse all, what boxes show, upstream/downstream trace,
// search with a result list, following a tensor to its consumers, the minimap, SVG/PNG export
// and the keyboard shortcuts (find: Ctrl/Cmd+F or "/", fit: f, back from a subgraph: Backspace
// or Alt+Left, Escape clears). model-page.js calls initGraphTools once.
import { el, clear } from "../widgets/dom.js";
import { exportPng, exportSvg } from "../renderers/export-view.js";
import { ancestorsOf } from "../pipeline/grouping.js";
import { subgraphsOf } from "../pipeline/graph-model.js";
import { Minimap } from "../renderers/minimap.js";
import { buildSearchIndex, search } from "../pipeline/search.js";
import { buildHash } from "./state.js";

const $ = (id) => document.getElementById(id);

function typing(target) {
  return target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable);
}

export function initGraphTools({ view, graphEl, state, select, selectBox }) {
  const tools = $("graph-tools");
  if (!tools) return;
  const buttons = /** @type {Record<"home" | "fit" | "find" | "expandAll" | "collapseAll" | "names" | "attrs" | "trace" | "svg" | "png" | "keys", HTMLButtonElement>} */ ({
    home: $("btn-home"), fit: $("btn-fit"), find: $("btn-find"), expandAll: $("expand-all"), collapseAll: $("collapse-all"), names: $("btn-names"), attrs: $("btn-attrs"),
    trace: $("btn-trace"), svg: $("btn-export-svg"), png: $("btn-export-png"), keys: $("btn-keys"),
  });
  const searchBox = $("graph-search");
  const input = /** @type {HTMLInputElement} */ ($("search-input"));
  const results = $("search-results");
  const status = $("search-status");
  const tensorBar = $("tensor-bar");
  const keysHelp = $("keys-help");
  const minimap = new Minimap($("minimap"), view.view);
  view.view.insetTop = 46; // fit the drawing below this toolbar

  const pressed = (b, on) => b && b.setAttribute("aria-pressed", on ? "true" : "false");
  const busy = () => graphEl.dataset.state !== "ready";

  view.on((type, detail) => {
    if (type === "scene") {
      tools.hidden = false;
      minimap.setScene(detail);
      pressed(buttons.names, view.options.names);
      pressed(buttons.attrs, view.options.attrs);
      const groups = view.h ? view.h.groups.size - 1 : 0;
      buttons.expandAll.disabled = groups === 0;
      buttons.collapseAll.disabled = groups === 0;
      showTensorBar();
      // a group panel says "Expand" or "Collapse": say it again after a change
      const sel = state.selection;
      if (sel && sel.kind === "group" && view.h && view.h.groups.has(sel.id) && state.model === view.model) select(sel);
    } else if (type === "view") {
      minimap.update();
    } else if (type === "selection") {
      showTensorBar();
    }
  });

  buttons.home.addEventListener("click", () => view.home());
  buttons.fit.addEventListener("click", () => view.fit());
  buttons.expandAll.addEventListener("click", () => view.expandAll());
  buttons.collapseAll.addEventListener("click", () => view.collapseAll());
  buttons.names.addEventListener("click", () => { view.setOptions({ names: !view.options.names }); pressed(buttons.names, view.options.names); });
  buttons.attrs.addEventListener("click", () => { view.setOptions({ attrs: !view.options.attrs }); pressed(buttons.attrs, view.options.attrs); });
  const toggleTrace = () => {
    view.setTrace(!view.traceOn);
    pressed(buttons.trace, view.traceOn);
  };
  buttons.trace.addEventListener("click", toggleTrace);
  const exportName = () => {
    const base = (state.summary && state.summary.name) || "graph";
    return state.path ? `${base}-${state.path}` : base;
  };
  buttons.svg.addEventListener("click", () => { if (view.scene) exportSvg(view.scene, exportName()); });
  buttons.png.addEventListener("click", () => { if (view.scene) exportPng(view.scene, exportName()); });
  buttons.keys.addEventListener("click", () => { keysHelp.hidden = !keysHelp.hidden; });
  keysHelp.addEventListener("click", () => { keysHelp.hidden = true; });

  // ------------------------------------------------------------ search

  let index = null;
  let indexed = null;
  let found = [];
  let active = -1;
  let timer = 0;

  const openSearch = () => {
    searchBox.hidden = false;
    input.focus();
    input.select();
    if (input.value) runSearch();
  };
  const closeSearch = () => {
    searchBox.hidden = true;
    graphEl.focus({ preventScroll: true });
  };
  buttons.find.addEventListener("click", () => (searchBox.hidden ? openSearch() : closeSearch()));

  const where = (id) => (view.h ? ancestorsOf(view.h, id).map((g) => g.label).join(" › ") : "");

  function runSearch() {
    if (!state.model) return;
    if (indexed !== state.model) {
      index = buildSearchIndex(state.model);
      indexed = state.model;
    }
    const { results: list, total } = search(index, input.value);
    found = list;
    active = list.length ? 0 : -1;
    clear(results);
    status.textContent = !input.value.trim() ? "Type a node name, op type, tensor name or attribute value."
      : total === 0 ? "Nothing found." : total > list.length ? `${total.toLocaleString("en-US")} found — the first ${list.length} shown` : `${total} found`;
    list.forEach((r, i) => {
      const item = r.kind === "node"
        ? el("li", { class: "search-result", "data-result": r.id, role: "option" },
          el("span", { class: "sr-op" }, r.node.op_type),
          el("span", { class: "sr-name" }, r.node.name || r.id),
          el("span", { class: "sr-where" }, [where(r.id), r.why && r.why !== "name" ? ` · ${r.why}` : ""].filter(Boolean).join("")))
        : el("li", { class: "search-result", "data-result-tensor": r.name, role: "option" },
          el("span", { class: "sr-op" }, "tensor"), el("span", { class: "sr-name" }, r.name),
          el("span", { class: "sr-where" }, `${(state.model.consumers.get(r.name) || []).length} consumers`));
      item.addEventListener("mousedown", (e) => e.preventDefault());
      item.addEventListener("click", () => { active = i; choose(); });
      results.append(item);
    });
    markActive();
  }

  function markActive() {
    [...results.children].forEach((li, i) => li.classList.toggle("active", i === active));
    const li = results.children[active];
    if (li) li.scrollIntoView({ block: "nearest" });
  }

  function choose() {
    const r = found[active];
    if (!r) return;
    if (r.kind === "node") selectBox(r.id, { reveal: true });
    else select({ kind: "tensor", id: r.name }, { reveal: true });
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(runSearch, input.value.length < 3 ? 200 : 80);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown") { e.preventDefault(); active = Math.min(found.length - 1, active + 1); markActive(); }
    else if (e.key === "ArrowUp") { e.preventDefault(); active = Math.max(0, active - 1); markActive(); }
    else if (e.key === "Enter") {
      e.preventDefault();
      clearTimeout(timer);
      if (indexed !== state.model || !found.length) runSearch();
      choose();
    } else if (e.key === "Escape") { e.preventDefault(); closeSearch(); }
  });

  // ------------------------------------------------------------ following a tensor

  let consumerIndex = -1;
  function showTensorBar() {
    const sel = state.selection;
    if (!sel || sel.kind !== "tensor" || !state.model) {
      tensorBar.hidden = true;
      consumerIndex = -1;
      return;
    }
    const name = sel.id;
    const consumers = state.model.consumers.get(name) || [];
    const producer = state.model.producer.get(name);
    const label = (id) => {
      const b = state.model.boxes.get(id);
      if (!b) return id;
      return b.kind === "node" ? `${b.node.op_type}${b.node.name ? ` ${b.node.name}` : ""}` : `${b.kind} ${b.name}`;
    };
    clear(tensorBar);
    tensorBar.hidden = false;
    const go = (id) => view.reveal(id);
    tensorBar.append(el("span", { class: "tb-name mono" }, name));
    if (producer) {
      tensorBar.append(el("span", { class: "muted" }, " from "),
        el("button", { type: "button", class: "linklike tb-producer", title: "Show the producer", onclick: () => go(producer) }, label(producer)));
    }
    tensorBar.append(el("span", { class: "muted" }, ` → ${consumers.length} consumer${consumers.length === 1 ? "" : "s"}`));
    if (consumers.length) {
      const pos = el("span", { class: "tb-pos" }, consumerIndex >= 0 ? `${consumerIndex + 1} / ${consumers.length}` : "");
      const step = (d) => {
        consumerIndex = (consumerIndex + d + consumers.length) % consumers.length;
        pos.textContent = `${consumerIndex + 1} / ${consumers.length}`;
        pos.title = label(consumers[consumerIndex]);
        go(consumers[consumerIndex]);
      };
      tensorBar.append(
        el("button", { type: "button", class: "btn btn-small tb-prev", title: "Previous consumer", onclick: () => step(-1) }, "‹"),
        pos,
        el("button", { type: "button", class: "btn btn-small tb-next", title: "Next consumer", onclick: () => step(1) }, "›"));
    }
  }

  // ------------------------------------------------------------ keyboard

  document.addEventListener("keydown", (e) => {
    if (state.dataFile || document.querySelector("dialog[open]")) return;
    const mod = e.ctrlKey || e.metaKey;
    if (mod && !e.altKey && e.key.toLowerCase() === "f") {
      if (typing(e.target) && e.target !== input) return;
      e.preventDefault();
      openSearch();
      return;
    }
    if (typing(e.target)) return;
    if (!mod && e.key === "/") { e.preventDefault(); openSearch(); }
    else if ((e.key === "Backspace" && !mod && !e.altKey) || (e.altKey && e.key === "ArrowLeft")) {
      const crumbs = state.graph && state.graph.breadcrumb;
      if (crumbs && crumbs.length > 1) {
        e.preventDefault();
        window.location.hash = buildHash(crumbs[crumbs.length - 2].path, null);
      } else if (e.altKey) e.preventDefault(); // stay on the page
    } else if (e.key === "Escape") {
      if (!searchBox.hidden) closeSearch();
      keysHelp.hidden = true;
      if (view.traceOn) toggleTrace();
    } else if (!mod && !e.altKey && e.key === "t") toggleTrace();
    else if (!mod && !e.altKey && (e.key === "e" || e.key === "Enter")) {
      const sel = state.selection;
      const subgraphs = sel && sel.kind === "node" && state.model && state.model.nodeById.has(sel.id) ? subgraphsOf(state.model.nodeById.get(sel.id)) : null;
      if (sel && sel.kind === "group" && !busy()) view.toggle(sel.id);
      // as a double-click on its box (not when Enter presses a focused button or link)
      else if (e.key === "Enter" && subgraphs && subgraphs.length && !/** @type {Element} */ (e.target).closest("button, a, summary")) window.location.hash = buildHash(subgraphs[0], null);
    } else if (!mod && (e.key === "+" || e.key === "=" || e.key === "-")) {
      const { w, h } = view.view.viewportSize();
      const { x, y, k } = view.view.view;
      const nk = Math.max(0.005, Math.min(4, k * (e.key === "-" ? 1 / 1.25 : 1.25)));
      view.view.setView(w / 2 - ((w / 2 - x) / k) * nk, h / 2 - ((h / 2 - y) / k) * nk, nk);
    } else if (!mod && e.key === "?") keysHelp.hidden = !keysHelp.hidden;
  });
}
