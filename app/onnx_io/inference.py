"""Types of every value in every graph, from the model's own value_info or onnx shape inference
run on a copy (the stored model is never changed)."""

from __future__ import annotations

import onnx

from .address import resolve_graph
from .light import light_copy
from .limits import PROTOBUF_LIMIT

# data propagation carries a 1-D tensor's values through Add/Mul/...: ~140 bytes an element, in
# C++ holding the GIL (x: float[2^40] grew a server to 17.5 GB); shape tensors are far smaller
MAX_PROPAGATED = 1 << 16


def data_propagation_is_bounded(model: onnx.ModelProto) -> bool:
    """False when a 1-D tensor the main graph declares (input, output, value_info) is longer
    than MAX_PROPAGATED, or of unknown length: inference then runs without data propagation."""
    g = model.graph
    for v in (*g.input, *g.output, *g.value_info):
        t = v.type.tensor_type
        if v.type.HasField("tensor_type") and t.HasField("shape") and len(t.shape.dim) == 1:
            d = t.shape.dim[0]
            if d.HasField("dim_value") and d.dim_value > MAX_PROPAGATED:
                return False
    return True


def inferred_model(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """The model with shape inference's value_info added, or None when inference can't run."""
    try:
        # never ByteSize() the model itself: upb walks every weight for it (seconds on 1 GiB)
        light = light_copy(model)
        if light.ByteSize() >= PROTOBUF_LIMIT:
            return None
        return onnx.shape_inference.infer_shapes(
            light, check_type=False, strict_mode=False, data_prop=data_propagation_is_bounded(light)
        )
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


def infer_isolated(model: onnx.ModelProto, **options) -> onnx.ModelProto:
    """Shape inference on the weightless stand-in of an untrusted model, in the helper process
    (offload.py), data propagation only where it is bounded. ValueError: onnx's words."""
    from . import offload

    light = light_copy(model)
    if options.get("data_prop") and not data_propagation_is_bounded(light):
        options["data_prop"] = False
    return offload.infer(light, **options)


def with_inferred_value_info(model: onnx.ModelProto, **options) -> onnx.ModelProto:
    """A copy of `model` whose main graph also holds what inference found (infer_isolated)."""
    inferred = infer_isolated(model, **options)
    typed = onnx.ModelProto()
    typed.CopyFrom(model)
    known = {v.name for v in model.graph.value_info}
    typed.graph.value_info.extend(v for v in inferred.graph.value_info if v.name not in known)
    return typed
