"""float16 and int8 on classical-ML exports (QA21 F1, F8): a model whose float computation is all
ai.onnx.ml operators (trees, which have no float16 version) is refused in words rather than
"converted" with Casts that only round its inputs through float16; a model mixing an MLP and a
tree converts the MLP, the tree reading the float32 input itself; an XGBoost-style export
importing only ai.onnx.ml is refused by the quantizers in words."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from testkit import upload

from app.edits.precision import ORT_BLOCK_LIST

RNG = np.random.default_rng(0)
X = (RNG.normal(size=(300, 5)) * 3).astype(np.float32)
Y = X[:, 0] * 40 + np.sin(X[:, 1]) * 30 + X[:, 2] ** 2


@functools.cache
def fitted(kind: str):
    from sklearn.ensemble import GradientBoostingRegressor, VotingRegressor
    from sklearn.neural_network import MLPRegressor
    from sklearn.tree import DecisionTreeRegressor

    warnings.filterwarnings("ignore")
    if kind == "gbr":
        return GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, Y)
    mlp = MLPRegressor(hidden_layer_sizes=(16,), max_iter=300, random_state=0)
    return VotingRegressor([("mlp", mlp), ("tree", DecisionTreeRegressor(max_depth=5, random_state=0))]).fit(X, Y)


def exported(kind: str, ml_only: bool = False) -> onnx.ModelProto:
    from skl2onnx import to_onnx

    m = to_onnx(fitted(kind), X[:1], target_opset={"": 17, "ai.onnx.ml": 1})
    if ml_only:  # as onnxmltools writes an XGBoost model: ai.onnx.ml alone
        kept = [o for o in m.opset_import if o.domain == "ai.onnx.ml"]
        del m.opset_import[:]
        m.opset_import.extend(kept)
    return m


def edit(client, model: onnx.ModelProto, *ops):
    mid = upload(client, model.SerializeToString(), "m.onnx").get_json()["id"]
    return mid, client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": list(ops)})


def test_the_block_list_copy_is_onnxruntimes():
    from onnxruntime.transformers.float16 import DEFAULT_OP_BLOCK_LIST

    assert set(ORT_BLOCK_LIST) == set(DEFAULT_OP_BLOCK_LIST)


@pytest.mark.parametrize("fields", [{}, {"keep_io_types": False}, {"op_block_list": ["Softmax"]}])
def test_a_tree_model_is_refused_in_one_line(client, fields):
    _, r = edit(client, exported("gbr"), {"op": "convert_float16", **fields})
    assert r.status_code == 400, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "nothing here computes in float16: TreeEnsembleRegressor keeps float32" in message
    assert "ai.onnx.ml has no float16 version" in message and "only round the inputs" in message


def test_an_ml_only_export_is_refused_in_words(client):
    model = exported("gbr", ml_only=True)
    _, r = edit(client, model, {"op": "convert_float16"})
    assert r.status_code == 400 and "nothing here computes in float16" in r.get_json()["error"]["message"]
    for op in ("quantize_dynamic",):
        _, r = edit(client, model, {"op": op})
        message = r.get_json()["error"]["message"]
        assert r.status_code == 400, message
        assert "imports no ai.onnx opset: it has only ai.onnx.ml operators (TreeEnsembleRegressor)" in message
        assert "Failed to find" not in message


def test_a_duplicated_import_does_not_stop_the_quantizer(client):
    model = exported("gbr")
    model.opset_import.append(onnx.helper.make_opsetid("", 17))  # as skl2onnx 1.20 writes it
    _, r = edit(client, model, {"op": "quantize_dynamic"})
    message = r.get_json()["error"]["message"]
    assert "no node was quantized" in message and "Failed to find" not in message


def test_an_mlp_and_a_tree_convert_the_mlp_the_tree_reading_float32(client):
    mid, r = edit(client, exported("vote"), {"op": "convert_float16"})
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][0]
    assert "kept float32: TreeEnsembleRegressor keeps float32 (ai.onnx.ml has no float16 version)" in line
    data = client.get(f"/api/models/{mid}/download").data
    m = onnx.load_from_string(data)
    onnx.checker.check_model(m, full_check=True)
    tree = next(n for n in m.graph.node if n.op_type == "TreeEnsembleRegressor")
    assert list(tree.input) == ["X"]  # the graph input itself: no float16 round trip before it
    assert any(t.data_type == onnx.TensorProto.FLOAT16 for t in m.graph.initializer)
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"X": X})[0].ravel()
    want = fitted("vote").predict(X)
    assert np.abs(got - want).max() / np.abs(want).max() < 0.01
