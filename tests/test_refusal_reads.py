"""A refusal over shapes says what its node reads: onnx's "Dimension mismatch in unification
between 10 and 8" and onnxruntime's "Input channels C is not equal to kernel channels * group"
mean something next to the shapes they compare."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from testkit import upload


def classifier() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    g = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
            helper.make_node("GlobalAveragePool", ["c"], ["p"], name="gap"),
            helper.make_node("Flatten", ["p"], ["f"], name="flat"),
            helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="fc", transB=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 10])],
        [
            numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w"),
            numpy_helper.from_array(rng.standard_normal((10, 8)).astype(np.float32), "fw"),
            numpy_helper.from_array(np.zeros(10, np.float32), "fb"),
        ],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def refusal(client, mid, op) -> str:
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 422, r.get_json()
    return r.get_json()["error"]["message"]


def test_an_inference_refusal_names_the_shapes_its_node_reads(client):
    mid = upload(client, classifier().SerializeToString(), "m.onnx").get_json()["id"]
    message = refusal(client, mid, {"op": "set_attribute", "node": "fc", "name": "transB", "value": 0})
    assert message == (
        'the edit would break shape/type inference: node "fc" (Gemm) in the main graph: Dimension mismatch in'
        " unification between 10 and 8 (it reads 'f' FLOAT ⟨1×8⟩, 'fw' FLOAT ⟨10×8⟩, 'fb' FLOAT ⟨10⟩)"
    )


def test_a_runtime_refusal_names_them_too(client):
    mid = upload(client, classifier().SerializeToString(), "m.onnx").get_json()["id"]
    message = refusal(client, mid, {"op": "set_attribute", "node": "conv1", "name": "group", "value": 3})
    assert message.startswith('onnxruntime can\'t run the edited model: node "conv1" (Conv) in the main graph:')
    assert message.endswith("(it reads 'x' FLOAT ⟨1×3×8×8⟩, 'w' FLOAT ⟨8×3×3×3⟩)")


def dropout_model() -> onnx.ModelProto:
    """Relu -> Dropout (its mask unused) -> Relu "after", as light_squeezenet has it."""
    t = onnx.TensorProto.FLOAT
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="before"),
            helper.make_node("Dropout", ["r"], ["d", "mask"], name="drop"),
            helper.make_node("Relu", ["d"], ["y"], name="after"),
        ],
        "g",
        [helper.make_tensor_value_info("x", t, [1, 4])],
        [helper.make_tensor_value_info("y", t, [1, 4])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_a_node_left_reading_nothing_is_named(client):
    """QA28: deleting a Dropout without Reconnect was refused with "it reads 'r61', which nothing
    before it writes": "it" named no node. The reader is named."""
    mid = upload(client, dropout_model().SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "delete_node", "node": "@drop"}]})
    assert r.status_code == 422
    assert "node \"after\" (Relu) reads 'd', which nothing before it writes" in r.get_json()["error"]["message"]
    ok = {"op": "delete_node", "node": "@drop", "reconnect": True}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [ok]}).status_code == 200
