"""What ai.onnx.ml's classical-ML operators make is typed as onnxruntime makes it
(app/onnx_io/ml_types.py, walked by type_rules.py): on the first view in terms of the input's
batch ("batch", not onnx's unk__N, and for a tree ensemble's or SVM's scores at all), and with
the batch given, every size equal to what onnxruntime returns when it runs the model."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from testkit import node_testcases

from app.onnx_io.inference import inferred_model, shapes_at_dims

ML = helper.make_opsetid("ai.onnx.ml", 3)
FEATURES = 4
ORT_ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}


def _model(nodes, inputs=None, ml=ML) -> onnx.ModelProto:
    """`nodes` on X: float[batch, 4]; every node output a graph output, declared without a type
    (what they are is for inference to say)."""
    inputs = inputs or [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", FEATURES])]
    outputs = [onnx.ValueInfoProto(name=o) for n in nodes for o in n.output]
    g = helper.make_graph(nodes, "ml", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), ml], ir_version=8)


def _ml(op: str, outputs: list[str], inputs=("X",), **attrs) -> onnx.NodeProto:
    return helper.make_node(op, list(inputs), outputs, domain="ai.onnx.ml", **attrs)


def _tree(**extra) -> dict:
    """One tree of depth 1 splitting on feature 0: the attributes every tree ensemble shares."""
    return {
        "nodes_treeids": [0, 0, 0],
        "nodes_nodeids": [0, 1, 2],
        "nodes_featureids": [0, 0, 0],
        "nodes_values": [0.5, 0.0, 0.0],
        "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF"],
        "nodes_truenodeids": [1, 0, 0],
        "nodes_falsenodeids": [2, 0, 0],
        **extra,
    }


def _svm(classes: int, prob: bool, linear: bool = False) -> onnx.NodeProto:
    rng = np.random.default_rng(classes)
    attrs: dict = {
        "classlabels_ints": list(range(classes)),
        "kernel_type": "LINEAR" if linear else "RBF",
        "kernel_params": [0.5, 0.0, 3.0],
    }
    if linear:
        attrs |= {"coefficients": rng.normal(size=classes * FEATURES).tolist(), "rho": [0.1] * classes}
    else:
        per = [2] * classes
        pairs = classes * (classes - 1) // 2
        attrs |= {
            "vectors_per_class": per,
            "support_vectors": rng.normal(size=sum(per) * FEATURES).tolist(),
            "coefficients": rng.normal(size=(classes - 1) * sum(per)).tolist(),
            "rho": rng.normal(size=pairs).tolist(),
        }
        if prob:
            attrs |= {"prob_a": [-1.0] * pairs, "prob_b": [0.1] * pairs}
    return _ml("SVMClassifier", ["label", "scores"], **attrs)


CASES = {
    "linear 3 classes": ([_ml("LinearClassifier", ["label", "scores"], classlabels_ints=[0, 1, 2],
                              coefficients=list(np.arange(12.0)), intercepts=[0.0, 1, 2])],
                         {"label": ["batch"], "scores": ["batch", 3]}),
    "linear binary, one score": ([_ml("LinearClassifier", ["label", "scores"], classlabels_strings=["no", "yes"],
                                      coefficients=[1.0, -1, 0.5, 0], intercepts=[0.1])],
                                 {"label": ["batch"], "scores": ["batch", 2]}),
    "svm votes, 4 classes": ([_svm(4, prob=False)], {"label": ["batch"], "scores": ["batch", 6]}),
    "svm votes, 2 classes": ([_svm(2, prob=False)], {"label": ["batch"], "scores": ["batch", 2]}),
    "svm probabilities": ([_svm(3, prob=True)], {"label": ["batch"], "scores": ["batch", 3]}),
    "svm linear": ([_svm(3, prob=False, linear=True)], {"label": ["batch"], "scores": ["batch", 3]}),
    "forest binary, one class weighted": (
        [_ml("TreeEnsembleClassifier", ["label", "scores"], classlabels_int64s=[0, 1], class_treeids=[0, 0],
             class_nodeids=[1, 2], class_ids=[1, 1], class_weights=[0.2, 0.9], **_tree())],
        {"label": ["batch"], "scores": ["batch", 2]}),
    "forest 3 classes, string labels": (
        [_ml("TreeEnsembleClassifier", ["label", "scores"], classlabels_strings=["a", "b", "c"],
             class_treeids=[0, 0], class_nodeids=[1, 2], class_ids=[0, 2], class_weights=[1.0, 1.0], **_tree())],
        {"label": ["batch"], "scores": ["batch", 3]}),
    "tree regressor, 2 targets": (
        [_ml("TreeEnsembleRegressor", ["y"], n_targets=2, target_treeids=[0, 0], target_nodeids=[1, 2],
             target_ids=[0, 1], target_weights=[1.0, 2.0], **_tree())],
        {"y": ["batch", 2]}),
    "linear regressor, 2 targets": ([_ml("LinearRegressor", ["y"], targets=2, coefficients=list(np.arange(8.0)),
                                         intercepts=[1.0, 2.0])], {"y": ["batch", 2]}),
    "svm regressor": ([_ml("SVMRegressor", ["y"], coefficients=[1.0, -1.0], n_supports=2, kernel_type="RBF",
                           kernel_params=[0.5, 0.0, 3.0], support_vectors=list(np.arange(8.0) / 8), rho=[0.5])], {"y": ["batch", 1]}),
    "scaler, normalizer, binarizer, imputer": (
        [_ml("Scaler", ["s"], offset=[0.5] * 4, scale=[2.0] * 4), _ml("Normalizer", ["n"], ["s"], norm="L2"),
         _ml("Binarizer", ["b"], ["n"], threshold=0.1),
         _ml("Imputer", ["i"], ["b"], imputed_value_floats=[0.0], replaced_value_float=1.0)],
        {"s": ["batch", 4], "n": ["batch", 4], "b": ["batch", 4], "i": ["batch", 4]}),
    "feature vectorizer": ([_ml("FeatureVectorizer", ["v"], ["X", "X"], inputdimensions=[4, 4])],
                           {"v": ["batch", 8]}),
    "array feature extractor, 2-D": (
        [helper.make_node("Constant", [], ["k"], value=helper.make_tensor("k", TensorProto.INT64, [2], [3, 1])),
         _ml("ArrayFeatureExtractor", ["picked"], ["X", "k"])],
        {"picked": ["batch", 2]}),
    "classes of an argmax (1-D X)": (
        [helper.make_node("ArgMax", ["X"], ["best"], axis=1, keepdims=0),
         helper.make_node("Constant", [], ["classes"], value=helper.make_tensor("c", TensorProto.INT64, [4], [5, 6, 7, 8])),
         _ml("ArrayFeatureExtractor", ["label"], ["classes", "best"])],
        {"label": [1, "batch"]}),
}  # fmt: skip


def _dims(t: onnx.TypeProto) -> list:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in t.tensor_type.shape.dim]


def _types(m: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    g = m.graph
    return {v.name: v.type for v in [*g.value_info, *g.output] if v.type.HasField("tensor_type")}


@pytest.mark.parametrize("case", CASES)
def test_first_view_types_in_terms_of_the_batch(case):
    nodes, expected = CASES[case]
    types = _types(inferred_model(_model(nodes)))
    assert {name: _dims(types[name]) for name in expected} == expected


@pytest.mark.parametrize("case", CASES)
def test_types_at_a_batch_are_what_onnxruntime_returns(case):
    nodes, _ = CASES[case]
    m = _model(nodes)
    types = _types(shapes_at_dims(m, {"batch": 3}))
    x = np.random.default_rng(0).normal(size=(3, FEATURES)).astype(np.float32)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for o, got in zip(sess.get_outputs(), sess.run(None, {"X": x}), strict=True):
        if o.name in ("k", "classes"):
            continue
        assert _dims(types[o.name]) == list(got.shape), o.name
        if got.dtype != object:
            assert types[o.name].tensor_type.elem_type == ORT_ELEM[got.dtype], o.name


def test_dict_vectorizer_makes_one_row_of_the_vocabulary():
    feats = helper.make_value_info(
        "feats", helper.make_map_type_proto(TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, []))
    )
    m = _model([_ml("DictVectorizer", ["v"], ["feats"], string_vocabulary=["a", "b", "c"])], [feats])
    t = _types(inferred_model(m))["v"]
    assert _dims(t) == [1, 3] and t.tensor_type.elem_type == TensorProto.FLOAT
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"feats": {"a": 1.0, "c": 2.0}})[0].shape == (1, 3)


def test_a_batch_found_carries_on_through_standard_operators():
    """onnx's inference names a classifier's batch unk__0 and the Cast after it the same; the
    rule gives "batch", and the Cast is inferred again from it."""
    nodes = [*CASES["linear 3 classes"][0], helper.make_node("Cast", ["label"], ["as_float"], to=TensorProto.FLOAT)]
    nodes.append(helper.make_node("Mul", ["scores", "scores"], ["squared"]))
    types = _types(inferred_model(_model(nodes)))
    assert _dims(types["as_float"]) == ["batch"] and _dims(types["squared"]) == ["batch", 3]


def test_declared_types_that_say_more_stay():
    """A graph output the model declares more precisely than any rule can (a batch it fixes)
    keeps its declaration."""
    m = _model(CASES["linear 3 classes"][0])
    m.graph.output[0].CopyFrom(helper.make_tensor_value_info("label", TensorProto.INT64, [7]))
    assert _dims(_types(inferred_model(m))["label"]) == [7]


ML_CASES = sorted(
    name
    for name, case in node_testcases().items()
    if any(n.domain == "ai.onnx.ml" for n in case.model.graph.node) and case.data_sets
)


@pytest.mark.parametrize("name", ML_CASES)
def test_onnx_node_tests_of_ai_onnx_ml_are_typed_as_their_expected_outputs(name):
    """onnx's own ai.onnx.ml node tests (every operator it defines an expected output for):
    every output is typed with the shape of its expected output."""
    case = node_testcases()[name]
    types = _types(inferred_model(case.model))
    outputs = case.data_sets[0][1]
    for v, expected in zip(case.model.graph.output, outputs, strict=True):
        assert _dims(types[v.name]) == list(expected.shape), v.name
