"""Calibration data for static quantization: the values given for each graph input (an uploaded
.npy or a JSON tensor), checked against the input's type and shape and cut into samples. An
array of the input's rank is one sample, or one sample per row where the input's first dim is a
fixed 1 (a stack of images for a batch-1 model); an array of one more dim holds a sample per
entry of its first."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ..errors import StudioError
from ..onnx_io.sizes import size_text
from .sources import array_from_source

MAX_SAMPLES = 1000  # each is a run of the model with every activation's range measured
MAX_BYTES = 2 << 30  # of calibration values, all inputs together


def calibration_samples(
    model: onnx.ModelProto, given: dict, what: str = "calibration data"
) -> tuple[dict[str, np.ndarray], int]:
    """{input name: its samples stacked along a new first axis}, and how many samples there are;
    `what` names the data in errors."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = {v.name: v for v in model.graph.input if v.name not in initializers}
    unknown = sorted(set(given) - set(inputs))
    if unknown:
        raise StudioError(
            "unknown_input", f"{what} for {unknown[0]!r}: the model's inputs are {', '.join(sorted(inputs))}"
        )
    missing = sorted(set(inputs) - set(given))
    if missing:
        raise StudioError("missing_input", f"{what} is needed for every graph input; missing: {', '.join(missing)}")
    samples = {
        name: _stacked(array_from_source(value, f"{what} for {name!r}"), inputs[name], what)
        for name, value in given.items()
    }
    counts = {name: len(a) for name, a in samples.items()}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
        raise StudioError("bad_value", f"the inputs' {what} hold different numbers of samples: {listed}")
    count = next(iter(counts.values()), 0)
    if count == 0:
        raise StudioError("bad_value", f"the {what} hold no sample (their first axis is empty)")
    if count > MAX_SAMPLES:
        raise StudioError("too_big", f"{count} samples of {what}: at most {MAX_SAMPLES} are run", 422)
    size = sum(a.nbytes for a in samples.values())
    if size > MAX_BYTES:
        raise StudioError("too_big", f"the {what} take {size_text(size)}, more than {size_text(MAX_BYTES)}", 422)
    return samples, count


def _stacked(arr: np.ndarray, value: onnx.ValueInfoProto, what: str) -> np.ndarray:
    name = value.name
    if not value.type.HasField("tensor_type"):
        raise StudioError("bad_value", f"input {name!r} is not a tensor: it can't be calibrated")
    tensor = value.type.tensor_type
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    if not np.can_cast(arr.dtype, dtype, "same_kind"):
        raise StudioError("bad_value", f"{what} for {name!r} are {arr.dtype}; the input is {dtype}")
    arr = arr.astype(dtype, copy=False)
    if not tensor.HasField("shape"):  # a rank the model doesn't say: the array is one sample
        return arr[None]
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
    rank = len(dims)
    if arr.ndim == rank + 1:
        stacked = arr
    elif arr.ndim == rank and rank and dims[0] == 1 and arr.shape[0] != 1:
        stacked = arr[:, None]  # rows of a batch-1 model's input
    elif arr.ndim == rank:
        stacked = arr[None]
    else:
        raise StudioError(
            "shape_mismatch",
            f"{what} for {name!r} are {arr.ndim}-D {list(arr.shape)}; the input is {rank}-D "
            f"{_shown(dims, tensor)}: give a {rank}-D array (one sample) or {rank + 1}-D (samples along its first axis)",
        )
    sample = stacked.shape[1:]
    for k, (want, got) in enumerate(zip(dims, sample, strict=True)):
        if want is not None and want != got:
            raise StudioError(
                "shape_mismatch",
                f"{what} for {name!r}: a sample is {list(sample)}, the input is {_shown(dims, tensor)} (dim {k})",
            )
    return stacked


def _shown(dims: list, tensor: onnx.TypeProto.Tensor) -> str:
    return (
        "["
        + ", ".join(
            str(v) if v is not None else (d.dim_param or "?") for v, d in zip(dims, tensor.shape.dim, strict=True)
        )
        + "]"
    )
