"""How well each weight tensor survives integer quantization, from the weights alone (no data):
before quantizing a model, which weights a per-tensor int8 scale would crush (one outlier sets
the scale, every other value rounds to a few levels or to 0) and what a scale per output channel
gets back.

For each float initializer a Conv, ConvTranspose, Gemm or MatMul reads as its weights (or a
Gather as its embedding table): symmetric quantization to `bits` bits (scale = max|w| / (2^(bits-1)
- 1), values rounded and clipped, as onnxruntime's quantizer does for weights) per tensor and
per output channel, each measured by its SQNR (signal to quantization noise, dB: 20·log10(‖w‖ /
‖w − dequantized‖); about 6 dB a bit, so int8 of a well-spread tensor is ~40 dB), with the
tensor's largest magnitude in standard deviations (its outlier ratio) and the share of its
nonzero values that round to 0. SQNR alone hides an outlier: its own energy dominates the
tensor's, so a tensor whose every other value rounds to 0 can still show 30 dB.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from ..onnx_io.address import node_id
from ..onnx_io.weight_reads import WeightRead, weight_reads
from .tensors import array_stats, tensor_array

# op -> (which input holds the weights, the output-channel axis of that input (None: the last))
WEIGHT_INPUTS = {
    "Conv": (1, 0),
    "ConvTranspose": (1, 1),
    "Gemm": (1, None),  # transB decides: 0 when set
    "MatMul": (1, None),
    "Gather": (0, 0),  # an embedding table: a scale per row
}
MAX_ELEMENTS = 1 << 28  # past this a tensor is not measured (its preview isn't either)


BLOCK = 1 << 22  # elements quantized at a time: a 500 MB embedding never needs float copies of itself


def _blocks(w: np.ndarray):
    """(start row, rows) of `w` along its first axis, about BLOCK elements each."""
    rows = max(1, BLOCK // max(1, w[0].size)) if w.ndim and w.shape[0] else 1
    for start in range(0, max(1, w.shape[0]), rows):
        yield start, np.asarray(w[start : start + rows], dtype=np.float32)


def _peaks(w: np.ndarray, axis: int | None) -> np.ndarray:
    """max|w| over the whole tensor (axis None) or over each slice along `axis`, shaped to
    broadcast against the tensor (or a block of it: axis 0 is sliced by the caller)."""
    if axis is None:
        return np.array(max(float(np.max(np.abs(b))) for _, b in _blocks(w)), dtype=np.float32)
    others = tuple(k for k in range(w.ndim) if k != axis)
    if axis == 0:
        return np.concatenate([np.max(np.abs(b), axis=others) for _, b in _blocks(w)]).astype(np.float32)
    peak = np.zeros(w.shape[axis], np.float32)
    for _, b in _blocks(w):
        np.maximum(peak, np.max(np.abs(b), axis=others), out=peak)
    shape = [1] * w.ndim
    shape[axis] = w.shape[axis]
    return peak.reshape(shape)


def _quantized(w: np.ndarray, axis: int | None, bits: int) -> tuple[float | None, float]:
    """`w` quantized symmetrically to `bits` bits with one scale (axis None) or one per slice
    along `axis`: (its SQNR in dB, None when nothing is lost; the share of its nonzero values
    that round to 0 — what one outlier does to the rest under a per-tensor scale). A block of
    rows at a time."""
    levels = 2 ** (bits - 1) - 1
    peak = _peaks(w, axis)
    scales = np.where(peak > 0, peak / levels, 1.0).astype(np.float32)
    signal = noise = 0.0
    zeroed = nonzero = 0
    for start, b in _blocks(w):
        # a scale per row: this block's rows'
        scale = scales[start : start + len(b)].reshape((len(b),) + (1,) * (w.ndim - 1)) if axis == 0 else scales
        q = np.clip(np.round(b / scale), -levels, levels)
        mask = b != 0
        zeroed += int(np.count_nonzero((q == 0) & mask))
        nonzero += int(np.count_nonzero(mask))
        signal += float(np.square(b, dtype=np.float64).sum())
        noise += float(np.square(b - q * scale, dtype=np.float64).sum())
    share = zeroed / max(1, nonzero)
    if noise == 0 or signal == 0:
        return None, share
    return 10 * math.log10(signal / noise), share


def _channel_axis(node: onnx.NodeProto, rank: int) -> int:
    axis = WEIGHT_INPUTS[node.op_type][1]
    if node.op_type == "Gemm" and any(a.name == "transB" and a.i for a in node.attribute):
        return 0
    return rank - 1 if axis is None else axis


def weight_ranges(model: onnx.ModelProto, reader, bits: int = 8) -> dict:
    """{"bits", "weights": [{"tensor", "shape", "nodes": [{node, name, op_type}], "channel_axis",
    "per_tensor_sqnr_db", "per_channel_sqnr_db", "zeroed_per_tensor", "zeroed_per_channel",
    "max_abs", "std", "outlier_ratio"}]} the weight tensors, the worst per tensor first (the
    most values rounded to 0, then the least SQNR): those read in the main graph and inside
    If/Loop bodies (a merged decoder's branches read the main graph's)."""
    readers: dict[tuple[str, str], list[WeightRead]] = {}  # (owning graph, name): a body may shadow a name
    for read in weight_reads(model, {op: spec[0] for op, spec in WEIGHT_INPUTS.items()}):
        t = read.tensor
        if t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16) and len(t.dims) >= 2:
            readers.setdefault((read.owner, t.name), []).append(read)
    out = []
    for (_, name), reads in readers.items():
        t = reads[0].tensor
        if math.prod(t.dims) > MAX_ELEMENTS:
            continue
        w = tensor_array(t, reader)  # a memory map over the store's blob, when it can be one
        axis = _channel_axis(reads[0].node, w.ndim)
        stats = array_stats(w, histogram=False) or {}
        std = stats.get("std") or 0.0
        peak = max(abs(stats.get("min") or 0.0), abs(stats.get("max") or 0.0))
        whole, zeroed = _quantized(w, None, bits)
        channels, zeroed_channels = _quantized(w, axis, bits)
        out.append(
            {
                "tensor": name,
                "shape": list(t.dims),
                "nodes": [
                    {"node": node_id(r.path, r.index), "name": r.node.name, "op_type": r.node.op_type} for r in reads
                ],
                "channel_axis": axis,
                "per_tensor_sqnr_db": whole,
                "per_channel_sqnr_db": channels,
                "zeroed_per_tensor": zeroed,
                "zeroed_per_channel": zeroed_channels,
                "max_abs": peak,
                "std": std,
                "outlier_ratio": peak / std if std else None,
            }
        )
    out.sort(key=_risk)
    return {"bits": bits, "weights": out}


def _risk(entry: dict) -> tuple[float, float]:
    """The most values lost to 0 first, then the least SQNR."""
    sqnr = entry["per_tensor_sqnr_db"]
    return (-entry["zeroed_per_tensor"], math.inf if sqnr is None else sqnr)
