"""FLOPs of onnxruntime's own operators (com.microsoft), which its transformer optimizer and int4
LLM exports write: without them an optimized BERT or a MatMulNBits LLaMA counted nearly
everything as unknown. Same conventions as costs.py (a multiply-accumulate is 2):

  MatMulNBits, MatMulBnb4, MatMulFpQ4, FusedMatMul, MatMulIntegerToFloat, DynamicQuantizeMatMul,
  QOrderedMatMul      2 · out · K  (K: the attribute where the weights are packed, else A's
                      contracted dim); the weights' dequantization is not counted
  Attention           2 · B · S · In · (Q+K+V widths) for the packed projection (+ B · S · widths
                      with its bias), then as onnx's Attention: 2 · B · H · S · L · (D + Dv) + 3 per
                      score, L the sequence with the past (from `present`'s shape, else S)
  MultiHeadAttention, GroupQueryAttention, PackedAttention, DecoderMaskedMultiHeadAttention
                      2 · B · H · S · L · (D + Dv) + 3 per score, L from `present_key`'s shape or
                      the key's length, else S
  SkipLayerNormalization 6 per element (the add and a LayerNormalization's 5; +1 with a bias);
  SkipSimplifiedLayerNormalization 5; SimplifiedLayerNormalization 4 (as RMSNormalization);
  EmbedLayerNormalization 6 per output element; GroupNorm 5, SkipGroupNorm 6
  Gelu, FastGelu, QuickGelu 1 per element (as onnx's Gelu; FastGelu with a bias, BiasGelu,
  BiasAdd, BiasSplitGelu 2); BiasSoftmax 4; RotaryEmbedding 3 (x·cos + rotated x·sin)
  QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu 1 per element, QLinearSoftmax 3,
  QLinearWhere 1, QLinearGlobalAveragePool 1 per input element, QLinearAveragePool out · kernel,
  QLinearConcat 0, QGemm as Gemm (a QOperator
  quantization's operators, counted as the float ones they stand for)
Tokenizer 0 (splitting text). Any other com.microsoft operator: unknown.
"""

from __future__ import annotations

import math

import onnx

from .costs import PER_ELEMENT as STANDARD_PER_ELEMENT
from .costs import Values, node_attr, node_input

MATMULS = frozenset(
    {
        "MatMulNBits",
        "MatMulBnb4",
        "MatMulFpQ4",
        "FusedMatMul",
        "MatMulIntegerToFloat",
        "DynamicQuantizeMatMul",
        "QOrderedMatMul",
    }
)
ATTENTIONS = frozenset(
    {"MultiHeadAttention", "GroupQueryAttention", "PackedAttention", "DecoderMaskedMultiHeadAttention"}
)
PER_ELEMENT = {
    "SkipLayerNormalization": 6,
    "SkipSimplifiedLayerNormalization": 5,
    "SimplifiedLayerNormalization": 4,
    "EmbedLayerNormalization": 6,
    "GroupNorm": 5,
    "SkipGroupNorm": 6,
    "Gelu": 1,
    "FastGelu": 1,
    "QuickGelu": 1,
    "BiasGelu": 2,
    "BiasAdd": 2,
    "BiasSplitGelu": 2,
    "BiasSoftmax": 4,
    "RotaryEmbedding": STANDARD_PER_ELEMENT["RotaryEmbedding"],  # as ai.onnx's
    # what a QOperator quantization writes, as the float operator it stands for
    "QLinearAdd": 1,
    "QLinearMul": 1,
    "QLinearSigmoid": 1,
    "QLinearLeakyRelu": 1,
    "QLinearSoftmax": STANDARD_PER_ELEMENT["Softmax"],
    "QLinearWhere": 1,
}
WITH_BIAS = {"SkipLayerNormalization": 4, "FastGelu": 1}  # the input index of an optional bias


def contrib_flops(node: onnx.NodeProto, v: Values) -> int | None:
    """FLOPs of one com.microsoft node (the formulas above), or None when unknown."""
    op = node.op_type
    out = v.elements(node.output[0]) if node.output and node.output[0] else None
    if op in MATMULS:
        k = _contracted(node, v)
        return None if out is None or k is None else 2 * out * k
    if op == "Attention":
        return _packed_attention(node, v)
    if op in ATTENTIONS:
        return _attention(node, v)
    if op == "QGemm":  # A, a_scale, a_zp, B, ...: as Gemm, + M·N with its C
        a = v.shape(node_input(node, 0))
        if out is None or a is None or len(a) != 2:
            return None
        k = a[0] if node_attr(node, "transA", 0) else a[1]
        return 2 * out * k + (out if node_input(node, 6) else 0)
    if op == "QLinearGlobalAveragePool":  # as GlobalAveragePool: 1 per input element
        return v.elements(node_input(node, 0))
    if op in ("QLinearConcat", "Tokenizer"):  # a copy; splitting text
        return 0
    if op == "QLinearAveragePool":  # as AveragePool: out · kernel
        kernel = node_attr(node, "kernel_shape", None)
        return None if out is None or not kernel else out * math.prod(kernel)
    if op in PER_ELEMENT and out is not None:
        bias = node_input(node, WITH_BIAS[op]) if op in WITH_BIAS else ""
        return (PER_ELEMENT[op] + (1 if bias else 0)) * out
    return None


def _contracted(node: onnx.NodeProto, v: Values) -> int | None:
    """K of a matrix product: the packed weights' attribute, else A's contracted dim."""
    k = node_attr(node, "K", None)
    if k:
        return int(k)
    a = v.shape(node_input(node, 0))
    if not a:
        return None
    return a[-2] if node.op_type == "FusedMatMul" and node_attr(node, "transA", 0) and len(a) >= 2 else a[-1]


def _scores(node: onnx.NodeProto, b, s, length, d, dv):
    heads = int(node_attr(node, "num_heads", 0) or 0)
    if not heads:
        return None
    scores = b * heads * s * length
    return 2 * scores * (d + dv) + 3 * scores


def _attention(node: onnx.NodeProto, v: Values) -> int | None:
    """Q [B, S, H·D] (or [B, S, H, 3, D] with Q, K and V packed), K and V [B, L, ·] or
    [B, H_kv, L, D]; L grows by the past when the present key says so."""
    q, key = v.shape(node_input(node, 0)), v.shape(node_input(node, 1))
    heads = int(node_attr(node, "num_heads", 0) or 0)
    if q is None or not heads:
        return None
    if len(q) == 5:  # [B, S, H, 3, D]: packed
        b, s, d = q[0], q[1], q[4]
        return _scores(node, b, s, s, d, d)
    if len(q) != 3:
        return None
    b, s, d = q[0], q[1], q[2] // heads
    kv_heads = int(node_attr(node, "kv_num_heads", 0) or heads)
    value = v.shape(node_input(node, 2))
    length, dv = s, d
    if key is not None and len(key) == 3:
        length = key[1]
    elif key is not None and len(key) == 4:
        length = key[2]
    elif key is None and node.op_type == "GroupQueryAttention":  # Q, K and V packed in the query
        d = q[2] // (heads + 2 * kv_heads)
        dv = d
    if value is not None and len(value) == 3:
        dv = value[2] // kv_heads
    present = v.shape(node.output[1]) if len(node.output) > 1 and node.output[1] else None
    if present is not None and len(present) == 4:  # [B, H_kv, L, D]: the past included
        length = present[2]
    return _scores(node, b, s, length, d, dv)


def _packed_attention(node: onnx.NodeProto, v: Values) -> int | None:
    """com.microsoft's Attention: input [B, S, In] times weights [In, Q+K+V widths], then attention."""
    x, w = v.shape(node_input(node, 0)), v.shape(node_input(node, 1))
    if x is None or w is None or len(x) != 3 or len(w) != 2:
        return None
    b, s, width = x[0], x[1], w[1]
    sizes = list(node_attr(node, "qkv_hidden_sizes", []) or [])
    dq, dv_total = (sizes[0], sizes[2]) if len(sizes) == 3 else (width // 3, width // 3)
    heads = int(node_attr(node, "num_heads", 0) or 0)
    if not heads:
        return None
    projection = 2 * b * s * x[2] * width + (b * s * width if node_input(node, 2) else 0)
    present = v.shape(node.output[1]) if len(node.output) > 1 and node.output[1] else None
    length = present[3] if present is not None and len(present) == 5 else s  # [2, B, H, L, D]
    scores = _scores(node, b, s, length, dq // heads, dv_total // heads)
    return None if scores is None else projection + scores
