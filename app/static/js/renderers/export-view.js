// Export of the drawing as it is now (groups expanded or not) — the whole drawing, not just
// the part in the window: SVG (self-contained, its style inside) and PNG (drawn by the canvas
// renderer at up to 2x, smaller when the drawing is huge).
import { clear } from "../widgets/dom.js";
import { paintScene } from "./canvas-renderer.js";
import { drawGroupBox, drawIoBox, drawNodeBox, edgePath, svg } from "./renderer.js";
import { CATEGORY_ORDER, IMPLICIT_DASH, TEXT_KINDS, theme } from "./theme.js";
import { FRAME } from "../pipeline/scene.js";

// the drawing's rules of app.css, for an SVG file on its own: the theme's values written in
// (a file has no app.css to take var(--g-…) from)
function exportStyle(T) {
  const text = TEXT_KINDS.map((k) => `.t-${k}${k === "edge" ? ",.edge-label" : ""}{font:${T.font[k]};fill:${T.ink[k]}}`).join("");
  const heads = CATEGORY_ORDER.map((c) => `.cat-${c} .box-head{fill:${T.catHead[c]}}`).join("");
  return `
.box-body{fill:${T.boxFill}}.box-outline{fill:none;stroke:${T.boxStroke};stroke-width:1}.box-head{fill:${T.catHead.other}}
${heads}
.io .box-body{stroke-width:1.3}.io-input .box-body{fill:${T.inputFill};stroke:${T.inputStroke}}.io-output .box-body{fill:${T.outputFill};stroke:${T.outputStroke}}
.io-outer .box-body{fill:${T.outerFill};stroke:${T.outerStroke};stroke-dasharray:4 3}
.group-stack{fill:${T.groupStack};stroke:${T.boxStroke}}.group-head{fill:${T.groupHead}}.group-toggle rect{fill:${T.toggleFill};stroke:${T.toggleStroke}}.group-toggle path{stroke:${T.toggleIcon};stroke-width:1.4}
.frame-body{fill:${T.frameFill[1]};stroke:${T.frameStroke}}.frame.depth-2 .frame-body{fill:${T.frameFill[2]}}.frame.depth-3 .frame-body{fill:${T.frameFill[3]}}.frame.depth-4 .frame-body{fill:${T.frameFill[4]}}.frame.part .frame-body{stroke-dasharray:6 4}.frame-tab{fill:${T.frameTab};stroke:${T.frameStroke}}
.edge{fill:none;stroke:${T.edge};stroke-width:1.3}.edge.implicit{stroke-dasharray:${IMPLICIT_DASH.join(" ")}}.arrowhead{fill:${T.edge}}
.edge-label{stroke:${T.background};stroke-width:3px;stroke-linejoin:round;paint-order:stroke}
${text}
`;
}

function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function safeName(name) {
  return String(name || "graph").replace(/\.onnx$/i, "").replace(/[^\w.-]+/g, "_").slice(0, 80) || "graph";
}

/** The scene as a standalone SVG document (text). */
export function sceneToSvg(scene, title = "") {
  const pad = 16;
  const W = Math.ceil(scene.width + 2 * pad);
  const H = Math.ceil(scene.height + 2 * pad);
  const root = svg("svg", {
    xmlns: "http://www.w3.org/2000/svg", width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-family": "sans-serif",
  });
  if (title) root.append(svg("title", {}, title));
  const T = theme();
  root.append(svg("style", {}, exportStyle(T)));
  const defs = svg("defs");
  defs.append(svg("marker", {
    id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse",
  }, svg("path", { d: "M0,1L10,5L0,9Z", class: "arrowhead" })));
  root.append(defs);
  root.append(svg("rect", { width: W, height: H, fill: T.background }));
  const g = svg("g", { transform: `translate(${pad},${pad})` });
  for (const f of scene.frames) {
    const fg = svg("g", { class: `frame depth-${Math.min(f.depth || 1, 4)}${f.group.part ? " part" : ""}`, "data-group-id": f.id, transform: `translate(${f.x.toFixed(1)},${f.y.toFixed(1)})` });
    fg.append(svg("rect", { class: "frame-body", width: f.w, height: f.h, rx: 10 }));
    g.append(fg);
  }
  for (const e of scene.edges) {
    g.append(svg("path", { class: e.implicit ? "edge implicit" : "edge", d: edgePath(e.points), "marker-end": "url(#arrow)", "data-tensor": e.tensor }));
  }
  for (const e of scene.edges) {
    if (!e.label || !Number.isFinite(e.lx)) continue;
    g.append(svg("text", { class: "edge-label", x: e.lx.toFixed(1), y: (e.ly + 3.5).toFixed(1), "text-anchor": "middle" }, e.label));
  }
  for (const f of scene.frames) {
    const head = svg("g", { transform: `translate(${f.x.toFixed(1)},${f.y.toFixed(1)})` });
    head.append(svg("rect", { class: "frame-tab", x: 4, y: 4, width: Math.max(40, Math.min(f.w - 8, f.title.length * 7 + 16)), height: FRAME.head - 10, rx: 5 }));
    head.append(svg("text", { x: 12, y: 18.5, class: "t-frame" }, f.title));
    g.append(head);
  }
  for (const item of scene.groups) {
    const el = drawGroupBox(item);
    el.querySelector(".group-toggle")?.remove();
    el.setAttribute("transform", `translate(${item.x.toFixed(1)},${item.y.toFixed(1)})`);
    g.append(el);
  }
  for (const item of scene.boxes) {
    const el = item.kind === "node" ? drawNodeBox(item) : drawIoBox(item);
    el.setAttribute("transform", `translate(${item.x.toFixed(1)},${item.y.toFixed(1)})`);
    g.append(el);
  }
  root.append(g);
  const text = new XMLSerializer().serializeToString(root);
  clear(root);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${text}`;
}

export function exportSvg(scene, name) {
  const text = sceneToSvg(scene, name);
  download(new Blob([text], { type: "image/svg+xml" }), `${safeName(name)}.svg`);
}

const MAX_SIDE = 16_000;
const MAX_PIXELS = 100e6;

/** The scene as a PNG blob (2x when it fits, scaled down to stay within browser limits). */
export function sceneToPng(scene, state = {}) {
  const pad = 16;
  const W = scene.width + 2 * pad;
  const H = scene.height + 2 * pad;
  const s = Math.min(2, MAX_SIDE / W, MAX_SIDE / H, Math.sqrt(MAX_PIXELS / (W * H)));
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.floor(W * s));
  canvas.height = Math.max(1, Math.floor(H * s));
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = theme().background;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.setTransform(s, 0, 0, s, pad * s, pad * s);
  paintScene(ctx, scene, s, [-pad, -pad, scene.width + pad, scene.height + pad], state);
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("The PNG could not be made."))), "image/png"));
}

export async function exportPng(scene, name) {
  const blob = await sceneToPng(scene);
  download(blob, `${safeName(name)}.png`);
}
