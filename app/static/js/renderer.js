// SVG drawing of a laid-out graph, with pan (drag), zoom (wheel) and fit-to-window.
// Boxes are <g> elements; graph nodes carry data-node-id, inputs/outputs data-io.
import { svg, clear } from "./dom.js";
import { FONTS, METRICS } from "./graph-model.js";

const MIN_SCALE = 0.02;
const MAX_SCALE = 4;
const DRAG_THRESHOLD = 4;

/** A smooth path through dagre's edge points (quadratic segments through midpoints). */
function edgePath(points) {
  if (points.length < 2) return "";
  const f = (n) => Math.round(n * 10) / 10;
  let d = `M${f(points[0][0])},${f(points[0][1])}`;
  if (points.length === 2) return `${d}L${f(points[1][0])},${f(points[1][1])}`;
  for (let i = 1; i < points.length - 1; i += 1) {
    const [x, y] = points[i];
    const [nx, ny] = points[i + 1];
    const mx = i === points.length - 2 ? nx : (x + nx) / 2;
    const my = i === points.length - 2 ? ny : (y + ny) / 2;
    d += `Q${f(x)},${f(y)} ${f(mx)},${f(my)}`;
  }
  return d;
}

function topRounded(w, h, r) {
  return `M0,${h}V${r}Q0,0 ${r},0H${w - r}Q${w},0 ${w},${r}V${h}Z`;
}

function textLine(line, x, y, cls, anchor = "start") {
  return svg("text", { x, y, class: cls, "text-anchor": anchor, style: `font:${FONTS[line.font]}` }, line.text);
}

function drawNodeBox(box) {
  const { padX, headHeight, lineHeight, bodyPadY } = METRICS;
  const { width: w, height: h } = box;
  const g = svg("g", { class: `box node cat-${box.category}`, "data-node-id": box.id, "data-box": box.id });
  const title = svg("title", {}, `${box.node.op_type}${box.node.name ? ` · ${box.node.name}` : ""}`);
  g.append(title);
  g.append(svg("rect", { class: "box-body", width: w, height: h, rx: 5 }));
  const single = box.lines.length === 1;
  g.append(single
    ? svg("rect", { class: "box-head", width: w, height: h, rx: 5 })
    : svg("path", { class: "box-head", d: topRounded(w, headHeight, 5) }));
  g.append(textLine(box.lines[0], w / 2, headHeight / 2 + 4.5, "t-op", "middle"));
  let y = headHeight + bodyPadY + lineHeight - 4;
  for (const line of box.lines.slice(1)) {
    g.append(textLine(line, padX, y, `t-${line.font}`));
    y += lineHeight;
  }
  g.append(svg("rect", { class: "box-outline", width: w, height: h, rx: 5 }));
  return g;
}

function drawIoBox(box) {
  const { width: w, height: h } = box;
  const g = svg("g", { class: `box io io-${box.kind}`, "data-io": box.kind, "data-box": box.id, "data-name": box.name });
  g.append(svg("title", {}, box.lines.map((l) => l.text).join("\n")));
  const r = box.kind === "outer" ? 5 : Math.min(h / 2, 16);
  g.append(svg("rect", { class: "box-body", width: w, height: h, rx: r }));
  const first = box.lines[0];
  const rest = box.lines.slice(1);
  g.append(textLine(first, w / 2, 16, `t-${first.font}`, "middle"));
  rest.forEach((line, i) => g.append(textLine(line, w / 2, 31 + i * METRICS.lineHeight, `t-${line.font}`, "middle")));
  return g;
}

export class GraphView {
  /**
   * @param {HTMLElement} container the #graph element
   * @param {{onSelect: function(string|null), onSelectTensor: function(string)}} handlers box id
   *   clicked (null: background); tensor name of a clicked edge or edge label
   */
  constructor(container, handlers) {
    this.container = container;
    this.handlers = handlers;
    this.view = { x: 0, y: 0, k: 1 };
    this.size = { width: 0, height: 0 };
    this.boxEls = new Map();
    this.centers = new Map(); // box id -> [x, y] in drawing coordinates
    this.edgeEls = [];
    this.selected = null;
    this.svg = svg("svg", { class: "graph-svg", role: "img", "aria-label": "Graph drawing" });
    const defs = svg("defs");
    for (const [id, cls] of [["arrow", "arrowhead"], ["arrow-active", "arrowhead active"]]) {
      defs.append(svg("marker", {
        id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
        orient: "auto-start-reverse", markerUnits: "userSpaceOnUse",
      }, svg("path", { d: "M0,1L10,5L0,9Z", class: cls })));
    }
    this.svg.append(defs);
    this.viewport = svg("g", { class: "viewport" });
    this.svg.append(this.viewport);
    this.bindEvents();
  }

  bindEvents() {
    const s = this.svg;
    let drag = null;
    s.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, moved: false, id: e.pointerId };
    });
    s.addEventListener("pointermove", (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
      if (!drag.moved) {
        drag.moved = true;
        s.setPointerCapture(e.pointerId);
        s.classList.add("panning");
      }
      this.setView(drag.vx + dx, drag.vy + dy, this.view.k);
    });
    const end = (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      const wasDrag = drag.moved;
      drag = null;
      s.classList.remove("panning");
      if (s.hasPointerCapture(e.pointerId)) s.releasePointerCapture(e.pointerId);
      if (wasDrag || e.type === "pointercancel") return;
      const boxEl = e.target.closest && e.target.closest("[data-box]");
      const edgeEl = !boxEl && e.target.closest && e.target.closest("[data-tensor]");
      if (edgeEl && this.handlers.onSelectTensor) this.handlers.onSelectTensor(edgeEl.getAttribute("data-tensor"));
      else this.handlers.onSelect(boxEl ? boxEl.getAttribute("data-box") : null);
    };
    s.addEventListener("pointerup", end);
    s.addEventListener("pointercancel", end);
    s.addEventListener("wheel", (e) => {
      e.preventDefault();
      const rect = s.getBoundingClientRect();
      const px = e.clientX - rect.left;
      const py = e.clientY - rect.top;
      const delta = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
      const k = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.view.k * Math.exp(-delta * 0.0015)));
      const ratio = k / this.view.k;
      this.setView(px - (px - this.view.x) * ratio, py - (py - this.view.y) * ratio, k);
    }, { passive: false });
  }

  setView(x, y, k) {
    this.view = { x, y, k };
    this.viewport.setAttribute("transform", `translate(${x.toFixed(2)},${y.toFixed(2)}) scale(${k.toFixed(5)})`);
  }

  /** Draw `model` (graph-model.js) at the positions of `layout` (layout-worker.js). */
  render(model, layout) {
    this.reset();
    this.size = { width: layout.width || 0, height: layout.height || 0 };
    const edgeLayer = svg("g", { class: "edges" });
    const labelLayer = svg("g", { class: "edge-labels" });
    const boxLayer = svg("g", { class: "boxes" });
    for (const edge of model.edges) {
      const pos = layout.edges[edge.id];
      if (!pos) continue;
      const path = svg("path", {
        class: "edge", d: edgePath(pos.points), "marker-end": "url(#arrow)", "data-from": edge.from, "data-to": edge.to, "data-tensor": edge.tensor,
      });
      path.append(svg("title", {}, edge.label ? `${edge.tensor}: ${edge.label}` : edge.tensor));
      edgeLayer.append(path);
      this.edgeEls.push({ edge, el: path });
      if (edge.label && Number.isFinite(pos.x)) {
        labelLayer.append(svg("text", {
          class: "edge-label", x: pos.x.toFixed(1), y: (pos.y + 3.5).toFixed(1), "text-anchor": "middle", style: `font:${FONTS.edge}`,
          "data-tensor": edge.tensor,
        }, edge.label));
      }
    }
    for (const box of model.boxes.values()) {
      const pos = layout.nodes[box.id];
      if (!pos) continue;
      const g = box.kind === "node" ? drawNodeBox(box) : drawIoBox(box);
      g.setAttribute("transform", `translate(${(pos.x - box.width / 2).toFixed(1)},${(pos.y - box.height / 2).toFixed(1)})`);
      boxLayer.append(g);
      this.boxEls.set(box.id, g);
      this.centers.set(box.id, [pos.x, pos.y]);
    }
    this.viewport.append(edgeLayer, labelLayer, boxLayer);
    if (!this.svg.isConnected) this.container.append(this.svg);
    this.highlight(this.selected);
  }

  /** Give the boxes `ids` the class `cls` (and take it from every other box). */
  mark(ids, cls) {
    const set = new Set(ids);
    for (const [id, g] of this.boxEls) g.classList.toggle(cls, set.has(id));
  }

  /** Mark a box (and its edges) as selected; null clears. */
  highlight(boxId) {
    this.selected = boxId;
    for (const el of this.viewport.querySelectorAll(".selected")) el.classList.remove("selected");
    for (const { edge, el } of this.edgeEls) {
      const active = boxId !== null && (edge.from === boxId || edge.to === boxId);
      el.classList.toggle("active", active);
      el.setAttribute("marker-end", active ? "url(#arrow-active)" : "url(#arrow)");
    }
    const g = boxId === null ? null : this.boxEls.get(boxId);
    if (g) g.classList.add("selected");
  }

  /** Mark the edges that carry tensor `name` (no box selected). */
  highlightTensor(name) {
    this.highlight(null);
    for (const { edge, el } of this.edgeEls) {
      const active = edge.tensor === name;
      el.classList.toggle("active", active);
      el.setAttribute("marker-end", active ? "url(#arrow-active)" : "url(#arrow)");
    }
  }

  viewportSize() {
    const rect = this.container.getBoundingClientRect();
    return { w: Math.max(1, rect.width), h: Math.max(1, rect.height) };
  }

  /** Scale and center the whole drawing in the window (never enlarging beyond 100%). */
  fit() {
    const { w, h } = this.viewportSize();
    const gw = Math.max(1, this.size.width);
    const gh = Math.max(1, this.size.height);
    const k = Math.max(MIN_SCALE, Math.min(1, (w - 32) / gw, (h - 32) / gh));
    this.setView((w - gw * k) / 2, (h - gh * k) / 2, k);
  }

  /** Bring a box into view (keeping the zoom unless it is too small to read). */
  reveal(boxId) {
    const center = this.centers.get(boxId);
    if (!center) return;
    const { w, h } = this.viewportSize();
    const [cx, cy] = center;
    const { x, y, k } = this.view;
    const sx = x + cx * k;
    const sy = y + cy * k;
    if (sx > 40 && sx < w - 40 && sy > 40 && sy < h - 40 && k >= 0.5) return;
    const nk = Math.max(k, 0.8);
    this.setView(w / 2 - cx * nk, h / 2 - cy * nk, nk);
  }

  /** Remove the drawing. */
  reset() {
    clear(this.viewport);
    this.boxEls.clear();
    this.centers.clear();
    this.edgeEls = [];
  }
}
