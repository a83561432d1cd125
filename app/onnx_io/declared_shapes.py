"""Outputs that come back in another shape than the model declares (onnxmltools declares a
LightGBM classifier's labels [1] whatever the batch). onnxruntime only warns; a runtime or a
caller that trusts the declaration (buffers sized from it, TensorRT) fails. Used on a run's
outputs (POST .../run) and on the smoke run's (the validation)."""

from __future__ import annotations

import onnx

from .input_elements import declared_dims


def declared_mismatches(model: onnx.ModelProto, shapes: dict[str, list[int]]) -> list[dict]:
    """{"output", "declared", "shape"} for each main-graph output whose shape in `shapes` (by
    name) differs from a declared dim value or rank; the declared dims as the API gives them (a
    number, a name, null)."""
    found = []
    for v in model.graph.output:
        shape = shapes.get(v.name)
        t = v.type.tensor_type
        if shape is None or not v.type.HasField("tensor_type") or not t.HasField("shape"):
            continue
        declared = declared_dims(t.shape)
        shape = list(shape)
        if len(declared) != len(shape) or any(
            isinstance(d, int) and d != n for d, n in zip(declared, shape, strict=True)
        ):
            found.append({"output": v.name, "declared": declared, "shape": shape})
    return found
