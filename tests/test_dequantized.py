"""A DequantizeLinear of constants read as a tensor (QA24 #4): GET .../tensors/<its output> and
.../npy/<its output> give (q − zero point) × scale — per tensor, per channel, by blocks, int8,
uint8, int4 and uint4 — equal to what onnxruntime computes for that node."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import upload


def dq_model(
    q: np.ndarray, q_type: int, scale: np.ndarray, zero: np.ndarray | None, opset: int, **attrs
) -> onnx.ModelProto:
    """x + DequantizeLinear(w_q, w_scale, w_zero): the dequantized weight is also an output."""
    inits = [
        helper.make_tensor("w_q", q_type, q.shape, q.flatten().tolist()),
        numpy_helper.from_array(scale, "w_scale"),
    ]
    inputs = ["w_q", "w_scale"]
    if zero is not None:
        inits.append(helper.make_tensor("w_zero", q_type, zero.shape, zero.flatten().tolist()))
        inputs.append("w_zero")
    nodes = [
        helper.make_node("DequantizeLinear", inputs, ["w"], name="w_dq", **attrs),
        helper.make_node("Add", ["x", "w"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(q.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(q.shape))],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.graph.output.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, list(q.shape)))
    onnx.checker.check_model(model, full_check=True)
    return model


RNG = np.random.default_rng(3)
CASES = {
    "int8 per tensor": (
        RNG.integers(-128, 128, (4, 6)),
        TensorProto.INT8,
        np.array(0.02, np.float32),
        np.array(3),
        17,
        {},
    ),
    "uint8 per channel, axis 0": (
        RNG.integers(0, 256, (4, 6)),
        TensorProto.UINT8,
        np.array([0.1, 0.2, 0.05, 0.5], np.float32),
        np.array([128, 120, 130, 0]),
        17,
        {"axis": 0},
    ),
    "int8 per channel, axis 1, no zero point": (
        RNG.integers(-128, 128, (4, 6)),
        TensorProto.INT8,
        RNG.uniform(0.01, 0.1, 6).astype(np.float32),
        None,
        17,
        {},
    ),
    "int4 by blocks of 4 along axis 0": (
        RNG.integers(-8, 8, (8, 3)),
        TensorProto.INT4,
        RNG.uniform(0.01, 0.1, (2, 3)).astype(np.float32),
        RNG.integers(-2, 2, (2, 3)),
        21,
        {"axis": 0, "block_size": 4},
    ),
    "uint4 by blocks of 4 along axis 1, a short last block": (
        RNG.integers(0, 16, (3, 10)),
        TensorProto.UINT4,
        RNG.uniform(0.01, 0.1, (3, 3)).astype(np.float32),
        RNG.integers(0, 16, (3, 3)),
        21,
        {"axis": 1, "block_size": 4},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_dequantized_values_are_onnxruntimes(client, case):
    q, q_type, scale, zero, opset, attrs = CASES[case]
    model = dq_model(q, q_type, scale, zero, opset, **attrs)
    x = np.zeros(q.shape, np.float32)
    _, want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    mid = upload(client, model.SerializeToString(), "dq.onnx").get_json()["id"]
    r = client.get(f"/api/models/{mid}/tensors/w?count={q.size}")
    assert r.status_code == 200, r.get_json()
    preview = r.get_json()
    assert preview["dtype"] == "FLOAT" and preview["shape"] == list(q.shape)
    np.testing.assert_allclose(np.array(preview["values"], np.float32).reshape(q.shape), want, rtol=1e-6, atol=1e-7)
    saved = np.load(io.BytesIO(client.get(f"/api/models/{mid}/npy/w").data))
    np.testing.assert_allclose(saved, want, rtol=1e-6, atol=1e-7)


def test_a_value_no_constant_dequantize_writes_is_still_unknown(client):
    q, q_type, scale, zero, opset, attrs = CASES["int8 per tensor"]
    mid = upload(client, dq_model(q, q_type, scale, zero, opset, **attrs).SerializeToString(), "dq.onnx").get_json()[
        "id"
    ]
    r = client.get(f"/api/models/{mid}/tensors/y")  # the Add's output: computed from the input
    assert r.status_code == 404 and r.get_json()["error"]["code"] == "unknown_tensor"


def test_a_scale_that_no_longer_fits_is_refused_with_its_numbers(client):
    """An axis or block_size edit the scales don't fit: onnxruntime refuses it quoting its C++
    assertion; the refusal says what fits, with the numbers (QA24 #12)."""
    q, q_type, scale, zero, opset, attrs = CASES["int4 by blocks of 4 along axis 0"]
    mid = upload(client, dq_model(q, q_type, scale, zero, opset, **attrs).SerializeToString(), "dq.onnx").get_json()[
        "id"
    ]
    op = {"op": "set_attribute", "node": "w_dq", "name": "block_size", "value": 2}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"] == (
        'onnxruntime can\'t run the edited model: node "w_dq" (DequantizeLinear): block_size 2 '
        "along axis 0 (8 values of [8, 3]) needs 4 scales there: 'w_scale' should be [4, 3], it is [2, 3]"
    )
    q, q_type, scale, zero, opset, attrs = CASES["uint8 per channel, axis 0"]
    mid = upload(client, dq_model(q, q_type, scale, zero, opset, **attrs).SerializeToString(), "dq.onnx").get_json()[
        "id"
    ]
    op = {"op": "set_attribute", "node": "w_dq", "name": "axis", "value": 1}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"].endswith(
        "per-axis quantization along axis 1 (6 values of [4, 6]) needs a scale each; 'w_scale' is [4]"
    ), r.get_json()["error"]["message"]


def one_matmul() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.random.default_rng(4).standard_normal((256, 96)).astype(np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="fc")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 96])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("symmetric", [False, True])
def test_matmulnbits_weights_unpacked_are_what_onnxruntime_multiplies_by(client, symmetric):
    """A MatMulNBits' B, 4-bit values two to a byte with a scale (and zero point) a block: read as
    `<B>#dequantized`, N×K floats — what onnxruntime computes with: run on the identity, the node
    gives them back transposed (QA24 #3: the preview showed packed bytes, 0–255)."""
    mid = upload(client, one_matmul().SerializeToString(), "fc.onnx").get_json()["id"]
    op = {"op": "quantize_weights", "block_size": 32, "symmetric": symmetric}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    data = client.get(f"/api/models/{mid}/download").data
    node = next(n for n in onnx.load_from_string(data).graph.node if n.op_type == "MatMulNBits")
    assert (len(node.input) > 3 and bool(node.input[3])) is not symmetric
    identity = np.eye(256, dtype=np.float32)
    (ran,) = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": identity})
    r = client.get(f"/api/models/{mid}/npy/{node.input[1]}%23dequantized")
    assert r.status_code == 200, r.get_json()
    unpacked = np.load(io.BytesIO(r.data))
    assert unpacked.shape == (96, 256)
    np.testing.assert_allclose(unpacked.T, ran, rtol=1e-6, atol=1e-6)
    preview = client.get(f"/api/models/{mid}/tensors/{node.input[1]}%23dequantized?count=4").get_json()
    assert preview["dtype"] == "FLOAT" and preview["shape"] == [96, 256]
