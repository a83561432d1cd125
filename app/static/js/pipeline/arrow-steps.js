// Moving the selection along the drawing's lines with the arrow keys: ↓ to what reads the
// selected box's outputs (the first that reads their values), ↑ to what made its inputs (each
// back the way the last steps came, when they came the other way),
// ← → among the boxes that step chose from (the other readers, the other producers), left to
// right as drawn. Without such a step before, ← → go among the other readers of what made the
// box's first input: its siblings.

/** @typedef {{from: string, key: string}} Step a step up or down: the box it left, the key
 * @typedef {{ids: string[], at: number, trail?: Step[]}} Choice the boxes a step chose among,
 *   which it took, and the up and down steps that led there (↑ retraces a ↓, ↓ an ↑) */

const unique = (ids) => [...new Set(ids || [])];

/**
 * Where `key` takes the selection from box `start`, or null when there is nowhere to go.
 * @param {{preds: Map<string, string[]>, succs: Map<string, string[]>}} adjacency box id -> the
 *   boxes its lines come from / go to (GraphController.neighbours)
 * @param {string} start the selected box
 * @param {string} key ArrowUp | ArrowDown | ArrowLeft | ArrowRight
 * @param {Choice | null} last what the previous arrow step chose among
 * @param {(id: string) => number} xOf where a box's centre is drawn, left to right (Infinity: not drawn)
 * @param {(id: string) => boolean} [readsShapeOnly] a box reading only its inputs' shapes (Shape, Size)
 * @returns {{to: string, choice: Choice} | null}
 */
export function arrowStep(adjacency, start, key, last, xOf, readsShapeOnly = () => false) {
  const { preds, succs } = adjacency;
  const leftToRight = (ids) => ids.map((id, i) => ({ id, i, x: xOf(id) }))
    .sort((a, b) => a.x - b.x || a.i - b.i).map((e) => e.id);
  const continued = last && last.ids[last.at] === start ? last : null;
  const trail = (continued && continued.trail) || [];
  if (key === "ArrowDown" || key === "ArrowUp") {
    const inOrder = unique((key === "ArrowDown" ? succs : preds).get(start));
    if (!inOrder.length) return null;
    // back the way the last opposite step came (↓ Add, ↓ Mul, ↑: the Add again, not the
    // Mul's first input), else down the data's line: its first reader in the graph's order
    // that reads the values, not only their shape (torch writes a Shape of a tensor before the
    // MatMul reading it)
    const came = trail.length ? trail[trail.length - 1] : null;
    const back = came && came.key !== key && inOrder.includes(came.from) ? came.from : null;
    const first = back || (key === "ArrowDown" && inOrder.find((id) => !readsShapeOnly(id))) || inOrder[0];
    const ids = leftToRight(inOrder);
    const next = back ? trail.slice(0, -1) : [...trail, { from: start, key }];
    return { to: first, choice: { ids, at: ids.indexOf(first), trail: next } };
  }
  if (key !== "ArrowLeft" && key !== "ArrowRight") return null;
  let choice = continued;
  if (!choice) {
    const made = unique(preds.get(start));
    const ids = made.length ? leftToRight(unique(succs.get(made[0]))) : [];
    choice = { ids, at: ids.indexOf(start) };
  }
  if (choice.ids.length < 2 || choice.at < 0) return null;
  const at = (choice.at + (key === "ArrowRight" ? 1 : -1) + choice.ids.length) % choice.ids.length;
  // a sibling shares the box the trail came from: ↑ (or ↓) still goes back there
  return { to: choice.ids[at], choice: { ids: choice.ids, at, trail } };
}
