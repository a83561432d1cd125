"""The models list's card of an export importing only ai.onnx.ml (onnxmltools' XGBoost) shows that
opset, said as ai.onnx.ml's (QA21 F4); a model importing ai.onnx twice shows the first."""

from __future__ import annotations

import onnx
from onnx import helper

from app.store.card import card_of_bytes, card_of_model


def _model(*imports: tuple[str, int]) -> onnx.ModelProto:
    node = helper.make_node("Scaler", ["x"], ["y"], domain="ai.onnx.ml", offset=[0.0], scale=[2.0])
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 1])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 1])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in imports], ir_version=8)


def test_an_ml_only_card_shows_the_ml_opset():
    m = _model(("ai.onnx.ml", 1))
    for card in (card_of_bytes(m.SerializeToString()), card_of_model(m)):
        assert card is not None and card["opset"] == 1 and card["opset_domain"] == "ai.onnx.ml"


def test_a_card_shows_ai_onnx_first():
    m = _model(("ai.onnx.ml", 2), ("", 17), ("", 21))
    for card in (card_of_bytes(m.SerializeToString()), card_of_model(m)):
        assert card is not None and card["opset"] == 17 and "opset_domain" not in card


def test_an_opset_conversion_of_a_model_importing_ai_onnx_twice_writes_one_import(client):
    """QA21 F2: skl2onnx's [('', 17), ('', 17)] converted to [('', 21), ('', 17)] while the change
    line said "from 17 to 21"."""
    import numpy as np
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from testkit import upload

    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)])
    model.opset_import.append(h.make_opsetid("", 17))
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 21}]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].startswith(
        "converted from opset 17 to 21: no node needed rewriting, only the opset import; ai.onnx was imported 2 times"
    )
    got = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert sorted((o.domain, o.version) for o in got.opset_import) == [("", 21), ("ai.onnx.ml", 3)]
    import onnxruntime as ort

    out = ort.InferenceSession(got.SerializeToString()).run(None, {"x": np.array([-1, 2], np.float32)})[0]
    assert out.tolist() == [0, 2]

    twice = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx", 13)])
    mid = upload(client, twice.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 21}]})
    assert r.status_code == 400 and "at opsets 13, 17" in r.get_json()["error"]["message"], r.get_json()
