// Drawing a scene (scene.js) with pan (drag), zoom (wheel) and fit-to-window.
//
// Two ways to draw, chosen by the size of the scene (measured: bench notes in the report):
//  - SVG, up to SVG_LIMIT drawn things: every box a <g> carrying data-node-id (graph nodes),
//    data-io (inputs/outputs), data-group-id + data-collapsed (groups); crisp, selectable text;
//  - a canvas (canvas-renderer.js) above that: redrawn per frame, culled to the window, text
//    only where it is readable. Its boxes are listed in a hidden element (.graph-hooks) with the
//    same data attributes, one element per drawn box, for tests and tools.
import { edgeTitle, groupTitle, ioTitle, nodeTitle } from "./titles.js";
import { clear, painted } from "../widgets/dom.js";
import { CanvasLayer } from "./canvas-renderer.js";
import { CATEGORY_ORDER, IMPLICIT_DASH, categoryColor } from "./theme.js";
import { FONTS, METRICS, READABLE_SCALE, measureText, subgraphsOf } from "../pipeline/graph-model.js";
import { FRAME } from "../pipeline/scene.js";
import { edgePath } from "./edge-path.js";
import { tabX } from "./frame-tab.js";

export { edgePath };

/** The bounding rectangle of a polyline [[x, y], ...]. */
function boundsOf(points) {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const [x, y] of points) {
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

// Laying out and painting SVG text costs the browser ~0.5 ms a box (bert-base's first view,
// 1,250 boxes: 0.6 s of layout, text shaping and paint) against ~20 ms for a canvas frame; but
// SVG boxes are elements a tool can click (the page hooks), the canvas's hooks are not.
export const SVG_LIMIT = 2500;
// drawn things put in the page per frame after the window's part (~10-15 ms of the browser's work)
const REST_SLICE = 250;
const MIN_SCALE = 0.005;
const MAX_SCALE = 4;
const DRAG_THRESHOLD = 4;
// nodes a first view looks past to the one an input feeds: they only pass its value on
const PASSES_ON = new Set(["Cast", "CastLike", "Identity"]);

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * An SVG element (dom.js's svg() without its generality: hundreds of boxes are made per
 * drawing). Text goes in as a text node, never as markup.
 */
export function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  if (attrs) {
    for (const key in attrs) {
      const v = attrs[key];
      if (v !== undefined && v !== null && v !== false) node.setAttribute(key, v === true ? "" : String(v));
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function topRounded(w, h, r) {
  return `M0,${h}V${r}Q0,0 ${r},0H${w - r}Q${w},0 ${w},${r}V${h}Z`;
}

function textLine(line, x, y, cls, anchor = "start") {
  // the font comes from the class (app.css: .graph-svg .t-<font>, the same as FONTS)
  const attrs = { x, y, class: cls, "text-anchor": anchor };
  if (line.ref) {
    attrs["data-ref-kind"] = line.ref.kind;
    if (line.ref.tensor) attrs["data-ref-tensor"] = line.ref.tensor;
    if (line.ref.from) attrs["data-ref-from"] = line.ref.from;
  }
  if (line.tensor) attrs["data-init"] = line.tensor;
  if (line.node) {
    // a Constant node drawn as a line of its reader's box: the first reader's line is its hook
    attrs["data-const"] = line.node;
    if (line.primary) attrs["data-node-id"] = line.node;
  }
  // a word of the line explained on hover ("filled"), over the box's own title
  return svg("text", attrs, line.text, line.title ? svg("title", {}, line.title) : null);
}

function bodyLines(g, lines, top) {
  const { padX, lineHeight, bodyPadY } = METRICS;
  let y = top + bodyPadY + lineHeight - 4;
  for (const line of lines) {
    g.append(textLine(line, padX, y, `t-${line.font}`));
    y += lineHeight;
  }
}

export function drawNodeBox(item) {
  const { headHeight } = METRICS;
  const { w, h, box } = item;
  const g = svg("g", { class: `box node cat-${box.category}`, "data-node-id": box.id, "data-box": box.id });
  g.append(svg("title", {}, nodeTitle(box)));
  g.append(svg("rect", { class: "box-body", width: w, height: h, rx: 5 }));
  const single = item.lines.length === 1;
  g.append(single
    ? svg("rect", { class: "box-head", width: w, height: h, rx: 5 })
    : svg("path", { class: "box-head", d: topRounded(w, headHeight, 5) }));
  g.append(textLine(item.lines[0], w / 2, headHeight / 2 + 4.5, "t-op", "middle"));
  bodyLines(g, item.lines.slice(1), headHeight);
  g.append(svg("rect", { class: "box-outline", width: w, height: h, rx: 5 }));
  return g;
}

export function drawIoBox(item) {
  const { w, h, box } = item;
  const g = svg("g", { class: `box io io-${box.kind}`, "data-io": box.kind, "data-box": box.id, "data-name": box.name });
  g.append(svg("title", {}, ioTitle(item.lines)));
  const r = box.kind === "outer" ? 5 : Math.min(h / 2, 16);
  g.append(svg("rect", { class: "box-body", width: w, height: h, rx: r }));
  item.lines.forEach((line, i) => {
    if (i < 2) g.append(textLine(line, w / 2, i === 0 ? 16 : 31, `t-${line.font}`, "middle"));
    else g.append(textLine(line, w / 2, 31 + (i - 1) * METRICS.lineHeight, `t-${line.font}`, "middle"));
  });
  return g;
}

/** Category shares of a group, as [[category, fraction]] in legend order. @returns {Array<[string, number]>} */
export function categoryShares(group) {
  const total = Object.values(group.cats).reduce((a, b) => a + b, 0) || 1;
  return CATEGORY_ORDER.filter((c) => group.cats[c]).map((c) => [c, group.cats[c] / total]);
}

export function drawGroupBox(item) {
  const { headHeight, stripe } = METRICS;
  const { w, h, group } = item;
  const g = svg("g", { class: "box group", "data-group-id": group.id, "data-collapsed": "true", "data-group": group.id });
  g.append(svg("title", {}, groupTitle(group, true)));
  g.append(svg("rect", { class: "group-stack", x: 4, y: 4, width: w, height: h, rx: 6 }));
  g.append(svg("rect", { class: "box-body", width: w, height: h, rx: 6 }));
  g.append(svg("path", { class: "box-head group-head", d: topRounded(w, headHeight, 6) }));
  g.append(textLine(item.lines[0], 10, headHeight / 2 + 4.5, "t-group"));
  let x = 0;
  for (const [cat, share] of categoryShares(group)) {
    g.append(svg("rect", { class: "group-stripe", x: x.toFixed(1), y: headHeight, width: (share * w).toFixed(1), height: stripe, fill: categoryColor(cat) }));
    x += share * w;
  }
  bodyLines(g, item.lines.slice(1), headHeight + stripe);
  g.append(svg("rect", { class: "box-outline", width: w, height: h, rx: 6 }));
  const toggle = svg("g", { class: "group-toggle", "data-toggle": group.id, transform: `translate(${w - 22},4)` });
  toggle.append(svg("title", {}, "Expand"));
  toggle.append(svg("rect", { width: 16, height: 16, rx: 4 }));
  toggle.append(svg("path", { d: "M4,8H12M8,4V12" }));
  g.append(toggle);
  return g;
}

function drawFrame(item) {
  const { x, y, w, h, group } = item;
  const body = svg("g", {
    class: `frame depth-${Math.min(item.depth || 1, 4)}${group.part ? " part" : ""}`, "data-group-id": group.id, "data-collapsed": "false",
    transform: `translate(${x.toFixed(1)},${y.toFixed(1)})`,
  });
  body.append(svg("rect", { class: "frame-body", width: w, height: h, rx: 10 }));
  const head = svg("g", { class: "frame-head", "data-frame": group.id, transform: `translate(${x.toFixed(1)},${y.toFixed(1)})` });
  head.append(svg("title", {}, groupTitle(group, false)));
  const tw = Math.min(w - 8, Math.ceil(measureTitle(item.title)) + 38);
  head.dataset.tabWidth = String(tw + 4);
  head.append(svg("rect", { class: "frame-tab", x: 4, y: 4, width: tw, height: FRAME.head - 10, rx: 5 }));
  const toggle = svg("g", { class: "group-toggle", "data-toggle": group.id, transform: "translate(8,7)" });
  toggle.append(svg("title", {}, "Collapse"));
  toggle.append(svg("rect", { width: 14, height: 14, rx: 3 }));
  toggle.append(svg("path", { d: "M3.5,7H10.5" }));
  head.append(toggle);
  head.append(svg("text", { x: 28, y: 18.5, class: "t-frame" }, item.title));
  return [body, head];
}

let titleCanvas = null;
function measureTitle(text) {
  if (!titleCanvas) titleCanvas = document.createElement("canvas").getContext("2d");
  titleCanvas.font = FONTS.frame;
  return titleCanvas.measureText(text).width;
}


/**
 * @typedef {object} ViewHandlers what clicks and pan/zoom on the drawing call
 * @property {(id: string | null) => void} onSelect a box (null: the background)
 * @property {(name: string) => void} onSelectTensor an edge
 * @property {(id: string) => void} onSelectGroup a group box or frame
 * @property {(id: string) => void} onToggleGroup a group's expand/collapse toggle
 * @property {(path: string, boxId: string) => void} onOpenSubgraph a double-click on the box of a node holding subgraphs
 * @property {(ref: {kind: string, tensor?: string}, boxId: string) => void} onReference a reference line
 * @property {(view: {x: number, y: number, k: number}) => void} [onViewChange] after a pan or zoom
 */

export class GraphView {
  /**
   * @param {HTMLElement} container the #graph element
   * @param {ViewHandlers} handlers
   */
  constructor(container, handlers) {
    this.container = container;
    this.handlers = handlers;
    this.view = { x: 0, y: 0, k: 1 };
    this.size = { width: 0, height: 0 };
    this.insetTop = 0; // px of the window under the drawing's toolbar (graph-tools.js): fit() keeps it clear
    this.scene = null;
    this.mode = "svg";
    this.boxEls = new Map(); // drawn id (box id or group id) -> element
    this.centers = new Map(); // drawn id -> {x, y, w, h}
    this.edgeEls = [];
    /** @type {{el: Element, item: any, width: number, at: number}[]} */
    this.tabs = [];
    this.selected = null;
    this.activeTensor = null;
    this.marks = new Map(); // class -> Set of ids
    this.trace = null;
    this.svg = svg("svg", { class: "graph-svg", role: "img", "aria-label": "Graph drawing" });
    const defs = svg("defs");
    for (const [id, cls] of [["arrow", "arrowhead"], ["arrow-active", "arrowhead active"], ["arrow-trace", "arrowhead trace"]]) {
      defs.append(svg("marker", {
        id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
        orient: "auto-start-reverse", markerUnits: "userSpaceOnUse",
      }, svg("path", { d: "M0,1L10,5L0,9Z", class: cls })));
    }
    this.svg.append(defs);
    this.viewport = svg("g", { class: "viewport" });
    this.svg.append(this.viewport);
    this.canvas = new CanvasLayer(container, this);
    this.hooks = document.createElement("div");
    this.hooks.className = "graph-hooks";
    this.hooks.hidden = true;
    this.bindEvents(this.svg);
    this.bindEvents(this.canvas.el);
  }

  bindEvents(s) {
    let drag = null;
    s.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, moved: false, id: e.pointerId };
    });
    s.addEventListener("pointermove", (e) => {
      if (!drag) {
        if (s === this.canvas.el) this.canvas.hover(e);
        return;
      }
      if (e.pointerId !== drag.id) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
      if (!drag.moved) {
        drag.moved = true;
        if (s === this.canvas.el) this.canvas.hideTip();
        s.setPointerCapture(e.pointerId);
        s.classList.add("panning");
      }
      this.setView(drag.vx + dx, drag.vy + dy, this.view.k);
    });
    if (s === this.canvas.el) s.addEventListener("pointerleave", () => this.canvas.hideTip());
    s.addEventListener("wheel", () => { if (s === this.canvas.el) this.canvas.hideTip(); }, { passive: true });
    const end = (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      const wasDrag = drag.moved;
      drag = null;
      s.classList.remove("panning");
      if (s.hasPointerCapture(e.pointerId)) s.releasePointerCapture(e.pointerId);
      if (wasDrag || e.type === "pointercancel") return;
      this.click(this.targetOf(e));
    };
    s.addEventListener("pointerup", end);
    s.addEventListener("pointercancel", end);
    s.addEventListener("dblclick", (e) => {
      clearTimeout(this.pendingRef);
      const open = this.subgraphAt(e, s);
      if (open) {
        e.preventDefault();
        this.handlers.onOpenSubgraph(open.path, open.box);
        return;
      }
      let t = this.targetOf(e);
      if (t && t.kind === "ref" && this.scene && this.scene.groups.some((g) => g.id === t.box)) t = { kind: "group", id: t.box };
      if (t && (t.kind === "group" || t.kind === "frame")) {
        e.preventDefault();
        this.handlers.onToggleGroup(t.id);
      }
    });
    s.addEventListener("wheel", (e) => {
      e.preventDefault();
      const rect = s.getBoundingClientRect();
      const px = e.clientX - rect.left;
      const py = e.clientY - rect.top;
      const delta = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
      const k = Math.min(MAX_SCALE, Math.max(this.minScale(), this.view.k * Math.exp(-delta * 0.0015)));
      const ratio = k / this.view.k;
      this.setView(px - (px - this.view.x) * ratio, py - (py - this.view.y) * ratio, k);
    }, { passive: false });
  }

  /** What an event points at: {kind: "ref"|"toggle"|"box"|"group"|"frame"|"edge", ...} or null. */
  targetOf(e) {
    if (this.mode === "canvas") {
      const rect = this.canvas.el.getBoundingClientRect();
      return this.canvas.hit((e.clientX - rect.left - this.view.x) / this.view.k, (e.clientY - rect.top - this.view.y) / this.view.k);
    }
    const t = e.target;
    if (!t || !t.closest) return null;
    const ref = t.closest("[data-ref-kind]");
    const boxEl = t.closest("[data-box], [data-group]");
    if (ref && boxEl) {
      return {
        kind: "ref", box: boxEl.getAttribute("data-box") || boxEl.getAttribute("data-group"),
        ref: { kind: ref.getAttribute("data-ref-kind"), tensor: ref.getAttribute("data-ref-tensor"), from: ref.getAttribute("data-ref-from") },
      };
    }
    const toggle = t.closest("[data-toggle]");
    if (toggle) return { kind: "toggle", id: toggle.getAttribute("data-toggle") };
    const constant = t.closest("[data-const]");
    if (constant) return { kind: "box", id: constant.getAttribute("data-const") };
    const init = t.closest("[data-init]");
    if (init && boxEl) return { kind: "init", box: boxEl.getAttribute("data-box"), tensor: init.getAttribute("data-init") };
    if (boxEl && boxEl.hasAttribute("data-box")) return { kind: "box", id: boxEl.getAttribute("data-box") };
    if (boxEl) return { kind: "group", id: boxEl.getAttribute("data-group") };
    const frame = t.closest("[data-frame]");
    if (frame) return { kind: "frame", id: frame.getAttribute("data-frame") };
    const edge = t.closest("[data-tensor]");
    if (edge) return { kind: "edge", tensor: edge.getAttribute("data-tensor") };
    return null;
  }

  /**
   * The subgraph a double-click at event `e` opens: on the box of a node holding subgraphs (If,
   * Loop, Scan), the one named under the pointer in its "⤷ then_branch (9 ops) · else_branch (4 ops)" line,
   * anywhere else on the box its first. Null elsewhere.
   * @param {MouseEvent} e @param {Element} surface the svg or canvas the event came to
   * @returns {{path: string, box: string} | null}
   */
  subgraphAt(e, surface) {
    if (!this.scene) return null;
    const rect = surface.getBoundingClientRect();
    const x = (e.clientX - rect.left - this.view.x) / this.view.k;
    const y = (e.clientY - rect.top - this.view.y) / this.view.k;
    const item = this.scene.boxes.find((b) => b.kind === "node" && x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h);
    if (!item || !item.box.node.subgraphs || !item.box.node.subgraphs.length) return null;
    const subLine = item.lines.find((l) => l.subgraphs);
    const paths = subLine ? subLine.subgraphs : subgraphsOf(item.box.node);
    const { headHeight, lineHeight, bodyPadY, padX } = METRICS;
    const i = Math.floor((y - item.y - headHeight - bodyPadY) / lineHeight) + 1;
    const line = i >= 1 && i < item.lines.length ? item.lines[i] : null;
    let k = 0;
    if (line && line === subLine) {
      // the line reads "⤷ " + its parts (a name and its size) joined by " · ": the one under the pointer, or the nearest
      const names = line.parts || line.subgraphs.map((p) => p.slice(p.lastIndexOf("/") + 1));
      const font = FONTS[line.font];
      const px = x - item.x - padX;
      const gap = measureText(" · ", font) / 2;
      for (let n = 1; n < names.length; n += 1) {
        if (px >= measureText(`⤷ ${names.slice(0, n).join(" · ")} · `, font) - gap) k = n;
      }
    }
    return { path: paths[k], box: item.id };
  }

  click(t) {
    const h = this.handlers;
    clearTimeout(this.pendingRef);
    if (!t) h.onSelect(null);
    else if (t.kind === "ref") {
      // a reference jumps elsewhere: wait a moment, the click may be half of a double-click
      // (which expands the group the reference is drawn in)
      this.pendingRef = setTimeout(() => h.onReference(t.ref, t.box), 280);
    }
    else if (t.kind === "toggle") h.onToggleGroup(t.id);
    else if (t.kind === "box" || t.kind === "init") h.onSelect(t.id || t.box);
    else if (t.kind === "group" || t.kind === "frame") h.onSelectGroup(t.id);
    else if (t.kind === "edge") h.onSelectTensor(t.tensor);
  }

  minScale() {
    const { w, h } = this.viewportSize();
    const fitK = Math.min((w - 32) / Math.max(1, this.size.width), (h - 32) / Math.max(1, this.size.height));
    return Math.max(0.0005, Math.min(MIN_SCALE, fitK * 0.5));
  }

  setView(x, y, k) {
    this.view = { x, y, k };
    this.viewport.setAttribute("transform", `translate(${x.toFixed(2)},${y.toFixed(2)}) scale(${k.toFixed(5)})`);
    if (this.mode === "canvas") this.canvas.schedule();
    else this.placeTabs();
    if (this.handlers.onViewChange) this.handlers.onViewChange(this.view);
  }

  /**
   * Draw a scene (scene.js). `place` sets the view (home, a kept or restored view, an anchor)
   * once the scene's geometry is known and before anything is drawn: an SVG drawing then puts
   * what that view shows in the page at once and the rest in the frames after (drawRest).
   * @param {any} scene @param {(() => void) | null} [place]
   */
  render(scene, place = null) {
    this.reset();
    this.scene = scene;
    this.size = { width: scene.width || 0, height: scene.height || 0 };
    const count = scene.boxes.length + scene.groups.length + scene.frames.length;
    this.mode = count > SVG_LIMIT ? "canvas" : "svg";
    this.container.dataset.renderer = this.mode;
    for (const item of [...scene.boxes, ...scene.groups, ...scene.frames]) {
      this.centers.set(item.id, item);
    }
    if (place) place();
    if (this.mode === "svg") this.renderSvg(scene);
    else this.renderCanvas(scene);
    this.applyState();
  }

  /** The part of the drawing the window shows, widened by half a window each way (what a
   * first pan or a reveal nearby reaches before the rest is in), in drawing coordinates. */
  windowRect() {
    const { w, h } = this.viewportSize();
    const { x, y, k } = this.view;
    return { x0: (-x - w / 2) / k, y0: (-y - h / 2) / k, x1: (1.5 * w - x) / k, y1: (1.5 * h - y) / k };
  }

  renderSvg(scene) {
    const layers = {
      frames: svg("g", { class: "frames" }),
      edges: svg("g", { class: "edges" }),
      labels: svg("g", { class: "edge-labels" }),
      heads: svg("g", { class: "frame-heads" }),
      boxes: svg("g", { class: "boxes" }),
    };
    this.layers = layers;
    // Laying out SVG text costs the browser ~50 us an element, on screen or not (a 900-node
    // Inception's first view: ~0.2 s of layout and paint for the whole drawing, against a
    // few ms for the window's part): the window's part goes in now, the rest after
    const win = this.windowRect();
    const meets = (r) => r.x <= win.x1 && r.x + r.w >= win.x0 && r.y <= win.y1 && r.y + r.h >= win.y0;
    /** @type {{kind: string, item: any, r: {x: number, y: number, w: number, h: number}}[]} */
    const later = [];
    const sort = (kind, item, r) => {
      if (meets(r)) this.drawItem(kind, item);
      else later.push({ kind, item, r });
    };
    for (const f of scene.frames) sort("frame", f, f);
    for (const edge of scene.edges) sort("edge", edge, boundsOf(edge.points));
    for (const item of scene.groups) sort("group", item, item);
    for (const item of scene.boxes) sort("box", item, item);
    this.viewport.append(layers.frames, layers.edges, layers.labels, layers.heads, layers.boxes);
    if (!this.svg.isConnected) this.container.append(this.svg);
    this.svg.style.display = "";
    this.canvas.hide();
    this.container.dataset.drawn = later.length ? "window" : "all";
    if (later.length) this.drawRest(later);
  }

  /** Keep each frame's tab on screen while the frame reaches past the window's left edge
   * (frame-tab.js); only tabs whose place changes are touched. */
  placeTabs() {
    for (const tab of this.tabs) this.placeTab(tab);
  }

  /** @param {{el: Element, item: any, width: number, at: number}} tab */
  placeTab(tab) {
    const { x, k } = this.view;
    const at = tabX(tab.item, tab.width, -x / k, k);
    if (Math.abs(at - tab.at) * k < 0.5) return;
    tab.at = at;
    tab.el.setAttribute("transform", `translate(${at.toFixed(1)},${tab.item.y.toFixed(1)})`);
  }

  /** One item of an SVG drawing into its layer. */
  drawItem(kind, item) {
    const layers = this.layers;
    if (kind === "frame") {
      const [body, head] = drawFrame(item);
      layers.frames.append(body);
      layers.heads.append(head);
      this.boxEls.set(item.id, body);
      const tab = { el: head, item, width: Number(head.dataset.tabWidth), at: item.x };
      this.tabs.push(tab);
      this.placeTab(tab);
    } else if (kind === "edge") {
      const path = svg("path", {
        class: item.implicit ? "edge implicit" : "edge", d: edgePath(item.points), "marker-end": "url(#arrow)", "data-from": item.from, "data-to": item.to, "data-tensor": item.tensor,
        "stroke-dasharray": item.implicit ? IMPLICIT_DASH.join(" ") : null,
      });
      path.append(svg("title", {}, edgeTitle(item)));
      layers.edges.append(path);
      this.edgeEls.push({ edge: item, el: path });
      if (item.label && Number.isFinite(item.lx)) {
        layers.labels.append(svg("text", {
          class: "edge-label", x: item.lx.toFixed(1), y: (item.ly + 3.5).toFixed(1), "text-anchor": "middle",
          "data-tensor": item.tensor,
        }, item.label));
      }
    } else {
      const g = kind === "group" ? drawGroupBox(item) : item.kind === "node" ? drawNodeBox(item) : drawIoBox(item);
      g.setAttribute("transform", `translate(${item.x.toFixed(1)},${item.y.toFixed(1)})`);
      layers.boxes.append(g);
      this.boxEls.set(item.id, g);
    }
  }

  /** The rest of an SVG drawing, a slice per frame once the window's part is painted (the
   * page answers clicks and pans meanwhile), nearest to where the window is then first; sets
   * #graph[data-drawn=all] when all of it is in. A newer drawing stops it. */
  async drawRest(later) {
    const seq = this.drawSeq;
    let rest = later;
    while (rest.length) {
      await painted();
      if (seq !== this.drawSeq) return;
      const win = this.windowRect();
      const cx = (win.x0 + win.x1) / 2;
      const cy = (win.y0 + win.y1) / 2;
      const far = (/** @type {{x: number, y: number, w: number, h: number}} */ r) => Math.hypot(r.x + r.w / 2 - cx, r.y + r.h / 2 - cy);
      rest.sort((a, b) => far(a.r) - far(b.r));
      for (const { kind, item } of rest.slice(0, REST_SLICE)) this.drawItem(kind, item);
      rest = rest.slice(REST_SLICE);
      this.applyState();
    }
    this.container.dataset.drawn = "all";
  }

  renderCanvas(scene) {
    // the hidden list of what the canvas draws: one element per box, as the page hooks say
    const frag = document.createDocumentFragment();
    for (const item of scene.boxes) {
      const el = document.createElement("i");
      if (item.kind === "node") el.setAttribute("data-node-id", item.id);
      else el.setAttribute("data-io", item.kind);
      el.setAttribute("data-box", item.id);
      frag.append(el);
      for (const line of item.lines) {
        if (!line.node || !line.primary) continue;
        const c = document.createElement("i");
        c.setAttribute("data-node-id", line.node);
        c.setAttribute("data-const", line.node);
        frag.append(c);
      }
    }
    for (const item of scene.groups) {
      const el = document.createElement("i");
      el.setAttribute("data-group-id", item.id);
      el.setAttribute("data-collapsed", "true");
      frag.append(el);
    }
    for (const item of scene.frames) {
      const el = document.createElement("i");
      el.setAttribute("data-group-id", item.id);
      el.setAttribute("data-collapsed", "false");
      frag.append(el);
    }
    this.hooks.append(frag);
    if (!this.hooks.isConnected) this.container.append(this.hooks);
    if (!this.svg.isConnected) this.container.append(this.svg);
    this.svg.style.display = "none";
    this.container.dataset.drawn = "all"; // the canvas draws the window at each frame
    this.canvas.show(scene);
  }

  /** Give the boxes `ids` the class `cls` (and take it from every other box). */
  mark(ids, cls) {
    this.marks.set(cls, new Set(ids));
    if (this.mode === "svg") {
      const set = this.marks.get(cls);
      for (const [id, g] of this.boxEls) g.classList.toggle(cls, set.has(id));
    } else this.canvas.schedule();
  }

  /** Mark a drawn box or group (and its edges) as selected; null clears. */
  highlight(id) {
    this.selected = id;
    this.activeTensor = null;
    this.applyState();
  }

  /** Mark the edges that carry tensor `name` (no box selected). */
  highlightTensor(name) {
    this.selected = null;
    this.activeTensor = name;
    this.applyState();
  }

  /** Show upstream/downstream of a box: {focus, up: Set, down: Set} of drawn ids; null clears. */
  setTrace(trace) {
    this.trace = trace;
    this.applyState();
  }

  edgeState(edge) {
    const t = this.trace;
    if (t) {
      const upEdge = (t.up.has(edge.from) || edge.from === t.focus) && (t.up.has(edge.to) || edge.to === t.focus) && edge.from !== t.focus;
      const downEdge = (t.down.has(edge.from) || edge.from === t.focus) && (t.down.has(edge.to) || edge.to === t.focus) && edge.to !== t.focus;
      if (upEdge || downEdge || edge.to === t.focus || edge.from === t.focus) return "trace";
    }
    if (this.activeTensor !== null) return edge.tensor === this.activeTensor ? "active" : "";
    if (this.selected !== null && (edge.from === this.selected || edge.to === this.selected)) return "active";
    return "";
  }

  applyState() {
    if (this.mode === "canvas") {
      this.canvas.schedule();
      return;
    }
    for (const el of this.viewport.querySelectorAll(".selected")) el.classList.remove("selected");
    this.svg.classList.toggle("tracing", !!this.trace);
    for (const { edge, el } of this.edgeEls) {
      const s = this.edgeState(edge);
      el.classList.toggle("active", s === "active");
      el.classList.toggle("traced", s === "trace");
      el.setAttribute("marker-end", s === "active" ? "url(#arrow-active)" : s === "trace" ? "url(#arrow-trace)" : "url(#arrow)");
    }
    const t = this.trace;
    for (const [id, g] of this.boxEls) {
      if (t) {
        g.classList.toggle("trace-up", t.up.has(id));
        g.classList.toggle("trace-down", t.down.has(id));
        g.classList.toggle("trace-focus", t.focus === id);
      } else {
        g.classList.remove("trace-up", "trace-down", "trace-focus");
      }
      for (const [cls, set] of this.marks) g.classList.toggle(cls, set.has(id));
    }
    const g = this.selected === null ? null : this.boxEls.get(this.selected);
    if (g) g.classList.add("selected");
  }

  /** The drawing area's size (kept up to date by a ResizeObserver: asking the layout engine
   * each time would force a reflow of the whole drawing). */
  viewportSize() {
    if (!this.sizeObserver) {
      this.sizeObserver = new ResizeObserver(() => {
        const r = this.container.getBoundingClientRect();
        this.areaSize = { w: Math.max(1, r.width), h: Math.max(1, r.height) };
        if (this.mode === "canvas") this.canvas.schedule();
      });
      this.sizeObserver.observe(this.container);
    }
    if (!this.areaSize) {
      const rect = this.container.getBoundingClientRect();
      this.areaSize = { w: Math.max(1, rect.width), h: Math.max(1, rect.height) };
    }
    return this.areaSize;
  }

  /** Scale and center the whole drawing in the window (never enlarging beyond 100 %), below
   * the drawing's toolbar (Fit, the f key). */
  fit() {
    const { w, h } = this.viewportSize();
    const top = this.insetTop || 0;
    const gw = Math.max(1, this.size.width);
    const gh = Math.max(1, this.size.height);
    const k = Math.max(0.0005, Math.min(1, (w - 32) / gw, (h - top - 24) / gh));
    this.setView((w - gw * k) / 2, top + (h - top - gh * k) / 2, k);
  }

  /** After a redraw at the view kept from before (an edit): when nothing of the drawing is in
   * the window any more (QA29: an Attention written out as 94 nodes drawn elsewhere left it
   * blank), the box nearest the window's middle is brought to it, at the same scale. */
  keepInSight() {
    if (!this.scene) return;
    const { w, h } = this.viewportSize();
    const { x, y, k } = this.view;
    const [x0, y0, x1, y1] = [-x / k, -y / k, (w - x) / k, (h - y) / k];
    const rects = [...this.scene.boxes, ...this.scene.groups];
    if (!rects.length || rects.some((r) => r.x < x1 && r.x + r.w > x0 && r.y < y1 && r.y + r.h > y0)) return;
    const [cx, cy] = [(x0 + x1) / 2, (y0 + y1) / 2];
    const far = (r) => (r.x + r.w / 2 - cx) ** 2 + (r.y + r.h / 2 - cy) ** 2;
    const near = rects.reduce((a, b) => (far(b) < far(a) ? b : a));
    this.setView(w / 2 - (near.x + near.w / 2) * k, h / 2 - (near.y + near.h / 2) * k, k);
  }

  /** Where to centre a first view on `start` (the first input): between it and the box its
   * first edge reaches when both fit in `room` (the layout may draw input_ids far right of the
   * embedding it feeds), else on that reader, at the window's side toward the input: a merged
   * decoder's eleven inputs, drawn in a row 3,000 px wide, opened on one of them with its If —
   * the graph's one node — out of the window (QA31). */
  startAndReader(start, room) {
    const edges = this.scene.edges || [];
    const rects = [...this.scene.boxes, ...this.scene.groups];
    const readerOf = (box) => {
      const edge = edges.find((e) => e.from === box.id);
      return edge ? rects.find((r) => r.id === edge.to) : undefined;
    };
    let reader = readerOf(start);
    // past nodes that only pass the value on (a float16 model's input Casts: QA32 N3)
    for (let hops = 0; reader && hops < 3 && PASSES_ON.has(reader.box?.node?.op_type); hops += 1) reader = readerOf(reader) || reader;
    if (!reader) return start.x + start.w / 2;
    const lo = Math.min(start.x, reader.x);
    const hi = Math.max(start.x + start.w, reader.x + reader.w);
    if (hi - lo <= room) return (lo + hi) / 2;
    if (reader.w >= room) return reader.x + reader.w / 2;
    return start.x > reader.x ? reader.x + room / 2 : reader.x + reader.w - room / 2;
  }

  /** The span of the graph's input boxes in the drawing's top `band` (graph units), when it
   * has two or more there; else null. */
  inputsSpan(band) {
    const boxes = (this.scene ? this.scene.boxes : []).filter((r) => r.id.startsWith("input:") && r.y <= band);
    if (boxes.length < 2) return null;
    return { lo: Math.min(...boxes.map((r) => r.x)), hi: Math.max(...boxes.map((r) => r.x + r.w)) };
  }

  /** The view a reader starts from (a graph opening; Home): the whole drawing when it fits
   * the window with its labels at a readable size, else its top — where the inputs are —
   * at that size, centred on the first input (as declared) when wider than the window; the minimap shows
   * the rest. (Fitted whole, a ResNet's 17,000 px were 5 % zoom: labels 0.7 px tall.) */
  home() {
    const { w, h } = this.viewportSize();
    const top = this.insetTop || 0;
    const gw = Math.max(1, this.size.width);
    const gh = Math.max(1, this.size.height);
    const whole = Math.min(1, (w - 32) / gw, (h - top - 24) / gh);
    if (whole >= READABLE_SCALE) {
      this.fit();
      return;
    }
    const k = READABLE_SCALE;
    let cx = gw / 2;
    if (gw * k > w - 32) {
      // frame what the first screen shows: the boxes in its band, or when they are wider
      // than the window, where reading starts: the first input (the leftmost of the topmost),
      // else (a subgraph without inputs) the first value it reads from outside, else the first box
      const band = (h - top) / k;
      let lo = Infinity;
      let hi = -Infinity;
      const first = { input: null, outer: null, any: null };
      const earlier = (r, than) => !than || r.y < than.y || (r.y === than.y && r.x < than.x);
      // the graph's inputs in the order it declares them (input_ids before a decoder's six past
      // key/value inputs, which the layout may put left of it: QA29), else top-left first
      const model = this.scene && this.scene.plan && this.scene.plan.model;
      const declared = new Map(model ? [...model.boxes.keys()].map((id, i) => [id, i]) : []);
      const before = (r, than) => (declared.has(r.id) && declared.has(than && than.id)
        ? declared.get(r.id) < declared.get(than.id) : earlier(r, than));
      for (const r of this.scene ? [...this.scene.boxes, ...this.scene.groups] : []) {
        if (r.y > band) continue;
        lo = Math.min(lo, r.x);
        hi = Math.max(hi, r.x + r.w);
        const kind = r.id.startsWith("input:") ? "input" : r.id.startsWith("outer:") ? "outer" : null;
        if (kind && before(r, first[kind])) first[kind] = r;
        if (earlier(r, first.any)) first.any = r;
      }
      const start = first.input || first.outer || first.any;
      const inputs = this.inputsSpan(band);
      if (hi > lo && (hi - lo) * k <= w - 32) cx = (lo + hi) / 2;
      // the graph's inputs together where they fit (affine_grid's theta and size were a window
      // apart, one behind the side panel: QA34 #3)
      else if (inputs && (inputs.hi - inputs.lo) * k <= w - 32) cx = (inputs.lo + inputs.hi) / 2;
      else if (start) cx = this.startAndReader(start, (w - 32) / k);
      // never past the drawing's left or right edge
      cx = Math.min(Math.max(cx, (w / 2 - 16) / k), gw - (w / 2 - 16) / k);
    }
    this.setView(w / 2 - cx * k, top + 12, k);
  }

  /** A drawn box in the window and where it is on screen: what to keep in place when the
   * drawing under it is replaced — the first of `prefer` (the selection, the box a link
   * brought into view) in the window, else the topmost, then leftmost box.
   * @param {(string | null)[]} prefer */
  anchorOnScreen(prefer = []) {
    if (!this.scene) return null;
    const { w, h } = this.viewportSize();
    const { x, y, k } = this.view;
    const onScreen = (r) => {
      const sx = x + r.x * k;
      const sy = y + r.y * k;
      return sx < 0 || sy < 0 || sx > w || sy > h ? null : { id: r.id, sx, sy };
    };
    for (const id of prefer) {
      const preferred = id && this.centers.get(id) ? onScreen(this.centers.get(id)) : null;
      if (preferred) return preferred;
    }
    let best = null;
    for (const r of [...this.scene.boxes, ...this.scene.groups]) {
      const p = onScreen(r);
      if (p && (!best || p.sy < best.sy || (p.sy === best.sy && p.sx < best.sx))) best = p;
    }
    return best;
  }

  /** Drawn rectangle of a box or group id, or undefined. */
  rectOf(id) {
    return this.centers.get(id);
  }

  /** Bring a box into view (keeping the zoom unless it is too small to read): centred, or
   * for a box bigger than the window (an expanded group) its top-left part, where its tab is. */
  reveal(id, { minScale = 0.5, zoom = 0.8 } = {}) {
    const r = this.centers.get(id);
    if (!r) return;
    const { w, h } = this.viewportSize();
    const inset = this.insetTop || 0;
    const { x, y, k } = this.view;
    const left = x + r.x * k;
    const top = y + r.y * k;
    const right = left + Math.min(r.w * k, w - 80);
    const bottom = top + Math.min(r.h * k, h - inset - 80);
    if (left > 40 && right < w - 40 && top > inset + 10 && bottom < h - 40 && k >= minScale) return;
    const nk = Math.max(k, zoom);
    const cx = r.x + Math.min(r.w / 2, (w / 2 - 40) / nk);
    const cy = r.y + Math.min(r.h / 2, ((h - inset) / 2 - 40) / nk);
    this.setView(w / 2 - cx * nk, inset + (h - inset) / 2 - cy * nk, nk);
  }

  /** Keep the point (x, y) of the drawing where it was on screen (sx, sy) — after a relayout. */
  anchor(x, y, sx, sy) {
    const { k } = this.view;
    this.setView(sx - x * k, sy - y * k, k);
  }

  /** Where a drawing point is on screen. */
  toScreen(x, y) {
    return [this.view.x + x * this.view.k, this.view.y + y * this.view.k];
  }

  /** Remove the drawing. */
  reset() {
    this.drawSeq = (this.drawSeq || 0) + 1;
    clear(this.viewport);
    clear(this.hooks);
    this.boxEls.clear();
    this.centers.clear();
    this.edgeEls = [];
    this.tabs = []; // the SVG drawing's frame tabs, kept on screen by placeTabs
    this.scene = null;
    this.canvas.clearScene();
  }
}
