"""A small decoder merged the way Hugging Face Optimum exports one (QA31): the main graph is an
If on the bool input `use_cache_branch` whose branches each hold the whole decoder — then_branch
with past keys/values (self-attention concatenates the cache, cross-attention reads the encoder's
cached keys), else_branch without (cross-attention projects `encoder_hidden_states`). Both
branches read the same outer-graph initializers, repeat each other's node and value names, and
the embedding is tied to the output projection (a Gather and a Transpose → MatMul read it)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D, HEADS, HEAD_DIM, VOCAB = 32, 2, 16, 50
OPSET = 17
PAST = ("past_key_values.0.decoder.key", "past_key_values.0.decoder.value")
PAST_ENCODER = ("past_key_values.0.encoder.key", "past_key_values.0.encoder.value")
PRESENT = (
    "present.0.decoder.key",
    "present.0.decoder.value",
    "present.0.encoder.key",
    "present.0.encoder.value",
)


class _Branch:
    """The nodes of one branch, named as torch names them (so both branches use the same names)."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.seen: dict[str, int] = {}

    def op(self, op_type: str, inputs: list[str], scope: str, **attrs) -> str:
        base = f"{scope}/{op_type}"
        count = self.seen.get(base, 0)
        self.seen[base] = count + 1
        name = base if count == 0 else f"{base}_{count}"
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out

    def const(self, values, scope: str) -> str:
        return self.op("Constant", [], scope, value=numpy_helper.from_array(np.array(values, dtype=np.int64), "v"))

    def heads(self, x: str, scope: str) -> str:
        shaped = self.op("Reshape", [x, self.const([0, -1, HEADS, HEAD_DIM], scope)], scope)
        return self.op("Transpose", [shaped], scope, perm=[0, 2, 1, 3])

    def attend(self, q: str, k: str, v: str, scope: str) -> str:
        scores = self.op("MatMul", [q, self.op("Transpose", [k], scope, perm=[0, 1, 3, 2])], scope)
        probs = self.op("Softmax", [scores], scope, axis=-1)
        merged = self.op("Transpose", [self.op("MatMul", [probs, v], scope)], scope, perm=[0, 2, 1, 3])
        return self.op("Reshape", [merged, self.const([0, -1, D], scope)], scope)


def _branch(with_past: bool) -> onnx.GraphProto:
    b = _Branch()
    layer = "/model/decoder/layers.0"
    sa, ca = f"{layer}/self_attn", f"{layer}/encoder_attn"
    w = "model.decoder.layers.0"
    x = b.op("Gather", ["model.decoder.embed_tokens.weight", "input_ids"], "/model/decoder/embed_tokens")
    q = b.heads(b.op("MatMul", [x, f"{w}.self_attn.q_proj.weight"], f"{sa}/q_proj"), sa)
    k = b.heads(b.op("MatMul", [x, f"{w}.self_attn.k_proj.weight"], f"{sa}/k_proj"), sa)
    v = b.heads(b.op("MatMul", [x, f"{w}.self_attn.v_proj.weight"], f"{sa}/v_proj"), sa)
    if with_past:
        k = b.op("Concat", [PAST[0], k], sa, axis=2)
        v = b.op("Concat", [PAST[1], v], sa, axis=2)
    attended = b.op("MatMul", [b.attend(q, k, v, sa), f"{w}.self_attn.out_proj.weight"], f"{sa}/out_proj")
    h = b.op("Add", [x, attended], layer)
    q2 = b.heads(b.op("MatMul", [h, f"{w}.encoder_attn.q_proj.weight"], f"{ca}/q_proj"), ca)
    if with_past:
        k2, v2 = PAST_ENCODER
    else:
        k2 = b.heads(b.op("MatMul", ["encoder_hidden_states", f"{w}.encoder_attn.k_proj.weight"], f"{ca}/k_proj"), ca)
        v2 = b.heads(b.op("MatMul", ["encoder_hidden_states", f"{w}.encoder_attn.v_proj.weight"], f"{ca}/v_proj"), ca)
    crossed = b.op("MatMul", [b.attend(q2, k2, v2, ca), f"{w}.encoder_attn.out_proj.weight"], f"{ca}/out_proj")
    h2 = b.op("Add", [h, crossed], f"{layer}_1")
    tied = b.op("Transpose", ["model.decoder.embed_tokens.weight"], "/proj_out", perm=[1, 0])
    logits = b.op("MatMul", [h2, tied], "/proj_out")
    results = [logits, k, v, k2, v2]
    suffix = "_with_past" if with_past else ""
    outputs = []
    for name, value in zip(("logits", *PRESENT), results, strict=True):
        out = f"{name}{suffix}_branch"
        b.nodes.append(helper.make_node("Identity", [value], [out], name=f"{out}/Identity"))
        outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
    return helper.make_graph(b.nodes, "with_past_graph" if with_past else "no_past_graph", [], outputs)


def _weights(seed: int) -> list[onnx.TensorProto]:
    rng = np.random.default_rng(seed)
    names = {"model.decoder.embed_tokens.weight": (VOCAB, D)}
    for attn in ("self_attn", "encoder_attn"):
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            names[f"model.decoder.layers.0.{attn}.{proj}.weight"] = (D, D)
    return [numpy_helper.from_array((rng.standard_normal(s) * 0.1).astype(np.float32), n) for n, s in names.items()]


def merged_decoder(seed: int = 0) -> onnx.ModelProto:
    """The merged decoder: If(use_cache_branch) → then: with past, else: without."""
    cache = ["batch_size", HEADS, "past_decoder_sequence_length", HEAD_DIM]
    cross = ["batch_size", HEADS, "encoder_sequence_length_out", HEAD_DIM]
    inputs = [
        helper.make_tensor_value_info(
            "encoder_hidden_states", TensorProto.FLOAT, ["batch_size", "encoder_sequence_length", D]
        ),
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "decoder_sequence_length"]),
        *[helper.make_tensor_value_info(n, TensorProto.FLOAT, cache) for n in PAST],
        *[helper.make_tensor_value_info(n, TensorProto.FLOAT, cross) for n in PAST_ENCODER],
        helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1]),
    ]
    present = ["batch_size", HEADS, "present_decoder_sequence_length", HEAD_DIM]
    outputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "decoder_sequence_length", VOCAB]),
        *[helper.make_tensor_value_info(n, TensorProto.FLOAT, present) for n in PRESENT[:2]],
        *[helper.make_tensor_value_info(n, TensorProto.FLOAT, cross) for n in PRESENT[2:]],
    ]
    node = helper.make_node(
        "If", ["use_cache_branch"], [o.name for o in outputs], name="optimum::if",
        then_branch=_branch(True), else_branch=_branch(False),
    )  # fmt: skip
    graph = helper.make_graph([node], "main_graph", inputs, outputs, _weights(seed))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="optimum")
    model.ir_version = 8
    return model


def decoder_feeds(
    use_cache: bool, seq: int = 3, past: int = 4, encoder: int = 6, seed: int = 0
) -> dict[str, np.ndarray]:
    """Inputs for one step: without the cache (past keys unread, given 0-long as Optimum does)
    or with it."""
    rng = np.random.default_rng(seed)
    rand = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    past_len = past if use_cache else 0
    return {
        "encoder_hidden_states": rand(1, encoder, D),
        "input_ids": rng.integers(0, VOCAB, (1, seq)).astype(np.int64),
        PAST[0]: rand(1, HEADS, past_len, HEAD_DIM),
        PAST[1]: rand(1, HEADS, past_len, HEAD_DIM),
        PAST_ENCODER[0]: rand(1, HEADS, encoder, HEAD_DIM),
        PAST_ENCODER[1]: rand(1, HEADS, encoder, HEAD_DIM),
        "use_cache_branch": np.array([use_cache]),
    }
