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
Attributes are untrusted: ids out of range, cycles and shared children are found, not followed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

from ..onnx_io.traverse import standard_domain

ENSEMBLES = frozenset({"TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble"})
MAX_RULES = 400  # lines of one tree's rules in an answer
MODES_5 = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER")
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
class Split:
    feature: int
    mode: str
    value: float
    true: Node
    false: Node
    missing_true: bool = False
    members: list[float] | None = None  # BRANCH_MEMBER's set


@dataclass
class Leaf:
    weights: list[tuple[int, float]] = field(default_factory=list)  # (class or target, weight)


Node = Split | Leaf


def is_ensemble(node: onnx.NodeProto) -> bool:
    return standard_domain(node.domain) == "ai.onnx.ml" and node.op_type in ENSEMBLES


def _attrs(node: onnx.NodeProto) -> dict[str, object]:
    out: dict[str, object] = {}
    for a in node.attribute:
        if a.type == onnx.AttributeProto.TENSOR:
            out[a.name] = numpy_helper.to_array(a.t).reshape(-1).tolist()
        elif a.type == onnx.AttributeProto.INTS:
            out[a.name] = list(a.ints)
        elif a.type == onnx.AttributeProto.FLOATS:
            out[a.name] = list(a.floats)
        elif a.type == onnx.AttributeProto.STRINGS:
            out[a.name] = [s.decode("utf-8", "replace") for s in a.strings]
        elif a.type == onnx.AttributeProto.STRING:
            out[a.name] = a.s.decode("utf-8", "replace")
        elif a.type == onnx.AttributeProto.INT:
            out[a.name] = a.i
    return out


def _list(attrs: dict, *names: str) -> list:
    for name in names:
        if name in attrs:
            return list(attrs[name])
    return []


def read_trees(node: onnx.NodeProto) -> list[Node]:
    """The node's trees, each its root; BadTrees naming what is wrong."""
    attrs = _attrs(node)
    return _read_5(attrs) if "tree_roots" in attrs else _read_classic(attrs, node.op_type)


def _read_classic(attrs: dict, op_type: str) -> list[Node]:
    tree_ids, node_ids = _list(attrs, "nodes_treeids"), _list(attrs, "nodes_nodeids")
    n = len(node_ids)
    columns = {
        "nodes_treeids": tree_ids,
        "nodes_featureids": _list(attrs, "nodes_featureids"),
        "nodes_modes": _list(attrs, "nodes_modes"),
        "nodes_values": _list(attrs, "nodes_values", "nodes_values_as_tensor"),
        "nodes_truenodeids": _list(attrs, "nodes_truenodeids"),
        "nodes_falsenodeids": _list(attrs, "nodes_falsenodeids"),
    }
    for name, column in columns.items():
        if len(column) != n:
            raise BadTrees(f"{name} has {len(column)} entries, nodes_nodeids {n}")
    missing = _list(attrs, "nodes_missing_value_tracks_true") or [0] * n
    at = {(t, i): k for k, (t, i) in enumerate(zip(tree_ids, node_ids, strict=True))}
    if len(at) != n:
        raise BadTrees("two nodes have the same tree and node id")
    prefix = "class" if op_type == "TreeEnsembleClassifier" else "target"
    leaf_weights: dict[int, list[tuple[int, float]]] = {}
    leaf_trees, leaf_nodes = _list(attrs, f"{prefix}_treeids"), _list(attrs, f"{prefix}_nodeids")
    leaf_ids = _list(attrs, f"{prefix}_ids")
    weights = _list(attrs, f"{prefix}_weights", f"{prefix}_weights_as_tensor")
    if not len(leaf_trees) == len(leaf_nodes) == len(leaf_ids) == len(weights):
        raise BadTrees(f"the {prefix}_* lists differ in length")
    for t, i, c, w in zip(leaf_trees, leaf_nodes, leaf_ids, weights, strict=True):
        if (t, i) not in at:
            raise BadTrees(f"a weight names node {i} of tree {t}, which isn't there")
        leaf_weights.setdefault(at[(t, i)], []).append((int(c), float(w)))
    made: dict[int, Node] = {}
    modes = columns["nodes_modes"]

    def make(k: int) -> Node:
        if modes[k] == "LEAF":
            return Leaf(leaf_weights.get(k, []))
        return Split(
            feature=int(columns["nodes_featureids"][k]),
            mode=str(modes[k]),
            value=float(columns["nodes_values"][k]),
            true=Leaf(),  # children set below, once every node exists
            false=Leaf(),
            missing_true=bool(missing[k]) if k < len(missing) else False,
        )

    for k in range(n):
        made[k] = make(k)
    for k, node in made.items():
        if isinstance(node, Split):
            t = tree_ids[k]
            for side, ids in (("true", columns["nodes_truenodeids"]), ("false", columns["nodes_falsenodeids"])):
                child = at.get((t, ids[k]))
                if child is None:
                    raise BadTrees(f"node {node_ids[k]} of tree {t} points at node {ids[k]}, which isn't there")
                setattr(node, side, made[child])
    # a tree's root: its node no other node points at
    pointed = {
        at[(tree_ids[k], c)]
        for k in range(n)
        if modes[k] != "LEAF"
        for c in (columns["nodes_truenodeids"][k], columns["nodes_falsenodeids"][k])
    }
    roots: dict[int, list[int]] = {}
    for k in range(n):
        if k not in pointed:
            roots.setdefault(tree_ids[k], []).append(k)
    sizes = Counter(tree_ids)
    for t in sizes:
        found = roots.get(t, [])
        if len(found) != 1:
            raise BadTrees(f"tree {t} has {len(found) or 'no'} nodes that no other node points at, not one root")
        reached = _reach(made[found[0]])
        if reached != sizes[t]:
            raise BadTrees(f"tree {t}: {sizes[t] - reached} of its {sizes[t]} nodes can't be reached from its root")
    return [made[roots[t][0]] for t in sorted(roots)]


def _reach(root: Node) -> int:
    """How many nodes a root reaches; BadTrees when one is reached twice."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise BadTrees("a node is reached twice: the lists make no tree")
        seen.add(id(node))
        if isinstance(node, Split):
            stack.extend((node.true, node.false))
    return len(seen)


def _read_5(attrs: dict) -> list[Node]:
    roots = _list(attrs, "tree_roots")
    features, splits = _list(attrs, "nodes_featureids"), _list(attrs, "nodes_splits")
    modes = _list(attrs, "nodes_modes")
    trues, falses = _list(attrs, "nodes_truenodeids"), _list(attrs, "nodes_falsenodeids")
    true_leaf, false_leaf = _list(attrs, "nodes_trueleafs"), _list(attrs, "nodes_falseleafs")
    missing = _list(attrs, "nodes_missing_value_tracks_true")
    n = len(features)
    for name, column in (
        ("nodes_splits", splits),
        ("nodes_modes", modes),
        ("nodes_truenodeids", trues),
        ("nodes_falsenodeids", falses),
        ("nodes_trueleafs", true_leaf),
        ("nodes_falseleafs", false_leaf),
    ):
        if len(column) != n:
            raise BadTrees(f"{name} has {len(column)} entries, nodes_featureids {n}")
    targets, weights = _list(attrs, "leaf_targetids"), _list(attrs, "leaf_weights")
    if len(targets) != len(weights):
        raise BadTrees("leaf_targetids and leaf_weights differ in length")
    leaves = [Leaf([(int(t), float(w))]) for t, w in zip(targets, weights, strict=True)]
    members = _list(attrs, "membership_values")
    sets = _member_sets(members)
    made = []
    for k in range(n):
        mode = MODES_5[int(modes[k])] if 0 <= int(modes[k]) < len(MODES_5) else f"mode {modes[k]}"
        made.append(
            Split(
                int(features[k]),
                mode,
                float(splits[k]),
                Leaf(),
                Leaf(),
                bool(missing[k]) if k < len(missing) else False,
            )
        )
    member_k = 0
    for k, node in enumerate(made):
        if node.mode == "BRANCH_MEMBER":
            node.members = sets[member_k] if member_k < len(sets) else []
            member_k += 1
        for side, ids, is_leaf in (("true", trues, true_leaf), ("false", falses, false_leaf)):
            i = int(ids[k])
            pool: list = leaves if is_leaf[k] else made
            if not 0 <= i < len(pool):
                what = "leaf" if is_leaf[k] else "node"
                raise BadTrees(f"node {k} points at {what} {i}, which isn't there")
            setattr(node, side, pool[i])
    out: list[Node] = []
    for r in roots:
        if not 0 <= int(r) < n:
            raise BadTrees(f"tree_roots names node {r}, which isn't there")
        out.append(made[int(r)])
    return out


def _member_sets(values: list) -> list[list[float]]:
    """membership_values: each BRANCH_MEMBER node's set, the sets apart by NaN."""
    sets: list[list[float]] = [[]]
    for v in values:
        if isinstance(v, float) and np.isnan(v):
            sets.append([])
        else:
            sets[-1].append(float(v))
    return [s for s in sets if s] if values else []


@dataclass
class Shape:
    splits: int = 0
    leaves: int = 0
    depth: int = 0


def tree_shape(root: Node, features: Counter | None = None, ranges: dict | None = None) -> Shape:
    """Splits, leaves and depth (the longest root-to-leaf path, in splits) of one tree; its
    splits counted per feature and their thresholds' range into `features`/`ranges`. A node
    reached twice (a cycle, or children shared) is BadTrees: a tree has neither."""
    shape, seen = Shape(), set()
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Leaf):
            shape.leaves += 1
            shape.depth = max(shape.depth, depth)
            continue
        if id(node) in seen:
            raise BadTrees("a node is reached twice: the lists make no tree")
        seen.add(id(node))
        shape.splits += 1
        if features is not None:
            features[node.feature] += 1
        if ranges is not None and not node.members:
            lo, hi = ranges.get(node.feature, (node.value, node.value))
            ranges[node.feature] = (min(lo, node.value), max(hi, node.value))
        stack.extend(((node.false, depth + 1), (node.true, depth + 1)))
    return shape


def tree_depths(node: onnx.NodeProto) -> list[int] | None:
    """Each tree's depth, or None when the attributes make no trees."""
    try:
        return [tree_shape(root).depth for root in read_trees(node)]
    except (BadTrees, ValueError, TypeError, IndexError):
        return None


def _label(v: float) -> str:
    return f"{v:.6g}"


def _leaf_text(leaf: Leaf, what: str) -> str:
    """A leaf's weights: a list when they are for every class or target 0, 1, ... in order
    (one number for a single target), else each named ("class 2: 0.41")."""
    ids = [c for c, _ in leaf.weights]
    if ids == list(range(len(ids))) and ids and (len(ids) > 1 or what == "target"):
        values = [_label(w) for _, w in leaf.weights]
        return values[0] if len(values) == 1 else f"[{', '.join(values)}]"
    return ", ".join(f"{what} {c}: {_label(w)}" for c, w in leaf.weights) or "nothing"


def rules(root: Node, x: str = "X", what: str = "target", limit: int = MAX_RULES) -> tuple[list[str], int]:
    """One tree as indented rules ("X[2] <= 2.45:", "  → [0.0333, 0, 0]"), `x` the features'
    tensor, at most `limit` lines, and how many more there are."""
    lines: list[str] = []
    more = 0
    stack: list[tuple[Node, int, str]] = [(root, 0, "")]
    seen = set()
    while stack:
        node, depth, head = stack.pop()
        pad = "  " * depth
        if len(lines) >= limit:
            more += 1
            if isinstance(node, Split) and id(node) not in seen:
                seen.add(id(node))
                stack.extend(((node.false, depth + 1, ""), (node.true, depth + 1, "")))
            continue
        if isinstance(node, Leaf):
            lines.append(f"{pad}{head}→ {_leaf_text(node, what)}")
            continue
        if id(node) in seen:
            lines.append(f"{pad}{head}(a node reached again)")
            continue
        seen.add(id(node))
        if node.members is not None and node.mode == "BRANCH_MEMBER":
            test = f"{x}[{node.feature}] in {{{', '.join(_label(m) for m in node.members)}}}"
        else:
            test = f"{x}[{node.feature}] {SIGNS.get(node.mode, node.mode)} {_label(node.value)}"
        missing = " (or missing)" if node.missing_true else ""
        lines.append(f"{pad}{head}if {test}{missing}:")
        stack.append((node.false, depth + 1, "else "))
        stack.append((node.true, depth + 1, ""))
    return lines, more


def ensemble_summary(node: onnx.NodeProto, tree: int | None = None) -> dict:
    """{"trees", "splits", "leaves", "depth": {"min", "max", "mean"}, "features": [{"feature",
    "splits", "min", "max"}] (most splits first), "classes"?, "targets"?, "post_transform",
    "aggregate_function"?, "base_values"?, "tree"?: {"index", "splits", "leaves", "depth",
    "rules", "more"}} — BadTrees when the attributes make no trees, IndexError for `tree` out of range."""
    roots = read_trees(node)
    attrs = _attrs(node)
    features: Counter = Counter()
    ranges: dict[int, tuple[float, float]] = {}
    shapes = [tree_shape(r, features, ranges) for r in roots]
    depths = [s.depth for s in shapes]
    out: dict = {
        "op_type": node.op_type,
        "trees": len(roots),
        "splits": sum(s.splits for s in shapes),
        "leaves": sum(s.leaves for s in shapes),
        "depth": {
            "min": min(depths, default=0),
            "max": max(depths, default=0),
            "mean": round(sum(depths) / len(depths), 2) if depths else 0,
        },
        "features": [
            {"feature": f, "splits": c, "min": ranges.get(f, (None, None))[0], "max": ranges.get(f, (None, None))[1]}
            for f, c in sorted(features.items(), key=lambda fc: (-fc[1], fc[0]))
        ],
        "post_transform": attrs.get("post_transform", "NONE"),
    }
    classes = _list(attrs, "classlabels_strings", "classlabels_int64s")
    if classes:
        out["classes"] = classes
    if node.op_type != "TreeEnsembleClassifier":
        out["targets"] = attrs.get("n_targets", 1)
        out["aggregate_function"] = attrs.get("aggregate_function", "SUM")
    base = _list(attrs, "base_values", "base_values_as_tensor")
    if base:
        out["base_values"] = base
    if tree is not None:
        if not 0 <= tree < len(roots):
            raise IndexError(tree)
        what = "class" if node.op_type == "TreeEnsembleClassifier" else "target"
        lines, more = rules(roots[tree], node.input[0] if node.input else "X", what)
        s = shapes[tree]
        out["tree"] = {
            "index": tree,
            "splits": s.splits,
            "leaves": s.leaves,
            "depth": s.depth,
            "rules": lines,
            "more": more,
        }
    return out
