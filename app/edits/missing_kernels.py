"""What onnxruntime's "Could not find an implementation for Div(14) node …" means for a model:
the same words come for an operator version it dropped (an old export: convert the opset) and
for a type its CPU kernels lack (QA39: a write_out of a bfloat16 Celu was refused with the bare
message, and a simplify of such a model was told to convert the opset, which can't help)."""

from __future__ import annotations

import re

import onnx

_NO_KERNEL = re.compile(r"Could not find an implementation for (\w+)\((\d+)\) node")
# element types onnxruntime's CPU provider computes few operators in
_FEW_KERNELS = {
    onnx.TensorProto.BFLOAT16,
    onnx.TensorProto.FLOAT16,
    onnx.TensorProto.FLOAT8E4M3FN,
    onnx.TensorProto.FLOAT8E4M3FNUZ,
    onnx.TensorProto.FLOAT8E5M2,
    onnx.TensorProto.FLOAT8E5M2FNUZ,
    *(
        getattr(onnx.TensorProto, t)
        for t in ("FLOAT8E8M0", "FLOAT4E2M1", "INT2", "UINT2")
        if hasattr(onnx.TensorProto, t)
    ),
}


def no_kernel_words(model: onnx.ModelProto, error: str) -> str:
    """ " (why, and what to do)" for a missing-kernel error, "" for any other."""
    found = _NO_KERNEL.search(error)
    if found is None:
        return ""
    op, version = found.groups()
    few = sorted({onnx.TensorProto.DataType.Name(t).lower() for t in _main_types(model.graph) if t in _FEW_KERNELS})
    if few:
        return (
            f" (onnxruntime's CPU provider has no {op}({version}) kernel for the types given it here: the model"
            f" computes in {' and '.join(few)}, which it runs few operators in)"
        )
    return f" (onnxruntime has no kernel for {op} at opset {version}: Convert opset… to a newer one first, then this)"


def _main_types(g: onnx.GraphProto) -> set[int]:
    """The element types of the main graph's inputs, outputs and weights."""
    values = [v.type.tensor_type.elem_type for v in [*g.input, *g.output] if v.type.HasField("tensor_type")]
    return {*values, *(t.data_type for t in g.initializer)}
