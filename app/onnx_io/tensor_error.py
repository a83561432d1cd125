"""How far a tensor is from a reference as quantization tools report it: the relative L2 error
‖value − reference‖ ÷ ‖reference‖ and the signal-to-quantization-noise ratio in dB.

Numpy only: the onnxruntime worker (ort_worker.py, which imports no app module) loads this file
by its path, so a run's comparison and a sensitivity sweep measure with the same formula.
"""

from __future__ import annotations

import math

import numpy as np


def _norm(v: np.ndarray) -> float:
    """The L2 norm, scaled by the largest magnitude first: values near float64's limit (a model
    gone wrong) would overflow their squares."""
    scale = float(np.abs(v).max()) if v.size else 0.0
    return scale * float(np.linalg.norm(v / scale)) if scale else 0.0


def signal_error(value: np.ndarray, reference: np.ndarray) -> dict:
    """{"rel_error", "sqnr_db"} of `value` against `reference` (same shape), over the finite
    differences; rel_error None when the reference is all zeros and the value is not, sqnr_db
    None when either norm is 0 (identical values, or nothing to compare against)."""
    x = np.asarray(value, np.float64)
    y = np.asarray(reference, np.float64)
    diff = x - y
    noise = _norm(diff[np.isfinite(diff)])
    signal = _norm(y[np.isfinite(y)])
    return {
        "rel_error": noise / signal if signal else (0.0 if noise == 0 else None),
        "sqnr_db": 20 * math.log10(signal / noise) if signal and noise else None,
    }
