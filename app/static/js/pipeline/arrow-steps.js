// Moving the selection along the drawing's lines with the arrow keys: ↓ to what reads the
// selected box's outputs (the first that reads their values), ↑ to what made its inputs,
// ← → among the boxes that step chose from (the other readers, the other producers), left to
// right as drawn. Without such a step before, ← → go among the other readers of what made the
// box's first input: its siblings.

/** @typedef {{ids: string[], at: number}} Choice the boxes a step chose among, and which it took */

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
  if (key === "ArrowDown" || key === "ArrowUp") {
    const inOrder = unique((key === "ArrowDown" ? succs : preds).get(start));
    if (!inOrder.length) return null;
    // down the data's line: its first reader in the graph's order that reads the values, not
    // only their shape (torch writes a Shape of a tensor before the MatMul reading it)
    const first = (key === "ArrowDown" && inOrder.find((id) => !readsShapeOnly(id))) || inOrder[0];
    const ids = leftToRight(inOrder);
    return { to: first, choice: { ids, at: ids.indexOf(first) } };
  }
  if (key !== "ArrowLeft" && key !== "ArrowRight") return null;
  let choice = last && last.ids[last.at] === start ? last : null;
  if (!choice) {
    const made = unique(preds.get(start));
    const ids = made.length ? leftToRight(unique(succs.get(made[0]))) : [];
    choice = { ids, at: ids.indexOf(start) };
  }
  if (choice.ids.length < 2 || choice.at < 0) return null;
  const at = (choice.at + (key === "ArrowRight" ? 1 : -1) + choice.ids.length) % choice.ids.length;
  return { to: choice.ids[at], choice: { ids: choice.ids, at } };
}
