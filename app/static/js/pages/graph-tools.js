// The drawing's own controls: expand/collapse all, what boxes show, upstream/downstream trace,
// search with a result list, following a tensor to its consumers, the minimap, SVG/PNG export
// and the keyboard shortcuts (find: Ctrl/Cmd+F or "/", fit: f, back from a subgraph: Backspace
// or Alt+Left, Escape clears, arrows step along the lines). model-page.js calls initGraphTools once.
import { el, clear, breakable } from "../widgets/dom.js";
import { exportPng, exportSvg } from "../renderers/export-view.js";
import { ancestorsOf } from "../pipeline/grouping.js";
import { subgraphsOf } from "../pipeline/graph-model.js";
import { Minimap } from "../renderers/minimap.js";
import { onThemeChange, withExportTheme } from "../renderers/theme.js";
import { ModelSearch, placeOf, searchable, statusText, targetOf } from "../pipeline/search.js";
import { buildHash } from "./state.js";
import { arrowStep } from "../pipeline/arrow-steps.js";
import { nodeLabel } from "../lib/format.js";

const $ = (id) => document.getElementById(id);
const SHAPE_READERS = new Set(["Shape", "Size"]); // they read a tensor's shape, not its values

function typing(target) {
  return target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable);
}

export function initGraphTools({ view, graphEl, state, select, selectBox, selectedBox }) {
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

  // which groups the window is in, once a frame as the view moves
  let groupsAsked = false;
  const showGroupsInView = () => {
    if (groupsAsked) return;
    groupsAsked = true;
    requestAnimationFrame(() => {
      groupsAsked = false;
      const where = document.getElementById("crumb-groups");
      if (!where) return;
      const groups = view.groupsInView();
      const text = groups.map((g) => g.label).join(" › ");
      if (where.dataset.groups === text) return;
      where.dataset.groups = text;
      clear(where);
      // the groups the window's centre is in, said as such: read as more of the path, they
      // looked like a selection or a graph entered (the KV-cache QA)
      if (groups.length) where.append(el("span", { class: "crumb-in-view" }, "in view:"));
      for (const [i, g] of groups.entries()) {
        where.append(i ? el("span", { class: "crumb-sep", "aria-hidden": "true" }, "›") : "",
          el("button", { type: "button", class: "linklike crumb-group", "data-group": g.id, title: `Select the group ${g.label}`, onclick: () => select({ kind: "group", id: g.id }, { reveal: true }) }, g.label));
      }
    });
  };

  view.on((type, detail) => {
    if (type === "scene" || type === "view") showGroupsInView();
    if (type === "marks" && detail.cls.startsWith("heat-")) minimap.recolour();
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
  // exports in the light palette whatever the page's (they go into documents); each draws at once
  buttons.svg.addEventListener("click", () => { if (view.scene) withExportTheme(() => exportSvg(view.scene, exportName())); });
  buttons.png.addEventListener("click", () => { if (view.scene) withExportTheme(() => exportPng(view.scene, exportName())); });
  // the system turned dark or light: what JS drew in the old colours again (the SVG drawing
  // follows app.css by itself)
  onThemeChange(() => {
    if (view.view.mode === "canvas") view.view.canvas.schedule();
    minimap.recolour();
  });
  buttons.keys.addEventListener("click", () => { keysHelp.hidden = !keysHelp.hidden; });
  keysHelp.addEventListener("click", () => { keysHelp.hidden = true; });

  // ------------------------------------------------------------ search (the whole model, pipeline/search.js)

  const finder = new ModelSearch(state.modelId);
  /** @type {import("../pipeline/search.js").SearchResult[]} */
  let found = [];
  let shown = ""; // listKey() of the answer listed ("" none)
  let active = -1;
  let timer = 0;
  let seq = 0;

  /** @type {Element | null} */
  let openedFrom = null; // where the keyboard was: Escape goes back there (QA41: the Find button)
  const openSearch = () => {
    if (searchBox.hidden) openedFrom = document.activeElement;
    searchBox.hidden = false;
    input.focus();
    input.select();
    if (input.value) runSearch();
  };
  /** Hide Find; the keyboard to `back` (Escape: where it was opened from), else the drawing. */
  const closeSearch = (back = null) => {
    searchBox.hidden = true;
    const to = back instanceof HTMLElement && back.isConnected && back !== document.body ? back : graphEl;
    to.focus({ preventScroll: true });
  };
  buttons.find.addEventListener("click", () => (searchBox.hidden ? openSearch() : closeSearch()));

  /** @param {string} id node id in the graph on screen @returns {string} its groups, outermost first */
  const where = (id) => (view.h ? ancestorsOf(view.h, id).map((g) => g.label).join(" › ") : "");
  /** @returns {string} what the list is for: query, revision and graph on screen */
  const listKey = () => `${input.value.trim()}\u0000${state.summary ? state.summary.revision : ""}\u0000${state.path}`;

  /**
   * Ask the server for the query in the field and list its answer (a later call wins).
   * @returns {Promise<void>}
   */
  async function runSearch() {
    const query = input.value;
    const key = listKey();
    const mine = ++seq;
    if (!searchable(query) || !state.summary) {
      show(query, null, key);
      return;
    }
    const slow = setTimeout(() => { if (mine === seq) { status.textContent = statusText(query, null); results.setAttribute("aria-busy", "true"); } }, 150);
    try {
      const answer = await finder.find(query, { revision: state.summary.revision, near: state.path });
      if (answer && mine === seq) show(query, answer, key);
    } catch (err) {
      if (mine !== seq) return;
      found = [];
      shown = "";
      clear(results);
      status.textContent = `Search failed: ${err.message || err}`;
    } finally {
      clearTimeout(slow);
      if (mine === seq) results.removeAttribute("aria-busy");
    }
  }

  /**
   * List an answer: op type and name, then where it is (the graph's breadcrumb for a result in
   * another graph, the groups for one in the graph on screen) and what matched.
   * @param {string} query
   * @param {import("../pipeline/search.js").SearchAnswer | null} answer
   * @param {string} key listKey() when it was asked
   */
  function show(query, answer, key) {
    found = answer ? answer.results : [];
    shown = answer ? key : "";
    active = found.length ? 0 : -1;
    clear(results);
    results.dataset.query = answer ? query.trim() : ""; // page hook: the query listed
    status.textContent = statusText(query, answer);
    const elsewhere = found.some((r) => r.path !== state.path);
    found.forEach((r, i) => {
      const here = r.path === state.path;
      const place = here
        ? (r.kind === "node" && where(r.node)) || (elsewhere ? "this graph" : "")
        : placeOf(r).join(" › ");
      const uses = r.kind === "tensor" && here && state.model ? (state.model.consumers.get(r.name) || []).length : -1;
      const why = r.kind === "node" ? (r.why !== "name" ? r.why : "")
        : r.kind === "tensor" ? [r.why, uses >= 0 ? `${uses} consumer${uses === 1 ? "" : "s"}` : ""].filter(Boolean).join(", ")
          : "";
      const label = r.kind === "node" ? nodeLabel(r.name, r.node) : r.name || r.path;
      const item = el("li", {
        class: `search-result${here ? "" : " sr-elsewhere"}`, role: "option", id: `search-result-${i}`, "aria-selected": "false",
        "data-kind": r.kind, "data-path": r.path,
        "data-result": r.kind === "node" ? r.node : null, "data-result-tensor": r.kind === "tensor" ? r.name : null,
      },
      el("span", { class: "sr-op" }, r.kind === "node" ? r.op_type : r.kind),
      // on two lines rather than cut at its end, where exported names differ ("…q_proj.weight"),
      // broken after a "/" or "." rather than inside a word (QA31: ".../self_attn/Softma" "x")
      el("span", { class: "sr-name", title: label }, breakable(label)),
      why ? el("span", { class: "sr-why", title: why }, why) : null,
      place ? el("span", { class: "sr-where" }, el("span", { class: "sr-place", title: place }, place)) : null);
      item.addEventListener("mousedown", (e) => e.preventDefault());
      item.addEventListener("click", () => { active = i; choose(); });
      results.append(item);
    });
    markActive();
  }

  function markActive() {
    [...results.children].forEach((li, i) => {
      li.classList.toggle("active", i === active);
      li.setAttribute("aria-selected", i === active ? "true" : "false");
    });
    const li = results.children[active];
    if (li) li.scrollIntoView({ block: "nearest" });
    // a screen reader follows the active result while the focus stays in the field (combobox)
    if (li) input.setAttribute("aria-activedescendant", li.id);
    else input.removeAttribute("aria-activedescendant");
  }

  /** Go to the active result: select it in the graph on screen, or open its graph with it selected; the list closes. */
  function choose() {
    const r = found[active];
    if (!r) return;
    closeSearch();
    const { path, selection } = targetOf(r);
    if (path === state.path && state.model) {
      if (selection && selection.kind === "node") selectBox(selection.id, { reveal: true });
      else if (selection) select(selection, { reveal: true });
    } else {
      window.location.hash = buildHash(path, selection); // the page's navigation: loads, draws, reveals
    }
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(runSearch, input.value.length < 3 ? 200 : 80);
  });
  input.addEventListener("keydown", async (e) => {
    if (e.key === "ArrowDown") { e.preventDefault(); active = Math.min(found.length - 1, active + 1); markActive(); }
    else if (e.key === "ArrowUp") { e.preventDefault(); active = Math.max(0, active - 1); markActive(); }
    else if (e.key === "Enter") {
      e.preventDefault();
      clearTimeout(timer);
      if (shown !== listKey()) await runSearch(); // the answer for what is typed now
      if (shown === listKey()) choose();
    } else if (e.key === "Escape") { e.preventDefault(); closeSearch(openedFrom); }
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
    tensorBar.append(el("span", { class: "tb-name mono", title: name }, name));
    if (producer) {
      tensorBar.append(el("span", { class: "muted" }, " from "),
        el("button", { type: "button", class: "linklike tb-producer", title: `Show the producer: ${label(producer)}`, onclick: () => go(producer) }, label(producer)));
    }
    tensorBar.append(el("span", { class: "muted" }, ` → ${consumers.length} consumer${consumers.length === 1 ? "" : "s"}`));
    if (consumers.length) {
      // which consumer is shown, once one is stepped to (QA28: "– / 1" before read as nothing)
      const pos = el("span", { class: "tb-pos" }, consumerIndex >= 0 ? `${consumerIndex + 1} / ${consumers.length}` : "");
      const step = (d) => {
        consumerIndex = (consumerIndex + d + consumers.length) % consumers.length;
        pos.textContent = `${consumerIndex + 1} / ${consumers.length}`;
        pos.title = label(consumers[consumerIndex]);
        go(consumers[consumerIndex]);
      };
      tensorBar.append(
        el("button", { type: "button", class: "btn btn-small tb-prev", title: "Previous consumer", "aria-label": "Previous consumer", onclick: () => step(-1) }, "‹"),
        pos,
        el("button", { type: "button", class: "btn btn-small tb-next", title: "Next consumer", "aria-label": "Next consumer", onclick: () => step(1) }, "›"));
    }
  }

  // ------------------------------------------------------------ arrow keys: along the lines

  /** @type {import("../pipeline/arrow-steps.js").Choice | null} */
  let lastChoice = null;
  const xOf = (id) => {
    const drawn = view.drawnIdOf(id);
    const r = drawn ? view.view.rectOf(drawn) : null;
    return r ? r.x + r.w / 2 : Infinity;
  };
  const readsShapeOnly = (id) => {
    const box = state.model.boxes.get(id);
    return Boolean(box && box.kind === "node" && !box.node.domain && SHAPE_READERS.has(box.node.op_type));
  };
  /** Step the selection with an arrow key; false when the key is not for that here. */
  const arrow = (key) => {
    if (!state.model || !view.model || busy()) return false;
    const sel = state.selection;
    if (sel && sel.kind === "tensor") {
      // a line: up to what makes it, down to what reads it
      const to = key === "ArrowUp" ? state.model.producer.get(sel.id) : key === "ArrowDown" ? (state.model.consumers.get(sel.id) || [])[0] : null;
      if (to) selectBox(to, { reveal: true });
      return key === "ArrowUp" || key === "ArrowDown";
    }
    const start = selectedBox();
    const go = (to) => (to.startsWith("group:") ? select({ kind: "group", id: to.slice(6) }, { reveal: true }) : selectBox(to, { reveal: true }));
    const group = start && start.startsWith("group:") && view.h ? view.h.groups.get(start.slice(6)) : null;
    if (group && key === "ArrowDown" && !view.isCollapsedGroup(group.id) && group.children.length) {
      // an open group is a frame around its boxes: ↓ goes in, to the first of them
      const first = group.children[0];
      go(first.box || `group:${first.group.id}`);
      return true;
    }
    if (!start) {
      // nothing selected yet: the keys start where a reader does, at the graph's first input
      const boxes = [...state.model.boxes.values()].filter((b) => view.drawnIdOf(b.id));
      const first = boxes.find((b) => b.kind === "input") || boxes.find((b) => b.kind === "node");
      if (!first) return false;
      selectBox(first.id, { reveal: true });
      return true;
    }
    if (!group && !state.model.boxes.has(start)) return false;
    const step = group ? arrowStep(view.neighboursOfGroup(group.id), start, key, lastChoice, xOf, readsShapeOnly)
      : arrowStep(view.neighbours(), view.shownBoxOf(start), key, lastChoice, xOf, readsShapeOnly);
    if (step) {
      lastChoice = step.choice;
      go(step.to);
    }
    return true;
  };

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
      // Enter that presses a focused button or link is that control's, never the drawing's too
      if (e.key === "Enter" && /** @type {Element} */ (e.target).closest("button, a, summary, select")) return;
      const sel = state.selection;
      const subgraphs = sel && sel.kind === "node" && state.model && state.model.nodeById.has(sel.id) ? subgraphsOf(state.model.nodeById.get(sel.id)) : null;
      if (sel && sel.kind === "group" && !busy()) view.toggle(sel.id);
      // as a double-click on its box
      else if (e.key === "Enter" && subgraphs && subgraphs.length) window.location.hash = buildHash(subgraphs[0], null);
    } else if (!mod && (e.key === "+" || e.key === "=" || e.key === "-")) {
      const { w, h } = view.view.viewportSize();
      const { x, y, k } = view.view.view;
      const nk = Math.max(0.005, Math.min(4, k * (e.key === "-" ? 1 / 1.25 : 1.25)));
      view.view.setView(w / 2 - ((w / 2 - x) / k) * nk, h / 2 - ((h / 2 - y) / k) * nk, nk);
    } else if (!mod && e.key === "?") keysHelp.hidden = !keysHelp.hidden;
    else if (!mod && !e.altKey && !e.shiftKey && e.key.startsWith("Arrow") && !(/** @type {Element} */ (e.target).closest("#sidebar, [role=listbox]"))) {
      // (in the sidebar they scroll it, as ever)
      if (arrow(e.key)) e.preventDefault();
    }
  });
}
