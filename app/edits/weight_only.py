"""Weight-only quantization by blocks, as LLMs ship: each MatMul's weight (and optionally each
embedding table) stored in 4 or 8 bits with a scale per block of `block_size` values along its
input dim, the activations left in float — onnxruntime's MatMulNBits quantizer (RTN, or HQQ's
optimized scales and zero points), written as com.microsoft MatMulNBits / GatherBlockQuantized
(onnxruntime's int4 kernels) or as standard blocked DequantizeLinear → MatMul (QDQ, opset 21).
No calibration data. Runs in the helper (model_tools.py)."""

from __future__ import annotations

import importlib.util

import onnx

from ..errors import StudioError
from ..onnx_io.sizes import size_text
from ..onnx_io.traverse import opset_version, walk_graphs
from .field_types import BOOLEAN, NAME
from .functions_left import left_in_functions
from .jsontypes import Array, Enum, Integer, optional
from .model_tools import check_size, constants_to_initializers, data_size, in_helper, keep, reorder, weights
from .registry import edit_op
from .tool_names import check_tool_names

BITS = (4, 8)
BLOCK_SIZES = (16, 32, 64, 128, 256)
FORMATS = {"MatMulNBits": "com.microsoft MatMulNBits", "QDQ": "blocked DequantizeLinear → MatMul"}
QUANTIZED_OPS = frozenset({"MatMulNBits", "GatherBlockQuantized"})


@edit_op(
    "quantize_weights",
    optional("bits", Integer(minimum=1), "bits per weight: 4 or 8", default=4),
    optional("block_size", Integer(minimum=1), "values sharing a scale: 16, 32, 64, 128 or 256", default=128),
    optional(
        "algorithm",
        Enum(("RTN", "HQQ")),
        "RTN rounds to the nearest step; HQQ optimizes each block's scale and zero point (MatMulNBits only; needs PyTorch on the server)",
        default="RTN",
    ),
    optional(
        "format",
        Enum(tuple(FORMATS)),
        "onnxruntime's MatMulNBits, or standard blocked QDQ (opset 21+)",
        default="MatMulNBits",
    ),
    optional("symmetric", BOOLEAN, "no zero points (a scale alone per block)", default=False),
    optional(
        "embeddings",
        BOOLEAN,
        "quantize Gather embedding tables too (RTN, MatMulNBits: GatherBlockQuantized)",
        default=False,
    ),
    optional(
        "accuracy_level",
        Integer(minimum=0),
        "MatMulNBits' compute type: 0 unset, 1 fp32, 2 fp16, 3 bf16, 4 int8",
        default=0,
    ),
    optional("nodes_to_exclude", Array(NAME, label="an array of node names"), "MatMul nodes left in float", default=[]),
    rewrites_tensors=True,
)
def quantize_weights(model: onnx.ModelProto, op: dict) -> str:
    """Quantize the weights of MatMul and Gemm nodes (and, with embeddings, of Gather embedding
    tables) to 4 or 8 bits by blocks with onnxruntime's MatMulNBits quantizer: a scale (and a
    zero point unless symmetric) per block of block_size values along the input dim,
    activations left in float, no calibration data — what int4 LLM exports ship. "MatMulNBits" writes onnxruntime's
    com.microsoft operators; "QDQ" standard blocked DequantizeLinear before each MatMul (opset
    21+). A Gemm with a constant weight is first made MatMul + Add (the quantizer takes MatMul
    only). The model's fields, metadata and value_info stay as they were."""
    check_tool_names(model, op)
    bits, block, fmt, algorithm = op["bits"], op["block_size"], op["format"], op["algorithm"]
    if bits not in BITS:
        raise StudioError("bad_value", f"quantize_weights: bits must be 4 or 8, not {bits}")
    if block not in BLOCK_SIZES:
        raise StudioError(
            "bad_value", f"quantize_weights: block_size must be one of {', '.join(map(str, BLOCK_SIZES))}, not {block}"
        )
    if not 0 <= op["accuracy_level"] <= 4:
        raise StudioError("bad_value", f"quantize_weights: accuracy_level runs from 0 to 4, not {op['accuracy_level']}")
    if fmt == "QDQ" and (algorithm == "HQQ" or op["embeddings"]):
        raise StudioError(
            "bad_value", "quantize_weights: HQQ and embedding tables are quantized as MatMulNBits only, not QDQ"
        )
    if algorithm == "HQQ" and importlib.util.find_spec("torch") is None:
        raise StudioError(
            "bad_value",
            "quantize_weights: HQQ needs PyTorch where the server runs (pip install torch); RTN needs nothing",
        )
    if algorithm == "HQQ" and op["embeddings"]:
        raise StudioError(
            "bad_value", "quantize_weights: HQQ quantizes MatMul weights only; use RTN for embedding tables"
        )
    if fmt == "QDQ" and (opset_version(model, model.graph, "") or 0) < 21:
        raise StudioError(
            "bad_value", "quantize_weights: blocked DequantizeLinear needs opset 21 or later; convert the opset first"
        )
    check_size(model, "quantize_weights")
    before = sum(data_size(t) for t in weights(model))
    made = constants_to_initializers(model)
    before_nodes = _quantized(model)
    gemms = _count(model, "Gemm")
    options = {
        k: op[k]
        for k in (
            "bits",
            "block_size",
            "algorithm",
            "format",
            "symmetric",
            "embeddings",
            "accuracy_level",
            "nodes_to_exclude",
        )
    }
    note = made + keep(
        model, in_helper(model, "quantize_weights", options, "quantize_weights: onnxruntime's quantizer failed")
    )
    quantized = _quantized(model) - before_nodes
    if quantized <= 0:
        raise StudioError(
            "bad_value",
            "quantize_weights: no weight was quantized: no MatMul or Gemm reads a float weight of two dims "
            f"whose input dim is a multiple of {block} straight from an initializer"
            + left_in_functions(model, ("MatMul", "Gemm")),
        )
    reorder(model)
    after = sum(data_size(t) for t in weights(model))
    gemm_note = (
        f" ({gemms - _count(model, 'Gemm')} Gemm node(s) first made MatMul + Add)"
        if gemms > _count(model, "Gemm")
        else ""
    )
    return (
        f"weights quantized to {bits} bits by blocks of {block} ({algorithm}, {FORMATS[fmt]}): {quantized} node(s)"
        f"{gemm_note}, weights {size_text(before)} -> {size_text(after)}{note}"
        + left_in_functions(model, ("MatMul", "Gemm"))
    )


def _count(model: onnx.ModelProto, op_type: str) -> int:
    return sum(n.op_type == op_type for n in model.graph.node)


def _quantized(model: onnx.ModelProto) -> int:
    """Nodes reading block-quantized weights: MatMulNBits, GatherBlockQuantized, or MatMuls fed
    by a blocked DequantizeLinear (one with a block_size)."""
    count = 0
    for ref in walk_graphs(model):
        for n in ref.container.node:
            blocked = n.op_type == "DequantizeLinear" and any(a.name == "block_size" and a.i > 0 for a in n.attribute)
            count += n.op_type in QUANTIZED_OPS or blocked
    return count
