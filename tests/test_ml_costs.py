"""FLOPs and parameters of ai.onnx.ml's classical-ML operators (app/views/ml_costs.py) through
GET .../stats: each by its formula at a given batch, parameters as the float attributes'
elements, nothing left unknown in a scikit-learn-shaped pipeline once the batch is given."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper
from test_costs import by_name, stats
from test_ml_types import CASES, FEATURES, _ml, _model, _svm, _tree

BATCH = 10


def _named(nodes):
    for i, n in enumerate(nodes):
        n.name = n.name or f"n{i}"
    return nodes


def _pipeline():
    """Scaler → LinearClassifier (softmax) → ZipMap, as skl2onnx writes a scaled logistic
    regression."""
    nodes = _named(
        [
            _ml("Scaler", ["s"], offset=[0.5] * FEATURES, scale=[2.0] * FEATURES),
            _ml("LinearClassifier", ["label", "scores"], ["s"], classlabels_ints=[0, 1, 2],
                coefficients=list(np.arange(12.0)), intercepts=[0.0, 1, 2], post_transform="SOFTMAX"),
            _ml("ZipMap", ["probabilities"], ["scores"], classlabels_int64s=[0, 1, 2]),
        ]
    )  # fmt: skip
    m = _model(nodes)
    m.graph.output[-1].type.CopyFrom(
        helper.make_sequence_type_proto(
            helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, []))
        )
    )
    return m


def test_a_scikit_learn_pipeline_counts_every_node(client):
    """2 per element; 2·N·F·E + N·E (intercepts) + 3·N·E (softmax) + N·E (argmax); the map a copy."""
    m = _pipeline()
    answer = stats(client, m.SerializeToString(), f"?dims=batch={BATCH}")
    nodes = by_name(answer)
    n, f, e = BATCH, FEATURES, 3
    assert nodes["n0"]["flops"] == 2 * n * f
    assert nodes["n1"]["flops"] == 2 * n * f * e + n * e + 3 * n * e + n * e
    assert nodes["n2"]["flops"] == 0
    assert nodes["n0"]["params"] == 2 * f and nodes["n1"]["params"] == 12 + 3
    assert answer["totals"]["params"] == 2 * f + 15
    assert answer["unknown"]["flops_nodes"] == 0


def test_a_tree_ensemble_counts_depth_and_leaf_weights(client):
    """One tree of depth 1 with a weight on each leaf: per row a comparison and an addition;
    its parameters the split's threshold and the 2 weights (not the leaves' placeholder
    thresholds among the 3 nodes_values: QA21 F9)."""
    nodes, _ = CASES["tree regressor, 2 targets"]
    answer = stats(client, _model(_named(nodes)).SerializeToString(), f"?dims=batch={BATCH}")
    row = by_name(answer)["n0"]
    assert row["flops"] == BATCH * (1 + 1)
    assert row["params"] == 1 + 2


def test_an_svm_counts_its_kernels_pairs_and_votes(client):
    classes, vectors, pairs = 4, 8, 6
    node = _named([_svm(classes, prob=False)])
    answer = stats(client, _model(node).SerializeToString(), f"?dims=batch={BATCH}")
    rbf = 3 * FEATURES + 2
    per_row = vectors * rbf + 2 * (classes - 1) * vectors + 2 * pairs
    row = by_name(answer)["n0"]
    assert row["flops"] == BATCH * per_row
    # support vectors, coefficients, rho and the kernel's 3 parameters
    assert row["params"] == vectors * FEATURES + (classes - 1) * vectors + pairs + 3


def test_without_the_batch_its_formula_is_given(client):
    """Before a batch is given, a classifier's FLOPs are a formula in it, not a silent 0."""
    nodes, _ = CASES["linear 3 classes"]
    answer = stats(client, _model(_named(nodes)).SerializeToString())
    row = by_name(answer)["n0"]
    assert row["flops"] is None
    terms = row["flops_formula"]
    # 2·F·E + E (intercepts) + E (argmax) per row
    assert terms == [{"coefficient": 2 * FEATURES * 3 + 3 + 3, "symbols": {"batch": 1}}]


def test_every_op_of_the_cases_is_counted_at_a_batch(client):
    for name, (nodes, _) in CASES.items():
        answer = stats(client, _model(_named(list(nodes))).SerializeToString(), f"?dims=batch={BATCH}")
        assert answer["unknown"]["flops_nodes"] == 0, (name, answer["unknown"])


def test_a_one_tree_depth_count_is_bounded_by_its_longest_path(client):
    """A tree whose left side stops at depth 1 and right side goes to depth 2: 2 comparisons per
    row counted (the longest path), one weight per leaf."""
    attrs = _tree()
    attrs |= {
        "nodes_treeids": [0] * 5,
        "nodes_nodeids": [0, 1, 2, 3, 4],
        "nodes_featureids": [0, 0, 1, 0, 0],
        "nodes_values": [0.5, 0.0, 0.2, 0.0, 0.0],
        "nodes_modes": ["BRANCH_LEQ", "LEAF", "BRANCH_LT", "LEAF", "LEAF"],
        "nodes_truenodeids": [1, 0, 3, 0, 0],
        "nodes_falsenodeids": [2, 0, 4, 0, 0],
    }
    node = _ml("TreeEnsembleRegressor", ["y"], n_targets=1, target_treeids=[0, 0, 0], target_nodeids=[1, 3, 4],
               target_ids=[0, 0, 0], target_weights=[1.0, 2.0, 3.0], **attrs)  # fmt: skip
    answer = stats(client, _model(_named([node])).SerializeToString(), f"?dims=batch={BATCH}")
    assert by_name(answer)["n0"]["flops"] == BATCH * (2 + 1)


def test_lists_no_model_makes_are_counted_unknown_not_refused(client):
    """Hostile or broken attributes (negative support-vector counts, coefficients no row count
    divides, trees that loop) leave those nodes' FLOPs unknown; the answer stands."""
    nodes = _named(
        [
            _ml("SVMClassifier", ["l1", "s1"], vectors_per_class=[-3, 2], classlabels_ints=[0, 1],
                coefficients=[1.0], kernel_type="RBF"),
            _ml("LinearRegressor", ["y2"], coefficients=[1.0] * 7),
            _ml("TreeEnsembleRegressor", ["y3"], n_targets=1, target_treeids=[0], target_nodeids=[1],
                target_ids=[0], target_weights=[1.0], **_tree(nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[0, 0, 0])),
        ]
    )  # fmt: skip
    answer = stats(client, _model(nodes).SerializeToString(), f"?dims=batch={BATCH}")
    assert {n["name"]: n["flops"] for n in answer["nodes"]} == {"n0": None, "n1": None, "n2": None}
    assert answer["unknown"]["flops_nodes"] == 3
