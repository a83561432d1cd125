"""Simplify's change line says what came as well as what went, and the nodes its fusions
renamed (QA24 #11: "5 -> 4 nodes (fewer MatMul ×1, Add ×1)" where a Gemm came, named
fc/MatMulAddFusion, which a nodes_to_exclude list naming "fc" no longer finds)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from testkit import upload


def test_a_fusion_says_what_it_made_and_renamed(client):
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"], name="fc"),
            helper.make_node("Add", ["m", "b"], ["a"], name="fc_bias"),
            helper.make_node("Relu", ["a"], ["y"], name="act"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [
            numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w"),
            numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "fc.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "simplify"}]})
    assert r.status_code == 200, r.get_json()
    line = r.get_json()["changes"][0]
    simplified = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    gemm = next(n for n in simplified.graph.node if n.op_type == "Gemm")
    assert line.startswith("simplified with onnxruntime's basic optimizations: 3 -> 2 nodes (fewer "), line
    assert "; more Gemm ×1)" in line, line
    assert f"; nodes renamed by its fusions: fc -> {gemm.name}" in line and gemm.name.startswith("fc/"), line
