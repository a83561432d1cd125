// Name-scope groups: the tree big graphs are drawn from. Pure functions, no DOM.
//
// A node's `scope` (graph JSON) lists its nested name scopes, outermost first
// (["/model", "/model/layers.3", "/model/layers.3/self_attn"]). Every scope becomes a group;
// then the tree is tidied so that each level is worth looking at:
//  - a group holding a single node is dissolved (the node takes its place);
//  - a group holding just one group is replaced by that group (no empty nesting);
//  - the root holding just one group (and the graph's inputs/outputs) opens it in place;
//  - a group with more than LIMITS.maxChildren children is cut into parts of consecutive
//    children (in graph order), so no layout ever gets more than that many boxes.
// Group ids are the scope paths (parts: "<path>~<k>"); the root group's id is "".
import { opCategory, shownBoxId } from "./graph-model.js";

export const LIMITS = {
  maxChildren: 600,     // more children than this and a group is cut into parts...
  partSize: 300,        // ...of this many children
  // a group of nodes alone (a graph without scopes: PaddlePaddle, TensorFlow, most of the
  // model zoo) is cut finer: sections of raw nodes cost dagre far more than group boxes, and
  // the first view waits only for the first section (scene.js firstViewLevels)
  flatMaxChildren: 100,
  flatPartSize: 120,
  flatFirstPart: 40,    // ...the first of them shorter: what the first screen shows, laid out first
  minGroupNodes: 2,     // smaller groups are dissolved
  smallGraph: 500,      // graphs up to this many nodes open fully expanded
  overviewBudget: 120,  // the overview expands a whole level while it stays under this many boxes
  overviewLevel: 12,    // ...and the level has at most this many groups (more: repeated blocks)
  overviewMax: 1000,    // ...and a dominant group while under this many
  partsBudget: 2000,    // parts of a graph without scopes open while under this many boxes
};

function makeGroup(id, parent, scope) {
  return { id, parent, scope, children: [], nodeCount: 0, first: Infinity, depth: 0, part: 0, cats: null, label: "" };
}

/** Order key of a child: io boxes of the graph around the nodes, the rest in graph order. */
function childOrder(h, child) {
  if (child.group) return child.group.first;
  return h.boxOrder.get(child.box);
}

/**
 * Build the group tree of a graph-model.js model.
 * Returns {root, groups: Map id -> group, parentOf: Map box id -> group, boxOrder}.
 * A group: {id, parent, label, children: [{group} | {box: id}], nodeCount, depth, part, cats}.
 */
export function buildHierarchy(model, limits = LIMITS) {
  const root = makeGroup("", null, "");
  const h = { root, groups: new Map([["", root]]), parentOf: new Map(), boxOrder: new Map(), limits, model };
  const byKey = new Map(); // parent id + "\n" + scope -> group
  const taken = new Set([""]);
  let index = 0;
  const io = [];
  for (const box of model.boxes.values()) {
    if (box.kind === "node") continue;
    io.push(box);
  }
  for (const box of io) {
    h.boxOrder.set(box.id, box.kind === "output" ? Number.MAX_SAFE_INTEGER : -1);
  }
  const scopes = effectiveScopes(model);
  h.adopted = new Set([...scopes.keys()].filter((id) => !(model.boxes.get(id).node.scope || []).length));
  const leaves = new Map(); // scope list joined -> its innermost group (nodes of a scope are many)
  for (const box of model.boxes.values()) {
    if (box.kind !== "node" || box.folded) continue; // folded Constants are drawn in their readers
    const order = model.nodeIndex ? model.nodeIndex.get(box.id) : index;
    index += 1;
    h.boxOrder.set(box.id, order);
    const list = scopes.get(box.id) || [];
    const joined = list.join("\u0001");
    const known = leaves.get(joined);
    if (known) {
      known.children.push({ box: box.id });
      continue;
    }
    let g = root;
    for (const scope of list) {
      if (typeof scope !== "string" || !scope) continue;
      const key = `${g.id}\n${scope}`;
      let child = byKey.get(key);
      if (!child) {
        let id = scope;
        for (let k = 2; taken.has(id); k += 1) id = `${scope}~${k}`;
        taken.add(id);
        child = makeGroup(id, g, scope);
        byKey.set(key, child);
        g.children.push({ group: child });
      }
      g = child;
    }
    leaves.set(joined, g);
    g.children.push({ box: box.id });
  }
  for (const box of io) root.children.push({ box: box.id });

  splitCalls(h, taken);
  tidy(h, root);
  // the root holding one group (next to the graph's inputs/outputs) opens it in place
  for (;;) {
    const groupsHere = root.children.filter((c) => c.group);
    const nodesHere = root.children.filter((c) => c.box && model.boxes.get(c.box).kind === "node");
    if (groupsHere.length !== 1 || nodesHere.length) break;
    const only = groupsHere[0].group;
    root.children = root.children.filter((c) => c.group !== only).concat(only.children);
    for (const c of only.children) if (c.group) c.group.parent = root;
  }
  sortChildren(h, root);
  split(h, root);
  index_(h, model, root, 0);
  return h;
}

/**
 * Each node's scope; a node without one (exporters leave weight Identity and Constant nodes
 * unscoped) takes the scope its consumers share, so it is drawn next to them.
 */
function effectiveScopes(model) {
  const scopes = new Map();
  const nodes = [...model.boxes.values()].filter((b) => b.kind === "node" && !b.folded);
  for (let i = nodes.length - 1; i >= 0; i -= 1) {
    const box = nodes[i];
    const own = box.node.scope;
    if (own && own.length) {
      scopes.set(box.id, own);
      continue;
    }
    // only nodes reading nothing but initializers (weights, Constant, Identity of a weight)
    const source = (box.node.inputs || []).every((t) => !t || (model.initializers.has(t) && !model.producer.has(t)));
    if (!source) continue;
    let common = null;
    for (const out of box.node.outputs || []) {
      for (const c of (model.consumers && model.consumers.get(out)) || []) {
        const s = scopes.get(c);
        if (!s) { common = []; break; } // read by a graph output or an unscoped node
        if (common === null) common = s;
        else {
          let k = 0;
          while (k < common.length && k < s.length && common[k] === s[k]) k += 1;
          common = common.slice(0, k);
        }
      }
      if (common && !common.length) break;
    }
    if (common && common.length) scopes.set(box.id, common);
  }
  return scopes;
}

// how many nodes a check that a group is left and re-entered may visit (past that: it is not)
const CALL_CHECK_STEPS = 20000;

/**
 * A module run twice gets one scope for both calls in a torch dynamo export (torchvision's one
 * `relu` after conv1 and again after the residual add): drawn as one group, the data would flow
 * out of it and back in, every block a loop. A group of nodes alone whose nodes reach each other
 * through nodes outside it is cut into its connected pieces, one per call, in graph order.
 */
function splitCalls(h, taken) {
  const model = h.model;
  for (const g of collectGroups(h.root)) {
    if (g.children.length < 2 || g.children.some((c) => !c.box)) continue;
    const inside = new Set(g.children.map((c) => c.box));
    if (!leftAndReentered(h, inside)) continue;
    const pieces = connectedPieces(model, inside);
    if (pieces.length < 2) continue;
    g.children = pieces[0].map((box) => ({ box }));
    const at = g.parent.children.findIndex((c) => c.group === g);
    const more = pieces.slice(1).map((piece, k) => {
      let id = `${g.scope}~call${k + 2}`;
      for (let j = 2; taken.has(id); j += 1) id = `${g.scope}~call${k + 2}.${j}`;
      taken.add(id);
      const call = makeGroup(id, g.parent, g.scope);
      call.call = k + 2;
      call.children = piece.map((box) => ({ box }));
      return { group: call };
    });
    g.call = 1;
    g.parent.children.splice(at + 1, 0, ...more);
  }
}

function collectGroups(g, out = []) {
  for (const c of g.children) {
    if (!c.group) continue;
    out.push(c.group);
    collectGroups(c.group, out);
  }
  return out;
}

/** Does a path from a node of `inside` leave it and come back? Only nodes before its last one
 * (in graph order: the nodes are sorted) can lead back. */
function leftAndReentered(h, inside) {
  const { model } = h;
  let last = -Infinity;
  for (const id of inside) last = Math.max(last, h.boxOrder.get(id));
  const readers = (id) => {
    const box = model.boxes.get(id);
    return box && box.node ? (box.node.outputs || []).flatMap((t) => (t && model.consumers.get(t)) || []) : [];
  };
  const stack = [];
  for (const id of inside) for (const r of readers(id)) if (!inside.has(r)) stack.push(r);
  const seen = new Set();
  while (stack.length && seen.size < CALL_CHECK_STEPS) {
    const id = stack.pop();
    if (seen.has(id)) continue;
    seen.add(id);
    if (!(h.boxOrder.get(id) < last)) continue;
    for (const r of readers(id)) {
      if (inside.has(r)) return true;
      stack.push(r);
    }
  }
  return false;
}

/** The nodes of `inside` in pieces joined by tensors passed between them, each in graph order,
 * the pieces by their first node. */
function connectedPieces(model, inside) {
  const ids = [...inside];
  const root = new Map(ids.map((id) => [id, id]));
  const find = (id) => {
    while (root.get(id) !== id) {
      root.set(id, root.get(root.get(id)));
      id = root.get(id);
    }
    return id;
  };
  for (const id of ids) {
    for (const t of model.boxes.get(id).node.outputs || []) {
      for (const r of (t && model.consumers.get(t)) || []) if (inside.has(r)) root.set(find(r), find(id));
    }
  }
  const pieces = new Map();
  for (const id of ids) {
    const k = find(id);
    if (!pieces.has(k)) pieces.set(k, []);
    pieces.get(k).push(id);
  }
  return [...pieces.values()];
}

/** Bottom-up: count nodes, dissolve single-node groups, skip one-group links. */
function tidy(h, g) {
  let count = 0;
  let first = Infinity;
  let firstAdopted = Infinity; // weights adopted into a scope say nothing of where it starts
  const out = [];
  for (const child of g.children) {
    if (child.box) {
      out.push(child);
      count += 1;
      const order = h.boxOrder.get(child.box);
      if (h.adopted.has(child.box)) firstAdopted = Math.min(firstAdopted, order);
      else if (order >= 0 && order < first) first = order;
      continue;
    }
    let c = child.group;
    tidy(h, c);
    while (c.children.length === 1 && c.children[0].group) {
      const inner = c.children[0].group;
      inner.parent = g;
      c = inner;
    }
    if (c.nodeCount < h.limits.minGroupNodes) {
      for (const cc of c.children) {
        out.push(cc);
        if (cc.group) cc.group.parent = g;
      }
    } else {
      c.parent = g;
      out.push({ group: c });
    }
    count += c.nodeCount;
    first = Math.min(first, c.first);
  }
  g.children = out;
  g.nodeCount = count;
  g.first = first === Infinity ? firstAdopted : first;
  sortChildren(h, g);
}

function sortChildren(h, g) {
  g.children.sort((a, b) => childOrder(h, a) - childOrder(h, b));
}

/**
 * Where to cut `list` (children in graph order) into runs of about partSize: where the fewest
 * tensors cross (between the blocks of a network, rarely inside one). Returns run starts.
 */
function cutPoints(h, list, partSize, maxChildren, firstSize = 0) {
  const n = list.length;
  const pos = new Map(); // node box id -> position of the child holding it
  const mark = (c, i) => {
    if (c.box) pos.set(c.box, i);
    else for (const cc of c.group.children) mark(cc, i);
  };
  list.forEach(mark);
  const spans = new Map(); // tensor -> [producer's position, farthest consumer's]
  for (const e of h.model.edges) {
    const a = pos.get(e.from);
    const b = pos.get(e.to);
    if (a === undefined || b === undefined || b <= a) continue;
    const cur = spans.get(e.tensor);
    if (!cur) spans.set(e.tensor, [a, b]); else if (b > cur[1]) cur[1] = b;
  }
  const diff = new Int32Array(n + 2);
  for (const [a, b] of spans.values()) { diff[a + 1] += 1; diff[b + 1] -= 1; } // crosses cuts a+1..b
  const cross = new Int32Array(n + 1);
  let run = 0;
  for (let i = 0; i <= n; i += 1) { run += diff[i]; cross[i] = run; }
  const starts = [0];
  let start = 0;
  // the first run may be shorter (firstSize): the first view waits for it alone
  for (let size = firstSize || partSize; n - start > Math.min(maxChildren, Math.floor(size * 1.5)); size = partSize) {
    const min = Math.ceil(size / 2);
    const max = Math.min(maxChildren, Math.floor(size * 1.5));
    let best = -1;
    for (let i = start + min; i <= Math.min(n - 1, start + max); i += 1) {
      const better = best < 0 || cross[i] < cross[best]
        || (cross[i] === cross[best] && Math.abs(i - start - size) < Math.abs(best - start - size));
      if (better) best = i;
    }
    starts.push(best);
    start = best;
  }
  return starts;
}

/** Cut groups with too many children into parts of consecutive children. */
function split(h, g) {
  for (const c of g.children) if (c.group) split(h, c.group);
  const flat = !g.children.some((c) => c.group);
  const maxChildren = flat ? h.limits.flatMaxChildren : h.limits.maxChildren;
  const partSize = flat ? h.limits.flatPartSize : h.limits.partSize;
  if (g.children.length <= maxChildren) return;
  // the graph's inputs/outputs stay on the root level itself
  const fixed = g.children.filter((c) => c.box && h.boxOrder.get(c.box) < 0);
  const tail = g.children.filter((c) => c.box && h.boxOrder.get(c.box) === Number.MAX_SAFE_INTEGER);
  const edge = new Set([...fixed, ...tail]);
  let rest = g.children.filter((c) => !edge.has(c));
  // a node reading only initializers (a weight's Constant, ConstantOfShape, Identity) goes with
  // its first reader: exporters often put all of them first, which would make parts of nothing else
  const key = new Map();
  for (const c of rest) {
    let k = childOrder(h, c);
    const node = c.box && h.model.boxes.get(c.box).node;
    if (node && (node.inputs || []).every((t) => !t || (h.model.initializers.has(t) && !h.model.producer.has(t)))) {
      let reader = Infinity;
      for (const out of node.outputs || []) {
        for (const r of h.model.consumers.get(out) || []) {
          const o = h.boxOrder.get(r);
          if (o >= 0 && o < reader) reader = o;
        }
      }
      if (reader < Infinity) k = reader - 0.5;
    }
    key.set(c, k);
  }
  rest.sort((a, b) => key.get(a) - key.get(b));
  let level = 0;
  while (rest.length > maxChildren) {
    level += 1;
    const parts = [];
    const starts = cutPoints(h, rest, partSize, maxChildren, flat && level === 1 ? h.limits.flatFirstPart : 0);
    starts.forEach((from, k) => {
      const slice = rest.slice(from, k + 1 < starts.length ? starts[k + 1] : rest.length);
      const id = `${g.id}~${level > 1 ? `${level}.` : ""}${k + 1}`;
      const part = makeGroup(id, g, "");
      part.part = k + 1;
      part.children = slice;
      for (const c of slice) if (c.group) c.group.parent = part;
      part.nodeCount = slice.reduce((n, c) => n + (c.group ? c.group.nodeCount : 1), 0);
      part.first = Math.min(...slice.map((c) => childOrder(h, c)));
      parts.push({ group: part });
    });
    rest = parts;
  }
  g.children = fixed.concat(rest, tail);
}

/** Top-down: ids into the map, depths, labels, parentOf for boxes, op-category counts. */
function index_(h, model, g, depth) {
  g.depth = depth;
  h.groups.set(g.id, g);
  const cats = {};
  const ops = {};
  for (const c of g.children) {
    if (c.box) {
      h.parentOf.set(c.box, g);
      const box = model.boxes.get(c.box);
      if (box.kind === "node") {
        cats[box.category] = (cats[box.category] || 0) + 1;
        ops[box.node.op_type] = (ops[box.node.op_type] || 0) + 1;
      }
    } else {
      const sub = c.group;
      sub.parent = g;
      index_(h, model, sub, depth + 1);
      for (const [k, v] of Object.entries(sub.cats)) cats[k] = (cats[k] || 0) + v;
      for (const [k, v] of Object.entries(sub.ops)) ops[k] = (ops[k] || 0) + v;
    }
  }
  g.cats = cats;
  g.ops = ops;
  g.label = groupLabel(g);
}

/** A group's name relative to its parent: "layers.3" for "/model/layers.3" under "/model". */
export function groupLabel(g) {
  if (g.part) {
    const base = g.parent ? (g.parent.id ? groupLabel(g.parent) : "graph") : "";
    return `${base} · part ${g.part}`;
  }
  let s = g.scope || g.id;
  let p = g.parent;
  while (p && !p.scope) p = p.parent; // parts have no scope of their own
  const ps = p ? p.scope : "";
  if (ps && s.startsWith(ps) && s.length > ps.length) s = s.slice(ps.length);
  s = s.replace(/^[/.:]+/, "");
  // a block of a Sequential says whose ("layer1.0", not "0"); a scope named as the one holding
  // it says which it is (torch's "model" > "model.model": LlamaForCausalLM > LlamaModel)
  if (/^\d+$/.test(s) && ps) s = `${ps.split(/[/.:]/).filter(Boolean).at(-1)}.${s}`;
  else if (p && s && s === groupLabel(p)) s = g.scope;
  const label = s || g.scope || g.id;
  return g.call ? `${label} (call ${g.call})` : label;
}

/** The groups holding `boxId`, outermost first (the root left out). */
export function ancestorsOf(h, boxId) {
  boxId = shownBoxId(h.model, boxId); // a folded Constant is where its first reader is
  const out = [];
  for (let g = h.parentOf.get(boxId); g && g.id !== ""; g = g.parent) out.push(g);
  return out.reverse();
}

/** Every group id but the root's. */
export function allGroupIds(h) {
  return [...h.groups.keys()].filter((id) => id !== "");
}

/** Whether a level's groups are mostly repeats of one block (layers): three or more with the
 * same op mix. Opened, twelve BERT layers are a page of frames each; closed, a column of
 * twelve readable boxes a reader goes down. */
function repeatedBlocks(groups) {
  const counts = new Map();
  for (const g of groups) {
    if (g.part) continue;
    const mix = Object.entries(g.ops).sort().join(";");
    counts.set(mix, (counts.get(mix) || 0) + 1);
  }
  return [...counts.values()].some((n) => n >= 3);
}

/** Whether the graph is built of repeated blocks: three or more groups of one op mix at a
 * level, following the group holding most of the nodes down from the root. */
function layered(h) {
  let g = h.root;
  for (let depth = 0; g && depth < 16; depth += 1) {
    const groups = g.children.filter((c) => c.group).map((c) => c.group);
    if (repeatedBlocks(groups)) return true;
    const big = groups.reduce((a, b) => (b.nodeCount > (a ? a.nodeCount : -1) ? b : a), null);
    g = big && big.nodeCount * 2 > g.nodeCount ? big : null;
  }
  return false;
}

/**
 * The collapsed overview a graph opens with: the root expanded; then, while the drawing stays
 * small, whole levels of a few groups (many groups, or repeats of one block, are layers: they
 * stay collapsed); a group holding most of what is on screen is opened alone.
 * A small graph opens with everything expanded (one of layers, only up to overviewBudget nodes).
 */
export function overviewExpanded(h, limits = h.limits) {
  const expanded = new Set([""]);
  // a small graph opens whole — unless it is built of layers and too big to read whole (a
  // 4-layer LLaMA's 343 nodes were a staircase of frames): then its parts, as a big one's
  const whole = h.root.nodeCount <= limits.overviewBudget || !layered(h);
  if (h.root.nodeCount <= limits.smallGraph && whole) {
    for (const id of h.groups.keys()) expanded.add(id);
    return expanded;
  }
  let visible = h.root.children.length;
  for (let round = 0; round < 64; round += 1) {
    const frontier = [];
    const walk = (g) => {
      for (const c of g.children) {
        if (!c.group) continue;
        if (expanded.has(c.group.id)) walk(c.group); else frontier.push(c.group);
      }
    };
    walk(h.root);
    if (!frontier.length) break;
    const all = visible - frontier.length + frontier.reduce((n, g) => n + g.children.length, 0);
    if (all <= limits.overviewBudget && frontier.length <= limits.overviewLevel && !repeatedBlocks(frontier)) {
      for (const g of frontier) expanded.add(g.id);
      visible = all;
      continue;
    }
    // parts are a cut for the layout's sake, not structure: show what they hold — in graph
    // order while the drawing stays under budget, the rest stays collapsed below (a 5,000-node
    // graph without scopes opens on its first sections' nodes, drawn as SVG boxes)
    if (frontier.every((g) => g.part)) {
      const budget = Math.max(limits.partsBudget, visible + frontier[0].children.length);
      let opened = 0;
      for (const g of [...frontier].sort((a, b) => a.first - b.first)) {
        if (visible - 1 + g.children.length > budget) break;
        expanded.add(g.id);
        visible += g.children.length - 1;
        opened += 1;
      }
      if (opened === frontier.length) continue;
      break;
    }
    frontier.sort((a, b) => b.nodeCount - a.nodeCount);
    const big = frontier[0];
    const onScreen = frontier.reduce((n, g) => n + g.nodeCount, 0);
    const next = visible - 1 + big.children.length;
    if (big.nodeCount >= 0.6 * onScreen && next <= limits.overviewMax) {
      expanded.add(big.id);
      visible = next;
      continue;
    }
    break;
  }
  return expanded;
}

/** Summary of a group for its box: "184 ops", the dominant op types, category shares. */
export function groupSummary(g) {
  const top = Object.entries(g.ops).sort((a, b) => b[1] - a[1]).slice(0, 3);
  return {
    count: g.nodeCount,
    top,
    cats: Object.entries(g.cats).sort((a, b) => b[1] - a[1]),
  };
}

export { opCategory };
