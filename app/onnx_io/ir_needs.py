"""The lowest IR version a model's contents need: its opsets' (onnx's own table), its data types'
(onnx.proto's IR history: float8 came with IR 9, int4 with 10, …) and, since IR 4 lets an
initializer be no graph input, 4 when one isn't. A model joined from others (compose) takes
this, not the newest IR any part declared, so what reads the model today still reads it."""

from __future__ import annotations

import onnx

from .traverse import graphs_within

_T = onnx.TensorProto
# the IR version each data type came with (onnx.proto's IR_VERSION history)
_DTYPE_IR = {
    getattr(_T, name): ir
    for name, ir in (
        ("FLOAT8E4M3FN", 9),
        ("FLOAT8E4M3FNUZ", 9),
        ("FLOAT8E5M2", 9),
        ("FLOAT8E5M2FNUZ", 9),
        ("UINT4", 10),
        ("INT4", 10),
        ("FLOAT4E2M1", 11),
        ("FLOAT8E8M0", 12),
        ("UINT2", 13),
        ("INT2", 13),
        ("FLOAT6E2M3", 14),
        ("FLOAT6E3M2", 14),
    )
    if hasattr(_T, name)
}


def _type_ir(t: onnx.TypeProto) -> int:
    kind = t.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        return _DTYPE_IR.get(getattr(t, kind).elem_type, 0)
    if kind in ("sequence_type", "optional_type"):
        return _type_ir(getattr(t, kind).elem_type)
    if kind == "map_type":
        return _type_ir(t.map_type.value_type)
    return 0


def needed_ir_version(model: onnx.ModelProto) -> int:
    """The lowest ir_version the model's opsets, data types and initializers need."""
    need = onnx.helper.find_min_ir_version_for(list(model.opset_import), True)
    for g in graphs_within(model.graph):
        values = list(g.input) + list(g.output) + list(g.value_info)
        need = max([need, *(_type_ir(v.type) for v in values if v.HasField("type"))])
        need = max([need, *(_DTYPE_IR.get(t.data_type, 0) for t in g.initializer)])
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    need = max(need, _DTYPE_IR.get(a.t.data_type, 0))
                elif a.type == onnx.AttributeProto.INT and a.name == "to":  # Cast's target type
                    need = max(need, _DTYPE_IR.get(a.i, 0))
    inputs = {v.name for v in model.graph.input}
    if any(t.name not in inputs for t in model.graph.initializer):
        need = max(need, 4)
    return need
