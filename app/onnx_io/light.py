"""A weightless stand-in for a model, for shape inference and the full check.

onnx's C++ checker and inference receive the model serialised, so a 100 MB model costs 100 MB
of copying per call though inference needs only each initializer's type and shape (and the
values of small integer tensors that feed Reshape/Expand/...). The stand-in turns big
initializers into typed graph inputs and copies nothing else heavy.
"""

from __future__ import annotations

import onnx
from onnx import helper

SMALL_ELEMENTS = 1024  # kept whole: may be read by data propagation
SMALL_INT_ELEMENTS = 1 << 16  # integer tensors are often shapes and indices
_INTS = {onnx.TensorProto.INT64, onnx.TensorProto.INT32}


def _is_small(t: onnx.TensorProto) -> bool:
    n = 1
    for d in t.dims:
        n *= d
    return (
        n <= (SMALL_INT_ELEMENTS if t.data_type in _INTS else SMALL_ELEMENTS)
        and t.data_location != onnx.TensorProto.EXTERNAL
    )


def _is_inline(t: onnx.TensorProto) -> bool:
    return t.data_location != onnx.TensorProto.EXTERNAL


def basic_check(model: onnx.ModelProto, verdict_of=None) -> dict:
    """onnx.checker's basic verdict, {"ok", "message"}, computed without serialising the whole
    model: the structure is checked on the weightless stand-in and each stripped inline tensor
    with onnx.checker.check_tensor (the checker's own tensor rules). External tensors are not
    the checker's to open (it looks in the working directory); their files are ours to check."""
    from .load import checker_verdict

    light = light_copy(model)
    verdict = (verdict_of or checker_verdict)(light)  # the server passes offload's (the helper process)
    if not verdict["ok"] or light is model:
        return verdict
    kept = {t.name for t in light.graph.initializer}
    for t in model.graph.initializer:
        if t.name in kept or not _is_inline(t):
            continue
        try:
            onnx.checker.check_tensor(t)
        except Exception as exc:
            return {"ok": False, "message": str(exc).strip()}
    return verdict


def graph_shell(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of the model without its main graph's initializers, copied field by field: the
    weights are neither copied nor walked (ByteSize() alone reads every byte of 1 GiB)."""
    shell = onnx.ModelProto()
    for field, value in model.ListFields():
        if field.name == "graph":
            continue
        if field.is_repeated:
            getattr(shell, field.name).extend(value)
        elif field.message_type:
            getattr(shell, field.name).CopyFrom(value)
        else:
            setattr(shell, field.name, value)
    for field, value in model.graph.ListFields():
        if field.name == "initializer":
            continue
        if field.is_repeated:
            getattr(shell.graph, field.name).extend(value)
        else:
            setattr(shell.graph, field.name, value)
    return shell


def light_copy(model: onnx.ModelProto, keep=None) -> onnx.ModelProto:
    """The model with big main-graph initializers replaced by graph inputs of the same type
    (`keep(tensor)` decides which stay; by default the small ones)."""
    keep = keep or _is_small
    g = model.graph
    if all(keep(t) for t in g.initializer):
        return model
    light = graph_shell(model)
    lg = light.graph
    inputs = {v.name for v in g.input}
    for t in g.initializer:
        if keep(t):
            lg.initializer.append(t)
        elif t.name not in inputs:
            lg.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return light
