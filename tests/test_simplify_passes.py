"""Simplify is done when it says so (QA37 #3): onnxruntime's passes repeated while they find
more (a second Simplify took an encoder from 60 to 57 nodes), and no node left that nothing
reads (Clean up after it still removed 8)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from encoder_block import encoder_block
from testkit import upload


def edited(client, mid: str, ops: list[dict]) -> dict:
    base = client.get(f"/api/models/{mid}").get_json()["revision"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": ops})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


@pytest.mark.parametrize("static", [True, False])
def test_one_simplify_leaves_nothing_for_a_second_nor_for_clean_up(client, static):
    model = encoder_block()
    mid = upload(client, model.SerializeToString(), "enc.onnx").get_json()["id"]
    if static:
        edited(client, mid, [{"op": "fix_dims", "dims": {"batch": 1, "sequence": 128}}])
    edited(client, mid, [{"op": "write_out", "op_types": ["LayerNormalization"]}, {"op": "simplify"}])
    data = client.get(f"/api/models/{mid}/download").data
    again = edited(client, mid, [{"op": "simplify"}])
    assert again["unchanged"] and again["notes"][0].startswith(
        "simplify: onnxruntime's basic optimizations find nothing"
    ), again
    cleaned = edited(client, mid, [{"op": "cleanup"}])
    assert cleaned.get("unchanged") or cleaned["changes"][0].startswith("removed 0 dead nodes, 0 unused"), cleaned
    x = np.random.default_rng(0).standard_normal((1, 128, 64)).astype(np.float32)
    run = lambda b: ort.InferenceSession(b, providers=["CPUExecutionProvider"]).run(None, {"input_ids_embeds": x})[0]  # noqa: E731
    np.testing.assert_allclose(run(data), run(model.SerializeToString()), rtol=1e-4, atol=1e-4)
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)


def test_simplify_drops_a_node_nothing_reads(client):
    """onnxruntime keeps a node whose output nothing reads (a LayerNormalization's InvStdDev
    written out): simplify's account promises to drop what nothing reads."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [
            helper.make_node("Identity", ["x"], ["i"], name="id"),
            helper.make_node("Relu", ["i"], ["y"], name="relu"),
            helper.make_node("Reciprocal", ["i"], ["unread"], name="inv"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "dead.onnx").get_json()["id"]
    line = edited(client, mid, [{"op": "simplify"}])["changes"][0]
    simplified = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert [n.op_type for n in simplified.graph.node] == ["Relu"], line
    assert "; 1 node nothing read dropped" in line, line


def test_a_3d_matmul_and_add_are_not_fused_into_reshapes_around_a_gemm(client):
    """QA37 #5: with its dims fixed, each of an encoder's 6 MatMul+Add became Reshape → Gemm →
    Reshape (+7 Reshape, +6 Gemm): more nodes for a compiler with a node budget, where a 2-D
    MatMul+Add still becomes one Gemm (test_simplify_words)."""
    model = encoder_block()
    mid = upload(client, model.SerializeToString(), "enc.onnx").get_json()["id"]
    edited(client, mid, [{"op": "fix_dims", "dims": {"batch": 1, "sequence": 128}}, {"op": "simplify"}])
    simplified = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    ops = [n.op_type for n in simplified.graph.node]
    assert "Gemm" not in ops and ops.count("MatMul") == 8, ops
    assert ops.count("Reshape") <= sum(n.op_type == "Reshape" for n in model.graph.node), ops


def test_an_ir3_model_simplified_asks_only_for_its_real_inputs(client):
    """QA38 #1: IR 3 lists every weight as a graph input too; the weights onnxruntime folded went,
    their inputs stayed, required and read by nothing — onnxruntime refused the download
    ("Required inputs ['fire3/expand1x1_w_0__SHAPE', …] are missing")."""
    from testkit import ONNX_DATA

    data = (ONNX_DATA / "light" / "light_squeezenet.onnx").read_bytes()
    mid = upload(client, data, "squeezenet.onnx").get_json()["id"]
    line = edited(client, mid, [{"op": "simplify"}])["changes"][0]
    assert "graph inputs that only repeated a weight it folded away dropped" in line, line
    simplified = client.get(f"/api/models/{mid}/download").data
    model = onnx.load_from_string(simplified)
    weights = {t.name for t in model.graph.initializer}
    assert [v.name for v in model.graph.input if v.name not in weights] == ["data_0"]
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    got = ort.InferenceSession(simplified, providers=["CPUExecutionProvider"]).run(None, {"data_0": x})[0]
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"data_0": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_an_old_export_onnxruntime_has_no_kernel_for_is_told_to_convert_first(client):
    """QA38 #6: 28 pytorch-converted models (opset 6) got onnxruntime's raw NOT_IMPLEMENTED."""
    from testkit import ONNX_DATA

    data = (ONNX_DATA / "pytorch-converted" / "test_GLU" / "model.onnx").read_bytes()
    mid = upload(client, data, "glu.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "simplify"}]})
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert message.endswith(
        "(onnxruntime has no kernel for Mul at opset 6: Convert opset… to a newer one first, then this)"
    )
    fixed = [{"op": "convert_opset", "version": 13}, {"op": "simplify"}]
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": fixed}).status_code == 200
