"""Costs of a decoder step as an opset-23 export writes it (QA29 #1, #7): Attention scores its
queries against the cached keys and the new ones (L = past + new), its present key and value are
sized from them where onnx's inference leaves them unknown; a float16 weight widened by a Cast is
part of the weight, as a dequantized one is; a weight several nodes read is counted on the first
of them, so the rows add up to the total."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_costs import by_name, evaluate, model, stats

F = TensorProto.FLOAT
HEADS, KV_HEADS, HEAD = 4, 2, 8  # grouped-query: 2 query heads a key/value head


def cached_attention(rank: int = 3, mask: bool = False, softcap: float = 0.0) -> bytes:
    """One opset-23 Attention with a KV cache: Q, K, V [batch, seq, heads·8] (rank 3, heads from
    q_num_heads/kv_num_heads) or [batch, heads, seq, 8] (rank 4), past_key/past_value
    [batch, 2, past_seq, 8]; present_key/present_value declared [batch, 2, total_seq, 8], a name
    no input has, as exporters declare them."""

    def qkv(heads: int) -> list:
        return ["batch", "seq", heads * HEAD] if rank == 3 else ["batch", heads, "seq", HEAD]

    attrs = {"q_num_heads": HEADS, "kv_num_heads": KV_HEADS} if rank == 3 else {}
    if softcap:
        attrs["softcap"] = softcap
    inputs = [
        helper.make_tensor_value_info("q", F, qkv(HEADS)),
        helper.make_tensor_value_info("k", F, qkv(KV_HEADS)),
        helper.make_tensor_value_info("v", F, qkv(KV_HEADS)),
        helper.make_tensor_value_info("past_key", F, ["batch", KV_HEADS, "past_seq", HEAD]),
        helper.make_tensor_value_info("past_value", F, ["batch", KV_HEADS, "past_seq", HEAD]),
    ]
    if mask:
        inputs.append(helper.make_tensor_value_info("mask", F, ["seq", "total_seq"]))
    node = helper.make_node(
        "Attention",
        ["q", "k", "v", "mask" if mask else "", "past_key", "past_value"],
        ["y", "present_key", "present_value"],
        name="attention",
        is_causal=0 if mask else 1,
        **attrs,
    )
    outputs = [
        helper.make_tensor_value_info("y", F, None),
        helper.make_tensor_value_info("present_key", F, ["batch", KV_HEADS, "total_seq", HEAD]),
        helper.make_tensor_value_info("present_value", F, ["batch", KV_HEADS, "total_seq", HEAD]),
    ]
    return model([node], inputs, outputs, opset=23)


def attention_flops(batch: int, seq: int, past: int, per_score: int = 3) -> int:
    """2·B·H·S·L·(D + Dv) + `per_score` per score, L = past + seq."""
    scores = batch * HEADS * seq * (past + seq)
    return 2 * scores * (HEAD + HEAD) + per_score * scores


def output_bytes(batch: int, seq: int, past: int) -> int:
    """y [B, S, 4·8] and present key and value [B, 2, past + seq, 8], float32."""
    return 4 * (batch * seq * HEADS * HEAD + 2 * batch * KV_HEADS * (past + seq) * HEAD)


@pytest.mark.parametrize("rank", [3, 4])
def test_attention_scores_the_cached_keys_too(client, rank):
    answer = stats(client, cached_attention(rank), "?dims=batch=2,seq=3,past_seq=10")
    row = by_name(answer)["attention"]
    # scores 2·4·3·13 = 312: 2·312·16 + 3·312 (L = 10 cached + 3 new keys, not 3)
    assert row["flops"] == attention_flops(2, 3, 10) == 10_920
    assert row["output_bytes"] == output_bytes(2, 3, 10) == 2 * 384 + 2 * 1664
    # a first step: nothing cached yet
    first = stats(client, cached_attention(rank), "?dims=batch=1,seq=5,past_seq=0")
    assert by_name(first)["attention"]["flops"] == attention_flops(1, 5, 0)


def test_a_decode_steps_attention_as_formulas_in_past_and_new_lengths(client):
    """Sizes not given: the row's FLOPs are 140·batch·seq·past_seq + 140·batch·seq² (4 heads ×
    (2·16 + 3) per score), and its outputs, present key and value included, 128·batch·past_seq
    + 256·batch·seq bytes: no output of unknown size is left out of the activations."""
    answer = stats(client, cached_attention())
    row = by_name(answer)["attention"]
    assert row["flops"] is None and row["output_bytes"] is None
    assert row["flops_formula"] == [
        {"coefficient": 140, "symbols": {"batch": 1, "past_seq": 1, "seq": 1}},
        {"coefficient": 140, "symbols": {"batch": 1, "seq": 2}},
    ]
    assert row["output_formula"] == [
        {"coefficient": 128, "symbols": {"batch": 1, "past_seq": 1}},
        {"coefficient": 256, "symbols": {"batch": 1, "seq": 1}},
    ]
    formula = answer["formula"]
    assert formula["unknown_nodes"] == 0 and formula["unknown_outputs"] == 0
    sizes = {"batch": 1, "seq": 1, "past_seq": 1000}
    assert evaluate(formula["flops"], sizes) == attention_flops(1, 1, 1000) == 4 * 1001 * 35
    assert evaluate(formula["activation_bytes"], sizes) == output_bytes(1, 1, 1000)


def test_a_mask_and_a_softcap_add_their_work_per_score(client):
    """attn_mask is added to each score (1), a softcap is softcap·tanh(score / softcap) (3)."""
    sizes = "?dims=batch=1,seq=2,past_seq=6"
    masked = by_name(stats(client, cached_attention(mask=True), sizes))["attention"]
    assert masked["flops"] == attention_flops(1, 2, 6, per_score=3 + 1)
    capped = by_name(stats(client, cached_attention(softcap=30.0), sizes))["attention"]
    assert capped["flops"] == attention_flops(1, 2, 6, per_score=3 + 3)


def half_weight_model() -> bytes:
    """x [batch, 8] -> MatMul with w, a float16 [8, 16] initializer Cast to float32 (as a
    float16 export keeps its weights) -> Cast of the activation to float16 -> y."""
    w = numpy_helper.from_array(np.ones((8, 16), np.float16), "w")
    nodes = [
        helper.make_node("Cast", ["w"], ["w_f32"], name="widen", to=F),
        helper.make_node("MatMul", ["x", "w_f32"], ["h"], name="matmul"),
        helper.make_node("Cast", ["h"], ["y"], name="narrow", to=TensorProto.FLOAT16),
    ]
    inputs = [helper.make_tensor_value_info("x", F, ["batch", 8])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT16, ["batch", 16])]
    return model(nodes, inputs, outputs, [w])


def test_a_cast_float16_weight_is_part_of_the_weight(client):
    answer = stats(client, half_weight_model(), "?dims=batch=2")
    nodes = by_name(answer)
    # the weight's 128 values are the MatMul's, which computes with them; the Cast is no row of
    # its own cost, nor its 512 bytes of float32 an activation (onnxruntime folds it at load)
    assert (nodes["matmul"]["params"], nodes["matmul"]["flops"]) == (128, 2 * 2 * 16 * 8)
    assert (nodes["widen"]["params"], nodes["widen"]["flops"]) == (0, 0)
    # a Cast of values stays an activation: h (2·16 float32) and y (2·16 float16)
    assert answer["totals"]["activation_bytes"] == 2 * 16 * 4 + 2 * 16 * 2
    assert answer["totals"]["peak_activation_bytes"] == 2 * 8 * 4 + 2 * 16 * 4  # x and h, not w_f32
    assert answer["totals"]["params"] == 128 and answer["totals"]["param_bytes"] == 256  # stored as float16
    # the formula counts as the rows do: batch=2 in it gives the totals
    formula = stats(client, half_weight_model())["formula"]
    assert evaluate(formula["flops"], {"batch": 2}) == answer["totals"]["flops"]
    assert evaluate(formula["activation_bytes"], {"batch": 2}) == answer["totals"]["activation_bytes"]


def test_a_dequantized_weights_formula_counts_as_its_rows(client):
    """An int8 weight behind a DequantizeLinear: neither its FLOPs nor its output are in the
    formula, as they aren't in the rows (the formula counted both: 128 FLOPs and 512 bytes more
    than the totals at any batch)."""
    nodes = [
        helper.make_node("DequantizeLinear", ["wq", "s"], ["w"], name="dq"),
        helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul"),
    ]
    inits = [
        numpy_helper.from_array(np.ones((8, 16), np.int8), "wq"),
        numpy_helper.from_array(np.array(0.5, np.float32), "s"),
    ]
    data = model(
        nodes,
        [helper.make_tensor_value_info("x", F, ["batch", 8])],
        [helper.make_tensor_value_info("y", F, ["batch", 16])],
        inits,
    )
    formula = stats(client, data)["formula"]
    assert formula["flops"] == [{"coefficient": 256, "symbols": {"batch": 1}}]
    assert formula["activation_bytes"] == [{"coefficient": 64, "symbols": {"batch": 1}}]
    counted = stats(client, data, "?dims=batch=3")["totals"]
    assert (counted["flops"], counted["activation_bytes"]) == (3 * 256, 3 * 64)


def test_a_shared_weight_is_counted_on_its_first_reader(client):
    """A rotary cache every layer reads, a float16 table two Casts widen for two MatMuls: each
    weight's parameters on the first row reading it; the others say how many they read that
    another row counts (`shared_params`) and which (`shared_with`); the rows add up to the total."""
    table = numpy_helper.from_array(np.ones((8, 8), np.float16), "table")
    cache = numpy_helper.from_array(np.ones(8, np.float32), "cache")
    nodes = [
        helper.make_node("Mul", ["x", "cache"], ["a"], name="rotate_0"),
        helper.make_node("Cast", ["table"], ["t0"], name="widen_0", to=F),
        helper.make_node("MatMul", ["a", "t0"], ["b"], name="matmul_0"),
        helper.make_node("Mul", ["b", "cache"], ["c"], name="rotate_1"),
        helper.make_node("Cast", ["table"], ["t1"], name="widen_1", to=F),
        helper.make_node("MatMul", ["c", "t1"], ["y"], name="matmul_1"),
    ]
    data = model(
        nodes,
        [helper.make_tensor_value_info("x", F, [2, 8])],
        [helper.make_tensor_value_info("y", F, [2, 8])],
        [table, cache],
    )
    answer = stats(client, data)
    rows = by_name(answer)
    assert [rows[n]["params"] for n in ("rotate_0", "matmul_0", "rotate_1", "matmul_1")] == [8, 64, 0, 0]
    assert (rows["rotate_1"]["shared_params"], rows["rotate_1"]["shared_with"]) == (8, [rows["rotate_0"]["node"]])
    assert (rows["matmul_1"]["shared_params"], rows["matmul_1"]["shared_with"]) == (64, [rows["matmul_0"]["node"]])
    assert "shared_params" not in rows["rotate_0"] and "shared_params" not in rows["widen_1"]
    assert sum(n["params"] for n in answer["nodes"]) == answer["totals"]["params"] == 72
