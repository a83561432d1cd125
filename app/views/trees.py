"""A tree ensemble read off its node's attributes (ai.onnx.ml's TreeEnsembleClassifier and
TreeEnsembleRegressor, opsets 1–3, and TreeEnsemble, opset 5): what a LightGBM, XGBoost or
scikit-learn forest holds, which its node's thousands of parallel nodes_* lists hide — how many
trees, how deep, which features they split on and where, and any one tree as rules.

The two layouts:
- opsets 1–3: nodes_treeids/nodes_nodeids name each node (tree, id), its children by id in the
  same tree (nodes_truenodeids, nodes_falsenodeids), a LEAF mode for leaves, whose weights are
  listed apart (class_* or target_*: treeid, nodeid, id, weight);
- opset 5: tree_roots index the node lists; a child is a node index, or a leaf index where
  nodes_trueleafs/nodes_falseleafs say so; leaves are leaf_targetids/leaf_weights.
Both are read into one set of numpy arrays (a node's children by index, leaves after the splits)
and walked a level at a time: a 1,000-tree LightGBM of 500,000 nodes is read in a fraction of a
second. Attributes are untrusted: ids out of range, cycles and splits reached twice are found,
not followed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

from ..onnx_io.traverse import standard_domain

ENSEMBLES = frozenset({"TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble"})
MAX_RULES = 400  # lines of one tree's rules in an answer
# a split's test, in opset 5's numbering of nodes_modes (opsets 1–3 spell them, with LEAF)
MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER")
MEMBER = MODES.index("BRANCH_MEMBER")
# opset 5's numbered enums (opsets 1–3 spell them)
POST_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
SIGNS = {
    "BRANCH_LEQ": "<=",
    "BRANCH_LT": "<",
    "BRANCH_GTE": ">=",
    "BRANCH_GT": ">",
    "BRANCH_EQ": "==",
    "BRANCH_NEQ": "!=",
}


class BadTrees(ValueError):
    """The node's attributes don't describe trees (the message says where)."""


@dataclass
class Forest:
    """Every tree of an ensemble in parallel arrays over its nodes (splits and leaves)."""

    roots: np.ndarray  # each tree's root node
    leaf: np.ndarray  # bool: the node is a leaf
    feature: np.ndarray  # a split's feature
    mode: np.ndarray  # a split's test (MODES), -1 for a leaf
    value: np.ndarray  # a split's threshold
    true: np.ndarray  # a split's children (node indices), -1 for a leaf
    false: np.ndarray
    missing_true: np.ndarray  # bool: a missing value takes the true side
    weight_node: np.ndarray  # the leaf each weight is on, ascending
    weight_id: np.ndarray  # the class or target it is for
    weight_value: np.ndarray
    members: dict[int, list[float]] = field(default_factory=dict)  # a BRANCH_MEMBER split's set
    # opsets 1–3: each node's tree and node id as the lists give them (None: opset 5, the index)
    tree_ids: np.ndarray | None = None
    node_ids: np.ndarray | None = None

    def name(self, k: int) -> str:
        """A node as its model names it: "node 7" (its id in its tree), "leaf 3" (opset 5's leaves)."""
        if self.node_ids is not None:
            return f"node {int(self.node_ids[k])}"
        splits = int((~self.leaf).sum())
        return f"node {k}" if k < splits else f"leaf {k - splits}"

    def tree_of(self, k: int) -> int | None:
        """The tree (its id, opsets 1–3) a node is in, where the lists say."""
        return int(self.tree_ids[k]) if self.tree_ids is not None else None

    def weights(self, k: int) -> list[tuple[int, float]]:
        lo, hi = np.searchsorted(self.weight_node, [k, k + 1])
        return [(int(c), float(w)) for c, w in zip(self.weight_id[lo:hi], self.weight_value[lo:hi], strict=True)]


def is_ensemble(node: onnx.NodeProto) -> bool:
    return standard_domain(node.domain) == "ai.onnx.ml" and node.op_type in ENSEMBLES


def _attrs(node: onnx.NodeProto) -> dict[str, object]:
    out: dict[str, object] = {}
    for a in node.attribute:
        if a.type == onnx.AttributeProto.TENSOR:
            out[a.name] = numpy_helper.to_array(a.t).reshape(-1)
        elif a.type == onnx.AttributeProto.INTS:
            out[a.name] = np.array(a.ints, np.int64)
        elif a.type == onnx.AttributeProto.FLOATS:
            out[a.name] = np.array(a.floats, np.float64)
        elif a.type == onnx.AttributeProto.STRINGS:
            out[a.name] = list(a.strings)  # bytes: nodes_modes runs to a million, decoding each costs
        elif a.type == onnx.AttributeProto.STRING:
            out[a.name] = a.s.decode("utf-8", "replace")
        elif a.type == onnx.AttributeProto.INT:
            out[a.name] = a.i
    return out


def _list(attrs: dict, *names: str) -> list:
    for name in names:
        if name in attrs:
            v = attrs[name]
            return v.tolist() if isinstance(v, np.ndarray) else list(v)
    return []


def _array(attrs: dict, dtype, *names: str) -> np.ndarray:
    for name in names:
        if name in attrs:
            try:
                return np.asarray(attrs[name], dtype).reshape(-1)
            except (TypeError, ValueError):
                raise BadTrees(f"{name} doesn't hold numbers") from None
    return np.zeros(0, dtype)


def _equal_lengths(n: int, what: str, **columns: np.ndarray | list) -> None:
    for name, column in columns.items():
        if len(column) != n:
            raise BadTrees(f"{name} has {len(column)} entries, {what} {n}")


def read_forest(node: onnx.NodeProto, attrs: dict | None = None) -> Forest:
    """The node's trees (`attrs`: its attributes as _attrs reads them); BadTrees naming what is wrong."""
    attrs = _attrs(node) if attrs is None else attrs
    forest = _read_5(attrs) if "tree_roots" in attrs else _read_classic(attrs, node.op_type)
    _check_links(forest)
    return forest


class _Ids:
    """(tree, node id) pairs of opsets 1–3 as node indices, found by binary search."""

    def __init__(self, trees: np.ndarray, nodes: np.ndarray):
        self.tree_values, self.node_values = np.unique(trees), np.unique(nodes)
        keys = self._keys(trees, nodes)[0]
        self.order = np.argsort(keys, kind="stable")
        self.sorted = keys[self.order]
        if len(self.sorted) > 1 and (np.diff(self.sorted) == 0).any():
            raise BadTrees("two nodes have the same tree and node id")

    def _keys(self, trees: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = np.searchsorted(self.tree_values, trees)
        n = np.searchsorted(self.node_values, nodes)
        ok = (t < len(self.tree_values)) & (n < len(self.node_values))
        ok[ok] &= (self.tree_values[t[ok]] == trees[ok]) & (self.node_values[n[ok]] == nodes[ok])
        return t * max(len(self.node_values), 1) + n, ok

    def find(self, trees: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Each pair's node index, -1 for one that isn't there."""
        keys, ok = self._keys(trees, nodes)
        pos = np.minimum(np.searchsorted(self.sorted, keys), max(len(self.sorted) - 1, 0))
        found = ok & (len(self.sorted) > 0)
        found[found] &= self.sorted[pos[found]] == keys[found]
        return np.where(found, self.order[pos] if len(self.order) else -1, -1)


def _read_classic(attrs: dict, op_type: str) -> Forest:
    trees, ids = _array(attrs, np.int64, "nodes_treeids"), _array(attrs, np.int64, "nodes_nodeids")
    n = len(ids)
    features = _array(attrs, np.int64, "nodes_featureids")
    values = _array(attrs, np.float64, "nodes_values", "nodes_values_as_tensor")
    trues, falses = _array(attrs, np.int64, "nodes_truenodeids"), _array(attrs, np.int64, "nodes_falsenodeids")
    spelled = _list(attrs, "nodes_modes")
    _equal_lengths(
        n,
        "nodes_nodeids",
        nodes_treeids=trees,
        nodes_featureids=features,
        nodes_modes=spelled,
        nodes_values=values,
        nodes_truenodeids=trues,
        nodes_falsenodeids=falses,
    )
    codes = {m.encode(): k for k, m in enumerate(MODES)} | {b"LEAF": -1}
    # a handful of spellings over a million nodes: compared as numpy bytes, a spelling at a time
    written = np.array(spelled, dtype=bytes) if spelled else np.zeros(0, "S1")
    mode = np.full(len(spelled), -2, np.int64)
    for m, k in codes.items():
        mode[written == m] = k
    if (mode == -2).any():
        unknown = spelled[int(np.flatnonzero(mode == -2)[0])].decode("utf-8", "replace")
        raise BadTrees(f"nodes_modes holds {unknown!r}, which is no test")
    leaf = mode < 0
    missing = _array(attrs, np.int64, "nodes_missing_value_tracks_true")
    at = _Ids(trees, ids)
    true, false = at.find(trees, trues), at.find(trees, falses)
    for side, child, given in (("true", true, trues), ("false", false, falses)):
        bad = np.flatnonzero(~leaf & (child < 0))
        if len(bad):
            k = bad[0]
            raise BadTrees(
                f"tree {trees[k]}: node {ids[k]}'s {side} branch points at node {given[k]},"
                f" which isn't there (tree {trees[k]} has no node {given[k]})"
            )
    prefix = "class" if op_type == "TreeEnsembleClassifier" else "target"
    w_trees, w_nodes = _array(attrs, np.int64, f"{prefix}_treeids"), _array(attrs, np.int64, f"{prefix}_nodeids")
    w_ids = _array(attrs, np.int64, f"{prefix}_ids")
    w_values = _array(attrs, np.float64, f"{prefix}_weights", f"{prefix}_weights_as_tensor")
    _equal_lengths(
        len(w_trees),
        f"{prefix}_treeids",
        **{f"{prefix}_nodeids": w_nodes, f"{prefix}_ids": w_ids, f"{prefix}_weights": w_values},
    )
    on = at.find(w_trees, w_nodes)
    if (on < 0).any():
        k = int(np.flatnonzero(on < 0)[0])
        raise BadTrees(
            f"tree {w_trees[k]}: a leaf weight is on node {w_nodes[k]}, which tree {w_trees[k]} doesn't have"
        )
    order = np.argsort(on, kind="stable")
    # each tree's root: its node no split points at (trees in the order of their ids)
    pointed = np.zeros(n, bool)
    pointed[true[~leaf]] = True
    pointed[false[~leaf]] = True
    roots = np.flatnonzero(~pointed)
    tree_of_root = trees[roots]
    if len(np.unique(tree_of_root)) != len(roots) or len(roots) != len(at.tree_values):
        counts = {int(t): int(c) for t, c in zip(*np.unique(tree_of_root, return_counts=True), strict=True)}
        t = next(int(t) for t in at.tree_values if counts.get(int(t), 0) != 1)
        found = counts.get(t, 0)
        # a branch moved (pointing back up, or at another's child): walked from the tree's root
        # as written, its lowest id; a node it left without a parent named after
        tops = roots[tree_of_root == t] if found else np.flatnonzero(trees == t)
        start = tops[np.argmin(ids[tops])]
        named = Forest(
            roots=np.array([start]), leaf=leaf, feature=features, mode=mode, value=values,
            true=np.where(leaf, -1, true), false=np.where(leaf, -1, false), missing_true=np.zeros(n, bool),
            weight_node=on, weight_id=w_ids, weight_value=w_values, tree_ids=trees, node_ids=ids,
        )  # fmt: skip
        fault = link_fault(named)
        if not found:
            raise BadTrees(fault or f"tree {t}: every node is another's branch: it has no root")
        left = ", ".join(f"node {ids[k]}" for k in tops if k != start)
        if fault:
            raise BadTrees(f"{fault}, and {left} is no node's branch now")
        raise BadTrees(f"tree {t}: {left} is no node's branch: the tree has {found} roots")
    roots = roots[np.argsort(tree_of_root, kind="stable")]
    return Forest(
        roots=roots,
        leaf=leaf,
        feature=np.where(leaf, -1, features),
        mode=mode,
        value=values,
        true=np.where(leaf, -1, true),
        false=np.where(leaf, -1, false),
        missing_true=(missing != 0) if len(missing) == n else np.zeros(n, bool),
        weight_node=on[order],
        weight_id=w_ids[order],
        weight_value=w_values[order],
        tree_ids=trees,
        node_ids=ids,
    )


def _read_5(attrs: dict) -> Forest:
    roots = _array(attrs, np.int64, "tree_roots")
    features = _array(attrs, np.int64, "nodes_featureids")
    n = len(features)
    splits = _array(attrs, np.float64, "nodes_splits")
    modes = _array(attrs, np.int64, "nodes_modes")
    trues, falses = _array(attrs, np.int64, "nodes_truenodeids"), _array(attrs, np.int64, "nodes_falsenodeids")
    true_leaf, false_leaf = _array(attrs, np.int64, "nodes_trueleafs"), _array(attrs, np.int64, "nodes_falseleafs")
    _equal_lengths(
        n,
        "nodes_featureids",
        nodes_splits=splits,
        nodes_modes=modes,
        nodes_truenodeids=trues,
        nodes_falsenodeids=falses,
        nodes_trueleafs=true_leaf,
        nodes_falseleafs=false_leaf,
    )
    targets, weights = _array(attrs, np.int64, "leaf_targetids"), _array(attrs, np.float64, "leaf_weights")
    _equal_lengths(len(targets), "leaf_targetids", leaf_weights=weights)
    leaves = len(targets)
    if ((modes < 0) | (modes >= len(MODES))).any():
        raise BadTrees(f"nodes_modes holds {int(modes[(modes < 0) | (modes >= len(MODES))][0])}, which is no test")
    children = []
    for side, ids, is_leaf in (("true", trues, true_leaf), ("false", falses, false_leaf)):
        pool = np.where(is_leaf != 0, leaves, n)
        bad = np.flatnonzero((ids < 0) | (ids >= pool))
        if len(bad):
            k = bad[0]
            what, count = ("leaf", leaves) if is_leaf[k] else ("node", n)
            raise BadTrees(
                f"node {k}'s {side} branch points to {what} {ids[k]}, which isn't there"
                f" (the ensemble has {count:,} {what}{'s' if count != 1 else ''})"
            )
        children.append(np.where(is_leaf != 0, n + ids, ids))  # leaves after the splits
    if ((roots < 0) | (roots >= n)).any():
        raise BadTrees(f"tree_roots names node {int(roots[(roots < 0) | (roots >= n)][0])}, which isn't there")
    members: dict[int, list[float]] = {}
    sets = _member_sets(_list(attrs, "membership_values"))
    for k, at in enumerate(np.flatnonzero(modes == MEMBER)):
        members[int(at)] = sets[k] if k < len(sets) else []
    missing = _array(attrs, np.int64, "nodes_missing_value_tracks_true")
    none = np.full(leaves, -1, np.int64)
    return Forest(
        roots=roots,
        leaf=np.concatenate([np.zeros(n, bool), np.ones(leaves, bool)]),
        feature=np.concatenate([features, none]),
        mode=np.concatenate([modes, none]),
        value=np.concatenate([splits, np.zeros(leaves)]),
        true=np.concatenate([children[0], none]),
        false=np.concatenate([children[1], none]),
        missing_true=np.concatenate(
            [(missing != 0) if len(missing) == n else np.zeros(n, bool), np.zeros(leaves, bool)]
        ),
        weight_node=n + np.arange(leaves),
        weight_id=targets,
        weight_value=weights,
        members=members,
    )


def _check_links(forest: Forest) -> None:
    """A split has at most one parent and no root has one, so a walk from the roots ends (a
    cycle would need a node with two parents) and reaches every split once. A leaf may be
    shared (opset 5's leaves are a list of their own)."""
    splits = ~forest.leaf
    parents = np.bincount(np.concatenate([forest.true[splits], forest.false[splits]]), minlength=len(forest.leaf))
    if (parents[splits] > 1).any() or (parents[forest.roots] > 0).any():
        raise BadTrees(link_fault(forest) or "a node is reached twice: the lists make no tree")


def link_fault(forest: Forest) -> str | None:
    """What keeps the branches from making trees, in words: "tree 0: node 1's true branch
    points back to node 0, which leads to it: a cycle", a split that is two nodes' branch, a root
    that is a branch, a split no root leads to; None when they make trees. Walked a level at a
    time from the roots (a fault's own words only: read_forest's checks are the quick ones)."""
    n = len(forest.leaf)
    parent = np.full(n, -1, np.int64)
    seen = np.zeros(n, bool)
    frontier = np.asarray(forest.roots, np.int64)
    seen[frontier] = True
    while len(frontier):
        inner = frontier[~forest.leaf[frontier]]
        kids = np.concatenate([forest.true[inner], forest.false[inner]])
        via = np.concatenate([inner, inner])
        sides = np.repeat([0, 1], len(inner))
        fresh, first = np.unique(kids, return_index=True)
        again = np.ones(len(kids), bool)
        again[first] = False  # a kid twice in this level, or one seen on a level before
        again |= seen[kids]
        again &= ~forest.leaf[kids]  # a leaf may be shared (opset 5)
        if again.any():
            k = int(np.flatnonzero(again)[0])
            return _twice_words(forest, parent, int(via[k]), ("true", "false")[sides[k]], int(kids[k]))
        seen[kids] = True
        parent[kids] = via
        frontier = fresh
    lost = np.flatnonzero(~forest.leaf & ~seen)
    if not len(lost):
        return None
    # a split no root leads to: a loop of branches apart from the tree, or one the lists leave out
    splits = np.flatnonzero(~forest.leaf)
    up = np.full(n, -1, np.int64)
    up[forest.true[splits][::-1]] = splits[::-1]
    up[forest.false[splits][::-1]] = splits[::-1]
    k, path = int(lost[0]), list[int]()
    while k >= 0 and k not in path and len(path) <= n:
        path.append(k)
        k = int(up[k])
    if k < 0:
        return f"{_where(forest, int(lost[0]))}{forest.name(int(lost[0]))} is reached from no tree's root"
    loop = path[path.index(k) :]
    low = min(loop, key=lambda j: forest.node_ids[j] if forest.node_ids is not None else j)
    back = int(up[low])
    side = "true" if forest.true[back] == low else "false"
    return f"{_where(forest, back)}{forest.name(back)}'s {side} branch points back to {forest.name(low)}, which leads to it: a cycle"


def _where(forest: Forest, k: int) -> str:
    t = forest.tree_of(k)
    return "" if t is None else f"tree {t}: "


def _twice_words(forest: Forest, parent: np.ndarray, p: int, side: str, c: int) -> str:
    """A split reached a second time, by node p's branch: back up p's own path (a cycle), from
    another parent, or a tree's root."""
    at = f"{_where(forest, p)}{forest.name(p)}'s {side} branch points"
    k, steps = p, 0
    while k >= 0 and steps <= len(parent):
        if k == c:
            return f"{at} back to {'itself' if c == p else forest.name(c) + ', which leads to it'}: a cycle"
        k, steps = int(parent[k]), steps + 1
    if parent[c] < 0:
        return f"{at} to {forest.name(c)}, which is a tree's root"
    return f"{at} to {forest.name(c)}, which is already {forest.name(int(parent[c]))}'s branch: a node has one parent in a tree"


@dataclass
class Shapes:
    """Per tree: splits, leaves (each time a leaf is reached) and depth (its longest
    root-to-leaf path, in splits); and the splits' nodes."""

    splits: np.ndarray
    leaves: np.ndarray
    depth: np.ndarray
    split_nodes: np.ndarray
    # every node reached (a shared leaf each time), tree by tree, each tree's a level at a time
    # (true branches before false ones): two trees of one shape list theirs alike, whatever
    # their ids; visit_starts[t]:visit_starts[t + 1] are tree t's
    visits: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    visit_starts: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))


def tree_shapes(forest: Forest) -> Shapes:
    """Every tree walked a level at a time from its root."""
    count = len(forest.roots)
    splits, leaves, depth = np.zeros(count, np.int64), np.zeros(count, np.int64), np.zeros(count, np.int64)
    frontier, tree = forest.roots, np.arange(count)
    reached: list[np.ndarray] = []
    walked: list[tuple[np.ndarray, np.ndarray]] = []
    level = 0
    while len(frontier):
        walked.append((frontier, tree))
        is_leaf = forest.leaf[frontier]
        leaves += np.bincount(tree[is_leaf], minlength=count)
        np.maximum.at(depth, tree[is_leaf], level)
        inner, inner_tree = frontier[~is_leaf], tree[~is_leaf]
        splits += np.bincount(inner_tree, minlength=count)
        reached.append(inner)
        frontier = np.concatenate([forest.true[inner], forest.false[inner]])
        tree = np.concatenate([inner_tree, inner_tree])
        level += 1
    split_nodes = np.concatenate(reached) if reached else np.zeros(0, np.int64)
    if len(split_nodes) != int((~forest.leaf).sum()):
        unreached = int((~forest.leaf).sum()) - len(split_nodes)
        fault = link_fault(forest)
        raise BadTrees(
            f"{fault} ({unreached} splits can't be reached from a tree's root)"
            if fault
            else f"{unreached} splits can't be reached from a tree's root"
        )
    if walked:
        nodes, trees = np.concatenate([w[0] for w in walked]), np.concatenate([w[1] for w in walked])
        order = np.argsort(trees, kind="stable")
        visits = nodes[order]
        starts = np.concatenate([[0], np.cumsum(np.bincount(trees, minlength=count))])
    else:
        visits, starts = np.zeros(0, np.int64), np.zeros(count + 1, np.int64)
    return Shapes(splits, leaves, depth, split_nodes, visits, starts)


def _member_sets(values: list) -> list[list[float]]:
    """membership_values: each BRANCH_MEMBER node's set, the sets apart by NaN."""
    sets: list[list[float]] = [[]]
    for v in values:
        if isinstance(v, float) and np.isnan(v):
            sets.append([])
        else:
            sets[-1].append(float(v))
    return [s for s in sets if s] if values else []


def tree_depths(node: onnx.NodeProto) -> list[int] | None:
    """Each tree's depth, or None when the attributes make no trees."""
    try:
        return tree_shapes(read_forest(node)).depth.tolist()
    except (BadTrees, ValueError, TypeError, IndexError):
        return None


def enum_name(value: object, names: tuple[str, ...]) -> object:
    """An enum attribute as its name: opset 5's numbers (post_transform 0: "NONE"), opsets 1–3's
    spelled already; a number no name has stays a number."""
    if isinstance(value, int) and 0 <= value < len(names):
        return names[value]
    return value


def _label(v: float) -> str:
    return f"{v:.6g}"


def _leaf_text(weights: list[tuple[int, float]], what: str, targets: int = 1) -> str:
    """A leaf's weights: a list when they are for every class or target 0, 1, ... in order
    (one number for a single target), else each named ("class 2: 0.41")."""
    ids = [c for c, _ in weights]
    if ids == list(range(len(ids))) and ids and (len(ids) > 1 or (what == "target" and targets == 1)):
        values = [_label(w) for _, w in weights]
        return values[0] if len(values) == 1 else f"[{', '.join(values)}]"
    return ", ".join(f"{what} {c}: {_label(w)}" for c, w in weights) or "nothing"


def rules(
    forest: Forest, tree: int, x: str = "X", what: str = "target", limit: int = MAX_RULES, targets: int = 1
) -> list[str]:
    """One tree as indented rules ("if X[2] <= 2.45:", "  → [0.0333, 0, 0]", "else:", each
    side one level in from its if/else), `x` the features' tensor, at most `limit` lines."""
    lines: list[str] = []
    stack: list[tuple[int, int]] = [(int(forest.roots[tree]), 0)]  # (node, depth); node -1: "else:"
    while stack and len(lines) < limit:
        k, depth = stack.pop()
        pad = "  " * depth
        if k < 0:
            lines.append(f"{pad}else:")
            continue
        if forest.leaf[k]:
            lines.append(f"{pad}→ {_leaf_text(forest.weights(k), what, targets)}")
            continue
        mode = MODES[int(forest.mode[k])]
        if mode == "BRANCH_MEMBER":
            test = f"{x}[{forest.feature[k]}] in {{{', '.join(_label(m) for m in forest.members.get(k, []))}}}"
        else:
            test = f"{x}[{forest.feature[k]}] {SIGNS[mode]} {_label(float(forest.value[k]))}"
        missing = " (or missing)" if forest.missing_true[k] else ""
        lines.append(f"{pad}if {test}{missing}:")
        stack.append((int(forest.false[k]), depth + 1))
        stack.append((-1, depth))  # the else, level with its if, after the true side
        stack.append((int(forest.true[k]), depth + 1))
    return lines


def ensemble_summary(node: onnx.NodeProto, tree: int | None = None) -> dict:
    """{"trees", "splits", "leaves", "depth": {"min", "max", "mean"}, "features": [{"feature",
    "splits", "min", "max"}] (most splits first), "classes"?, "targets"?, "post_transform",
    "aggregate_function"?, "base_values"?, "tree"?: {"index", "splits", "leaves", "depth",
    "rules", "more"}} — BadTrees when the attributes make no trees, IndexError for `tree` out of range."""
    attrs = _attrs(node)
    forest = read_forest(node, attrs)
    shapes = tree_shapes(forest)
    depths = shapes.depth
    out: dict = {
        "op_type": node.op_type,
        "trees": len(forest.roots),
        "splits": int(shapes.splits.sum()),
        "leaves": int(shapes.leaves.sum()),
        "depth": {
            "min": int(depths.min()) if len(depths) else 0,
            "max": int(depths.max()) if len(depths) else 0,
            "mean": round(float(depths.mean()), 2) if len(depths) else 0,
        },
        "features": _features(forest, shapes.split_nodes),
        "post_transform": enum_name(attrs.get("post_transform", "NONE"), POST_TRANSFORMS),
    }
    classes = [
        c.decode("utf-8", "replace") if isinstance(c, bytes) else c
        for c in _list(attrs, "classlabels_strings", "classlabels_int64s")
    ]
    if classes:
        out["classes"] = classes
    if node.op_type != "TreeEnsembleClassifier":
        out["targets"] = attrs.get("n_targets", 1)
        out["aggregate_function"] = enum_name(attrs.get("aggregate_function", "SUM"), AGGREGATES)
    base = _list(attrs, "base_values", "base_values_as_tensor")
    if base:
        out["base_values"] = base
    if tree is not None:
        if not 0 <= tree < len(forest.roots):
            raise IndexError(tree)
        what = "class" if node.op_type == "TreeEnsembleClassifier" else "target"
        targets = attrs.get("n_targets", 1) if what == "target" else 1
        lines = rules(forest, tree, node.input[0] if node.input else "X", what, targets=int(targets))  # type: ignore[call-overload]
        total = int(2 * shapes.splits[tree] + shapes.leaves[tree])  # a line each, and an "else:" a split
        out["tree"] = {
            "index": tree,
            "splits": int(shapes.splits[tree]),
            "leaves": int(shapes.leaves[tree]),
            "depth": int(depths[tree]),
            "rules": lines,
            "more": total - len(lines),
        }
    return out


def _features(forest: Forest, split_nodes: np.ndarray) -> list[dict]:
    """Each feature split on: how often, and its thresholds' range (set tests left out)."""
    features = forest.feature[split_nodes]
    names, counts = np.unique(features, return_counts=True)
    tested = split_nodes[forest.mode[split_nodes] != MEMBER]
    lo: dict[int, float] = {}
    hi: dict[int, float] = {}
    if len(tested):
        order = np.argsort(forest.feature[tested], kind="stable")
        f, v = forest.feature[tested][order], forest.value[tested][order]
        starts = np.flatnonzero(np.r_[True, f[1:] != f[:-1]])
        lo = dict(zip(f[starts].tolist(), np.minimum.reduceat(v, starts).tolist(), strict=True))
        hi = dict(zip(f[starts].tolist(), np.maximum.reduceat(v, starts).tolist(), strict=True))
    rows = [
        {"feature": int(name), "splits": int(c), "min": lo.get(int(name)), "max": hi.get(int(name))}
        for name, c in zip(names, counts, strict=True)
    ]
    return sorted(rows, key=lambda r: (-r["splits"], r["feature"]))
