"""No file-existence oracle: onnx.checker stat()s the location of every external tensor it meets,
relative to the server's working directory, and its verdict says whether that file exists. The
checker gets a copy whose external tensors (those the weightless stand-in keeps: in subgraphs,
Constant attributes, sparse tensors, functions) hold zeros inline instead; our own store checks
the model's real external files."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from .traverse import tensors

ZEROS_LIMIT = 64 << 20  # bytes of zeros put inline for one tensor; past it, a location nobody has
NOWHERE = "(external data: checked by ONNX Studio, not by the checker)"


def _inline_zeros(t: onnx.TensorProto) -> bool:
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type))
    except Exception:
        return False
    count = int(np.prod(list(t.dims), dtype=np.int64)) if t.dims else 1
    if dtype.kind not in "biufc" or t.data_type == onnx.TensorProto.STRING or count * dtype.itemsize > ZEROS_LIMIT:
        return False
    del t.external_data[:]
    t.data_location = onnx.TensorProto.DEFAULT
    t.raw_data = bytes(count * dtype.itemsize)
    return True


def sealed(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` itself when no tensor in it points at an external file, else a copy whose
    external tensors point nowhere the checker can look."""
    data = model.SerializeToString()
    if b"location" not in data:  # every external tensor names its location under this key
        return model
    copy = onnx.ModelProto.FromString(data)
    for t in tensors(copy):
        if t.data_location != onnx.TensorProto.EXTERNAL or _inline_zeros(t):
            continue
        for entry in t.external_data:
            if entry.key == "location":
                entry.value = NOWHERE
    return copy
