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
