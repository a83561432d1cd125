// Graph layout off the main thread: a classic Web Worker running dagre (layered, top to
// bottom). The page starts it as layout-worker.js?dagre=<url of dagre's UMD build>.
//
// In:  {seq, nodes: [{id, width, height}], edges: [{id, from, to, width, height}]}
// Out: {seq, ok: true, width, height, nodes: {id: {x, y}}, edges: {id: {points, x, y}}}
//      {seq, ok: false, error}
/* global dagre */
"use strict";

const params = new URLSearchParams(self.location.search);
importScripts(params.get("dagre"));

function layout(input) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, edgesep: 14, ranksep: 34, marginx: 24, marginy: 24 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of input.nodes) g.setNode(n.id, { width: n.width, height: n.height });
  for (const e of input.edges) {
    g.setEdge(e.from, e.to, { width: e.width || 0, height: e.height || 0, labelpos: "r", labeloffset: 6 }, e.id);
  }
  dagre.layout(g);

  const nodes = {};
  for (const id of g.nodes()) {
    const n = g.node(id);
    nodes[id] = { x: n.x, y: n.y };
  }
  const edges = {};
  for (const ref of g.edges()) {
    const e = g.edge(ref);
    edges[ref.name] = { points: e.points.map((p) => [p.x, p.y]), x: e.x, y: e.y };
  }
  const { width, height } = g.graph();
  return { width, height, nodes, edges };
}

self.onmessage = (event) => {
  const { seq } = event.data;
  try {
    const started = performance.now();
    const result = layout(event.data);
    self.postMessage({ seq, ok: true, ms: performance.now() - started, ...result });
  } catch (err) {
    self.postMessage({ seq, ok: false, error: String((err && err.message) || err) });
  }
};
