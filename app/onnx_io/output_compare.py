"""How far two saved outputs (.npy files) are apart: what a run's compare_to, its expected
outputs, the reference checks and `onnx-studio apply --same-outputs` all say about two runs."""

from __future__ import annotations

import numpy as np

from .tensor_error import signal_error

LOCATE_RTOL, LOCATE_ATOL = 1e-4, 1e-5  # closer than this is the same value (kernels may differ a little)
# "close" outputs: each value within 0.1 % of itself plus 0.1 % of the output's largest magnitude
# (what a float16 conversion keeps; a near-zero value's own relative error says nothing)
CLOSE_TOLERANCE = 1e-3


def compare_outputs(a_path: str, b_path: str, close: bool = False, tolerance: float = CLOSE_TOLERANCE) -> dict:
    """How far two outputs are apart; `close`: "equal" allows kernels' rounding (LOCATE_*);
    "close": within `tolerance` of each value plus `tolerance` of b's largest magnitude."""
    a = np.load(a_path, allow_pickle=False)
    b = np.load(b_path, allow_pickle=False)
    none = {"max_abs": None, "max_rel": None, "max_rel_to_range": None}
    if a.shape != b.shape:
        return {"equal": False, "close": False, **none, "shape": [list(a.shape), list(b.shape)]}
    if a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
        same = bool(np.array_equal(a, b))
        return {"equal": same, "close": same, **none, "shape": list(a.shape)}
    x, y = a.astype(np.float64), b.astype(np.float64)
    diff = np.abs(x - y)
    finite = np.isfinite(diff)
    max_abs = float(diff[finite].max()) if finite.any() else 0.0
    rel = diff / np.maximum(np.abs(y), np.finfo(np.float64).tiny)
    max_rel = float(rel[finite].max()) if finite.any() else 0.0
    magnitude = np.abs(y[np.isfinite(y)])
    scale = float(magnitude.max()) if magnitude.size else 0.0
    near = bool(np.allclose(x, y, rtol=tolerance, atol=tolerance * scale, equal_nan=True))
    if close:
        same = bool(np.allclose(x, y, rtol=LOCATE_RTOL, atol=LOCATE_ATOL, equal_nan=True))
    else:
        same = bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    return {
        "equal": same,
        "close": same or near,
        "max_abs": max_abs,
        "max_rel": max_rel,
        "max_rel_to_range": max_abs / scale if scale else (0.0 if max_abs == 0 else None),
        **signal_error(x, y),  # the whole tensor's relative L2 error and SQNR
        "shape": list(a.shape),
    }
