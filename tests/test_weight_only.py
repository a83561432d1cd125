"""Weight-only block quantization (quantize_weights): MatMul weights (and embedding tables) in
4 or 8 bits by blocks with onnxruntime's MatMulNBits quantizer, as int4 LLM exports ship; the
result runs in onnxruntime close to the float model."""

from __future__ import annotations

import importlib.util

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload

IDS = np.random.default_rng(1).integers(0, 1000, (2, 8))
HAS_TORCH = importlib.util.find_spec("torch") is not None  # HQQ's optimizer runs on it


def tiny_lm(opset: int = 21) -> onnx.ModelProto:
    """An embedding table, two MatMuls around a Relu: a language model's shape in miniature."""
    rng = np.random.default_rng(0)
    inits = [
        nh.from_array(rng.standard_normal((1000, 256)).astype(np.float32), "E"),
        nh.from_array(rng.standard_normal((256, 512)).astype(np.float32) * 0.05, "W1"),
        nh.from_array(rng.standard_normal((512, 128)).astype(np.float32) * 0.05, "W2"),
    ]
    nodes = [
        h.make_node("Gather", ["E", "ids"], ["x"], name="embed"),
        h.make_node("MatMul", ["x", "W1"], ["a"], name="fc1"),
        h.make_node("Relu", ["a"], ["r"], name="relu"),
        h.make_node("MatMul", ["r", "W2"], ["y"], name="fc2"),
    ]
    graph = h.make_graph(
        nodes,
        "lm",
        [h.make_tensor_value_info("ids", T.INT64, ["batch", 8])],
        [h.make_tensor_value_info("y", T.FLOAT, ["batch", 8, 128])],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=10)
    model.producer_name = "tiny-lm-export"
    h.set_model_props(model, {"license": "mit"})
    return model


def run(model: onnx.ModelProto) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"ids": IDS})[0]


def quantized(client, base: onnx.ModelProto, **options) -> tuple[dict, onnx.ModelProto]:
    mid = upload(client, base.SerializeToString(), "lm.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_weights", **options}]})
    assert r.status_code == 200, r.get_json()
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download?layout=embedded").data)
    onnx.checker.check_model(model)
    return r.get_json(), model


def run_x(x: np.ndarray, model: onnx.ModelProto) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def off(model: onnx.ModelProto, base: onnx.ModelProto) -> float:
    want = run(base)
    return float(np.abs(run(model) - want).max() / np.abs(want).max())


@pytest.mark.parametrize(
    ("options", "ops", "within"),
    [
        ({}, ["Gather", "MatMulNBits", "Relu", "MatMulNBits"], 0.2),
        ({"bits": 8, "block_size": 32}, ["Gather", "MatMulNBits", "Relu", "MatMulNBits"], 0.02),
        pytest.param(
            {"block_size": 32, "algorithm": "HQQ"},
            ["Gather", "MatMulNBits", "Relu", "MatMulNBits"],
            0.15,
            marks=pytest.mark.skipif(not HAS_TORCH, reason="HQQ runs on PyTorch, not installed here"),
        ),
        (
            {"block_size": 32, "embeddings": True, "symmetric": True},
            ["GatherBlockQuantized", "MatMulNBits", "Relu", "MatMulNBits"],
            0.25,
        ),
        (
            {"block_size": 32, "format": "QDQ"},
            ["Gather", "DequantizeLinear", "MatMul", "Relu", "DequantizeLinear", "MatMul"],
            0.2,
        ),
    ],
)
def test_weights_quantize_by_blocks_and_run_close(client, options, ops, within):
    base = tiny_lm()
    answer, model = quantized(client, base, **options)
    assert sorted(n.op_type for n in model.graph.node) == sorted(ops)
    assert off(model, base) < within
    assert "weights quantized to" in answer["changes"][0] and answer["validation"]["runtime"]["status"] == "ok"
    # what nobody asked to change stays
    assert model.producer_name == "tiny-lm-export" and {p.key: p.value for p in model.metadata_props} == {
        "license": "mit"
    }
    size = sum(len(t.raw_data) for t in model.graph.initializer)
    assert size < sum(len(t.raw_data) for t in base.graph.initializer) * (0.8 if not options.get("embeddings") else 0.3)


def test_four_bits_shrink_the_weights_eightfold_and_names_are_kept(client):
    base = tiny_lm()
    _, model = quantized(client, base, block_size=32, embeddings=True)
    weights = lambda m: sum(len(t.raw_data) for t in m.graph.initializer)  # noqa: E731
    assert weights(model) < weights(base) / 6  # 4 bits and a scale and zero point per 32 values
    assert {n.name for n in model.graph.node} >= {"relu"}
    assert ("com.microsoft", 1) in [(o.domain, o.version) for o in model.opset_import]


def test_excluded_nodes_stay_float_and_bad_options_are_refused(client):
    base = tiny_lm()
    _, model = quantized(client, base, nodes_to_exclude=["fc2"], block_size=64)
    assert [n.op_type for n in model.graph.node if n.name == "fc2"] == ["MatMul"]
    mid = upload(client, tiny_lm(opset=17).SerializeToString(), "lm17.onnx").get_json()["id"]
    refusals = {
        "bits": {"bits": 3},
        "block_size": {"block_size": 48},
        "opset 21": {"format": "QDQ"},
        "HQQ": {"algorithm": "HQQ", "embeddings": True},
        "accuracy_level": {"accuracy_level": 9},
        **({} if HAS_TORCH else {"PyTorch": {"algorithm": "HQQ"}}),  # a server without it says so
    }
    for words, options in refusals.items():
        r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_weights", **options}]})
        assert r.status_code == 400 and words in r.get_json()["error"]["message"], (options, r.get_json())
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0  # nothing stored


def test_a_model_without_matmul_weights_says_so(client):
    g = h.make_graph(
        [h.make_node("MatMul", ["a", "b"], ["y"])],
        "g",
        [h.make_tensor_value_info(n, T.FLOAT, [4, 4]) for n in ("a", "b")],
        [h.make_tensor_value_info("y", T.FLOAT, [4, 4])],
    )
    mid = upload(client, h.make_model(g, opset_imports=[h.make_opsetid("", 21)]).SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_weights"}]})
    assert r.status_code == 400 and "no weight was quantized" in r.get_json()["error"]["message"]


def linear_mlp() -> onnx.ModelProto:
    """torch's Linear exported as Gemm (weight [out, in], transB=1, a bias) and GPT-2's Conv1D as
    Gemm (weight [in, out], no transpose), then one left alone (named in nodes_to_exclude)."""
    rng = np.random.default_rng(2)
    inits = [
        nh.from_array(rng.standard_normal((64, 128)).astype(np.float32) * 0.1, "fc1.weight"),  # [out, in]
        nh.from_array(rng.standard_normal(64).astype(np.float32), "fc1.bias"),
        nh.from_array(rng.standard_normal((64, 32)).astype(np.float32) * 0.1, "proj.weight"),  # [in, out]
        nh.from_array(rng.standard_normal((32, 32)).astype(np.float32) * 0.1, "head.weight"),
    ]
    nodes = [
        h.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
        h.make_node("Relu", ["h"], ["r"], name="relu"),
        h.make_node("Gemm", ["r", "proj.weight"], ["p"], name="proj"),
        h.make_node("Gemm", ["p", "head.weight"], ["y"], name="head"),
    ]
    graph = h.make_graph(
        nodes,
        "mlp",
        [h.make_tensor_value_info("x", T.FLOAT, [4, 128])],
        [h.make_tensor_value_info("y", T.FLOAT, [4, 32])],
        inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_gemm_weights_are_quantized_as_matmuls(client):
    base = linear_mlp()
    answer, model = quantized(client, base, block_size=32, nodes_to_exclude=["head"])
    assert "2 node(s) (2 Gemm node(s) first made MatMul + Add)" in answer["changes"][0], answer["changes"]
    ops = {n.name: n.op_type for n in model.graph.node}
    assert ops["head"] == "Gemm" and list(ops.values()).count("MatMulNBits") == 2
    assert "fc1.weight" not in {t.name for t in model.graph.initializer}  # its float copy went with it
    x = np.random.default_rng(3).standard_normal((4, 128)).astype(np.float32)
    want = run_x(x, base)
    assert np.abs(run_x(x, model) - want).max() / np.abs(want).max() < 0.1


def test_gemm_as_matmul_computes_the_same():
    from app.onnx_io.gemm_as_matmul import gemms_as_matmuls

    base = linear_mlp()
    model = onnx.ModelProto()
    model.CopyFrom(base)
    assert gemms_as_matmuls(model, set()) == 3
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Add", "Relu", "MatMul", "MatMul"]
    assert [n.name for n in model.graph.node if n.op_type == "MatMul"] == ["fc1", "proj", "head"]
    x = np.random.default_rng(4).standard_normal((4, 128)).astype(np.float32)
    np.testing.assert_allclose(run_x(x, model), run_x(x, base), rtol=1e-5, atol=1e-5)


def test_simplify_writes_no_attribute_the_quantized_nodes_did_not_have(client):
    """onnxruntime's optimizer writes weight_prepacked = 0 (its default) on every MatMulNBits it
    saves, which onnxruntime 1.20 refuses to load (QA24 #1): simplify leaves it out (and the
    other attributes it wrote at their defaults: accuracy_level, Gather's axis)."""
    model = tiny_lm()
    relu = next(n for n in model.graph.node if n.op_type == "Relu")
    relu.output[0] = "r0"
    model.graph.node.insert(3, h.make_node("Identity", ["r0"], ["r"], name="copy"))  # something to simplify
    mid = upload(client, model.SerializeToString(), "lm.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_weights"}]})
    assert r.status_code == 200, r.get_json()
    quantized = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    before = {n.name: sorted(a.name for a in n.attribute) for n in quantized.graph.node if n.op_type == "MatMulNBits"}
    assert len(before) == 2 and all("weight_prepacked" not in names for names in before.values())
    r = client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "simplify"}]})
    assert r.status_code == 200, r.get_json()
    assert (
        r.get_json()["changes"][0]
        == "simplified with onnxruntime's basic optimizations: 5 -> 4 nodes (fewer Identity ×1)"
    )
    simplified = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    after = {n.name: sorted(a.name for a in n.attribute) for n in simplified.graph.node if n.op_type == "MatMulNBits"}
    assert after == before
    assert not any(n.op_type == "Identity" for n in simplified.graph.node)
    np.testing.assert_array_equal(run(simplified), run(quantized))
