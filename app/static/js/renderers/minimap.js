// The overview in the corner: the whole drawing in miniature (boxes in their category colour,
// or the heat map's when it is on; expanded groups as outlines) and the window's place in it;
// click or drag to move there.
import { categoryColor, heatColour, theme } from "./theme.js";

// The miniature takes the drawing's shape within these bounds: a column of layers gets a
// tall, narrow map rather than a sliver in a wide one.
const MAX_WIDTH = 200;
const MAX_HEIGHT = 200;
const MIN_SIDE = 72;
// up to this many boxes the miniature is drawn with the drawing (visible from its first
// frame); more are drawn when the browser is idle (a thousand boxes ~0.1 s in software)
const DRAW_AT_ONCE = 800;

export class Minimap {
  constructor(canvas, view) {
    this.el = canvas;
    this.view = view; // GraphView
    this.scene = null;
    this.base = document.createElement("canvas");
    this.frame = 0;
    this.recolouring = false;
    let dragging = false;
    const move = (e) => {
      if (!this.scene) return;
      const rect = this.el.getBoundingClientRect();
      const { s, ox, oy } = this.geometry;
      const x = (e.clientX - rect.left - ox) / s;
      const y = (e.clientY - rect.top - oy) / s;
      const { w, h } = this.view.viewportSize();
      const { k } = this.view.view;
      this.view.setView(w / 2 - x * k, h / 2 - y * k, k);
    };
    canvas.addEventListener("pointerdown", (e) => { dragging = true; canvas.setPointerCapture(e.pointerId); move(e); });
    canvas.addEventListener("pointermove", (e) => { if (dragging) move(e); });
    canvas.addEventListener("pointerup", (e) => { dragging = false; canvas.releasePointerCapture(e.pointerId); });
  }

  /** A new scene: its miniature is drawn at once when small, else when the browser is idle
   * (not in the way of the drawing's first frame). */
  setScene(scene) {
    this.scene = scene;
    this.baseReady = false;
    const draw = () => {
      if (this.scene !== scene) return;
      this.drawBase(scene);
      this.baseReady = true;
      this.update();
    };
    if (scene.boxes.length + scene.groups.length <= DRAW_AT_ONCE) {
      draw();
      return;
    }
    const idle = window.requestIdleCallback || ((fn) => setTimeout(fn, 50));
    idle(draw, { timeout: 400 });
  }

  drawBase(scene) {
    const dpr = window.devicePixelRatio || 1;
    const sw = Math.max(1, scene.width);
    const sh = Math.max(1, scene.height);
    const fit = Math.min(MAX_WIDTH / sw, MAX_HEIGHT / sh);
    const width = Math.round(Math.max(MIN_SIDE, sw * fit));
    const height = Math.round(Math.max(MIN_SIDE, sh * fit));
    const s = Math.min((width - 8) / sw, (height - 8) / sh);
    this.geometry = { s, ox: (width - sw * s) / 2, oy: (height - sh * s) / 2, width, height };
    this.base.width = width * dpr;
    this.base.height = height * dpr;
    const ctx = this.base.getContext("2d");
    const T = theme();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = T.minimapFill;
    ctx.fillRect(0, 0, width, height);
    ctx.translate(this.geometry.ox, this.geometry.oy);
    ctx.scale(s, s);
    ctx.lineWidth = 1 / s;
    ctx.strokeStyle = T.frameStroke;
    for (const f of scene.frames) ctx.strokeRect(f.x, f.y, f.w, f.h);
    const min = 1.2 / s; // at least a pixel
    const byColor = new Map();
    for (const b of [...scene.groups, ...scene.boxes]) {
      const c = (b.kind === "node" || b.kind === "group" ? heatColour(this.view.marks, b.id) : null)
        || (b.kind === "group" ? T.groupFar : b.kind === "node" ? categoryColor(b.category) : T.inputStroke);
      if (!byColor.has(c)) byColor.set(c, []);
      byColor.get(c).push(b);
    }
    for (const [c, list] of byColor) {
      ctx.beginPath();
      for (const b of list) ctx.rect(b.x, b.y, Math.max(min, b.w), Math.max(min, b.h));
      ctx.fillStyle = c;
      ctx.fill();
    }
    this.el.width = width * dpr;
    this.el.height = height * dpr;
    this.el.style.width = `${width}px`;
    this.el.style.height = `${height}px`;
  }

  /** The boxes' colours changed (the heat map on, off or recounted): the miniature again. */
  recolour() {
    if (this.recolouring) return;
    this.recolouring = true; // once for the heat map's several classes, marked one after another
    queueMicrotask(() => {
      this.recolouring = false;
      if (this.scene) this.setScene(this.scene);
    });
  }

  /** The window moved: redraw its rectangle (once per frame). */
  update() {
    if (!this.scene || !this.baseReady || this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.paint();
    });
  }

  paint() {
    const { w, h } = this.view.viewportSize();
    const { x, y, k } = this.view.view;
    const fits = x >= -1 && y >= -1 && x + this.scene.width * k <= w + 1 && y + this.scene.height * k <= h + 1;
    this.el.hidden = fits;
    if (fits) return;
    const dpr = window.devicePixelRatio || 1;
    const ctx = this.el.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.base, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const { s, ox, oy } = this.geometry;
    const rx = ox + (-x / k) * s;
    const ry = oy + (-y / k) * s;
    const T = theme();
    ctx.fillStyle = T.minimapWindowFill;
    ctx.strokeStyle = T.minimapWindow;
    ctx.lineWidth = 1.5;
    const rw = Math.max(3, (w / k) * s);
    const rh = Math.max(3, (h / k) * s);
    ctx.fillRect(rx, ry, rw, rh);
    ctx.strokeRect(rx, ry, rw, rh);
  }
}
