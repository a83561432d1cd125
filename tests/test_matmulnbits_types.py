"""Shapes go on past a MatMulNBits (QA24 #7): an int4 language model as onnxruntime's quantizer
writes a torch export (GELU written out with Constant nodes between the MatMuls) had every value
after the first MatMulNBits drawn as a bare "FLOAT"; the rule for it (runtime_types.py) types
its output, and the nodes after it are inferred again from there."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload


def gelu_lm():
    rng = np.random.default_rng(0)
    inits = [
        nh.from_array(rng.standard_normal((1000, 128)).astype(np.float32), "E"),
        nh.from_array(rng.standard_normal((128, 256)).astype(np.float32) * 0.05, "W1"),
        nh.from_array(rng.standard_normal(256).astype(np.float32), "b1"),
        nh.from_array(rng.standard_normal((256, 128)).astype(np.float32) * 0.05, "W2"),
    ]

    def const(name, value):
        return h.make_node(
            "Constant", [], [name], name=f"{name}_node", value=nh.from_array(np.array(value, np.float32))
        )

    nodes = [
        const("sqrt2", 1.4142135),
        const("one", 1.0),
        const("half", 0.5),
        h.make_node("Gather", ["E", "ids"], ["x"], name="embed"),
        h.make_node("MatMul", ["x", "W1"], ["a"], name="fc1"),
        h.make_node("Add", ["b1", "a"], ["ab"], name="bias"),  # torch writes the bias first
        h.make_node("Div", ["ab", "sqrt2"], ["d"], name="div"),
        h.make_node("Erf", ["d"], ["e"], name="erf"),
        h.make_node("Add", ["e", "one"], ["e1"], name="plus"),
        h.make_node("Mul", ["ab", "e1"], ["g"], name="mul"),
        h.make_node("Mul", ["g", "half"], ["gelu"], name="halve"),
        h.make_node("MatMul", ["gelu", "W2"], ["logits"], name="fc2"),
    ]
    graph = h.make_graph(
        nodes,
        "lm",
        [h.make_tensor_value_info("ids", T.INT64, ["batch", "seq"])],
        [h.make_tensor_value_info("logits", T.FLOAT, ["batch", "seq", 128])],
        inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_values_after_a_matmulnbits_have_shapes(client):
    mid = upload(client, gelu_lm().SerializeToString(), "lm.onnx").get_json()["id"]
    op = {"op": "quantize_weights", "block_size": 32, "accuracy_level": 4}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    g = client.get(f"/api/models/{mid}/graph").get_json()
    assert {n["op_type"] for n in g["nodes"]} >= {"MatMulNBits"}
    shapes = {v["name"]: v["shape"] for v in g["inferred_value_info"]}
    for name in ("a", "ab", "d", "e", "e1", "g", "gelu"):
        assert shapes.get(name) == ["batch", "seq", 256], (name, shapes.get(name))
