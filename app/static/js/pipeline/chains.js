// Chains of groups (layer 0 -> layer 1 -> ... -> layer 239): laid out here, not by dagre.
//
// A chain is a run of group items of one level where each passes its tensors to the next and
// to nothing else of the level (references aside, see long-edges.js). dagre sees the whole
// chain as one node; the chain itself is one column, top to bottom in reading order (a BERT's
// 12 layers under each other, as a reader goes through them: columns side by side, tried
// before, made the drawing fit the window but read like a table, out of order).

export const CHAINS = { minLength: 6, rowGap: 42 };

/**
 * Find the chains of one level.
 * @param {Array} items the level's items ({kind: "box" | "group" | "frame"})
 * @param {Array<{f: number, t: number}>} edges live edges by item index; -1 for a port
 * @returns {Array<number[]>} each chain as item indexes, in order
 */
export function findChains(items, edges, limits = CHAINS) {
  const n = items.length;
  const preds = Array.from({ length: n }, () => new Set());
  const succs = Array.from({ length: n }, () => new Set());
  for (const e of edges) {
    if (e.t >= 0) preds[e.t].add(e.f); // -1: from a port
    if (e.f >= 0) succs[e.f].add(e.t);
  }
  const chainable = (i) => items[i].kind !== "box";
  const next = new Int32Array(n).fill(-1);
  const hasPrev = new Uint8Array(n);
  for (let i = 0; i < n; i += 1) {
    if (!chainable(i) || succs[i].size !== 1) continue;
    const j = [...succs[i]][0];
    if (j < 0 || j === i || !chainable(j) || preds[j].size !== 1) continue;
    next[i] = j;
    hasPrev[j] = 1;
  }
  const chains = [];
  for (let i = 0; i < n; i += 1) {
    if (hasPrev[i] || next[i] < 0) continue;
    const chain = [i];
    const seen = new Set(chain);
    for (let j = next[i]; j >= 0 && !seen.has(j); j = next[j]) { chain.push(j); seen.add(j); }
    if (chain.length >= limits.minLength) chains.push(chain);
  }
  return chains;
}

/**
 * The column of a chain of boxes with these sizes, each centred on it. Returns {width, height,
 * cells: [{x, y}] (top-left of each box)}.
 */
export function foldChain(sizes, limits = CHAINS) {
  const width = Math.max(...sizes.map((s) => s.w));
  const cells = [];
  let y = 0;
  for (const s of sizes) {
    cells.push({ x: (width - s.w) / 2, y });
    y += s.h + limits.rowGap;
  }
  return { width, height: y - limits.rowGap, cells };
}

/** Points of the link from chain box a to the next one b (absolute boxes {x, y, w, h}). */
export function linkPoints(a, b) {
  return [[a.x + a.w / 2, a.y + a.h], [b.x + b.w / 2, b.y]];
}
