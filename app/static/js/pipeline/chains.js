// Chains of groups (layer 0 -> layer 1 -> ... -> layer 239): laid out here, not by dagre.
//
// A chain is a run of group items of one level where each passes its tensors to the next and
// to nothing else of the level (references aside, see long-edges.js). dagre sees the whole
// chain as one node; the chain itself is cut into columns (top to bottom, one column after
// the other) whose count makes the block about as wide as the window, so 240 layer boxes read
// like a table instead of a 40,000-pixel column. An edge from one column to the next runs
// below the first column, up the gap between them and into the top of the next.

export const CHAINS = { minLength: 6, aspect: 1.6, rowGap: 42, colGap: 64 };

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
 * Columns for a chain of boxes with these sizes: columns filled up to a height, that height
 * chosen so the block is nearest the aspect ratio (a group expanded in the chain makes its
 * column tall; the next column starts after it). Returns {width, height, cells: [{x, y}]
 * (top-left of each box), columns: [{x, width, first, last, height}], colGap}.
 */
export function foldChain(sizes, labelWidths = [], limits = CHAINS) {
  const n = sizes.length;
  const overflow = Math.max(0, ...sizes.map((s, i) => 6 + (labelWidths[i] || 0) - s.w / 2));
  const colGap = Math.max(limits.colGap, overflow + 24);
  const pack = (limit) => {
    const columns = [];
    let x = 0;
    let height = 0;
    let col = null;
    for (let i = 0; i < n; i += 1) {
      const h = sizes[i].h;
      if (col && col.height + limits.rowGap + h > limit) col = null;
      if (!col) {
        if (columns.length) x += columns[columns.length - 1].width + colGap;
        col = { x, width: 0, first: i, last: i, height: 0 };
        columns.push(col);
      } else col.height += limits.rowGap;
      col.height += h;
      col.width = Math.max(col.width, sizes[i].w);
      col.last = i;
      height = Math.max(height, col.height);
    }
    const last = columns[columns.length - 1];
    return { width: last.x + last.width, height, columns };
  };
  const total = sizes.reduce((a, s) => a + s.h + limits.rowGap, 0);
  const tallest = Math.max(...sizes.map((s) => s.h));
  let best = null;
  for (let k = 1; k <= n; k += 1) {
    const g = pack(Math.max(tallest, total / k));
    const score = Math.abs(Math.log((g.width / Math.max(1, g.height)) / limits.aspect));
    if (!best || score < best.score - 1e-9) best = { score, g };
    if (g.columns.length >= n) break;
  }
  const { g } = best;
  const cells = new Array(n);
  for (const col of g.columns) {
    let y = 0;
    for (let i = col.first; i <= col.last; i += 1) {
      cells[i] = { x: col.x + (col.width - sizes[i].w) / 2, y };
      y += sizes[i].h + limits.rowGap;
    }
  }
  return { width: g.width, height: g.height, cells, columns: g.columns, colGap };
}

/**
 * Points of the link from chain box i to i+1 (absolute boxes {x, y, w, h}); a link to the next
 * column goes down, across the gap, up, and into the top of the next box.
 */
export function linkPoints(a, b, fold, i, ox, oy) {
  const ax = a.x + a.w / 2;
  const bx = b.x + b.w / 2;
  const col = fold.columns.find((c) => c.first <= i && i <= c.last);
  if (i < col.last) return [[ax, a.y + a.h], [bx, b.y]];
  const below = oy + col.height + 16;
  const above = oy - 16;
  const gapX = ox + col.x + col.width + fold.colGap / 2;
  return [[ax, a.y + a.h], [ax, below], [gapX, below], [gapX, above], [bx, above], [bx, b.y]];
}
