"""onnxruntime's own operators (com.microsoft: what its transformer optimizer and int4 LLM exports
write) are documented, typed and offered like onnx's: their schemas come from onnxruntime's
registry (app/onnx_io/runtime_schemas.py)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from testkit import upload

from app.onnx_io.runtime_schemas import all_runtime_schemas, runtime_schema


def skip_layer_norm_model() -> onnx.ModelProto:
    """x + skip, layer-normalised by onnxruntime's fused SkipLayerNormalization, then a Relu."""
    hidden = 8
    inits = [
        onnx.numpy_helper.from_array(np.linspace(0.5, 1.5, hidden, dtype=np.float32), "gamma"),
        onnx.numpy_helper.from_array(np.linspace(-0.1, 0.1, hidden, dtype=np.float32), "beta"),
    ]
    nodes = [
        h.make_node(
            "SkipLayerNormalization",
            ["x", "skip", "gamma", "beta"],
            ["ln"],
            name="skip_ln",
            domain="com.microsoft",
            epsilon=1e-5,
        ),
        h.make_node("Relu", ["ln"], ["y"], name="relu"),
    ]
    graph = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info(n, T.FLOAT, [1, 4, hidden]) for n in ("x", "skip")],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, hidden])],
        inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)], ir_version=8)


def test_the_registry_matches_onnxruntimes():
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    theirs = {
        (s.domain, s.name, s.since_version): s for s in ort_c.get_all_operator_schema() if s.domain == "com.microsoft"
    }
    ours = {(s.domain, s.name, s.since_version): s for s in all_runtime_schemas() if s.domain == "com.microsoft"}
    assert len(ours) >= 100 and set(ours) == {k for k, s in theirs.items() if not s.deprecated}
    for key, s in ours.items():
        t = theirs[key]
        assert (s.min_input, s.max_input, s.min_output, s.max_output) == (
            t.min_input,
            t.max_input,
            t.min_output,
            t.max_output,
        ), key
        assert set(s.attributes) == set(t.attributes), key
        for name, a in s.attributes.items():
            assert int(a.type) == int(t.attributes[name].type) and a.required == t.attributes[name].required, (
                key,
                name,
            )
    assert runtime_schema("Relu", "", 17) is None  # onnx's domains never come from onnxruntime


def test_a_contrib_node_is_documented_from_onnxruntime(client):
    mid = upload(client, skip_layer_norm_model().SerializeToString(), "sln.onnx").get_json()["id"]
    schema = client.get(f"/api/models/{mid}/schema?node=n0").get_json()
    assert schema["kind"] == "schema" and schema["source"] == "onnxruntime" and schema["known"] is True
    assert "Skip and Layer Normalization" in schema["doc"]
    assert [p["name"] for p in schema["inputs"]][:4] == ["input", "skip", "gamma", "beta"]
    epsilon = next(a for a in schema["attributes"] if a["name"] == "epsilon")
    assert epsilon["type"] == "FLOAT" and epsilon["required"] is False
    assert schema["unknown_attributes"] == []
    assert client.get(f"/api/models/{mid}/schema?node=n1").get_json()["source"] == "onnx"
    # onnx has no inference for it; onnxruntime's symbolic inference types what it computes
    types = client.get(f"/api/models/{mid}/types").get_json()["inferred_value_info"]
    ln = next(v for v in types if v["name"] == "ln")
    assert ln["dtype"] == "FLOAT" and ln["shape"] == [1, 4, 8], ln
    offered = {(o["domain"], o["op_type"]) for o in client.get(f"/api/models/{mid}/operators").get_json()["operators"]}
    assert {("com.microsoft", "MatMulNBits"), ("com.microsoft", "GroupQueryAttention"), ("", "Conv")} <= offered


def test_a_contrib_nodes_attributes_are_typed_from_its_schema(client):
    """epsilon given as 0 is a FLOAT (as onnxruntime requires), not an INT; outputs counted from
    the schema; the result runs."""
    model = skip_layer_norm_model()
    mid = upload(client, model.SerializeToString(), "sln.onnx").get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={
            "base": 0,
            "ops": [
                {
                    "op": "add_node",
                    "op_type": "SkipLayerNormalization",
                    "domain": "com.microsoft",
                    "name": "second_ln",
                    "inputs": ["y", "skip", "gamma", "beta"],
                    "outputs": ["z"],
                    "attributes": {"epsilon": 0},
                },
                {"op": "add_output", "tensor": "z"},
            ],
        },
    )
    assert r.status_code == 200, r.get_json()
    edited = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    attr = edited.graph.node[-1].attribute[0]
    assert attr.name == "epsilon" and attr.type == onnx.AttributeProto.FLOAT
    sess = ort.InferenceSession(edited.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 4, 8)).astype(np.float32)
    y, z = sess.run(["y", "z"], {"x": x, "skip": x})
    mean, var = (y + x).mean(-1, keepdims=True), (y + x).var(-1, keepdims=True)
    gamma, beta = (onnx.numpy_helper.to_array(t) for t in model.graph.initializer)
    np.testing.assert_allclose(z, (y + x - mean) / np.sqrt(var) * gamma + beta, atol=1e-3)


def optimized_transformer_block(sequence: int | str = 16) -> onnx.ModelProto:
    """What onnxruntime's transformer optimizer and an int4 export write: a packed-QKV Attention,
    SkipLayerNormalization, a 4-bit MatMulNBits and FastGelu, all com.microsoft."""
    rng = np.random.default_rng(0)
    hidden, heads, out, block = 64, 4, 32, 32
    blocks = hidden // block
    packed = rng.integers(0, 255, (out, blocks, block * 4 // 8), dtype=np.uint8)
    inits = [
        onnx.numpy_helper.from_array(rng.standard_normal((hidden, 3 * hidden)).astype(np.float32) * 0.1, "qkv_w"),
        onnx.numpy_helper.from_array(np.zeros(3 * hidden, np.float32), "qkv_b"),
        onnx.numpy_helper.from_array(np.ones(hidden, np.float32), "gamma"),
        onnx.numpy_helper.from_array(np.zeros(hidden, np.float32), "beta"),
        onnx.numpy_helper.from_array(packed, "w4"),
        onnx.numpy_helper.from_array(np.full(out * blocks, 0.01, np.float32), "w4_scales"),
    ]
    ms = "com.microsoft"
    nodes = [
        h.make_node("Attention", ["x", "qkv_w", "qkv_b"], ["att"], name="attention", domain=ms, num_heads=heads),
        h.make_node("SkipLayerNormalization", ["att", "x", "gamma", "beta"], ["ln"], name="skip_ln", domain=ms),
        h.make_node(
            "MatMulNBits",
            ["ln", "w4", "w4_scales"],
            ["mm"],
            name="fc",
            domain=ms,
            K=hidden,
            N=out,
            bits=4,
            block_size=block,
        ),
        h.make_node("FastGelu", ["mm"], ["y"], name="gelu", domain=ms),
    ]
    graph = h.make_graph(
        nodes,
        "block",
        [h.make_tensor_value_info("x", T.FLOAT, [1, sequence, hidden])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, sequence, out])],
        inits,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(ms, 1)], ir_version=8)


def test_an_optimized_transformer_blocks_flops_are_known(client):
    model = optimized_transformer_block()
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": np.ones((1, 16, 64), np.float32)}
    )  # a model onnxruntime runs, not only one we can count
    mid = upload(client, model.SerializeToString(), "block.onnx").get_json()["id"]
    answer = client.get(f"/api/models/{mid}/stats").get_json()
    flops = {n["name"]: n["flops"] for n in answer["nodes"]}
    scores = 1 * 4 * 16 * 16  # B · H · S · L
    assert flops == {
        "attention": 2 * 16 * 64 * 192 + 16 * 192 + 2 * scores * (16 + 16) + 3 * scores,  # projection, bias, attention
        "skip_ln": 6 * 16 * 64,
        "fc": 2 * 16 * 32 * 64,  # K from the attribute: the packed weights' shape doesn't say it
        "gelu": 16 * 32,
    }
    assert answer["unknown"]["flops_ops"] == {}
    assert answer["totals"]["flops"] == sum(flops.values())


def test_symbolic_sequence_gives_a_formula_for_contrib_ops(client):
    mid = upload(client, optimized_transformer_block("sequence").SerializeToString(), "block.onnx").get_json()["id"]
    at_32 = client.get(f"/api/models/{mid}/stats?dims=sequence=32").get_json()
    flops = {n["name"]: n["flops"] for n in at_32["nodes"]}
    scores = 4 * 32 * 32
    assert flops["attention"] == 2 * 32 * 64 * 192 + 32 * 192 + 2 * scores * 32 + 3 * scores
    assert flops["fc"] == 2 * 32 * 32 * 64 and at_32["unknown"]["flops_ops"] == {}
    formula = client.get(f"/api/models/{mid}/stats").get_json()["formula"]  # no size given: in terms of it
    assert formula["unknown_nodes"] == 0
    assert formula["flops"] == [
        {"coefficient": 4 * 2 * 32 + 3 * 4, "symbols": {"sequence": 2}},  # the scores
        {"coefficient": 2 * 64 * 192 + 192 + 6 * 64 + 2 * 32 * 64 + 32, "symbols": {"sequence": 1}},
    ]
