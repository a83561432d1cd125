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
    for v, declared, shape in _with_shapes(model.graph.output, shapes):
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
    for _, declared, shape in _with_shapes(model.graph.input, input_shapes):
        if len(declared) != len(shape):
            continue
        for d, n in zip(declared, shape, strict=True):
            if isinstance(d, str) and d and sizes.setdefault(d, int(n)) != int(n):
                clashing.add(d)
    return {d: n for d, n in sizes.items() if d not in clashing}


def _with_shapes(values, shapes: dict[str, list[int]]):
    """(value, its declared dims, the shape `shapes` gives it) of each tensor value declaring a
    shape that `shapes` names."""
    for v in values:
        shape = shapes.get(v.name)
        if shape is not None and v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape"):
            yield v, declared_dims(v.type.tensor_type.shape), list(shape)
