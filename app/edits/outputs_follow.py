"""A refused edit whose only fault is a graph output declared as it was: the way to save it with
the output re-declared as its producer now writes it.

An output the person (or the page's "make it a graph output") declared keeps the shape its
producer had then: an ArgMax added over the batch, then given axis=1, was refused ("'class_id' is
inferred with dim 1 = 1 but declared 1000") and the page had no way to send the attribute and the
new declaration together (QA17 F8). Nothing is changed behind the person's back: the refusal
carries the batch with set_io_shape ops added, offered as one more click."""

from __future__ import annotations

import onnx

from ..onnx_io.inference import infer_isolated
from ..views.values import dtype_name, shape_json
from .stale_value_info import keep_dim_names


def outputs_following(model: onnx.ModelProto, at: tuple[str, int] | None, ops: list[dict], passes) -> dict | None:
    """{"label", "ops"} when the node a full check refused (`at`: its graph's path and index)
    is a main-graph node writing graph outputs, and the edited model with those outputs declared
    as inference now types them passes `passes(model)` (the full check); else None."""
    if at is None or at[0] != "" or not 0 <= at[1] < len(model.graph.node):
        return None
    written = set(model.graph.node[at[1]].output)
    declared = [o for o in model.graph.output if o.name in written and o.type.HasField("tensor_type")]
    if not declared:
        return None
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for o in probe.graph.output:
        if o.name in written:
            o.ClearField("type")  # typed afresh by inference, element type included (a Cast's `to`)
    try:
        inferred = infer_isolated(probe, check_type=True, strict_mode=True, data_prop=True)
    except ValueError:
        return None  # the node itself is at fault: nothing to re-declare
    found = {o.name: o.type for o in inferred.graph.output}
    redeclared = []
    for o in declared:
        new = found.get(o.name)
        if new is None or not new.HasField("tensor_type") or not new.tensor_type.HasField("shape"):
            return None
        new = onnx.TypeProto.FromString(new.SerializeToString())
        keep_dim_names(new, o.type)  # "batch" stays where inference can only say unk__0
        redeclared.append((o, new))
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    by_name = {o.name: o for o in fixed.graph.output}
    for o, new in redeclared:
        by_name[o.name].type.CopyFrom(new)
    if not passes(fixed):
        return None
    extra, words = [], []
    for o, new in redeclared:
        op: dict = {"op": "set_io_shape", "name": o.name, "shape": shape_json(new.tensor_type.shape)}
        dtype = dtype_name(new.tensor_type.elem_type)
        if new.tensor_type.elem_type != o.type.tensor_type.elem_type:
            op["dtype"] = dtype
        extra.append(op)
        dims = ", ".join("?" if d is None else str(d) for d in op["shape"])
        words.append(f"{o.name} as {dtype} [{dims}]")
    return {"label": f"Also declare {' and '.join(words)}", "ops": [*ops, *extra]}
