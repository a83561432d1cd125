"""What a transformer export's inputs hold, read off their names, so that random inputs make a
run that means something: an attention mask of random integers is all zeros (numpy's integers
here are 0), which masks every position — each softmax row then weighs the padding alike and
every position predicts the same token; position ids of zeros put every token at position 0.
A mask is fed ones (every position attended), position ids 0, 1, 2, … along their last axis
(after the cached past — the past a longer mask covers, else the length of the past key/value
inputs: ort_worker places them)."""

from __future__ import annotations

import re

import onnx

MASK = "mask"
POSITIONS = "positions"

# optimum / transformers names: attention_mask, encoder_attention_mask, padding_mask, mask
_MASK_NAME = re.compile(r"(^|_)mask$", re.IGNORECASE)
_POSITION_NAME = re.compile(r"(^|_)position_?ids$|^positions$", re.IGNORECASE)

_WHOLE = frozenset(
    {
        onnx.TensorProto.INT64,
        onnx.TensorProto.INT32,
        onnx.TensorProto.INT16,
        onnx.TensorProto.INT8,
        onnx.TensorProto.UINT8,
        onnx.TensorProto.BOOL,
    }
)


def input_roles(graph: onnx.GraphProto, names: set[str] | list[str]) -> dict[str, str]:
    """{input: MASK | POSITIONS} for those of `names` (graph inputs) that are whole-number or
    boolean tensors named so. A float mask is left alone: additive masks (0 attends) and
    multiplicative ones (1 attends) share the name."""
    wanted = set(names)
    roles = {}
    for vi in graph.input:
        if vi.name not in wanted or not vi.type.HasField("tensor_type"):
            continue
        elem = vi.type.tensor_type.elem_type
        if _MASK_NAME.search(vi.name) and elem in _WHOLE:
            roles[vi.name] = MASK
        elif _POSITION_NAME.search(vi.name) and elem in _WHOLE - {onnx.TensorProto.BOOL}:
            roles[vi.name] = POSITIONS
    return roles
