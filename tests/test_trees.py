"""A tree ensemble's trees (GET .../trees, app/views/trees.py): the trees read off a node's
nodes_* lists are the ones onnxruntime evaluates — following them by hand predicts what it
predicts, in both of ai.onnx.ml's layouts (opsets 1–3 and TreeEnsemble of opset 5) — and lists
that make no trees (a cycle, a child that isn't there) are refused naming the fault, not followed."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

from app.views.trees import MODES, read_forest

FEATURES = 5
OPS = {"BRANCH_LEQ": np.less_equal, "BRANCH_LT": np.less, "BRANCH_GTE": np.greater_equal, "BRANCH_GT": np.greater}


def random_trees(rng, count: int, depth: int) -> list[list[dict]]:
    """Trees as lists of nodes in breadth-first order: {"feature", "mode", "value", "true",
    "false"} for a split (children by index), {"weight"} for a leaf; some branches stop early."""
    trees = []
    for _ in range(count):
        nodes: list[dict] = []

        def grow(level: int, nodes: list[dict] = nodes) -> int:
            k = len(nodes)
            nodes.append({})
            if level == depth or (level > 1 and rng.random() < 0.3):
                nodes[k] = {"weight": float(np.float32(rng.normal()))}
                return k
            nodes[k] = {
                "feature": int(rng.integers(FEATURES)),
                "mode": str(rng.choice(list(OPS))),
                "value": float(np.float32(rng.normal())),
            }
            nodes[k]["true"] = grow(level + 1)
            nodes[k]["false"] = grow(level + 1)
            return k

        grow(0)
        trees.append(nodes)
    return trees


def classic_regressor(trees) -> onnx.ModelProto:
    a: dict[str, list] = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "values", "true", "false")}
    targets: dict[str, list] = {"treeids": [], "nodeids": [], "ids": [], "weights": []}
    for t, nodes in enumerate(trees):
        for i, n in enumerate(nodes):
            leaf = "weight" in n
            a["treeids"].append(t)
            a["nodeids"].append(i)
            a["featureids"].append(0 if leaf else n["feature"])
            a["modes"].append("LEAF" if leaf else n["mode"])
            a["values"].append(0.0 if leaf else n["value"])
            a["true"].append(0 if leaf else n["true"])
            a["false"].append(0 if leaf else n["false"])
            if leaf:
                for key, v in zip(targets, (t, i, 0, n["weight"]), strict=True):
                    targets[key].append(v)
    node = helper.make_node(
        "TreeEnsembleRegressor",
        ["X"],
        ["Y"],
        domain="ai.onnx.ml",
        n_targets=1,
        base_values=[0.5],
        nodes_treeids=a["treeids"],
        nodes_nodeids=a["nodeids"],
        nodes_featureids=a["featureids"],
        nodes_modes=a["modes"],
        nodes_values=a["values"],
        nodes_truenodeids=a["true"],
        nodes_falsenodeids=a["false"],
        target_treeids=targets["treeids"],
        target_nodeids=targets["nodeids"],
        target_ids=targets["ids"],
        target_weights=targets["weights"],
    )
    return _model(node, 3)


def ensemble_5(trees) -> onnx.ModelProto:
    """The same trees as opset 5's TreeEnsemble: splits indexed over all trees, leaves apart."""
    modes = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3}
    roots, feats, splits, mode, trues, true_leaf, falses, false_leaf, leaf_w = ([] for _ in range(9))
    for nodes in trees:
        split_at, leaf_at = {}, {}
        for i, n in enumerate(nodes):
            if "weight" in n:
                leaf_at[i] = len(leaf_w)
                leaf_w.append(n["weight"])
            else:
                split_at[i] = len(feats) + len(split_at)
        roots.append(split_at.get(0, 0))
        for n in nodes:
            if "weight" in n:
                continue
            feats.append(n["feature"])
            splits.append(n["value"])
            mode.append(modes[n["mode"]])
            for child, ids, leafs in ((n["true"], trues, true_leaf), (n["false"], falses, false_leaf)):
                is_leaf = child in leaf_at
                ids.append(leaf_at[child] if is_leaf else split_at[child])
                leafs.append(int(is_leaf))
    node = helper.make_node(
        "TreeEnsemble",
        ["X"],
        ["Y"],
        domain="ai.onnx.ml",
        n_targets=1,
        tree_roots=roots,
        nodes_featureids=feats,
        nodes_splits=numpy_helper.from_array(np.array(splits, np.float32)),
        nodes_modes=numpy_helper.from_array(np.array(mode, np.uint8)),
        nodes_truenodeids=trues,
        nodes_trueleafs=true_leaf,
        nodes_falsenodeids=falses,
        nodes_falseleafs=false_leaf,
        leaf_targetids=[0] * len(leaf_w),
        leaf_weights=numpy_helper.from_array(np.array(leaf_w, np.float32)),
    )
    return _model(node, 5)


def _model(node, ml: int) -> onnx.ModelProto:
    g = helper.make_graph(
        [node],
        "forest",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, FEATURES])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", ml)]
    return helper.make_model(g, opset_imports=opsets, ir_version=10)


def follow(forest, tree: int, x: np.ndarray) -> float:
    k = int(forest.roots[tree])
    while not forest.leaf[k]:
        test = OPS[MODES[forest.mode[k]]](x[forest.feature[k]], np.float32(forest.value[k]))
        k = int(forest.true[k] if test else forest.false[k])
    return sum(w for _, w in forest.weights(k))


@pytest.mark.parametrize("layout", ["opset 3", "opset 5"])
def test_the_trees_read_predict_what_onnxruntime_predicts(layout):
    rng = np.random.default_rng(7)
    trees = random_trees(rng, count=12, depth=5)
    model = classic_regressor(trees) if layout == "opset 3" else ensemble_5(trees)
    onnx.checker.check_model(model, full_check=True)
    x = rng.normal(size=(64, FEATURES)).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"X": x})[0][:, 0]
    forest = read_forest(model.graph.node[0])
    assert len(forest.roots) == 12
    base = 0.5 if layout == "opset 3" else 0.0
    got = [base + sum(follow(forest, t, row) for t in range(12)) for row in x]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_summary_and_one_trees_rules(client):
    trees = random_trees(np.random.default_rng(3), count=4, depth=3)
    model = classic_regressor(trees)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    got = client.get(f"/api/models/{mid}/trees?node=n0&tree=1").get_json()
    splits = sum(1 for nodes in trees for n in nodes if "weight" not in n)
    assert (got["trees"], got["splits"], got["leaves"]) == (4, splits, sum(len(t) for t in trees) - splits)
    assert got["targets"] == 1 and got["aggregate_function"] == "SUM" and got["base_values"] == [0.5]
    assert sum(f["splits"] for f in got["features"]) == splits
    counts = [f["splits"] for f in got["features"]]
    assert counts == sorted(counts, reverse=True)  # the most used feature first
    # tree 1 as rules: its first split, then its true side indented, the else after
    first = trees[1][0]
    sign = {"BRANCH_LEQ": "<=", "BRANCH_LT": "<", "BRANCH_GTE": ">=", "BRANCH_GT": ">"}[first["mode"]]
    assert got["tree"]["rules"][0] == f"if X[{first['feature']}] {sign} {first['value']:.6g}:"
    assert got["tree"]["rules"][1].startswith("  ") and got["tree"]["more"] == 0
    lines = got["tree"]["rules"]
    assert sum(line.lstrip().startswith("→") for line in lines) == got["tree"]["leaves"]
    assert sum(line.lstrip() == "else:" for line in lines) == got["tree"]["splits"]
    indent = [len(line) - len(line.lstrip()) for line in lines]
    for j, line in enumerate(lines):  # an else is level with its if: only its true side between them
        if line.lstrip() == "else:":
            k = max(i for i in range(j) if indent[i] <= indent[j])
            assert indent[k] == indent[j] and lines[k].lstrip().startswith("if "), lines[k : j + 1]
    assert client.get(f"/api/models/{mid}/trees?node=n0").get_json().get("tree") is None


def _broken(change) -> bytes:
    model = classic_regressor(random_trees(np.random.default_rng(1), count=2, depth=3))
    node = model.graph.node[0]
    attrs = {a.name: a for a in node.attribute}
    change(attrs)
    return model.SerializeToString()


def _cycle(attrs):
    attrs["nodes_truenodeids"].ints[1] = 0  # node 1 of tree 0 (a split) points back at the root


def _missing_child(attrs):
    attrs["nodes_falsenodeids"].ints[0] = 999


def _short_list(attrs):
    del attrs["nodes_values"].floats[-1]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (_cycle, "can't be reached from a tree's root"),
        (_missing_child, "points at node 999, which isn't there"),
        (_short_list, "nodes_values has"),
    ],
    ids=["cycle", "missing-child", "short-list"],
)
def test_lists_that_make_no_trees_are_refused_naming_the_fault(client, change, words):
    mid = upload(client, _broken(change)).get_json()["id"]
    r = client.get(f"/api/models/{mid}/trees?node=n0&tree=0")
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["code"] == "bad_trees" and words in r.get_json()["error"]["message"]


def test_requests_for_what_isnt_there(client):
    model = classic_regressor(random_trees(np.random.default_rng(2), count=2, depth=2))
    model.graph.node.append(helper.make_node("Identity", ["Y"], ["Z"]))
    model.graph.output.append(helper.make_tensor_value_info("Z", TensorProto.FLOAT, [None, 1]))
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    for query, status, code in [
        ("node=n1", 400, "not_trees"),
        ("node=n0&tree=2", 404, "unknown_tree"),
        ("node=n0&tree=-1", 400, "bad_request"),
        ("node=n9", 404, "unknown_node"),
        ("", 400, "missing_node"),
    ]:
        r = client.get(f"/api/models/{mid}/trees?{query}")
        assert (r.status_code, r.get_json()["error"]["code"]) == (status, code), query


def test_a_big_tree_is_cut_at_400_lines_and_huge_ids_are_only_ids(client):
    """A full tree of depth 10 (2,047 nodes): its rules stop at 400 lines, the rest counted.
    Node ids are names, not sizes: ids near 2^62 read as well as 0, 1, 2."""
    trees = random_trees(np.random.default_rng(4), count=1, depth=10)
    model = classic_regressor(trees)
    node = model.graph.node[0]
    big = {i: (1 << 62) - 7 * i for i in range(len(trees[0]))}  # every id renamed, far apart
    for a in node.attribute:
        if a.name in ("nodes_nodeids", "target_nodeids"):
            a.ints[:] = [big[i] for i in a.ints]
        elif a.name in ("nodes_truenodeids", "nodes_falsenodeids"):
            modes = next(m for m in node.attribute if m.name == "nodes_modes").strings
            a.ints[:] = [big[i] if modes[k] != b"LEAF" else 0 for k, i in enumerate(a.ints)]
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    got = client.get(f"/api/models/{mid}/trees?node=n0&tree=0").get_json()
    total = len(trees[0])
    assert got["splits"] + got["leaves"] == total
    lines = total + got["splits"]  # a line a node, and an "else:" a split
    assert len(got["tree"]["rules"]) == 400 and got["tree"]["more"] == lines - 400
