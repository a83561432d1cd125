"""Trees in words (QA21 F7, F11, F13): an edit that breaks a tree is refused in the tree reader's
words, not onnxruntime's C++ (a template dump for a cycle, `coor.node_id … was false` for a
missing child); opset 5's numbered enums read as names; a change line shows a string item as
text and warns of a NaN threshold."""

from __future__ import annotations

import functools

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

from app.views.tree_words import tree_fault
from app.views.trees import ensemble_summary


@functools.lru_cache(maxsize=1)
def forest() -> bytes:
    """A scikit-learn forest of 3 trees converted by skl2onnx (its TreeEnsembleClassifier is n1)."""
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5)
    model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(x, y)
    onx = to_onnx(model, x[:1], options={"zipmap": False}, target_opset={"": 17, "ai.onnx.ml": 3})
    return onx.SerializeToString()


def _ensemble(m: onnx.ModelProto) -> tuple[int, onnx.NodeProto]:
    return next((k, n) for k, n in enumerate(m.graph.node) if n.op_type == "TreeEnsembleClassifier")


def _upload(client) -> tuple[str, str]:
    r = upload(client, forest())
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["validation"]["runtime"]["status"] == "ok"
    k, _ = _ensemble(onnx.ModelProto.FromString(forest()))
    return r.get_json()["id"], f"n{k}"


def _items(client, mid: str, node: str, name: str, items: list[dict], base: int = 0):
    op = {"op": "set_attribute_items", "node": node, "name": name, "items": items}
    return client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": [op]})


def test_a_cycle_is_refused_in_the_tree_readers_words(client):
    mid, node = _upload(client)
    r = _items(client, mid, node, "nodes_truenodeids", [{"index": 1, "value": 0}])
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert message.startswith("onnxruntime can't run the edited model: "), message
    assert "tree 0: node 1's true branch points back to node 0, which leads to it: a cycle" in message, message
    assert "InlinedVector" not in message and "absl" not in message, message


def test_a_missing_child_is_refused_naming_its_tree_and_node(client):
    mid, node = _upload(client)
    r = _items(client, mid, node, "nodes_truenodeids", [{"index": 0, "value": 99999}])
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "tree 0: node 0's true branch points at node 99999, which isn't there (tree 0 has no node 99999)" in message
    assert "was false" not in message and "coor.node_id" not in message, message


def test_tree_fault_is_none_for_good_trees_and_other_nodes():
    m = onnx.ModelProto.FromString(forest())
    _, node = _ensemble(m)
    assert tree_fault(node) is None
    assert tree_fault(helper.make_node("Relu", ["x"], ["y"])) is None
    broken = onnx.NodeProto()
    broken.CopyFrom(node)
    trues = next(a for a in broken.attribute if a.name == "nodes_truenodeids").ints
    trues[1] = 1
    assert tree_fault(broken) == (
        "tree 0: node 1's true branch points back to itself: a cycle, and node 2 is no node's branch now"
    )


def test_a_string_item_reads_as_text_and_a_nan_threshold_is_warned_of(client):
    mid, node = _upload(client)
    r = _items(client, mid, node, "nodes_modes", [{"index": 0, "value": "BRANCH_LT"}])
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][0]
    assert line.endswith("[0] = 'BRANCH_LT'"), line
    assert "b'" not in line
    r = _items(client, mid, node, "nodes_values", [{"index": 0, "value": "NaN"}], base=1)
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][0]
    assert "[0] = NaN; warning: [0] is now NaN: a comparison with a NaN threshold never holds" in line, line
    r = _items(client, mid, node, "nodes_values", [{"index": 0, "value": 0.25}], base=2)
    assert "warning" not in r.get_json()["changes"][0]


def _ensemble_5(**enums) -> onnx.NodeProto:
    """One opset 5 tree: x[0] <= 0.5 → leaves for target 0 and 1 (2 targets)."""
    return helper.make_node(
        "TreeEnsemble",
        ["X"],
        ["Y"],
        domain="ai.onnx.ml",
        n_targets=2,
        tree_roots=[0],
        nodes_featureids=[0],
        nodes_splits=numpy_helper.from_array(np.array([0.5], np.float32)),
        nodes_modes=numpy_helper.from_array(np.array([0], np.uint8)),
        nodes_truenodeids=[0],
        nodes_trueleafs=[1],
        nodes_falsenodeids=[1],
        nodes_falseleafs=[1],
        leaf_targetids=[0, 1],
        leaf_weights=numpy_helper.from_array(np.array([1.0, 10.0], np.float32)),
        **enums,
    )


def test_opset_5_enums_read_as_names():
    s = ensemble_summary(_ensemble_5(aggregate_function=1, post_transform=0), 0)
    assert s["aggregate_function"] == "SUM" and s["post_transform"] == "NONE"
    s = ensemble_summary(_ensemble_5(aggregate_function=0, post_transform=2))
    assert s["aggregate_function"] == "AVERAGE" and s["post_transform"] == "LOGISTIC"
    s = ensemble_summary(_ensemble_5())  # left out: the defaults, by name
    assert s["aggregate_function"] == "SUM" and s["post_transform"] == "NONE"


def test_a_leaf_of_one_of_several_targets_names_its_target():
    rules = ensemble_summary(_ensemble_5(), 0)["tree"]["rules"]
    assert rules == ["if X[0] <= 0.5:", "  → target 0: 1", "else:", "  → target 1: 10"], rules


def test_the_trees_route_answers_names_for_opset_5(client):
    g = helper.make_graph(
        [_ensemble_5(aggregate_function=1, post_transform=0)],
        "forest",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 1])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 2])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)])
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    t = client.get(f"/api/models/{mid}/trees?node=n0").get_json()
    assert (t["aggregate_function"], t["post_transform"]) == ("SUM", "NONE"), t


def test_a_sequence_type_is_said_in_the_pages_words():
    # QA21 F13: a ZipMap's output read "Unknown type sequence_type" (onnx.helper.printable_type)
    from onnx import TensorProto as T
    from onnx import helper as h

    from app.edits.value_types import type_words

    t = h.make_sequence_type_proto(h.make_map_type_proto(T.STRING, h.make_tensor_type_proto(T.FLOAT, [])))
    assert type_words(t) == "seq(map(string, tensor(float)[]))"
