"""Tensor previews: dtype, shape, statistics and a bounded window of values."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import StudioError
from .values import dtype_name, json_number, text

MAX_ELEMENTS = 1 << 28  # refuse to materialise a preview of more than 256 Mi elements
_T = onnx.TensorProto
_PACKED = {_T.INT4, _T.UINT4, _T.FLOAT4E2M1} | {getattr(_T, n) for n in ("INT2", "UINT2") if hasattr(_T, n)}


def tensor_array(t: onnx.TensorProto | onnx.SparseTensorProto, external_reader=None) -> np.ndarray:
    """The tensor as a numpy array (sparse tensors densified). external_reader(location, offset,
    length) -> bytes supplies external data from the store, never from a path in the file."""
    try:
        if isinstance(t, onnx.SparseTensorProto):
            return _densify(t, external_reader)
        if t.data_location == onnx.TensorProto.EXTERNAL:
            mapped = _mapped_external(t, external_reader)
            if mapped is not None:
                return mapped
            t = _with_external_data(t, external_reader)
        n = int(np.prod(t.dims, dtype=np.float64)) if t.dims else 1
        if n > MAX_ELEMENTS:
            raise StudioError("tensor_too_large", f"tensor {t.name!r} has {n} elements, more than a preview reads", 413)
        return numpy_helper.to_array(t)
    except StudioError:
        raise
    except Exception as exc:
        raise StudioError(
            "bad_tensor",
            f"tensor {t.name if isinstance(t, onnx.TensorProto) else t.values.name!r} can't be decoded: {exc}",
            422,
        ) from None


def _mapped_external(t: onnx.TensorProto, reader) -> np.ndarray | None:
    """A read-only memory map over an external tensor's bytes when its dtype is one numpy stores
    natively, so previews page in only the window they show."""
    path_of = getattr(reader, "path", None)
    if path_of is None or t.data_type in _PACKED or t.data_type == onnx.TensorProto.STRING:
        return None
    info = {e.key: e.value for e in t.external_data}
    np_dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type))
    if np_dtype.kind not in "biufc":
        return None  # ml_dtypes' float8 etc.: decoded by numpy_helper instead
    np_dtype = np_dtype.newbyteorder("<")
    n = int(np.prod(t.dims, dtype=np.int64)) if t.dims else 1
    offset = int(info.get("offset", 0) or 0)
    path = path_of(info.get("location", ""))
    if offset + n * np_dtype.itemsize > path.stat().st_size:
        raise StudioError(
            "external_data_short", f"{info.get('location')!r} holds fewer bytes than tensor {t.name!r} needs", 422
        )
    if n == 0:
        return np.zeros(tuple(t.dims), np_dtype)
    return np.memmap(path, dtype=np_dtype, mode="r", offset=offset, shape=tuple(t.dims))


def _with_external_data(t: onnx.TensorProto, reader) -> onnx.TensorProto:
    info = {e.key: e.value for e in t.external_data}
    if reader is None:
        raise StudioError(
            "external_data_missing",
            f"tensor {t.name!r} keeps its data in {info.get('location')!r}, which was not uploaded",
            422,
        )
    offset = int(info.get("offset", 0) or 0)
    length = int(info["length"]) if info.get("length") else None
    data = reader(info.get("location", ""), offset, length)
    copy = onnx.TensorProto()
    copy.CopyFrom(t)
    del copy.external_data[:]
    copy.data_location = onnx.TensorProto.DEFAULT
    copy.raw_data = data
    return copy


def _densify(st: onnx.SparseTensorProto, reader) -> np.ndarray:
    values = tensor_array(st.values, reader)
    indices = tensor_array(st.indices, reader).astype(np.int64)
    dims = tuple(st.dims)
    n = int(np.prod(dims, dtype=np.float64)) if dims else 1
    if n > MAX_ELEMENTS:
        raise StudioError("tensor_too_large", f"sparse tensor densifies to {n} elements", 413)
    dense = np.zeros(n, dtype=values.dtype)
    if indices.ndim == 2:  # [nnz, rank] coordinates
        flat = np.ravel_multi_index(tuple(indices.T), dims) if indices.size else np.zeros(0, np.int64)
    else:
        flat = indices
    dense[flat] = values.reshape(-1)
    return dense.reshape(dims)


HISTOGRAM_BINS = 64  # bars of a float tensor's histogram
INTEGER_BINS = 256  # an integer tensor spanning at most this many values gets a bar per value


def _finite_chunks(arr: np.ndarray, chunk: int):
    """The tensor's finite values as float64 (magnitudes for complex), a chunk at a time, so a
    memory-mapped tensor never needs a float64 copy of itself; with each chunk's NaN and Inf
    counts."""
    flat = arr.reshape(-1)
    for start in range(0, flat.size, chunk):
        x = flat[start : start + chunk]
        x = np.abs(x) if x.dtype.kind == "c" else x
        x = np.asarray(x).astype(np.float64)
        finite = np.isfinite(x)
        yield x[finite], int(np.isnan(x).sum()), int((~finite).sum() - np.isnan(x).sum())


def array_stats(arr: np.ndarray, chunk: int = 1 << 20, histogram: bool = True) -> dict | None:
    """min/max/mean/std over finite values, NaN/Inf and zero counts, and (unless told not to)
    a histogram."""
    if arr.size == 0 or arr.dtype.kind in "OSU":
        return None
    lo, hi, nan, inf, zeros, count = np.inf, -np.inf, 0, 0, 0, 0
    mean_acc, m2 = 0.0, 0.0  # Chan et al. parallel variance: stable for large tensors
    for x, nans, infs in _finite_chunks(arr, chunk):
        nan += nans
        inf += infs
        if x.size == 0:
            continue
        zeros += int(np.count_nonzero(x == 0))
        lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
        n_b, mean_b = x.size, float(x.mean())
        m2_b = float(((x - mean_b) ** 2).sum())
        delta, n_a = mean_b - mean_acc, count
        count = n_a + n_b
        mean_acc += delta * n_b / count
        m2 += m2_b + delta * delta * n_a * n_b / count
    if count == 0:
        return {"min": None, "max": None, "mean": None, "std": None, "nan": nan, "inf": inf, "zeros": 0}
    return {
        "min": json_number(lo),
        "max": json_number(hi),
        "mean": json_number(mean_acc),
        "std": json_number((m2 / count) ** 0.5),
        "nan": nan,
        "inf": inf,
        "zeros": zeros,
        **({"histogram": _histogram(arr, lo, hi, chunk)} if histogram and arr.dtype.kind != "b" else {}),
    }


def _histogram(arr: np.ndarray, lo: float, hi: float, chunk: int) -> dict:
    """How the finite values spread between `lo` and `hi` (their min and max): {"lo", "hi",
    "counts"}, bin k covering lo + k·(hi − lo)/len(counts) up to the next (the last one closed);
    for integers spanning at most INTEGER_BINS values, one bin per value ("integers": true), so a
    quantized tensor shows which of its levels it uses."""
    integers = (arr.dtype.kind in "iu" or arr.dtype.name.startswith(("int", "uint"))) and hi - lo < INTEGER_BINS
    bins = int(hi - lo) + 1 if integers else (HISTOGRAM_BINS if hi > lo else 1)
    counts = np.zeros(bins, np.int64)
    for x, _, _ in _finite_chunks(arr, chunk):
        if integers:
            counts += np.bincount((x - lo).astype(np.int64), minlength=bins)[:bins]
        elif bins == 1:
            counts[0] += x.size
        else:  # np.histogram's uniform bins by hand: a third of its time
            k = ((x - lo) * (bins / (hi - lo))).astype(np.int64)
            np.clip(k, 0, bins - 1, out=k)
            counts += np.bincount(k, minlength=bins)
    return {
        "lo": json_number(lo),
        "hi": json_number(hi),
        "counts": [int(c) for c in counts],
        **({"integers": True} if integers else {}),
    }


def json_values(window: np.ndarray) -> list:
    """An array's values as JSON takes them (NaN, infinities and big integers kept exact)."""
    kind = window.dtype.kind
    if kind == "b":
        return [bool(v) for v in window]
    if kind in "iu":
        return [int(v) for v in window]  # exact: no detour through int64, so UINT64 >= 2**63 stays right
    if kind == "V" and window.dtype.name.startswith(("int", "uint")):
        return [int(v) for v in window.astype(np.int64)]  # ml_dtypes int4/int2 report kind "V"
    if kind == "c":
        return [[json_number(v.real), json_number(v.imag)] for v in window]
    if kind in "OSU":
        return [text(v) if isinstance(v, (bytes, str)) else str(v) for v in window]
    return [json_number(v) for v in window.astype(np.float64)]


def array_preview(arr: np.ndarray, offset: int = 0, count: int = 100, cached_stats=None) -> dict:
    """shape, size, stats and values[offset:offset+count] of an array (a tensor's, a run's output)."""
    flat = arr.reshape(-1)
    window = flat[offset : offset + count]
    return {
        "shape": list(arr.shape),
        "size": int(flat.size),
        "stats": cached_stats(lambda: array_stats(arr)) if cached_stats else array_stats(arr),
        "offset": offset,
        "count": int(window.size),
        "values": json_values(window),
    }


def tensor_preview(
    t, ref: str, offset: int = 0, count: int = 100, max_count: int = 10_000, external_reader=None, cached_stats=None
) -> dict:
    """dtype, shape, stats and values[offset:offset+count]. `cached_stats(compute)` may return
    stats remembered from an earlier page (they cover the whole tensor, so paging needn't
    recompute them)."""
    if offset < 0 or count < 0:
        raise StudioError("bad_window", "offset and count must be non-negative")
    count = min(count, max_count)
    arr = tensor_array(t, external_reader)
    is_sparse = isinstance(t, onnx.SparseTensorProto)
    proto = t.values if is_sparse else t
    out = {
        "ref": ref,
        "name": proto.name,
        "dtype": dtype_name(proto.data_type),
        **array_preview(arr, offset, count, cached_stats),
        "shape": list(t.dims),
    }
    if is_sparse:
        out["sparse"] = {"nnz": int(proto.dims[0]) if proto.dims else 0}
    if t.doc_string if not is_sparse else False:
        out["doc_string"] = text(t.doc_string)
    return out
