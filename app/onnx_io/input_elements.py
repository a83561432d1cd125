"""What the tensors of a sequence or optional graph input are, for values made up for it (the
edit gate's smoke run, a run's random inputs): an onnxruntime session names only a sequence's
element type ("seq(tensor(float))"), never its tensors' shape, which the model declares."""

from __future__ import annotations

import onnx


def declared_dims(shape: onnx.TensorShapeProto) -> list[int | str | None]:
    """A declared shape's dims as the API gives them: a number, a name, or None (unknown)."""
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in shape.dim]


def tensor_element(tp: onnx.TypeProto) -> dict | None:
    """{"type": onnxruntime's name ("tensor(float)"), "shape": declared dims, None when
    undeclared} of a tensor type; None for any other."""
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.elem_type:
        return None
    t = tp.tensor_type
    name = onnx.TensorProto.DataType.Name(t.elem_type).lower()  # as onnxruntime names it: float, int64
    return {"type": f"tensor({name})", "shape": declared_dims(t.shape) if t.HasField("shape") else None}


def random_element(tp: onnx.TypeProto) -> dict | None:
    """The tensors a sequence, an optional tensor or an optional sequence holds (tensor_element);
    None for a tensor, a map, or a sequence of anything but tensors."""
    kind = tp.WhichOneof("value")
    if kind == "optional_type":
        inner = tp.optional_type.elem_type
        return random_element(inner) if inner.WhichOneof("value") == "sequence_type" else tensor_element(inner)
    if kind == "sequence_type":
        return tensor_element(tp.sequence_type.elem_type)
    return None


def input_elements(graph: onnx.GraphProto, names: list[str]) -> dict[str, dict]:
    """random_element of each input in `names` that is a sequence or optional of tensors."""
    wanted = set(names)
    found = {}
    for vi in graph.input:
        element = random_element(vi.type) if vi.name in wanted else None
        if element is not None:
            found[vi.name] = element
    return found
