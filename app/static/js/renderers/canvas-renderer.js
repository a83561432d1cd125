// The canvas way of drawing a scene (scene.js), for scenes too big for one SVG element per box:
// redrawn on each view change (at the device's pixel ratio, so crisp at every zoom), culled
// to the window through a grid index, with text only where it is readable and boxes batched
// by colour when zoomed far out. Measured in headless Chromium on 2 cores (10,000 boxes and
// 12,000 edges, all on screen): one redraw ~16 ms here against ~550 ms for per-box SVG and
// ~65 ms for SVG batched into a few paths.
// paintScene() also draws the PNG export.
import { FONTS } from "./theme.js";
import { METRICS, measureText } from "../pipeline/graph-model.js";
import { FRAME } from "../pipeline/scene.js";
import { edgeSegments } from "./edge-path.js";
import { tabX } from "./frame-tab.js";
import { edgeTitle, groupTitle, ioTitle, nodeTitle } from "./titles.js";
import { CATEGORY_ORDER, IMPLICIT_DASH, categoryColor, heatColour, theme } from "./theme.js";

/** A grid of buckets over the drawing: what is near a point, what is in a rectangle. */
class GridIndex {
  constructor(width, height, cell = 768) {
    this.cell = cell;
    this.cols = Math.max(1, Math.ceil((width + 1) / cell));
    this.rows = Math.max(1, Math.ceil((height + 1) / cell));
    this.buckets = new Map();
    this.stamp = 0;
  }

  /** [c0, c1, r0, r1]: the columns and rows of cells a rectangle meets. */
  span(x0, y0, x1, y1) {
    return [Math.max(0, Math.floor(x0 / this.cell)), Math.min(this.cols - 1, Math.floor(x1 / this.cell)),
      Math.max(0, Math.floor(y0 / this.cell)), Math.min(this.rows - 1, Math.floor(y1 / this.cell))];
  }

  add(item, x0, y0, x1, y1) {
    const [c0, c1, r0, r1] = this.span(x0, y0, x1, y1);
    for (let r = r0; r <= r1; r += 1) {
      for (let c = c0; c <= c1; c += 1) {
        const k = r * this.cols + c;
        let b = this.buckets.get(k);
        if (!b) this.buckets.set(k, b = []);
        b.push(item);
      }
    }
  }

  /** Items whose cells meet the rectangle, each once, in insertion order within a cell. */
  query(x0, y0, x1, y1, out = []) {
    this.stamp += 1;
    const [c0, c1, r0, r1] = this.span(x0, y0, x1, y1);
    for (let r = r0; r <= r1; r += 1) {
      for (let c = c0; c <= c1; c += 1) {
        const b = this.buckets.get(r * this.cols + c);
        if (!b) continue;
        for (const item of b) {
          if (item._stamp === this.stamp) continue;
          item._stamp = this.stamp;
          out.push(item);
        }
      }
    }
    return out;
  }
}

function edgeBounds(e) {
  let x0 = Infinity; let y0 = Infinity; let x1 = -Infinity; let y1 = -Infinity;
  for (const [x, y] of e.points) {
    if (x < x0) x0 = x; if (x > x1) x1 = x;
    if (y < y0) y0 = y; if (y > y1) y1 = y;
  }
  return [x0, y0, x1, y1];
}

/** Index a scene for drawing and hit testing (kept on the scene). */
export function indexScene(scene) {
  if (scene.index) return scene.index;
  const grid = new GridIndex(scene.width, scene.height);
  const edgeGrid = new GridIndex(scene.width, scene.height);
  let order = 0;
  for (const f of scene.frames) { f._order = order++; grid.add(f, f.x, f.y, f.x + f.w, f.y + f.h); }
  for (const g of scene.groups) { g._order = order++; grid.add(g, g.x, g.y, g.x + g.w + 4, g.y + g.h + 4); }
  for (const b of scene.boxes) { b._order = order++; grid.add(b, b.x, b.y, b.x + b.w, b.y + b.h); }
  for (const e of scene.edges) {
    if (e.points.length < 2) continue;
    e._bounds = edgeBounds(e);
    const [x0, y0, x1, y1] = e._bounds;
    edgeGrid.add(e, x0, y0, x1, y1);
  }
  scene.index = { grid, edgeGrid };
  return scene.index;
}

function roundRect(ctx, x, y, w, h, r) {
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

function topRound(ctx, x, y, w, h, r) {
  ctx.moveTo(x, y + h);
  ctx.lineTo(x, y + r);
  ctx.arcTo(x, y, x + r, y, r);
  ctx.lineTo(x + w - r, y);
  ctx.arcTo(x + w, y, x + w, y + r, r);
  ctx.lineTo(x + w, y + h);
  ctx.closePath();
}

function tracePath(ctx, pts, smooth) {
  ctx.moveTo(pts[0][0], pts[0][1]);
  if (!smooth || pts.length === 2) {
    for (let i = 1; i < pts.length; i += 1) ctx.lineTo(pts[i][0], pts[i][1]);
    return;
  }
  for (const [kind, a, b] of edgeSegments(pts)) {
    if (kind === "L") ctx.lineTo(a[0], a[1]);
    else ctx.quadraticCurveTo(a[0], a[1], b[0], b[1]);
  }
}

function arrowHead(ctx, pts, size) {
  const [x, y] = pts[pts.length - 1];
  let [px, py] = pts[pts.length - 2];
  if (px === x && py === y && pts.length > 2) [px, py] = pts[pts.length - 3];
  const a = Math.atan2(y - py, x - px);
  ctx.moveTo(x, y);
  ctx.lineTo(x - size * Math.cos(a - 0.42), y - size * Math.sin(a - 0.42));
  ctx.lineTo(x - size * Math.cos(a + 0.42), y - size * Math.sin(a + 0.42));
  ctx.closePath();
}

/**
 * Paint `scene` on a 2D context whose transform maps drawing coordinates to pixels with scale
 * `k` (in CSS px), showing the drawing rectangle `area` [x0, y0, x1, y1].
 * state: {selected, activeTensor, marks: Map cls -> Set, trace, edgeState(edge)}
 */
export function paintScene(ctx, scene, k, area, state = {}) {
  const { grid, edgeGrid } = indexScene(scene);
  const T = theme();
  const [ax0, ay0, ax1, ay1] = area;
  const items = grid.query(ax0, ay0, ax1, ay1).sort((a, b) => a._order - b._order);
  const edges = edgeGrid.query(ax0, ay0, ax1, ay1);
  const px = 1 / k; // one CSS pixel in drawing units
  const showText = k * 13 >= 4.5;
  const tiny = k < 0.08;
  const trace = state.trace || null;
  const dim = (id) => trace && !(trace.up.has(id) || trace.down.has(id) || trace.focus === id);
  const errors = (state.marks && state.marks.get("has-error")) || new Set();
  const ends = (state.marks && state.marks.get("tensor-end")) || new Set();
  state = { ...state, ends };

  // frames (bodies)
  for (const f of items) {
    if (f.kind !== "frame") continue;
    ctx.beginPath();
    roundRect(ctx, f.x, f.y, f.w, f.h, Math.min(10, f.w / 4));
    ctx.fillStyle = T.frameFill[Math.min(f.depth || 1, 4)];
    ctx.fill();
    ctx.lineWidth = Math.max(1, 0.8 * px);
    ctx.strokeStyle = T.frameStroke;
    if (f.group.part) ctx.setLineDash([6, 4]);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  // edges: plain ones first, highlighted ones on top
  const smooth = k > 0.12;
  const plain = [];
  const lit = [];
  for (const e of edges) {
    const s = state.edgeState ? state.edgeState(e) : "";
    (s ? lit : plain).push([e, s]);
  }
  ctx.lineJoin = "round";
  ctx.globalAlpha = trace ? 0.25 : 1;
  ctx.beginPath();
  if (tiny) {
    // far out: an edge under a couple of pixels is not drawn, a short one is a straight line
    for (const [e] of plain) {
      const [x0, y0, x1, y1] = e._bounds;
      const size = Math.max(x1 - x0, y1 - y0) * k;
      if (size < 1.5) continue;
      if (size < 24) {
        const a = e.points[0];
        const b = e.points[e.points.length - 1];
        ctx.moveTo(a[0], a[1]);
        ctx.lineTo(b[0], b[1]);
      } else tracePath(ctx, e.points, false);
    }
  } else for (const [e] of plain) if (!e.implicit) tracePath(ctx, e.points, smooth);
  ctx.strokeStyle = T.edge;
  ctx.lineWidth = Math.max(1.3, 0.7 * px);
  ctx.stroke();
  if (!tiny) {
    // read inside a node's subgraphs: dashed (tiny: drawn as the others above)
    ctx.beginPath();
    for (const [e] of plain) if (e.implicit) tracePath(ctx, e.points, smooth);
    ctx.setLineDash(IMPLICIT_DASH.map((d) => d * Math.max(1, 0.7 * px / 1.3)));
    ctx.stroke();
    ctx.setLineDash([]);
  }
  if (k > 0.25) {
    ctx.beginPath();
    for (const [e] of plain) arrowHead(ctx, e.points, 7);
    ctx.fillStyle = T.edge;
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  for (const [e, s] of lit) {
    ctx.beginPath();
    tracePath(ctx, e.points, smooth);
    ctx.strokeStyle = s === "trace" ? T.trace : T.selected;
    ctx.lineWidth = Math.max(2, 1.5 * px);
    ctx.stroke();
    ctx.beginPath();
    arrowHead(ctx, e.points, Math.max(7, 5 * px));
    ctx.fillStyle = ctx.strokeStyle;
    ctx.fill();
  }
  if (k >= 0.5) {
    ctx.font = T.font.edge;
    ctx.textAlign = "center";
    ctx.lineWidth = 3;
    ctx.strokeStyle = T.background;
    ctx.fillStyle = T.ink.edge;
    for (const e of edges) {
      if (!e.label || !Number.isFinite(e.lx)) continue;
      ctx.strokeText(e.label, e.lx, e.ly + 3.5);
      ctx.fillText(e.label, e.lx, e.ly + 3.5);
    }
  }

  // frame tabs
  if (showText) {
    for (const f of items) {
      if (f.kind !== "frame") continue;
      ctx.globalAlpha = dim(f.id) ? 0.35 : 1;
      ctx.font = T.font.frame;
      const tw = Math.min(f.w - 8, ctx.measureText(f.title).width + 38);
      const fx = tabX(f, tw + 4, ax0, k); // the tab's frame-relative geometry, at the kept x
      if (state.tabs) state.tabs.set(f.id, { x: fx, w: tw + 4 }); // where the window's hit() finds it
      ctx.beginPath();
      roundRect(ctx, fx + 4, f.y + 4, tw, FRAME.head - 10, 5);
      ctx.fillStyle = f.id === state.selected ? T.frameTabSelected : T.frameTab;
      ctx.fill();
      ctx.strokeStyle = f.id === state.selected ? T.selected : T.frameStroke;
      ctx.lineWidth = 1;
      ctx.stroke();
      ctx.beginPath();
      roundRect(ctx, fx + 8, f.y + 7, 14, 14, 3);
      ctx.fillStyle = T.frameToggleFill;
      ctx.fill();
      ctx.strokeStyle = T.toggleStroke;
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(fx + 11.5, f.y + 14);
      ctx.lineTo(fx + 18.5, f.y + 14);
      ctx.stroke();
      ctx.fillStyle = T.ink.frame;
      ctx.textAlign = "left";
      ctx.fillText(f.title, fx + 28, f.y + 18.5, tw - 30);
    }
    ctx.globalAlpha = 1;
  }

  // boxes
  if (tiny) {
    // far out: solid boxes, one fill per colour
    const byColor = new Map();
    for (const b of items) {
      if (b.kind === "frame") continue;
      const heat = b.kind === "node" || b.kind === "group" ? heatOf(state, b.id) : null; // the heat map, when on
      const c = heat || (b.kind === "group" ? T.groupFar : b.kind === "node" ? categoryColor(b.category) : b.kind === "input" ? T.inputStroke : b.kind === "output" ? T.outputStroke : T.outerStroke);
      if (!byColor.has(c)) byColor.set(c, []);
      byColor.get(c).push(b);
    }
    ctx.globalAlpha = trace ? 0.3 : 1;
    for (const [c, list] of byColor) {
      ctx.beginPath();
      for (const b of list) ctx.rect(b.x, b.y, b.w, b.h);
      ctx.fillStyle = c;
      ctx.fill();
    }
    ctx.globalAlpha = 1;
    const special = items.filter((b) => b.kind !== "frame" && (b.id === state.selected || errors.has(b.id) || (trace && !dim(b.id))));
    for (const b of special) {
      ctx.beginPath();
      ctx.rect(b.x, b.y, b.w, b.h);
      ctx.fillStyle = b.id === state.selected ? T.selected : errors.has(b.id) ? T.error : T.trace;
      ctx.fill();
    }
    return;
  }
  for (const b of items) {
    if (b.kind === "frame") continue;
    ctx.globalAlpha = dim(b.id) ? 0.25 : 1;
    if (b.kind === "group") paintGroup(ctx, b, showText, state, px);
    else if (b.kind === "node") paintNode(ctx, b, showText, state, px, errors.has(b.id));
    else paintIo(ctx, b, showText, state, px);
  }
  ctx.globalAlpha = 1;
  if (!showText && k >= FAR_LABELS_FROM) paintFarLabels(ctx, items, k, dim);
}

const FAR_LABELS_FROM = 0.14;
const FAR_LABEL_PX = 10;

/**
 * Zoomed out past readable box text: each box's first line (op type, group name) alone, at a
 * fixed on-screen size, where it fits in the box, so the overview still says what is where.
 */
function paintFarLabels(ctx, items, k, dim) {
  const T = theme();
  const size = FAR_LABEL_PX / k;
  ctx.textAlign = "center";
  ctx.lineWidth = 3 / k;
  ctx.strokeStyle = T.farLabelHalo;
  ctx.lineJoin = "round";
  for (const b of items) {
    if (b.kind !== "node" && b.kind !== "group") continue;
    const text = b.lines[0].text;
    ctx.font = farFont(b.kind === "group" ? T.font.group : T.font.op, size);
    if (ctx.measureText(text).width > b.w - 4 / k) continue;
    ctx.globalAlpha = dim(b.id) ? 0.3 : 1;
    ctx.fillStyle = b.kind === "group" ? T.ink.group : T.ink.op;
    const y = b.y + b.h / 2 + 0.36 * size;
    ctx.strokeText(text, b.x + b.w / 2, y);
    ctx.fillText(text, b.x + b.w / 2, y);
  }
  ctx.globalAlpha = 1;
}

const farFonts = new Map();
function farFont(font, size) {
  const key = `${font}|${size}`;
  let f = farFonts.get(key);
  if (!f) {
    if (farFonts.size > 64) farFonts.clear();
    f = font.replace(/[\d.]+px/, `${size.toFixed(2)}px`);
    farFonts.set(key, f);
  }
  return f;
}

function outline(ctx, b, r, state, px, error, trace) {
  const T = theme();
  ctx.beginPath();
  roundRect(ctx, b.x, b.y, b.w, b.h, r);
  if (b.id === state.selected) {
    ctx.strokeStyle = T.selected;
    ctx.lineWidth = Math.max(2.5, 2 * px);
  } else if (error) {
    ctx.strokeStyle = T.error;
    ctx.lineWidth = Math.max(2, 1.5 * px);
    ctx.setLineDash([5, 3]);
  } else if (state.ends && state.ends.has(b.id)) {
    ctx.strokeStyle = T.selected;
    ctx.lineWidth = Math.max(2, 1.5 * px);
    ctx.setLineDash([4, 2]);
  } else if (trace) {
    ctx.strokeStyle = T.trace;
    ctx.lineWidth = Math.max(2, 1.5 * px);
  } else if (state.marks && state.marks.get("diverges")?.has(b.id)) {
    ctx.strokeStyle = T.error;
    ctx.lineWidth = Math.max(4, 3 * px);
    ctx.setLineDash([8, 3]);
  } else if (state.marks && state.marks.get("diverges-within")?.has(b.id)) {
    ctx.strokeStyle = T.selected; // where a close output starts to move: a note, not an error
    ctx.lineWidth = Math.max(3, 2 * px);
    ctx.setLineDash([8, 3]);
  } else if (state.marks && (state.marks.get("diff-added")?.has(b.id) || state.marks.get("diff-changed")?.has(b.id))) {
    ctx.strokeStyle = state.marks.get("diff-added")?.has(b.id) ? T.diffAdded : T.diffChanged;
    ctx.lineWidth = Math.max(3, 2 * px);
  } else {
    ctx.strokeStyle = T.boxStroke;
    ctx.lineWidth = Math.max(1, 0.7 * px);
  }
  ctx.stroke();
  ctx.setLineDash([]);
}

function paintLines(ctx, b, lines, top) {
  const { padX, lineHeight, bodyPadY } = METRICS;
  const T = theme();
  let y = top + bodyPadY + lineHeight - 4;
  ctx.textAlign = "left";
  for (const line of lines) {
    ctx.font = T.font[line.font];
    ctx.fillStyle = T.ink[line.font] || T.ink.op;
    ctx.fillText(line.text, b.x + padX, b.y + y);
    y += lineHeight;
  }
}

/** The heat map's colour of a box, or null. */
function heatOf(state, id) {
  return heatColour(state.marks, id);
}

function isTraced(state, id) {
  const t = state.trace;
  return t && (t.up.has(id) || t.down.has(id) || t.focus === id);
}

function paintNode(ctx, b, showText, state, px, error) {
  const { headHeight } = METRICS;
  const T = theme();
  ctx.beginPath();
  roundRect(ctx, b.x, b.y, b.w, b.h, 5);
  ctx.fillStyle = T.boxFill;
  ctx.fill();
  ctx.beginPath();
  if (b.lines.length === 1) roundRect(ctx, b.x, b.y, b.w, b.h, 5);
  else topRound(ctx, b.x, b.y, b.w, headHeight, 5);
  ctx.fillStyle = heatOf(state, b.id) || T.catHead[b.category] || T.catHead.other;
  ctx.fill();
  if (showText) {
    ctx.font = T.font.op;
    ctx.fillStyle = T.ink.op;
    ctx.textAlign = "center";
    ctx.fillText(b.lines[0].text, b.x + b.w / 2, b.y + headHeight / 2 + 4.5);
    paintLines(ctx, b, b.lines.slice(1), headHeight);
  }
  outline(ctx, b, 5, state, px, error, isTraced(state, b.id));
}

function paintIo(ctx, b, showText, state, px) {
  const T = theme();
  const r = b.kind === "outer" ? 5 : Math.min(b.h / 2, 16);
  ctx.beginPath();
  roundRect(ctx, b.x, b.y, b.w, b.h, r);
  ctx.fillStyle = b.kind === "input" ? T.inputFill : b.kind === "output" ? T.outputFill : T.outerFill;
  ctx.fill();
  ctx.strokeStyle = b.id === state.selected ? T.selected : b.kind === "input" ? T.inputStroke : b.kind === "output" ? T.outputStroke : T.outerStroke;
  ctx.lineWidth = b.id === state.selected ? 2.5 : Math.max(1.3, 0.7 * px);
  if (b.kind === "outer") ctx.setLineDash([4, 3]);
  ctx.stroke();
  ctx.setLineDash([]);
  if (!showText) return;
  ctx.textAlign = "center";
  b.lines.forEach((line, i) => {
    ctx.font = T.font[line.font];
    ctx.fillStyle = T.ink[line.font] || T.ink.op;
    ctx.fillText(line.text, b.x + b.w / 2, b.y + (i === 0 ? 16 : 31 + (i - 1) * METRICS.lineHeight));
  });
}

function paintGroup(ctx, b, showText, state, px) {
  const { headHeight, stripe } = METRICS;
  const T = theme();
  ctx.beginPath();
  roundRect(ctx, b.x + 4, b.y + 4, b.w, b.h, 6);
  ctx.fillStyle = T.groupStack;
  ctx.fill();
  ctx.strokeStyle = T.boxStroke;
  ctx.lineWidth = Math.max(1, 0.7 * px);
  ctx.stroke();
  ctx.beginPath();
  roundRect(ctx, b.x, b.y, b.w, b.h, 6);
  ctx.fillStyle = T.boxFill;
  ctx.fill();
  ctx.beginPath();
  topRound(ctx, b.x, b.y, b.w, headHeight, 6);
  ctx.fillStyle = heatOf(state, b.id) || T.groupHead;
  ctx.fill();
  const total = Object.values(b.group.cats).reduce((a, c) => a + c, 0) || 1;
  let x = b.x;
  for (const cat of CATEGORY_ORDER) {
    const n = b.group.cats[cat];
    if (!n) continue;
    const w = (n / total) * b.w;
    ctx.fillStyle = categoryColor(cat);
    ctx.fillRect(x, b.y + headHeight, w, stripe);
    x += w;
  }
  if (showText) {
    ctx.font = T.font.group;
    ctx.fillStyle = T.ink.group;
    ctx.textAlign = "left";
    ctx.fillText(b.lines[0].text, b.x + 10, b.y + headHeight / 2 + 4.5);
    paintLines(ctx, b, b.lines.slice(1), headHeight + stripe);
    ctx.beginPath();
    roundRect(ctx, b.x + b.w - 22, b.y + 4, 16, 16, 4);
    ctx.fillStyle = T.toggleFill;
    ctx.fill();
    ctx.strokeStyle = T.toggleStroke;
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(b.x + b.w - 18, b.y + 12);
    ctx.lineTo(b.x + b.w - 10, b.y + 12);
    ctx.moveTo(b.x + b.w - 14, b.y + 8);
    ctx.lineTo(b.x + b.w - 14, b.y + 16);
    ctx.stroke();
  }
  outline(ctx, b, 6, state, px, false, isTraced(state, b.id));
}

function distToSegment(x, y, [ax, ay], [bx, by]) {
  const dx = bx - ax;
  const dy = by - ay;
  const len = dx * dx + dy * dy;
  const t = len ? Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / len)) : 0;
  return Math.hypot(x - (ax + t * dx), y - (ay + t * dy));
}

/** The line of box `b` at drawing y, or null. */
function lineAt(b, y) {
  const { headHeight, lineHeight, bodyPadY, stripe } = METRICS;
  const top = b.y + headHeight + (b.kind === "group" ? stripe : 0) + bodyPadY;
  const i = Math.floor((y - top) / lineHeight) + 1;
  return i >= 1 && i < b.lines.length ? b.lines[i] : null;
}

export class CanvasLayer {
  constructor(container, view) {
    /** frame id -> its tab as the last paint drew it (x, width), for hit()
     * @type {Map<string, {x: number, w: number}>} */
    this.tabs = new Map();
    this.container = container;
    this.view = view;
    this.el = document.createElement("canvas");
    this.el.className = "graph-canvas";
    this.el.hidden = true;
    this.scene = null;
    this.frame = 0;
  }

  show(scene) {
    this.scene = scene;
    indexScene(scene);
    if (!this.el.isConnected) this.container.append(this.el);
    this.el.hidden = false;
    this.paint();
  }

  hide() {
    this.el.hidden = true;
    this.hideTip();
  }

  clearScene() {
    this.scene = null;
    this.hide();
  }

  schedule() {
    if (!this.scene || this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.paint();
    });
  }

  paint() {
    if (!this.scene) return;
    const { w: cw, h: ch } = this.view.viewportSize();
    const rect = { width: cw, height: ch };
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(rect.width * dpr));
    const h = Math.max(1, Math.round(rect.height * dpr));
    if (this.el.width !== w || this.el.height !== h) {
      this.el.width = w;
      this.el.height = h;
    }
    const ctx = this.el.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const { x, y, k } = this.view.view;
    ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * x, dpr * y);
    const area = [-x / k, -y / k, (rect.width - x) / k, (rect.height - y) / k];
    const v = this.view;
    this.tabs.clear();
    paintScene(ctx, this.scene, k, area, {
      selected: v.selected, activeTensor: v.activeTensor, marks: v.marks, trace: v.trace, edgeState: (e) => v.edgeState(e),
      tabs: this.tabs,
    });
  }

  /** What is at drawing point (x, y): the same answers as GraphView.targetOf. */
  hit(x, y) {
    if (!this.scene) return null;
    const { grid, edgeGrid } = indexScene(this.scene);
    const near = grid.query(x - 1, y - 1, x + 1, y + 1).sort((a, b) => b._order - a._order);
    for (const b of near) {
      if (b.kind === "frame") continue;
      if (x < b.x || x > b.x + b.w || y < b.y || y > b.y + b.h) continue;
      if (b.kind === "group") {
        if (x >= b.x + b.w - 24 && y <= b.y + 22) return { kind: "toggle", id: b.id, item: b };
        const line = lineAt(b, y);
        // a reference line is its text (as in SVG): the rest of a group box selects the group
        if (line && line.ref && x <= b.x + METRICS.padX + measureText(line.text, FONTS[line.font])) return { kind: "ref", box: b.id, ref: line.ref, item: b };
        return { kind: "group", id: b.id, item: b };
      }
      const line = b.kind === "node" ? lineAt(b, y) : null;
      if (line && line.ref) return { kind: "ref", box: b.id, ref: line.ref, item: b };
      if (line && line.node) return { kind: "box", id: line.node, item: b, line };
      if (line && line.tensor) return { kind: "init", box: b.id, tensor: line.tensor, item: b };
      return { kind: "box", id: b.id, item: b };
    }
    for (const f of near) {
      if (f.kind !== "frame") continue;
      const tab = this.tabs.get(f.id) || { x: f.x, w: Math.min(f.w, 320) }; // as the last paint drew it
      if (x >= tab.x + 4 && x <= tab.x + 30 && y >= f.y + 4 && y <= f.y + FRAME.head - 6) return { kind: "toggle", id: f.id, item: f };
      if (x >= tab.x && x <= tab.x + tab.w && y >= f.y && y <= f.y + FRAME.head - 4) return { kind: "frame", id: f.id, item: f };
    }
    const tol = 5 / this.view.view.k;
    let best = null;
    for (const e of edgeGrid.query(x - tol, y - tol, x + tol, y + tol)) {
      for (let i = 1; i < e.points.length; i += 1) {
        const d = distToSegment(x, y, e.points[i - 1], e.points[i]);
        if (d < tol && (!best || d < best.d)) best = { d, e };
      }
    }
    return best ? { kind: "edge", tensor: best.e.tensor, edge: best.e } : null;
  }

  /** The pointer moved over the canvas: a pointer cursor and a tooltip over what it is on
   * (what SVG's <title>s give the SVG drawing). */
  hover(e) {
    if (!this.scene) return;
    const rect = this.el.getBoundingClientRect();
    const { x, y, k } = this.view.view;
    const t = this.hit((e.clientX - rect.left - x) / k, (e.clientY - rect.top - y) / k);
    this.el.style.cursor = t ? "pointer" : "";
    const text = t && !(e.buttons & 1) ? tooltipText(t) : "";
    if (!text) {
      this.hideTip();
      return;
    }
    if (!this.tip) {
      this.tip = document.createElement("div");
      this.tip.className = "graph-tip";
      this.tip.setAttribute("role", "tooltip");
      this.container.append(this.tip);
    }
    if (this.tip.textContent !== text) this.tip.textContent = text;
    this.tip.hidden = false;
    // beside the pointer, kept inside the drawing area
    const px = e.clientX - rect.left;
    const py = e.clientY - rect.top;
    const tw = this.tip.offsetWidth;
    const th = this.tip.offsetHeight;
    this.tip.style.left = `${Math.max(4, Math.min(px + 14, rect.width - tw - 4))}px`;
    this.tip.style.top = `${py + 18 + th > rect.height ? py - th - 10 : py + 18}px`;
  }

  hideTip() {
    if (this.tip) this.tip.hidden = true;
  }
}

function tooltipText(t) {
  if (t.edge) return edgeTitle(t.edge);
  const item = t.item;
  if (!item) return "";
  if (t.kind === "init") return `initializer ${t.tensor}`;
  if (t.line && t.line.title) return t.line.title;
  if (t.line && t.line.node) return `Constant · ${t.line.text}`;
  if (item.kind === "group") return groupTitle(item.group, true);
  if (item.kind === "frame") return groupTitle(item.group, false);
  if (item.kind === "node") return nodeTitle(item.box);
  return ioTitle(item.lines);
}
