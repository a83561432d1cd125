"""Change lines judged on the batch's result: set_io_shape's "still hard-coded" warning is not
said about a constant a later op of the same batch replaces."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from testkit import upload


def flattening_model() -> onnx.ModelProto:
    """x [1,2,4] -> Reshape to the constant [1, 8] -> y [1, 8]: the batch hard-coded."""
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="flatten")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 8])],
        [numpy_helper.from_array(np.array([1, 8], np.int64), "shape")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def edit(client, mid, *ops):
    return client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": list(ops)})


DYNAMIC = {"op": "set_io_shape", "name": "x", "shape": ["batch", 2, 4]}
OUT = {"op": "set_io_shape", "name": "y", "shape": ["batch", 8]}


def test_the_warning_is_said_while_the_constant_still_hard_codes_the_dim(client):
    mid = upload(client, flattening_model().SerializeToString(), "m.onnx").get_json()["id"]
    r = edit(client, mid, DYNAMIC, OUT)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0] == (
        "'x' is now FLOAT ⟨batch×2×4⟩; still hard-coded (dim 0 = 1) in the constant input of node \"flatten\" (Reshape)"
    )


def test_a_later_op_replacing_the_constant_takes_the_warning_away(client):
    mid = upload(client, flattening_model().SerializeToString(), "m.onnx").get_json()["id"]
    fix = {"op": "set_initializer", "name": "shape", "value": {"dtype": "INT64", "shape": [2], "values": [-1, 8]}}
    r = edit(client, mid, DYNAMIC, OUT, fix)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0] == "'x' is now FLOAT ⟨batch×2×4⟩"
    back = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    session = ort.InferenceSession(back.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], x.reshape(3, 8))


def test_removing_an_output_names_the_nodes_only_it_needed(client):
    """y = Relu(x) and z = Neg(Abs(x)): removing z leaves Abs and Neg computing nothing anyone
    reads; the change line says so and cleanup then removes them (y still computed)."""
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["y"], name="relu"),
            helper.make_node("Abs", ["x"], ["a"], name="abs"),
            helper.make_node("Neg", ["a"], ["z"], name="neg"),
        ],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [
            helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [2]),
        ],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "m.onnx").get_json()["id"]
    r = edit(client, mid, {"op": "remove_output", "name": "z"})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == [
        "removed graph output 'z'; 2 nodes no output needs any more ('abs', 'neg'): "
        "cleanup (Model › Tools › Clean up…) removes them"
    ]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "cleanup"}]})
    assert r.status_code == 200, r.get_json()
    back = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert [n.name for n in back.graph.node] == ["relu"]
