"""Outputs that come back in another shape than the model declares (onnxmltools declares a
LightGBM classifier's labels [1] whatever the batch). onnxruntime only warns; a runtime or a
caller that trusts the declaration (buffers sized from it, TensorRT) fails. Used on a run's
outputs (POST .../run) and on the smoke run's (the validation)."""

from __future__ import annotations

import onnx

from .input_elements import declared_dims


def declared_mismatches(
    model: onnx.ModelProto, shapes: dict[str, list[int]], sizes: dict[str, int] | None = None
) -> list[dict]:
    """{"output", "declared", "shape"} for each main-graph output whose shape in `shapes` (by
    name) differs from a declared dim value or rank, or from the size a named dim was run at
    (`sizes`: an output declared [batch, seq, 16] that comes back [1, 6, 16] at batch 2 folds
    the batch its export fixed); the declared dims as the API gives them (a number, a name, null)."""
    sizes = sizes or {}
    found = []
    for v in model.graph.output:
        shape = shapes.get(v.name)
        t = v.type.tensor_type
        if shape is None or not v.type.HasField("tensor_type") or not t.HasField("shape"):
            continue
        declared = declared_dims(t.shape)
        shape = list(shape)
        if len(declared) != len(shape) or any(
            (isinstance(d, int) and d != n) or (isinstance(d, str) and d in sizes and sizes[d] != n)
            for d, n in zip(declared, shape, strict=True)
        ):
            found.append({"output": v.name, "declared": declared, "shape": shape})
    return found


def fed_sizes(model: onnx.ModelProto, input_shapes: dict[str, list[int]]) -> dict[str, int]:
    """{dim name: size} of the main graph's inputs' named dims in a run fed arrays of
    `input_shapes` (by input name); a name fed two sizes is left out."""
    sizes: dict[str, int] = {}
    clashing: set[str] = set()
    for v in model.graph.input:
        shape = input_shapes.get(v.name)
        t = v.type.tensor_type
        if shape is None or not v.type.HasField("tensor_type") or not t.HasField("shape"):
            continue
        declared = declared_dims(t.shape)
        if len(declared) != len(shape):
            continue
        for d, n in zip(declared, shape, strict=True):
            if isinstance(d, str) and d and sizes.setdefault(d, int(n)) != int(n):
                clashing.add(d)
    return {d: n for d, n in sizes.items() if d not in clashing}
