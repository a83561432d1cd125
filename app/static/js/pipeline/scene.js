// What is on screen, and where: from the whole graph (graph-model.js), its group tree
// (grouping.js) and the set of expanded groups to a scene of absolutely placed boxes, group
// frames and edges. Pure functions, no DOM; layouts come from a `runLayout` callback (the cached
// worker pool of layout-client.js).
//
// Every expanded group (the root included) is a *level*, laid out on its own: its children are
// boxes (nodes, graph inputs/outputs), collapsed group boxes and frames of expanded groups
// (sized by their own level's layout). An edge between boxes of different groups is split at
// the group borders: inside a frame it runs from/to a *port* (a point on the frame's top or
// bottom border), in the level above from/to the frame. Levels are laid out bottom-up and each
// layout is cached by its structure (layout-client.js), so expanding one group lays out just
// that group and the levels holding it; the 240 identical layers of an LLM share one layout.
// Long fan-out edges become references (long-edges.js).
import { FONTS, METRICS, edgeLabelSize, measureBox, nodeLines, opCategory } from "./graph-model.js";
import { findChains, foldChain, linkPoints } from "./chains.js";
import { chooseReferences, ranksOf } from "./long-edges.js";
import { plural } from "../lib/format.js";

export const FRAME = { padX: 12, head: 30, padBottom: 12 };
export const LAYOUT_OPTIONS = {
  root: { nodesep: 28, edgesep: 14, ranksep: 34, marginx: 24, marginy: 24 },
  inner: { nodesep: 24, edgesep: 12, ranksep: 30, marginx: 4, marginy: 2 },
};
const MAX_LABELLED_EDGES = 1500;
const MAX_REF_LINES = 3;
const PORT = 1; // ports are 1×1 nodes

const itemKey = {
  box: (id) => `b${id}`,
  group: (id) => `g${id}`,
};

/**
 * Plan the drawing: visible items per expanded group, edges split at group borders, long
 * edges chosen as references, item sizes. Layouts come later (layoutScene).
 * @param {import("./graph-model.js").GraphModel} model graph-model.js model
 * @param {ReturnType<typeof import("./grouping.js").buildHierarchy>} h grouping.js hierarchy
 * @param {Set<string>} expanded ids of expanded groups ("" is the root, always expanded)
 * @param {{names?: boolean, attrs?: boolean}} options what node boxes show
 */
export function planScene(model, h, expanded, options = {}) {
  const open = new Set();
  const repOf = new Map(); // id of a group inside a collapsed one -> the collapsed group
  const markRep = (g, rep) => {
    repOf.set(g.id, rep);
    for (const c of g.children) if (c.group) markRep(c.group, rep);
  };
  const walk = (g) => {
    open.add(g.id);
    for (const c of g.children) {
      if (!c.group) continue;
      if (expanded.has(c.group.id)) walk(c.group); else markRep(c.group, c.group);
    }
  };
  walk(h.root);

  /** The key of the item showing box `id`: the box itself, or the collapsed group holding it. */
  const visOf = (id) => {
    const p = h.parentOf.get(id);
    if (!p) return null;
    if (open.has(p.id)) return itemKey.box(id);
    return itemKey.group(repOf.get(p.id).id);
  };
  const containerOf = (key) => (key[0] === "b" ? h.parentOf.get(key.slice(1)) : h.groups.get(key.slice(1)).parent);

  const levels = new Map();
  for (const id of open) {
    const g = h.groups.get(id);
    const items = g.children.map((c) => (c.box
      ? { key: itemKey.box(c.box), kind: "box", id: c.box }
      : { key: itemKey.group(c.group.id), kind: open.has(c.group.id) ? "frame" : "group", id: c.group.id, group: c.group }));
    levels.set(id, { id, group: g, items, edges: [], edgeIndex: new Map(), inPorts: [], outPorts: [] });
  }

  const levelEdge = (g, from, to, tensor) => {
    const L = levels.get(g.id);
    const key = `${from}\u0000${to}\u0000${tensor}`;
    let e = L.edgeIndex.get(key);
    if (!e) {
      e = { from, to, tensor, users: [], ref: false, live: true, edge: null };
      L.edgeIndex.set(key, e);
      L.edges.push(e);
    }
    return e;
  };

  // visible edges, each the chain of level edges it is drawn with
  const visible = [];
  const seen = new Set();
  for (const e of model.edges) {
    const vf = visOf(e.from);
    const vt = visOf(e.to);
    if (!vf || !vt || vf === vt) continue;
    const vkey = `${vf}\u0000${vt}\u0000${e.tensor}`;
    if (seen.has(vkey)) continue;
    seen.add(vkey);
    const t = e.tensor;
    let a = containerOf(vf);
    let b = containerOf(vt);
    let from = vf;
    let to = vt;
    const up = [];
    const down = [];
    while (a.depth > b.depth) { up.push(levelEdge(a, from, `o${t}`, t)); from = itemKey.group(a.id); a = a.parent; }
    while (b.depth > a.depth) { down.push(levelEdge(b, `i${t}`, to, t)); to = itemKey.group(b.id); b = b.parent; }
    while (a !== b) {
      up.push(levelEdge(a, from, `o${t}`, t)); from = itemKey.group(a.id); a = a.parent;
      down.push(levelEdge(b, `i${t}`, to, t)); to = itemKey.group(b.id); b = b.parent;
    }
    const main = levelEdge(a, from, to, t);
    if (!main.edge) main.edge = e;
    const segs = up.concat([main], down.reverse());
    const index = visible.length;
    for (const s of segs) s.users.push(index);
    visible.push({ id: `v${index}`, from: vf.slice(1), to: vt.slice(1), fromKey: vf, toKey: vt, tensor: t, segs, main, ref: false, edge: e });
  }

  // long edges -> references, decided top-down (a reference above needs no line below)
  const order = [...levels.values()].sort((x, y) => x.group.depth - y.group.depth);
  for (const L of order) {
    const live = L.edges.filter((le) => le.users.some((u) => !visible[u].ref));
    const idx = new Map();
    const ins = [];
    const outs = [];
    for (const le of live) {
      if (le.from[0] === "i" && !ins.includes(le.from)) ins.push(le.from);
      if (le.to[0] === "o" && !outs.includes(le.to)) outs.push(le.to);
    }
    ins.forEach((k, i) => idx.set(k, i));
    L.items.forEach((it, i) => idx.set(it.key, ins.length + i));
    outs.forEach((k, i) => idx.set(k, ins.length + L.items.length + i));
    const n = ins.length + L.items.length + outs.length;
    const es = live.map((le) => ({ f: idx.get(le.from), t: idx.get(le.to), tensor: le.tensor, candidate: le.to[0] !== "o", port: le.from[0] === "i" }));
    // lengths as the layout will make them (levelInput: ports on the top/bottom rank)
    const first = ins.length;
    const itemEdges = es.filter((e) => e.f >= first && e.t >= first && e.f < first + L.items.length && e.t < first + L.items.length)
      .map((e) => ({ f: e.f - first, t: e.t - first }));
    const rank = ranksOf(L.items.length, itemEdges);
    let maxRank = 0;
    for (const r of rank) if (r > maxRank) maxRank = r;
    for (const e of es) {
      if (e.port) e.span = Math.max(1, rank[e.t - first]);
      else if (!e.candidate) e.span = Math.max(1, maxRank - rank[e.f - first] + 1);
      else e.span = Math.abs(rank[e.t - first] - rank[e.f - first]);
    }
    const refs = chooseReferences(n, es);
    for (const i of refs) {
      live[i].ref = true;
      for (const u of live[i].users) visible[u].ref = true;
    }
  }

  // what is left: live level edges, ports, references per item
  const refsIn = new Map(); // item key -> [{tensor, from}]
  const refsOut = new Map(); // item key -> Map tensor -> uses
  for (const ve of visible) {
    if (!ve.ref) continue;
    let list = refsIn.get(ve.toKey);
    if (!list) refsIn.set(ve.toKey, list = []);
    if (!list.some((r) => r.tensor === ve.tensor)) list.push({ tensor: ve.tensor, from: ve.from, fromKey: ve.fromKey });
    let outs = refsOut.get(ve.fromKey);
    if (!outs) refsOut.set(ve.fromKey, outs = new Map());
    outs.set(ve.tensor, (outs.get(ve.tensor) || 0) + 1);
  }
  for (const L of levels.values()) {
    // a producer whose uses all became references would float free in the layout (dagre puts
    // loose parts at the bottom): an unseen edge keeps it next to its first consumer
    L.anchors = [];
    const anchored = new Set(); // producers (and item pairs) already held in place
    for (const le of L.edges) {
      if (le.from[0] !== "i" && le.to[0] !== "o" && le.users.some((u) => !visible[u].ref)) {
        anchored.add(le.from);
        anchored.add(`${le.from}\u0000${le.to}`);
      }
    }
    for (const le of L.edges) {
      if (le.users.some((u) => !visible[u].ref) || le.from[0] === "i" || le.to[0] === "o") continue;
      if (anchored.has(le.from)) continue; // it has lines of its own
      anchored.add(le.from);
      L.anchors.push([le.from, le.to]);
    }
    L.edges = L.edges.filter((le) => (le.live = le.users.some((u) => !visible[u].ref)));
    for (const le of L.edges) {
      if (le.from[0] === "i" && !L.inPorts.includes(le.from)) L.inPorts.push(le.from);
      if (le.to[0] === "o" && !L.outPorts.includes(le.to)) L.outPorts.push(le.to);
    }
    L.labelled = L.edges.length <= MAX_LABELLED_EDGES;
  }

  const plan = {
    model, h, expanded, options, open, levels, visible, refsIn, refsOut, visOf, containerOf,
    root: levels.get(""),
  };
  for (const L of levels.values()) for (const it of L.items) if (it.kind !== "frame") sizeItem(plan, it);
  return plan;
}

function itemLabel(plan, key) {
  if (key[0] === "g") {
    const g = plan.h.groups.get(key.slice(1));
    return g ? g.label : key.slice(1);
  }
  const box = plan.model.boxes.get(key.slice(1));
  if (!box) return key.slice(1);
  if (box.kind === "node") return box.node.op_type;
  if (box.kind === "input") return "input";
  return box.name;
}

/** The lines a reference adds to an item's box. */
function referenceLines(plan, key) {
  const lines = [];
  const ins = plan.refsIn.get(key) || [];
  for (const r of ins.slice(0, ins.length > MAX_REF_LINES + 1 ? MAX_REF_LINES : ins.length)) {
    lines.push({ text: `↳ ${r.tensor} · ${itemLabel(plan, r.fromKey)}`, font: "ref", ref: { tensor: r.tensor, from: r.from, kind: "in" } });
  }
  if (ins.length > MAX_REF_LINES + 1) {
    lines.push({ text: `↳ +${ins.length - MAX_REF_LINES} more from far away`, font: "ref", ref: { kind: "more", tensors: ins.slice(MAX_REF_LINES).map((r) => r.tensor) } });
  }
  const outs = [...(plan.refsOut.get(key) || new Map()).entries()];
  for (const [tensor] of outs.slice(0, 2)) {
    const uses = (plan.model.consumers.get(tensor) || []).length;
    lines.push({ text: `⇢ ${tensor} → ${uses} uses`, font: "refOut", ref: { tensor, kind: "out" } });
  }
  if (outs.length > 2) lines.push({ text: `⇢ +${outs.length - 2} more tensors used far away`, font: "refOut", ref: { kind: "more-out", tensors: outs.slice(2).map((o) => o[0]) } });
  return lines;
}

/** How telling an op type is about what a group does (for the summary on its box). */
function opWeight(op) {
  const c = opCategory(op);
  if (op === "Constant" || op === "Identity") return 0.05;
  return { conv: 4, matmul: 4, norm: 3, activation: 2, pool: 2, control: 3, quant: 2, custom: 2, math: 1, shape: 0.3 }[c] || 0.5;
}

/** Lines, width and height of a box or collapsed group item. */
function sizeItem(plan, it) {
  const { model, options } = plan;
  const extra = referenceLines(plan, it.key);
  let kind;
  let lines;
  if (it.kind === "group") {
    const g = it.group;
    const top = Object.entries(g.ops).sort((a, b) => opWeight(b[0]) * b[1] - opWeight(a[0]) * a[1]).slice(0, 2).map(([op, n]) => `${n} ${op}`);
    lines = [{ text: g.label, font: "group" }, { text: `${plural(g.nodeCount, "op")} · ${top.join(", ")}`, font: "count" }, ...extra];
    kind = "group";
  } else {
    const box = model.boxes.get(it.id);
    if (box.kind === "node") {
      lines = nodeLines(model, box, options, extra);
      kind = "node";
    } else {
      lines = box.lines.concat(extra);
      kind = "io";
    }
    it.box = box;
  }
  const size = measureBox(kind, lines, model.measure);
  it.width = size.width;
  it.height = size.height;
  it.lines = size.lines;
}

/** The worker message and cache key of one level, its frames' sizes known. */
function levelInput(plan, L, sizes) {
  const isRoot = L.id === "";
  for (const it of L.items) {
    if (it.kind !== "frame") continue;
    const s = sizes.get(it.id);
    it.width = s.width;
    it.height = s.height;
  }
  const itemIdx = new Map(L.items.map((it, i) => [it.key, i]));
  const ends = L.edges.map((le) => ({ f: le.from[0] === "i" ? -1 : itemIdx.get(le.from), t: le.to[0] === "o" ? -1 : itemIdx.get(le.to) }));
  // the tensors between a group and another item run as one line ("3 tensors"): a dense net
  // cut into parts has hundreds of them, and dagre gives each its own label and route
  const leader = new Int32Array(L.edges.length);
  const bundle = new Int32Array(L.edges.length);
  const pairs = new Map();
  L.edges.forEach((le, j) => {
    leader[j] = j;
    if (le.from[0] === "i" || le.to[0] === "o" || (le.from[0] !== "g" && le.to[0] !== "g")) return;
    const k = `${le.from}\u0000${le.to}`;
    const first = pairs.get(k);
    if (first === undefined) pairs.set(k, j); else leader[j] = first;
  });
  for (let j = 0; j < leader.length; j += 1) bundle[leader[j]] += 1;
  L.leader = leader;
  L.edges.forEach((le, j) => {
    le.label = "";
    le.labelWidth = 0;
    le.labelHeight = 0;
    if (!L.labelled || leader[j] !== j || le.from[0] === "i" || le.to[0] === "o") return;
    if (bundle[j] > 1) {
      le.label = `${bundle[j]} tensors`;
      le.labelWidth = Math.ceil(plan.model.measure(le.label, FONTS.edge)) + 6;
      le.labelHeight = METRICS.edgeLabelHeight;
    } else if (le.edge) {
      edgeLabelSize(plan.model, le.edge);
      le.label = le.edge.label;
      le.labelWidth = le.edge.labelWidth;
      le.labelHeight = le.edge.labelHeight;
    }
  });

  // chains of groups: one dagre node each, laid out as a column here
  const chainOf = new Map(); // item index -> {chain, pos}
  L.chains = findChains(L.items, ends).map((members) => {
    const fold = foldChain(members.map((i) => ({ w: L.items[i].width, h: L.items[i].height })));
    const chain = { members, fold };
    members.forEach((i, pos) => chainOf.set(i, { chain, pos }));
    return chain;
  });
  L.chainOf = chainOf;

  const nodes = [];
  const index = new Map(); // key -> dagre node index
  const push = (key, w, h) => { index.set(key, nodes.length / 2); nodes.push(Math.round(w), Math.round(h)); };
  for (const p of L.inPorts) push(p, PORT, PORT);
  L.items.forEach((it, i) => {
    const c = chainOf.get(i);
    if (!c) push(it.key, it.width, it.height);
    else if (c.pos === 0) push(it.key, c.chain.fold.width, c.chain.fold.height);
  });
  for (const c of L.chains) {
    const head = index.get(L.items[c.members[0]].key);
    for (const i of c.members) index.set(L.items[i].key, head);
  }
  for (const p of L.outPorts) push(p, PORT, PORT);

  // ports sit on the top/bottom rank: their edges get the length of the longest path to them
  const itemEdges = [];
  ends.forEach((e) => { if (e.f >= 0 && e.t >= 0) itemEdges.push(e); });
  const rank = ranksOf(L.items.length, itemEdges);
  let maxRank = 0;
  for (const r of rank) if (r > maxRank) maxRank = r;
  const edges = [];
  const edgeMap = new Int32Array(L.edges.length).fill(-1);
  L.edges.forEach((le, j) => {
    const { f: fi, t: ti } = ends[j];
    const cf = fi >= 0 && chainOf.get(fi);
    const ct = ti >= 0 && chainOf.get(ti);
    if (cf && ct && cf.chain === ct.chain) return; // a link inside a chain
    if (leader[j] !== j) { // one line for the bundle
      edgeMap[j] = edgeMap[leader[j]];
      return;
    }
    let minlen = 1;
    if (fi < 0) minlen = Math.max(1, rank[ti]);
    else if (ti < 0) minlen = Math.max(1, maxRank - rank[fi] + 1);
    edgeMap[j] = edges.length / 5;
    edges.push(index.get(le.from), index.get(le.to), le.labelWidth, le.labelHeight, minlen);
  });
  for (const [from, to] of L.anchors || []) {
    const f = index.get(from);
    const t = index.get(to);
    if (f !== undefined && t !== undefined && f !== t) edges.push(f, t, 0, 0, 1);
  }
  const opts = isRoot ? "root" : "inner";
  const key = `${opts}|${nodes.join(",")}|${edges.join(",")}`;
  return { key, opts: LAYOUT_OPTIONS[opts], nodes, edges, index, edgeMap };
}

/** Header text of an expanded group's frame. */
export function frameTitle(g) {
  return `${g.label} · ${plural(g.nodeCount, "op")}`;
}

/**
 * Lay out every level, deepest first, levels of one depth at the same time.
 * runLayout(input) -> Promise of {width, height, xy, edges, labels}; onProgress(done, total).
 * @param {ReturnType<typeof planScene>} plan
 * @param {(input: any) => Promise<any>} runLayout
 * @param {(done: number, total: number) => void} [onProgress]
 */
export async function layoutScene(plan, runLayout, onProgress = () => {}, { only = null } = {}) {
  const results = new Map();
  const sizes = new Map();
  const pending = [...plan.levels.values()];
  const total = pending.length;
  let done = 0;
  const byDepth = new Map();
  for (const L of pending) {
    const d = L.group.depth;
    if (!byDepth.has(d)) byDepth.set(d, []);
    byDepth.get(d).push(L);
  }
  const depths = [...byDepth.keys()].sort((a, b) => b - a);
  for (const d of depths) {
    await Promise.all(byDepth.get(d).map(async (L) => {
      const input = levelInput(plan, L, sizes);
      // a level left out of a first view gets a column for now (the next pass lays it out)
      const result = only && !only.has(L.id) ? columnLayout(input) : await runLayout(input);
      results.set(L.id, { input, result });
      if (L.id !== "") {
        const titleWidth = plan.model.measure(frameTitle(L.group), FONTS.frame) + 44;
        sizes.set(L.id, {
          width: Math.ceil(Math.max(result.width + 2 * FRAME.padX, titleWidth)),
          height: Math.ceil(FRAME.head + result.height + FRAME.padBottom),
        });
      }
      done += 1;
      onProgress(done, total);
    }));
  }
  return results;
}

/**
 * A stand-in layout of a level: its items in one column, in graph order, edges straight —
 * what a level below the first screen shows for the moment its real layout takes (the shape
 * of layout-worker.js's answer).
 */
export function columnLayout(input) {
  const { nodes, edges, opts } = input;
  const n = nodes.length / 2;
  let width = 0;
  for (let i = 0; i < n; i += 1) width = Math.max(width, nodes[2 * i]);
  const xy = new Float64Array(2 * n);
  let y = opts.marginy;
  for (let i = 0; i < n; i += 1) {
    xy[2 * i] = opts.marginx + width / 2;
    xy[2 * i + 1] = y + nodes[2 * i + 1] / 2;
    y += nodes[2 * i + 1] + opts.ranksep;
  }
  const m = edges.length / 5;
  const lines = [];
  for (let j = 0; j < m; j += 1) {
    const f = edges[5 * j];
    const t = edges[5 * j + 1];
    lines.push(Float64Array.of(xy[2 * f], xy[2 * f + 1] + nodes[2 * f + 1] / 2, xy[2 * t], xy[2 * t + 1] - nodes[2 * t + 1] / 2));
  }
  return {
    width: width + 2 * opts.marginx,
    height: Math.max(0, y - opts.ranksep) + opts.marginy,
    xy, edges: lines, labels: new Float64Array(2 * m).fill(NaN), ms: 0,
  };
}

/**
 * The levels a first view needs laid out before it is drawn, when the rest is worth waiting
 * for apart: those holding the graph's first node (where a reader starts: the view opens
 * there), and every small one. null when everything is quick to lay out at once.
 * @param {ReturnType<typeof planScene>} plan
 * @param {ReturnType<typeof import("./grouping.js").buildHierarchy>} h
 */
export function firstViewLevels(plan, h, limits = PROGRESSIVE) {
  let first = null;
  let order = Infinity;
  for (const [id, o] of h.boxOrder) {
    if (o >= 0 && o < order && plan.visOf(id)) { order = o; first = id; }
  }
  if (first === null) return null;
  const only = new Set([""]);
  for (let g = h.parentOf.get(first); g; g = g.parent) only.add(g.id);
  let later = 0;
  for (const L of plan.levels.values()) {
    if (only.has(L.id)) continue;
    if (L.items.length <= limits.small) only.add(L.id);
    else later += L.items.length;
  }
  return later >= limits.worthSplitting ? only : null;
}

// first views: levels up to `small` items are laid out with the first screen's; the rest
// waits for a second pass when it holds at least `worthSplitting` items
export const PROGRESSIVE = { small: 24, worthSplitting: 60 };

export function composeScene(plan, results) {
  const scene = {
    width: 0, height: 0, boxes: [], groups: [], frames: [], edges: [], byKey: new Map(), plan,
  };
  const joins = new Map(); // level id -> Map port key -> [x, y] on the frame border
  const place = (L, ox, oy, frame) => {
    const { input, result } = results.get(L.id);
    const at = (key) => {
      const i = input.index.get(key);
      return [ox + result.xy[2 * i], oy + result.xy[2 * i + 1]];
    };
    if (frame) {
      const j = new Map();
      for (const p of L.inPorts) j.set(p, [at(p)[0], frame.y]);
      for (const p of L.outPorts) j.set(p, [at(p)[0], frame.y + frame.h]);
      joins.set(L.id, j);
    }
    const rects = new Map(); // item index -> {x, y, w, h}
    L.items.forEach((it, i) => {
      const c = L.chainOf.get(i);
      let x;
      let y;
      if (c) {
        const [cx, cy] = at(it.key);
        const { fold } = c.chain;
        c.chain.ox = cx - fold.width / 2;
        c.chain.oy = cy - fold.height / 2;
        x = c.chain.ox + fold.cells[c.pos].x;
        y = c.chain.oy + fold.cells[c.pos].y;
      } else {
        const [cx, cy] = at(it.key);
        x = cx - it.width / 2;
        y = cy - it.height / 2;
      }
      rects.set(i, { x, y, w: it.width, h: it.height });
      if (it.kind === "box") {
        const b = { id: it.id, kind: it.box.kind, x, y, w: it.width, h: it.height, lines: it.lines, category: it.box.category, box: it.box, key: it.key };
        scene.boxes.push(b);
        scene.byKey.set(it.key, b);
      } else if (it.kind === "group") {
        const g = { id: it.id, kind: "group", x, y, w: it.width, h: it.height, lines: it.lines, group: it.group, key: it.key };
        scene.groups.push(g);
        scene.byKey.set(it.key, g);
      } else {
        const inner = results.get(it.id).result;
        const f = { id: it.id, kind: "frame", x, y, w: it.width, h: it.height, group: it.group, title: frameTitle(it.group), key: it.key, depth: it.group.depth };
        scene.frames.push(f);
        scene.byKey.set(it.key, f);
        place(plan.levels.get(it.id), x + (it.width - inner.width) / 2, y + FRAME.head, f);
      }
    });
    const itemIdx = new Map(L.items.map((it, i) => [it.key, i]));
    const parallel = new Map(); // chain link a->b: how many drawn so far
    L.edges.forEach((le, j) => {
      const d = input.edgeMap[j];
      le.lx = undefined;
      le.ly = undefined;
      if (L.leader[j] !== j) { // a bundle's member: the leader's line (the leader comes first)
        le.points = L.edges[L.leader[j]].points.map((p) => p.slice());
        return;
      }
      if (d < 0) { // a link inside a chain
        const a = rects.get(itemIdx.get(le.from));
        const b = rects.get(itemIdx.get(le.to));
        const pk = `${le.from}\u0000${le.to}`;
        const k = parallel.get(pk) || 0;
        parallel.set(pk, k + 1);
        const dx = k ? (k % 2 ? 1 : -1) * Math.ceil(k / 2) * 8 : 0;
        const shift = (r) => ({ ...r, x: r.x + dx });
        le.points = linkPoints(shift(a), shift(b));
        if (le.label) {
          const [p0, p1] = le.points;
          le.lx = p0[0] + 6 + le.labelWidth / 2;
          le.ly = (p0[1] + p1[1]) / 2;
        }
        return;
      }
      const pts = result.edges[d];
      const points = [];
      for (let k = 0; k < pts.length; k += 2) points.push([ox + pts[k], oy + pts[k + 1]]);
      // the ends at a chain's member, not at the chain's block
      const fi = itemIdx.get(le.from);
      const ti = itemIdx.get(le.to);
      const cf = fi !== undefined && L.chainOf.get(fi);
      if (cf) { // out of the chain's last box: down to below the chain's block first
        const r = rects.get(fi);
        const bottom = cf.chain.oy + cf.chain.fold.height;
        points.splice(0, 1, [r.x + r.w / 2, r.y + r.h], [r.x + r.w / 2, bottom + 10]);
      }
      const ct = ti !== undefined && L.chainOf.get(ti);
      if (ct) { // into the chain's first box: from above it
        const r = rects.get(ti);
        points.splice(points.length - 1, 1, [r.x + r.w / 2, ct.chain.oy - 10], [r.x + r.w / 2, r.y]);
      }
      le.points = points;
      if (le.label && result.labels) {
        const lx = result.labels[2 * d];
        const ly = result.labels[2 * d + 1];
        if (Number.isFinite(lx)) { le.lx = ox + lx; le.ly = oy + ly; }
      }
    });
  };
  const root = results.get("").result;
  scene.width = root.width;
  scene.height = root.height;
  place(plan.root, 0, 0, null);

  // meet at the frame borders: inside, from/to the port; outside, from/to the same point
  for (const L of plan.levels.values()) {
    const own = joins.get(L.id);
    for (const le of L.edges) {
      if (!le.points || !le.points.length) continue;
      const straight = le.points.length === 2;
      if (own && le.from[0] === "i") le.points[0] = own.get(le.from).slice();
      if (own && le.to[0] === "o") le.points[le.points.length - 1] = own.get(le.to).slice();
      if (le.to[0] === "g") {
        const j = joins.get(le.to.slice(1));
        const p = j && j.get(`i${le.tensor}`);
        if (p) le.points[le.points.length - 1] = p.slice();
      }
      if (le.from[0] === "g") {
        const j = joins.get(le.from.slice(1));
        const p = j && j.get(`o${le.tensor}`);
        if (p) le.points[0] = p.slice();
      }
      if (straight) {
        // a straight link (a chain's) moved to a port: down, across, down
        const [[x0, y0], [x1, y1]] = le.points;
        if (Math.abs(x0 - x1) > 2 && y1 > y0) {
          const my = (y0 + y1) / 2;
          le.points = [[x0, y0], [x0, my], [x1, my], [x1, y1]];
        }
      }
    }
  }
  const labelled = new Set();
  for (const ve of plan.visible) {
    if (ve.ref) continue;
    const points = [];
    for (const s of ve.segs) {
      for (const p of s.points || []) {
        const last = points[points.length - 1];
        if (!last || Math.abs(last[0] - p[0]) > 0.01 || Math.abs(last[1] - p[1]) > 0.01) points.push(p);
      }
    }
    const m = ve.main;
    const label = m.label && !labelled.has(m) && Number.isFinite(m.lx) ? m.label : "";
    if (label) labelled.add(m);
    scene.edges.push({
      id: ve.id, from: ve.from, to: ve.to, fromKey: ve.fromKey, toKey: ve.toKey, tensor: ve.tensor, points,
      label, lx: m.lx, ly: m.ly, implicit: !!(ve.edge && ve.edge.implicit),
      ...(label && m.edge && m.edge.fullLabel ? { fullLabel: m.edge.fullLabel } : {}),
    });
  }
  return scene;
}

export { METRICS };
