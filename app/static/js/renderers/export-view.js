// Export of the drawing as it is now (groups expanded or not) — the whole drawing, not just
// the part in the window: SVG (self-contained, its style inside) and PNG (drawn by the canvas
// renderer at up to 2x, smaller when the drawing is huge).
import { clear } from "../widgets/dom.js";
import { paintScene } from "./canvas-renderer.js";
import { drawGroupBox, drawIoBox, drawNodeBox, edgePath, svg } from "./renderer.js";
import { FONTS } from "../pipeline/graph-model.js";
import { FRAME } from "../pipeline/scene.js";

// the drawing's rules of app.css, for an SVG file on its own
const STYLE = `
.box-body{fill:#fff}.box-outline{fill:none;stroke:#c9cfd8;stroke-width:1}.box-head{fill:#eef1f5}
.t-op,.t-group,.t-ioName{fill:#1d2733}.t-name,.t-count,.t-ioType{fill:#4b5563}.t-init,.t-attr{fill:#5b6675}
.t-more,.t-sub,.t-caption{fill:#7b8794}.t-ref{fill:#1d4ed8}.t-refOut{fill:#7c3aed}
.cat-conv .box-head{fill:#dbe7fe}.cat-matmul .box-head{fill:#e3e3fd}.cat-activation .box-head{fill:#fde1df}
.cat-norm .box-head{fill:#d9f3e3}.cat-pool .box-head{fill:#d8f0f8}.cat-control .box-head{fill:#fdefc7}
.cat-quant .box-head{fill:#efe3fc}.cat-shape .box-head{fill:#e9edf2}.cat-math .box-head{fill:#fde8d4}
.cat-custom .box-head{fill:#fce4f1}.cat-other .box-head{fill:#eef1f5}
.io .box-body{stroke-width:1.3}.io-input .box-body{fill:#e9f8f0;stroke:#5cc28d}.io-output .box-body{fill:#fff3e6;stroke:#ee9a4d}
.io-outer .box-body{fill:#f7f8fa;stroke:#9aa5b4;stroke-dasharray:4 3}
.group-stack{fill:#eef1f6;stroke:#c9cfd8}.group-head{fill:#e4e9f2}.group-toggle rect{fill:#fff;stroke:#8a94a3}.group-toggle path{stroke:#4b5563;stroke-width:1.4}
.frame-body{fill:rgba(226,232,240,.45);stroke:#c3ccd8}.frame.depth-2 .frame-body,.frame.depth-4 .frame-body{fill:rgba(255,255,255,.7)}.frame.depth-3 .frame-body{fill:rgba(224,231,255,.35)}.frame.part .frame-body{stroke-dasharray:6 4}.frame-tab{fill:#fff;stroke:#c3ccd8}.t-frame{fill:#334155}
.edge{fill:none;stroke:#a3adba;stroke-width:1.3}.arrowhead{fill:#a3adba}
.edge-label{fill:#56616f;stroke:#fbfcfd;stroke-width:3px;stroke-linejoin:round;paint-order:stroke}
`;

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
  const fonts = Object.entries(FONTS).map(([k, f]) => `.t-${k}${k === "edge" ? ",.edge-label" : ""}{font:${f}}`).join("");
  root.append(svg("style", {}, STYLE + fonts));
  const defs = svg("defs");
  defs.append(svg("marker", {
    id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse",
  }, svg("path", { d: "M0,1L10,5L0,9Z", class: "arrowhead" })));
  root.append(defs);
  root.append(svg("rect", { width: W, height: H, fill: "#fbfcfd" }));
  const g = svg("g", { transform: `translate(${pad},${pad})` });
  for (const f of scene.frames) {
    const fg = svg("g", { class: `frame depth-${Math.min(f.depth || 1, 4)}${f.group.part ? " part" : ""}`, "data-group-id": f.id, transform: `translate(${f.x.toFixed(1)},${f.y.toFixed(1)})` });
    fg.append(svg("rect", { class: "frame-body", width: f.w, height: f.h, rx: 10 }));
    g.append(fg);
  }
  for (const e of scene.edges) {
    g.append(svg("path", { class: "edge", d: edgePath(e.points), "marker-end": "url(#arrow)", "data-tensor": e.tensor }));
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
  ctx.fillStyle = "#fbfcfd";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.setTransform(s, 0, 0, s, pad * s, pad * s);
  paintScene(ctx, scene, s, [-pad, -pad, scene.width + pad, scene.height + pad], state);
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("The PNG could not be made."))), "image/png"));
}

export async function exportPng(scene, name) {
  const blob = await sceneToPng(scene);
  download(blob, `${safeName(name)}.png`);
}
