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
// Edges to and from a group's ports count with the length the layout gives them (ports sit on
// the top and bottom ranks of the frame); a port's fan-out is judged by rule 1 alone (a mask
// entering an encoder frame and read by its 24 layers).

export const LONG_EDGES = { fanout: 6, minSpan: 3, perItem: 3, minBudget: 400 };

/**
 * Ranks of `n` nodes as a layered layout would give them: longest path in index order (edges
 * going back in index order are ignored, so cycles between groups do no harm), then a node fed
 * by nothing (a Constant, a weight) moved down next to its first reader, as the layout does.
 * edges: [{f, t}] by node index.
 */
export function ranksOf(n, edges) {
  const rank = new Int32Array(n);
  const incoming = Array.from({ length: n }, () => []);
  const outgoing = Array.from({ length: n }, () => []);
  for (const e of edges) {
    if (e.f < e.t) {
      incoming[e.t].push(e.f);
      outgoing[e.f].push(e.t);
    }
  }
  for (let i = 0; i < n; i += 1) {
    let r = 0;
    for (const j of incoming[i]) if (rank[j] + 1 > r) r = rank[j] + 1;
    rank[i] = r;
  }
  for (let i = n - 1; i >= 0; i -= 1) {
    if (incoming[i].length || !outgoing[i].length) continue;
    let r = Infinity;
    for (const j of outgoing[i]) if (rank[j] - 1 < r) r = rank[j] - 1;
    if (r > rank[i]) rank[i] = r;
  }
  return rank;
}

/**
 * Choose the edges to draw as references.
 * @param {number} n nodes of the level (ports included)
 * @param {Array<{f: number, t: number, tensor: string, span: number, port: boolean, candidate: boolean}>}
 *   edges by node index; span: its length in ranks as the layout will make it (an edge from a
 *   port starts on the top rank, one to a port ends on the bottom rank); port: from a port
 * @returns {Set<number>} indexes into `edges`
 */
export function chooseReferences(n, edges, limits = LONG_EDGES) {
  const refs = new Set();
  const fan = new Map(); // producer index + tensor -> distinct consumers
  const far = new Map(); // ... one of them far away
  for (const e of edges) {
    if (!e.candidate) continue;
    const key = `${e.f}\u0000${e.tensor}`;
    let set = fan.get(key);
    if (!set) fan.set(key, set = new Set());
    set.add(e.t);
    // a wide fan-out is all references or all lines (the mask is not a line into the first
    // layers and a reference into the others); from a port: by fan-out alone
    if (e.port || e.span >= limits.minSpan) far.set(key, true);
  }
  let dummies = 0;
  edges.forEach((e, i) => {
    const key = `${e.f}\u0000${e.tensor}`;
    if (e.candidate && fan.get(key).size >= limits.fanout && far.get(key)) refs.add(i);
    else dummies += Math.max(0, e.span - 1);
  });
  const budget = Math.max(limits.minBudget, limits.perItem * n);
  if (dummies > budget) {
    const order = edges.map((e, i) => i).filter((i) => !refs.has(i) && edges[i].span > 1);
    order.sort((a, b) => edges[b].span - edges[a].span);
    for (const i of order) {
      if (dummies <= budget) break;
      refs.add(i);
      dummies -= edges[i].span - 1;
    }
  }
  return refs;
}
