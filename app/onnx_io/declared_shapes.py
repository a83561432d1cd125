"""Outputs that come back in another shape than the model declares (onnxmltools declares a
LightGBM classifier's labels [1] whatever the batch). onnxruntime only warns; a runtime or a
caller that trusts the declaration (buffers sized from it, TensorRT) fails. Used on a run's
outputs (POST .../run) and on the smoke run's (the validation)."""

from __future__ import annotations

import onnx
from onnx import numpy_helper

from .input_elements import declared_dims
from .traverse import graph_constants

MAX_HOPS = 16  # nodes followed back from an output to the Loop that makes it


def declared_mismatches(
    model: onnx.ModelProto, shapes: dict[str, list[int]], sizes: dict[str, int] | None = None
) -> list[dict]:
    """{"output", "declared", "shape"} for each main-graph output whose shape in `shapes` (by
    name) differs from a declared dim value or rank, or from the size a named dim was run at
    (`sizes`: an output declared [batch, seq, 16] that comes back [1, 6, 16] at batch 2 folds
    the batch its export fixed); the declared dims as the API gives them (a number, a name, null)."""
    sizes = sizes or {}
    found = []
    counted = loop_counted(model.graph)
    for v, declared, shape in _with_shapes(model.graph.output, shapes):
        if v.name in counted and shape and shape[0] == 0:
            continue  # the Loop ran 0 times: onnxruntime may give its per-iteration dims as 0 too
        if len(declared) != len(shape) or any(
            (isinstance(d, int) and d != n) or (isinstance(d, str) and d in sizes and sizes[d] != n)
            for axis, (d, n) in enumerate(zip(declared, shape, strict=True))
            if not (axis == 0 and v.name in counted)
        ):
            found.append({"output": v.name, "declared": declared, "shape": shape})
    return found


# ops whose output's axis 0 is their first input's (Squeeze and Unsqueeze when axis 0 stays: _keeps_first)
_FIRST_AXIS_KEPT = frozenset({"Identity", "Cast", "Squeeze", "Unsqueeze"})


def loop_counted(graph: onnx.GraphProto) -> set[str]:
    """The graph's outputs whose axis 0 counts a Loop's iterations: its scan outputs (the body's
    per-iteration values stacked), as they are or through an Identity, Cast, or a Squeeze or
    Unsqueeze that keeps axis 0. Their size there is what the run's trip count or condition made
    it, never a size the export fixed: a Loop run 3 times gives [3, ...] where [8, ...] is declared."""
    producers = {o: n for n in graph.node for o in n.output if o}
    axes = {}
    for name, t in graph_constants(graph, 8).items():
        try:
            axes[name] = list(numpy_helper.to_array(t).reshape(-1))
        except Exception:  # a type numpy can't read: no axes
            continue
    counted = set()
    for out in graph.output:
        name = out.name
        for _ in range(MAX_HOPS):
            node = producers.get(name)
            if node is None:
                break
            if node.op_type == "Loop":
                carried = len(node.input) - 2
                if list(node.output).index(name) >= carried:  # past the carried values: a scan output
                    counted.add(out.name)
                break
            if node.op_type not in _FIRST_AXIS_KEPT or not node.input or not _keeps_first(node, axes):
                break
            name = node.input[0]
    return counted


def _keeps_first(node: onnx.NodeProto, axes: dict[str, list]) -> bool:
    """Whether a node of _FIRST_AXIS_KEPT keeps its input's axis 0 as its output's: a Squeeze or
    Unsqueeze whose axes (attribute or constant input) are known and leave it."""
    if node.op_type not in ("Squeeze", "Unsqueeze"):
        return True
    given = next((list(a.ints) for a in node.attribute if a.name == "axes"), None)
    if given is None and len(node.input) > 1 and node.input[1] in axes:
        given = axes[node.input[1]]
    return given is not None and all(int(a) > 0 for a in given)


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
