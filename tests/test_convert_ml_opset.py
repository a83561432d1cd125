"""convert_opset for ai.onnx.ml (QA21 F4): onnx's converter knows only ai.onnx, so the import
moves where each node fits its operator's definition at the new version — said per operator
whose definition changes — and is refused by name where one doesn't; the gates (checker and
onnxruntime) then judge the model. An ML-only export (no ai.onnx import) converts too."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper
from test_ml_types import _ml, _model, _tree
from testkit import upload

from app.edits.domain_opset import known_domain


def tree_model(ml_version: int, ai_onnx: bool = True, **extra) -> onnx.ModelProto:
    node = _ml(
        "TreeEnsembleRegressor", ["y"], n_targets=1, target_treeids=[0, 0], target_nodeids=[1, 2],
        target_ids=[0, 0], target_weights=[1.0, 2.0], name="forest", **_tree(), **extra,
    )  # fmt: skip
    m = _model([node], ml=helper.make_opsetid("ai.onnx.ml", ml_version))
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1]))
    if not ai_onnx:  # onnxmltools' XGBoost: ai.onnx.ml alone
        kept = [o for o in m.opset_import if o.domain == "ai.onnx.ml"]
        del m.opset_import[:]
        m.opset_import.extend(kept)
    return m


def predict(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x})[0]


def convert(client, m: onnx.ModelProto, version: int, domain: str = "ai.onnx.ml"):
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "convert_opset", "version": version, "domain": domain}]},
    )
    return mid, r


def test_a_tree_ensemble_moves_from_ml_1_to_3_and_runs_the_same(client):
    for ai_onnx in (True, False):
        m = tree_model(1, ai_onnx)
        mid, r = convert(client, m, 3)
        assert r.status_code == 200, r.get_json()
        [line] = r.get_json()["changes"]
        assert "converted ai.onnx.ml from opset 1 to 3" in line and "TreeEnsembleRegressor (1 -> 3)" in line, line
        after = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)
        assert {o.domain: o.version for o in after.opset_import}["ai.onnx.ml"] == 3
        onnx.checker.check_model(after, full_check=True)
        # nothing else changed: the graph is the same node for node
        assert after.graph == m.graph
        x = np.array([[0.2, 0, 0, 0], [0.9, 0, 0, 0]], np.float32)
        assert np.array_equal(predict(after, x), predict(m, x))
        assert client.get(f"/api/models/{mid}").get_json()["validation"]["ok"] is True


def test_an_operator_whose_definition_is_the_same_says_so(client):
    m = _model([_ml("Normalizer", ["y"], norm="L2", name="norm")], ml=helper.make_opsetid("ai.onnx.ml", 1))
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4]))
    _, r = convert(client, m, 3)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith(
        "converted ai.onnx.ml from opset 1 to 3; every operator's definition the same"
    )


def test_a_node_the_older_definition_cant_take_is_refused_by_name(client):
    # nodes_values_as_tensor came with ai.onnx.ml 3: down to 1 there is no such attribute
    values = helper.make_tensor("v", TensorProto.FLOAT, [3], [0.5, 0.0, 0.0])
    extra = _tree()
    extra.pop("nodes_values")
    node = _ml(
        "TreeEnsembleRegressor", ["y"], n_targets=1, target_treeids=[0, 0], target_nodeids=[1, 2],
        target_ids=[0, 0], target_weights=[1.0, 2.0], name="forest", nodes_values_as_tensor=values, **extra,
    )  # fmt: skip
    m = _model([node])
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1]))
    mid, r = convert(client, m, 1)
    assert r.status_code == 422
    message = r.get_json()["error"]["message"]
    assert "TreeEnsembleRegressor of ai.onnx.ml 1 defines no attribute nodes_values_as_tensor (node forest)" in message
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0  # nothing stored


def test_what_cant_be_converted_is_refused_in_words(client):
    m = tree_model(3)
    _, r = convert(client, m, 3)
    assert r.status_code == 400 and "already at ai.onnx.ml opset 3" in r.get_json()["error"]["message"]
    _, r = convert(client, m, 9)
    assert r.status_code == 400 and "ai.onnx.ml versions run from 1 to" in r.get_json()["error"]["message"]
    _, r = convert(client, m, 1, "com.microsoft")
    assert r.status_code == 400 and "imports no com.microsoft opset" in r.get_json()["error"]["message"]
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    _, r = convert(client, m, 2, "com.example")
    assert r.status_code == 400
    assert "onnx defines no operators of com.example" in r.get_json()["error"]["message"]
    assert known_domain("ai.onnx.ml") and not known_domain("com.microsoft")
