"""Compare of tree ensembles (QA21 F3): a long list attribute's change says how many items differ
and names the first few by position (a threshold changed at index 500,000 of a million is seen),
strings read as text, and a forest's change is summed up tree by tree (app/views/tree_words.py,
through the tree reader app/views/trees.py)."""

from __future__ import annotations

import functools

import numpy as np
import onnx
from onnx import helper

from app.views.diff import model_diff


@functools.lru_cache(maxsize=4)
def forest(seed: int) -> bytes:
    """A small scikit-learn forest (8 trees, depth 4) converted by skl2onnx: the layout every
    scikit-learn user's forest has (nodes_* and class_* lists, nodes_modes spelled)."""
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1)
    model = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=seed).fit(x, y)
    return to_onnx(model, x[:1], options={"zipmap": False}, target_opset={"": 17, "ai.onnx.ml": 3}).SerializeToString()


def _model(seed: int = 0) -> onnx.ModelProto:
    return onnx.ModelProto.FromString(forest(seed))


def _ensemble(m: onnx.ModelProto) -> onnx.NodeProto:
    return next(n for n in m.graph.node if n.op_type.startswith("TreeEnsemble"))


def _attr(node: onnx.NodeProto, name: str) -> onnx.AttributeProto:
    return next(a for a in node.attribute if a.name == name)


def _fields(old: onnx.ModelProto, new: onnx.ModelProto) -> list[str]:
    changed = model_diff(old, new)["nodes"]["changed"]
    assert len(changed) == 1, changed
    return changed[0]["fields"]


def _field(fields: list[str], start: str) -> str:
    found = [f for f in fields if f.startswith(start)]
    assert found, fields
    return found[0]


def test_one_threshold_changed_names_its_index_and_its_tree():
    old = _model()
    new = _model()
    node = _ensemble(new)
    modes = [m.decode() for m in _attr(node, "nodes_modes").strings]
    trees = list(_attr(node, "nodes_treeids").ints)
    k = max(i for i, m in enumerate(modes) if m != "LEAF")  # a split of the last tree
    values = _attr(node, "nodes_values").floats
    was = values[k]
    values[k] = was + 0.5
    fields = _fields(old, new)
    n = len(values)
    line = _field(fields, "attribute nodes_values: ")
    assert line.startswith(f"attribute nodes_values: 1 of {n:,} values differs — [{k}] {was:.7g} → "), line
    assert fields[0] == "trees: 1 of 8 differ — thresholds in 1, leaf values in 0, structure in 0", fields
    assert len(fields) == 2, fields  # no other attribute differs, and the tree counts are the same
    assert trees[k] == 7


def test_a_leaf_value_changed_is_a_tree_whose_leaf_values_differ():
    old, new = _model(), _model()
    weights = _attr(_ensemble(new), "class_weights").floats
    weights[0] = weights[0] + 0.25
    fields = _fields(old, new)
    assert fields[0] == "trees: 1 of 8 differ — thresholds in 0, leaf values in 1, structure in 0", fields
    assert _field(fields, "attribute class_weights: ").startswith(
        f"attribute class_weights: 1 of {len(weights):,} values differs — [0] "
    )


def test_two_retrained_forests_read_tree_by_tree_and_strings_as_text():
    fields = _fields(_model(0), _model(1))
    first = fields[0]
    assert first.startswith("trees: ") and "of 8 differ — thresholds in" in first and "structure in" in first, fields
    assert not any("b'" in f or 'b"' in f for f in fields), fields  # nodes_modes read as text
    modes = _field(fields, "attribute nodes_modes: ")
    assert " strings" in modes and ("'LEAF'" in modes or "'BRANCH_LEQ'" in modes), modes
    # before and after no longer read alike: each long list says what differs, by position
    for f in fields:
        if f.startswith("attribute ") and "→" in f:
            assert " differ" in f or "the same" in f, f


def test_a_list_of_another_length_says_both_lengths_and_what_was_added():
    old = _model()
    new = _model()
    rates = _attr(_ensemble(new), "nodes_hitrates").floats
    n = len(rates)
    rates.extend([1.0, 1.0])
    line = _field(_fields(old, new), "attribute nodes_hitrates: ")
    assert (
        line
        == f"attribute nodes_hitrates: {n + 2:,} values, was {n:,}; the first {n:,} the same — [{n}] 1 added, [{n + 1}] 1 added"
    )


def _big(values: np.ndarray, modes: list[bytes]) -> onnx.ModelProto:
    node = helper.make_node("Custom", ["x"], ["y"], domain="local.big")
    node.attribute.append(helper.make_attribute("weights", values.tolist()))
    node.attribute.append(helper.make_attribute("labels", modes))
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local.big", 1)])


def test_a_million_item_list_finds_the_one_item_changed():
    values = np.arange(1_000_000, dtype=np.float32) / 7
    modes = [b"LEAF", b"BRANCH_LEQ"] * 500_000
    old = _big(values, modes)
    values[500_000] = 0.61
    modes[500_001] = b"BRANCH_LT"
    new = _big(values, modes)
    fields = _fields(old, new)
    assert _field(fields, "attribute weights: ") == (
        f"attribute weights: 1 of 1,000,000 values differs — [500000] {np.float32(500_000 / 7):.7g} → 0.61"
    )
    assert (
        _field(fields, "attribute labels: ")
        == "attribute labels: 1 of 1,000,000 strings differs — [500001] 'BRANCH_LEQ' → 'BRANCH_LT'"
    )


def test_a_short_list_keeps_its_whole_before_and_after():
    old = _big(np.arange(4, dtype=np.float32), [b"a", b"b"])
    new = _big(np.array([0, 1, 2.5, 3], np.float32), [b"a", b"c"])
    fields = _fields(old, new)
    assert "attribute weights: [0, 1, 2, 3] → [0, 1, 2.5, 3]" in fields
    assert "attribute labels: ['a', 'b'] → ['a', 'c']" in fields
