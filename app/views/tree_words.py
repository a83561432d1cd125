"""Tree ensembles in words, read through trees.py (the one reader of a TreeEnsemble* node's
lists): what changed between two forests, tree by tree (Compare, views/diff.py), and what keeps
a node's lists from making trees (an edit's refusal, edits/apply.py).

Two forests are compared tree k with tree k, each tree's nodes in the order a walk from its
root reaches them (trees.Shapes.visits), so node ids written otherwise are no change. A tree
differs in its structure (another shape, or another feature or test at a split), else in its
thresholds (a split's value, or a BRANCH_MEMBER set) and its leaf values (a leaf's classes or
targets and weights); all numpy over the visits: a forest of a million nodes in well under a second.
"""

from __future__ import annotations

import numpy as np
import onnx

from .trees import MEMBER, BadTrees, Forest, Shapes, is_ensemble, read_forest, tree_shapes


def tree_fault(node: onnx.NodeProto) -> str | None:
    """What keeps a tree ensemble node's lists from making trees ("tree 3: node 7's true
    branch points to node 12, which tree 3 doesn't have"), or None where they make trees (or
    the node is no ensemble)."""
    if not is_ensemble(node):
        return None
    try:
        tree_shapes(read_forest(node))
    except BadTrees as exc:
        return str(exc)
    except (ValueError, TypeError, IndexError):
        return None
    return None


def _read(node: onnx.NodeProto) -> tuple[Forest, Shapes] | None:
    try:
        forest = read_forest(node)
        return forest, tree_shapes(forest)
    except (BadTrees, ValueError, TypeError, IndexError):
        return None


def _slices(shapes: Shapes, trees: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in `visits` of the given trees' visits, concatenated, and each one's tree."""
    starts, ends = shapes.visit_starts[trees], shapes.visit_starts[trees + 1]
    lengths = ends - starts
    owner = np.repeat(trees, lengths)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + offsets, owner


def _weights_at(forest: Forest, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The leaf weights on the visited `nodes`, in visit order: (the visit each is on, class or
    target ids, values)."""
    lo = np.searchsorted(forest.weight_node, nodes, "left")
    hi = np.searchsorted(forest.weight_node, nodes, "right")
    counts = hi - lo
    visit = np.repeat(np.arange(len(nodes)), counts)
    at = np.repeat(lo, counts) + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts))
    return visit, forest.weight_id[at], forest.weight_value[at]


def _differ(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise: the values differ (NaN against NaN is no difference)."""
    return (x != y) & ~(np.isnan(x) & np.isnan(y))


def forest_changes(a: onnx.NodeProto, b: onnx.NodeProto) -> list[str]:
    """The change lines of two tree ensembles, the trees compared one by one: "trees: 14 of 100
    differ: thresholds in 12, leaf values in 5, structure in 0", then the counts that changed
    ("splits: 3,717 → 3,768", "leaves: …", "depth: 8 → 9"). [] when either side makes no trees,
    or no tree differs."""
    if not (is_ensemble(a) and is_ensemble(b)):
        return []
    read_a, read_b = _read(a), _read(b)
    if read_a is None or read_b is None:
        return []
    (fa, sa), (fb, sb) = read_a, read_b
    na, nb = len(fa.roots), len(fb.roots)
    both = min(na, nb)
    trees = np.arange(both)
    sizes_a = np.diff(sa.visit_starts)[:both]
    sizes_b = np.diff(sb.visit_starts)[:both]
    structure = sizes_a != sizes_b
    thresholds = np.zeros(both, bool)
    leaves = np.zeros(both, bool)
    same_size = trees[~structure]
    if len(same_size):
        pa, owner = _slices(sa, same_size)
        pb, _ = _slices(sb, same_size)
        va, vb = sa.visits[pa], sb.visits[pb]
        shape_differs = (
            (fa.leaf[va] != fb.leaf[vb])
            | (fa.feature[va] != fb.feature[vb])
            | (fa.mode[va] != fb.mode[vb])
            | (fa.missing_true[va] != fb.missing_true[vb])
        )
        structure[np.unique(owner[shape_differs])] = True
        alike = ~structure[owner]  # visits of trees of one shape
        split = alike & ~fa.leaf[va]
        value_differs = split & _differ(fa.value[va], fb.value[vb])
        thresholds[np.unique(owner[value_differs])] = True
        for k in np.flatnonzero(split & (fa.mode[va] == fb.mode[vb]) & (fa.mode[va] == MEMBER)):
            if fa.members.get(int(va[k]), []) != fb.members.get(int(vb[k]), []):
                thresholds[owner[k]] = True
        leaf = alike & fa.leaf[va]
        leaves[_leaf_trees(fa, fb, va[leaf], vb[leaf], owner[leaf], both)] = True
    differ = structure | thresholds | leaves
    lines = []
    if differ.any() or na != nb:
        more = "" if na == nb else f", and {abs(nb - na):,} {'more' if nb > na else 'fewer'} now ({nb:,})"
        lines.append(
            f"trees: {int(differ.sum()):,} of {both:,} differ{more} — thresholds in {int(thresholds.sum()):,},"
            f" leaf values in {int(leaves.sum()):,}, structure in {int(structure.sum()):,}"
        )
    for what, x, y in (
        ("splits", int(sa.splits.sum()), int(sb.splits.sum())),
        ("leaves", int(sa.leaves.sum()), int(sb.leaves.sum())),
    ):
        if x != y:
            lines.append(f"{what}: {x:,} → {y:,}")
    da, db = _depth_words(sa.depth), _depth_words(sb.depth)
    if da != db:
        lines.append(f"depth: {da} → {db}")
    return lines


def _leaf_trees(fa: Forest, fb: Forest, la: np.ndarray, lb: np.ndarray, owner: np.ndarray, count: int) -> np.ndarray:
    """The trees (of one shape on both sides) whose leaves, visited alike, hold other weights."""
    if not len(la):
        return np.zeros(0, np.int64)
    at_a, ids_a, w_a = _weights_at(fa, la)
    at_b, ids_b, w_b = _weights_at(fb, lb)
    per_a = np.bincount(at_a, minlength=len(la))
    per_b = np.bincount(at_b, minlength=len(lb))
    out = np.zeros(count, bool)
    out[owner[per_a != per_b]] = True  # a leaf with weights for other classes or targets
    same = per_a == per_b
    keep_a, keep_b = same[at_a], same[at_b]
    wrong = (ids_a[keep_a] != ids_b[keep_b]) | _differ(w_a[keep_a], w_b[keep_b])
    out[owner[at_a[keep_a][wrong]]] = True
    return np.flatnonzero(out)


def _depth_words(depth: np.ndarray) -> str:
    if not len(depth):
        return "0"
    lo, hi = int(depth.min()), int(depth.max())
    return str(hi) if lo == hi else f"{lo}–{hi}"
