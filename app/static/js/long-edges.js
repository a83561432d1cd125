// Long fan-out edges: which edges of a level are drawn as references instead of lines.
//
// A layered layout gives an edge spanning k ranks k-1 dummy nodes. In deep models a few
// tensors (attention mask, rotary tables, shared constants) feed every layer, and those edges
// alone made dagre lay out tens of thousands of dummies (52 s for 246 layer boxes). Such an
// edge is drawn as a reference instead: a line "↳ tensor · producer" inside the consumer's box
// (click: jump to the producer) and "⇢ tensor → N uses" in the producer's (click: the tensor).
//
// Per level, in this order:
//  1. the edges of a tensor feeding >= FANOUT items of the level, one of them spanning
//     >= MIN_SPAN ranks;
//  2. then the longest remaining edges until the dummy count fits the level's budget
//     (max(MIN_BUDGET, PER_ITEM x items)): small graphs keep every line, big ones stay fast.
// An edge into a group's frame port fans out inside the frame: it becomes a reference there by
// rule 1 only (a mask entering an encoder frame and read by its 24 layers); edges to a frame's
// out-port are always lines.

export const LONG_EDGES = { fanout: 6, minSpan: 3, perItem: 3, minBudget: 400 };

/**
 * Longest-path ranks of `n` nodes in index order (edges going back in index order are ignored,
 * so cycles between groups do no harm). edges: [{f, t}] by node index.
 */
export function ranksOf(n, edges, fixed = null) {
  const rank = new Int32Array(n);
  const incoming = Array.from({ length: n }, () => []);
  for (const e of edges) if (e.f < e.t) incoming[e.t].push(e.f);
  for (let i = 0; i < n; i += 1) {
    let r = 0;
    for (const j of incoming[i]) if (rank[j] + 1 > r) r = rank[j] + 1;
    rank[i] = fixed && fixed[i] !== undefined ? Math.max(r, fixed[i]) : r;
  }
  return rank;
}

/**
 * Choose the edges to draw as references.
 * @param {number} n nodes of the level (ports included)
 * @param {Array<{f: number, t: number, tensor: string, candidate: boolean, port: boolean}>} edges
 *   candidate: may become a reference (not an edge to a port); port: from a port
 * @param {Int32Array} rank ranks (ranksOf)
 * @returns {Set<number>} indexes into `edges`
 */
export function chooseReferences(n, edges, rank, limits = LONG_EDGES) {
  const refs = new Set();
  const fan = new Map(); // producer index + tensor -> distinct consumers
  for (const e of edges) {
    if (!e.candidate) continue;
    const key = `${e.f}\u0000${e.tensor}`;
    let set = fan.get(key);
    if (!set) fan.set(key, set = new Set());
    set.add(e.t);
  }
  const span = (e) => Math.abs(rank[e.t] - rank[e.f]);
  // a wide fan-out is all references or all lines (the mask is not a line into the first layers
  // and a reference into the others); from a port: by fan-out alone (a port's rank says little)
  const far = new Map();
  for (const e of edges) {
    if (!e.candidate) continue;
    const key = `${e.f}\u0000${e.tensor}`;
    if (e.port || span(e) >= limits.minSpan) far.set(key, true);
  }
  let dummies = 0;
  edges.forEach((e, i) => {
    const key = `${e.f}\u0000${e.tensor}`;
    if (e.candidate && fan.get(key).size >= limits.fanout && far.get(key)) refs.add(i);
    else dummies += Math.max(0, span(e) - 1);
  });
  const budget = Math.max(limits.minBudget, limits.perItem * n);
  if (dummies > budget) {
    const order = edges.map((e, i) => i).filter((i) => edges[i].candidate && !edges[i].port && !refs.has(i) && span(edges[i]) > 1);
    order.sort((a, b) => span(edges[b]) - span(edges[a]));
    for (const i of order) {
      if (dummies <= budget) break;
      refs.add(i);
      dummies -= span(edges[i]) - 1;
    }
  }
  return refs;
}
