// Graph layout off the main thread: a classic Web Worker running dagre (layered, top to
// bottom). The page starts it as layout-worker.js?dagre=<url of dagre's UMD build>, or as the
// front-end build's copy of it, which has dagre's build in front of it.
//
// In:  {seq, opts: {nodesep, edgesep, ranksep, marginx, marginy},
//       nodes: [w0, h0, w1, h1, ...], edges: [from, to, labelWidth, labelHeight, minlen, ...]}
//       (nodes and edges by index: scene.js sends one level of the drawing at a time)
// Out: {seq, ok: true, ms, width, height, xy: Float64Array [x0, y0, ...] (node centres),
//       edges: [Float64Array [x, y, x, y, ...] per edge], labels: Float64Array [x, y per edge]}
//      {seq, ok: false, error}
/* global dagre */
"use strict";

// the built worker (static/dist) carries dagre in front of this script: no second fetch
if (typeof dagre === "undefined") importScripts(new URLSearchParams(self.location.search).get("dagre"));

function layout(input) {
  const n = input.nodes.length / 2;
  const m = input.edges.length / 5;
  if (n === 0) return { width: 0, height: 0, xy: new Float64Array(0), edges: [], labels: new Float64Array(0) };
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", ...input.opts });
  g.setDefaultEdgeLabel(() => ({}));
  for (let i = 0; i < n; i += 1) g.setNode(String(i), { width: input.nodes[2 * i], height: input.nodes[2 * i + 1] });
  const E = input.edges;
  for (let j = 0; j < m; j += 1) {
    g.setEdge(String(E[5 * j]), String(E[5 * j + 1]), {
      width: E[5 * j + 2], height: E[5 * j + 3], minlen: E[5 * j + 4], labelpos: "r", labeloffset: 6,
    }, String(j));
  }
  dagre.layout(g);

  const xy = new Float64Array(2 * n);
  for (let i = 0; i < n; i += 1) {
    const node = g.node(String(i));
    xy[2 * i] = node.x;
    xy[2 * i + 1] = node.y;
  }
  const edges = new Array(m);
  const labels = new Float64Array(2 * m).fill(NaN);
  for (const ref of g.edges()) {
    const e = g.edge(ref);
    const j = Number(ref.name);
    const pts = new Float64Array(2 * e.points.length);
    e.points.forEach((p, k) => { pts[2 * k] = p.x; pts[2 * k + 1] = p.y; });
    edges[j] = pts;
    if (E[5 * j + 2] > 0 && Number.isFinite(e.x)) { labels[2 * j] = e.x; labels[2 * j + 1] = e.y; }
  }
  const { width, height } = g.graph();
  return { width, height, xy, edges, labels };
}

// A first layout runs dagre's code cold (interpreted): 3-5x slower than once the engine has
// compiled it (a 70-box layout: 130-160 ms cold, 45-65 ms after this warm-up). Throwaway
// layouts while the page still loads its graph get that done: three small steps from the
// worker's start, each a task of its own (the first, compiling, 40-70 ms; the others a few
// ms), so that a small graph's layout, asked ~100 ms after the worker starts, finds it free.
// (Twelve steps, or one 40-node layout, were still running when it asked: 50-90 ms late.)
const WARM_UP_STEPS = 3;
let warmUpLeft = WARM_UP_STEPS;
const warmUpQueue = new MessageChannel();
warmUpQueue.port1.onmessage = () => {
  if (warmUpLeft <= 0) return;
  warmUpLeft -= 1;
  const n = 6 + (warmUpLeft % 4) * 3;
  const nodes = [];
  const edges = [];
  for (let i = 0; i < n; i += 1) nodes.push(80 + (i % 5) * 20, 24 + (i % 3) * 15);
  for (let i = 1; i < n; i += 1) {
    edges.push(Math.floor((i - 1) / 2), i, 40, 13, 1);
    if (i % 4 === 0) edges.push(i - 3, i, 0, 0, 1);
  }
  layout({ opts: { nodesep: 24, edgesep: 12, ranksep: 36, marginx: 8, marginy: 8 }, nodes, edges });
  warmUpQueue.port2.postMessage(0);
};
warmUpQueue.port2.postMessage(0);

self.onmessage = (event) => {
  warmUpLeft = 0;
  const { seq } = event.data;
  try {
    const started = performance.now();
    const result = layout(event.data);
    const transfer = [result.xy.buffer, result.labels.buffer, ...result.edges.map((p) => p.buffer)];
    self.postMessage({ seq, ok: true, ms: performance.now() - started, ...result }, transfer);
  } catch (err) {
    self.postMessage({ seq, ok: false, error: String((err && err.message) || err) });
  }
};
