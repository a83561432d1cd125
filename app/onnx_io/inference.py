"""Types of every value in every graph, from the model's own value_info or onnx shape inference
run on a copy (the stored model is never changed)."""

from __future__ import annotations

import onnx

from .address import resolve_graph
from .light import light_copy
from .limits import PROTOBUF_LIMIT


def inferred_model(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """The model with shape inference's value_info added, or None when inference can't run."""
    try:
        # never ByteSize() the model itself: upb walks every weight for it (seconds on 1 GiB)
        light = light_copy(model)
        if light.ByteSize() >= PROTOBUF_LIMIT:
            return None
        return onnx.shape_inference.infer_shapes(light, check_type=False, strict_mode=False, data_prop=True)
    except Exception:
        return None


def inferred_value_info(model: onnx.ModelProto, inferred: onnx.ModelProto | None, path: str) -> list:
    """ValueInfoProtos shape inference adds for the graph at `path` (not already in value_info)."""
    if inferred is None:
        return []
    try:
        ours = resolve_graph(model, path).container
        theirs = resolve_graph(inferred, path).container
    except Exception:
        return []
    if isinstance(ours, onnx.FunctionProto) or isinstance(theirs, onnx.FunctionProto):
        return []
    known = {v.name for v in ours.value_info} | {v.name for v in ours.input} | {v.name for v in ours.output}
    return [v for v in theirs.value_info if v.name not in known]
