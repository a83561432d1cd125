"""How far two saved outputs (.npy files) are apart: what a run's compare_to, its expected
outputs, the reference checks and `onnx-studio apply --same-outputs` all say about two runs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from . import saved_values
from .tensor_error import signal_error

if TYPE_CHECKING:
    from .padded_positions import Mask

LOCATE_RTOL, LOCATE_ATOL = 1e-4, 1e-5  # closer than this is the same value (kernels may differ a little)
# "close" outputs: each value within 0.1 % of itself plus 0.1 % of the output's largest magnitude
# (what a float16 conversion keeps; a near-zero value's own relative error says nothing)
CLOSE_TOLERANCE = 1e-3


# of two tensors' shape: the mask they are read by and their values at attended positions
# (padded_positions.Padding.attended)
Attended = Callable[[tuple[int, ...]], "tuple[Mask, np.ndarray] | None"] | None

# what is unknown of outputs of another shape or kind; "tolerance_needed": they are never close
NONE = {"max_abs": None, "max_rel": None, "max_rel_to_range": None, "tolerance_needed": None}


def compare_outputs(
    a_path: str, b_path: str, close: bool = False, tolerance: float = CLOSE_TOLERANCE, attended: Attended = None
) -> dict:
    """How far two outputs are apart; `close`: "equal" allows kernels' rounding (LOCATE_*);
    "close": within `tolerance` of each value plus `tolerance` of b's largest magnitude. Two
    sequences: tensor by tensor, the furthest apart; "shape" their lengths. `attended`: of two
    tensors' shape, the values at the positions an attention mask attends (compare_arrays)."""
    a, b = saved_values.load(a_path), saved_values.load(b_path)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return compare_arrays(a, b, close, tolerance, attended)
    if isinstance(a, saved_values.Sequence) and isinstance(b, saved_values.Sequence):
        return _compare_sequences(a.items, b.items, close, tolerance)
    kinds = [saved_values.kind_of(a), saved_values.kind_of(b)]
    if isinstance(a, saved_values.Map) and isinstance(b, saved_values.Map):
        return _compare_items(a, b, close, tolerance)
    same = kinds == ["optional", "optional"]  # both empty
    return {
        "equal": same,
        "close": same,
        **NONE,
        "tolerance_needed": 0.0 if same else None,
        "shape": [] if same else kinds,
    }


def _compare_sequences(a: list, b: list, close: bool, tolerance: float) -> dict:
    if len(a) != len(b):
        return {"equal": False, "close": False, **NONE, "shape": [[len(a)], [len(b)]]}
    each = [_compare_items(x, y, close, tolerance) for x, y in zip(a, b, strict=True)]
    if not each:
        return {"equal": True, "close": True, **NONE, "tolerance_needed": 0.0, "shape": [0]}
    known = [c for c in each if c["max_abs"] is not None]
    out = {
        "equal": all(c["equal"] for c in each),
        "close": all(c["close"] for c in each),
        **NONE,
        "shape": [len(a)],
    }
    keyed = next((c["keys"] for c in each if "keys" in c), None)
    if keyed is not None:
        out["keys"] = keyed  # its maps name other keys (the first map's said)
    if known:
        worst = max(known, key=lambda c: c["max_rel_to_range"] if c["max_rel_to_range"] is not None else float("inf"))
        out.update({k: worst[k] for k in ("max_rel_to_range", "rel_error", "sqnr_db")})
        out["max_abs"] = max(c["max_abs"] for c in known)
        rel = [c["max_rel"] for c in known if c["max_rel"] is not None]
        out["max_rel"] = max(rel) if rel else None
    needed = [c["tolerance_needed"] for c in each]
    out["tolerance_needed"] = None if None in needed else max(needed)
    return out


def _compare_items(a, b, close: bool, tolerance: float) -> dict:
    """Two tensors of sequences, or two maps (a ZipMap's probabilities): their values compared
    where their keys are the same."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return compare_arrays(a, b, close, tolerance)
    if isinstance(a, saved_values.Map) and isinstance(b, saved_values.Map) and np.array_equal(a.keys, b.keys):
        return compare_arrays(a.values, b.values, close, tolerance)
    if isinstance(a, saved_values.Map) and isinstance(b, saved_values.Map) and len(a.keys) == len(b.keys):
        # other keys (class labels renamed): the values compared in order, the keys said apart
        # ("equal false" and nothing else said why, QA21 F10)
        out = compare_arrays(a.values, b.values, close, tolerance)
        return {**out, "equal": False, "close": False, "keys": [_few(a.keys), _few(b.keys)]}
    return {"equal": False, "close": False, **NONE, "shape": []}


def _few(keys: np.ndarray, shown: int = 8) -> list:
    """A map's first keys, as JSON takes them (the labels a ZipMap names)."""
    return [
        k.decode("utf-8", "replace") if isinstance(k, bytes) else k.item() if hasattr(k, "item") else k
        for k in keys[:shown]
    ]


def compare_arrays(
    a: np.ndarray, b: np.ndarray, close: bool = False, tolerance: float = CLOSE_TOLERANCE, attended: Attended = None
) -> dict:
    """compare_outputs of two arrays. Rows out of place that match ("rows"): the numbers are
    measured with each row against the row it matched (_row_order), never "close" (another
    order is another output), and for outputs only, or node by node (`close`) for whole
    numbers: a NonMaxSuppression's selected indices compared as magnitudes led Run's table.
    `attended` (padded_positions.Padding.attended): when it gives the values of their shape
    at the positions a run's attention mask attends, every number is of those; the values at
    padded positions are measured apart ("padded": {"input": the mask, "positions": its 0s,
    "values", "max_abs"}): the model masks them, what they hold means nothing."""
    none = NONE
    if a.shape != b.shape:
        rows = None if close else matched_rows(a, b, tolerance)
        return {
            "equal": False,
            "close": False,
            **none,
            "shape": [list(a.shape), list(b.shape)],
            **({"rows": rows} if rows and rows["matched"] else {}),
        }
    if a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
        same = bool(np.array_equal(a, b))
        return {"equal": same, "close": same, **none, "tolerance_needed": 0.0 if same else None, "shape": list(a.shape)}
    split = attended(a.shape) if attended is not None else None
    if split is not None and not split[1].all():
        mask, kept = split
        out = {**_measured(a[kept], b[kept], close, tolerance), "shape": list(a.shape)}
        left = ~kept
        padded = _measured(a[left], b[left], close, tolerance)["max_abs"]
        return {
            **out,
            "padded": {"input": mask.input, "positions": mask.padded, "values": int(left.sum()), "max_abs": padded},
        }
    out = _measured(a, b, close, tolerance)
    whole = a.dtype.kind in "biu" and b.dtype.kind in "biu"
    if out["close"] or (close and not whole):
        return out
    found = _row_order(a, b, tolerance)
    if found is None:
        return out
    rows, order = found
    # matched, the same rows: not equal, not close, none needed to be (another order)
    return {
        **_measured(a, b[order], close, tolerance),
        "equal": False,
        "close": False,
        "tolerance_needed": None,
        "rows": rows,
    }


def _measured(a: np.ndarray, b: np.ndarray, close: bool, tolerance: float) -> dict:
    """compare_arrays of two numeric arrays of one shape, element by element. Elements a
    float16 conversion holds at its limit (_held_at_float16_limit) are left out of every number:
    a mask's -3.4e38 made the whole tensor's scale, and hid the error of the scores beside it."""
    held = _held_at_float16_limit(a, b)
    if held is None:
        found = _finite_measures(a, b, tolerance, close)
        if found is None:
            found = _measures(np.asarray(a, np.float64), np.asarray(b, np.float64), tolerance, close)
    else:
        x, y = np.asarray(a, np.float64)[~held], np.asarray(b, np.float64)[~held]
        found = _finite_measures(x, y, tolerance, close) or _measures(x, y, tolerance, close)
    if close:
        same = found["locate_same"]
    elif held is not None:  # held alike, the rest exactly
        same = bool(np.array_equal(x, y, equal_nan=True))
    else:
        same = bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    max_abs, scale = found["max_abs"], found["scale"]
    lost = found.get("non_finite")
    if lost:  # an overflow (float16's inf) on one side: no error measures it, it is off most
        return {
            "equal": False,
            "close": False,
            "tolerance_needed": None,
            "max_abs": max_abs,
            "max_rel": None,
            "max_rel_to_range": None,
            "rel_error": None,
            "sqnr_db": None,
            "non_finite": lost,
            "shape": list(a.shape),
        }
    return {
        "equal": same,
        "close": same or found["near"],
        "tolerance_needed": 0.0 if same else found["tolerance_needed"](),
        "max_abs": max_abs,
        "max_rel": found["max_rel"],
        "max_rel_to_range": max_abs / scale if scale else (0.0 if max_abs == 0 else None),
        "rel_error": found["rel_error"],  # the whole tensor's relative L2 error and SQNR
        "sqnr_db": found["sqnr_db"],
        "shape": list(a.shape),
        **({"float16_limit": int(held.sum())} if held is not None else {}),
    }


def _measures(x: np.ndarray, y: np.ndarray, tolerance: float, close: bool) -> dict:
    """_measured's numbers of two float64 arrays of one shape, any values (NaN, infinities)."""
    diff = np.abs(x - y)
    finite = np.isfinite(diff)
    max_abs = float(diff[finite].max()) if finite.any() else 0.0
    # relative to the reference where it isn't 0 (x / 0 says nothing, and overflows); when
    # every difference is at a 0, there is no relative error to give
    nonzero = finite & (y != 0)
    max_rel: float | None = float((diff[nonzero] / np.abs(y[nonzero])).max()) if nonzero.any() else 0.0
    if max_rel == 0 and max_abs > 0:
        max_rel = None
    magnitude = np.abs(y[np.isfinite(y)])
    scale = float(magnitude.max()) if magnitude.size else 0.0
    return {
        "non_finite": _non_finite(x, y),
        "max_abs": max_abs,
        "max_rel": max_rel,
        "scale": scale,
        "near": bool(np.allclose(x, y, rtol=tolerance, atol=tolerance * scale, equal_nan=True)),
        "locate_same": close and bool(np.allclose(x, y, rtol=LOCATE_RTOL, atol=LOCATE_ATOL, equal_nan=True)),
        "tolerance_needed": lambda: _tolerance_needed(x, y, diff, scale),
        **signal_error(x, y),
    }


def _non_finite(x: np.ndarray, y: np.ndarray) -> dict | None:
    """Values infinite or NaN on one side where the other's are finite ({"here": in x, "there":
    in y}; a float16 overflow is inf), or other non-finite values on both (inf against NaN);
    None when the non-finite values are the same on both sides."""
    fx, fy = np.isfinite(x), np.isfinite(y)
    here, there = int((~fx & fy).sum()), int((fx & ~fy).sum())
    both = ~fx & ~fy
    other = int((both & ~((x == y) | (np.isnan(x) & np.isnan(y)))).sum())
    return {"here": here, "there": there, "both": other} if here or there or other else None


FINITE_CHUNK = 1 << 16  # values measured at a time (a few 512 KB float64 temporaries: in cache)


def _finite_measures(a: np.ndarray, b: np.ndarray, tolerance: float, close: bool) -> dict | None:
    """_measures of two numeric arrays of one shape when every value is finite (as nearly always),
    a chunk of FINITE_CHUNK values at a time, each read twice (the tolerances need the scale
    first): each node's output of a ResNet-50 (75 M values) was measured in 4.5 s, pass after
    pass over float64 copies of whole tensors, most of a "locate" run's time. The same numbers
    by the same formulas (np.isclose's, signal_error's scaled norms, their squares summed chunk
    by chunk without BLAS: rel_error's last digits may differ); None when a value isn't finite,
    or there are none."""
    if not a.size:
        return None
    x, y = a.ravel(), b.ravel()
    n = x.size
    chunks = range(0, n, FINITE_CHUNK)

    def read(i: int) -> tuple[np.ndarray, np.ndarray]:  # |x - y| and |y| of a chunk, as float64
        xc = np.asarray(x[i : i + FINITE_CHUNK], np.float64)
        yc = np.asarray(y[i : i + FINITE_CHUNK], np.float64)
        diff = xc - yc
        np.abs(diff, out=diff)
        return diff, np.abs(yc)

    max_abs = scale = max_rel = 0.0
    for i in chunks:
        diff, ay = read(i)
        top = float(diff.max())
        if not math.isfinite(top):  # a NaN or an infinity on either side
            return None
        max_abs, scale = max(max_abs, top), max(scale, float(ay.max()))
        # d / |y| where y isn't 0, else 0: the largest relative error, 0 where there is none
        rel = np.zeros_like(diff)
        np.divide(diff, ay, out=rel, where=ay != 0)
        max_rel = max(max_rel, float(rel.max()))
    near = locate_same = True
    most = 0.0  # the largest |x - y| ÷ (scale + |y|): the tolerance needed (_tolerance_needed)
    noise = signal = 0.0  # squares of the norms, each scaled by its largest magnitude
    for i in chunks:
        diff, ay = read(i)
        bound = np.multiply(ay, tolerance)  # np.isclose: |x - y| <= atol + rtol·|y|
        np.add(bound, tolerance * scale, out=bound)
        near = near and bool((diff <= bound).all())
        if close and locate_same:
            np.multiply(ay, LOCATE_RTOL, out=bound)
            np.add(bound, LOCATE_ATOL, out=bound)
            locate_same = bool((diff <= bound).all())
        if scale:
            np.add(ay, scale, out=bound)
            most = max(most, float((diff / bound).max()))
            part = ay / scale
            signal += float(np.einsum("i,i->", part, part))  # (not BLAS: its threads spin on a busy machine)
        if max_abs:
            part = diff / max_abs
            noise += float(np.einsum("i,i->", part, part))
    noise, signal = max_abs * math.sqrt(noise), scale * math.sqrt(signal)

    def needed() -> float | None:  # _tolerance_needed, every value finite
        if not max_abs:
            return 0.0
        return most if scale else None  # y all 0: a change there is close at no tolerance

    return {
        "max_abs": max_abs,
        "max_rel": None if max_rel == 0 and max_abs > 0 else max_rel,
        "scale": scale,
        "near": near,
        "locate_same": close and locate_same,
        "tolerance_needed": needed,
        "rel_error": noise / signal if signal else (0.0 if noise == 0 else None),
        "sqnr_db": 20 * math.log10(signal / noise) if signal and noise else None,
    }


def rows_words(rows: dict | None) -> str:
    """matched_rows in words, as the page says them (lib/reference-words.js rowsWords)."""
    if not rows:
        return ""
    here, there, matched = rows["here"], rows["there"], rows["matched"]
    if here == there:
        return (
            f"the same {here} rows in another order"
            if matched == here
            else f"{matched} of {here} rows the same, reordered"
        )
    return f"{matched} of its {here} rows among the other's {there}"


MAX_ROW_PAIRS = 1 << 24  # elements compared when matching rows (2,048 detections of 4 values: 2^24)
ROW_CHUNK = 1 << 20  # ...a million at a time (8 MB of differences)


def matched_rows(a: np.ndarray, b: np.ndarray, tolerance: float = CLOSE_TOLERANCE) -> dict | None:
    """How many rows (along the first axis) of `a` are, each, a row of `b` (a one-to-one
    matching, greedy in a's order: within `tolerance` of b's row plus `tolerance` of b's largest
    magnitude; whole numbers exactly): {"here", "there", "matched", "in_place"}. None for
    tensors of under two axes, rows of other lengths, or too many pairs to compare."""
    found = _matching(a, b, tolerance)
    return found[0] if found else None


def _row_order(a: np.ndarray, b: np.ndarray, tolerance: float) -> tuple[dict, np.ndarray] | None:
    """When rows of `a` out of place match rows of `b` (a detector's boxes, NonMaxSuppression's
    selected indices in another order): matched_rows, and the row of `b` to hold each row of `a`
    against — the one it matched, or the rows left over in their order."""
    found = _matching(a, b, tolerance)
    if found is None or found[0]["matched"] <= found[0]["in_place"] or len(a) != len(b):
        return None
    rows, pairs = found
    left = iter(np.flatnonzero(~np.isin(np.arange(len(b)), pairs[pairs >= 0])))
    return rows, np.array([j if j >= 0 else next(left) for j in pairs])


def _matching(a: np.ndarray, b: np.ndarray, tolerance: float) -> tuple[dict, np.ndarray] | None:
    """matched_rows, and for each row of `a` the row of `b` it matched (-1: none)."""
    if a.ndim < 2 or a.shape[1:] != b.shape[1:] or a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
        return None
    n, m = len(a), len(b)
    width = int(np.prod(a.shape[1:]))
    if not n or not m or n * m * width > MAX_ROW_PAIRS:
        return None
    x, y = a.reshape(n, width).astype(np.float64), b.reshape(m, width).astype(np.float64)
    exact = a.dtype.kind in "biu" and b.dtype.kind in "biu"
    magnitude = np.abs(y[np.isfinite(y)])
    scale = float(magnitude.max()) if magnitude.size else 0.0
    bound = 0.0 if exact else tolerance * (scale + np.abs(y))  # (m, width)
    fits = np.zeros((n, m), bool)
    step = max(1, ROW_CHUNK // (m * width))  # rows of a at a time: a bounded temporary
    for i in range(0, n, step):
        here = x[i : i + step, None, :]
        fits[i : i + step] = ((np.abs(here - y[None, :, :]) <= bound) | (here == y[None, :, :])).all(axis=2)
    used = np.zeros(m, bool)
    pairs = np.full(n, -1)
    in_place = 0
    for i in range(n):
        if i < m and not used[i] and fits[i, i]:
            j = i
            in_place += 1
        else:
            free = np.flatnonzero(fits[i] & ~used)
            if not free.size:
                continue
            j = int(free[0])
        used[j] = True
        pairs[i] = j
    rows = {"here": n, "there": m, "matched": int((pairs >= 0).sum()), "in_place": in_place}
    return rows, pairs


FLOAT16_MAX = float(np.finfo(np.float16).max)
# a mask's "minus infinity" as exporters write it (float32's lowest, -1e30, -1e38): far past any
# activation; a value this big that float16 holds as inf is that mask
MASK_MAGNITUDE = 1e30


def _held_at_float16_limit(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Where one side is float16 and the other holds a value past float16's range that the
    float16 side holds near its limit, same sign: a mask's -3.4e38 (float32's lowest, "minus
    infinity" to a softmax) the float16 converter clamps to -65504. Both mask alike; counted as
    a relative error of 100 % they led the per-node table over the MatMuls that lose precision
    (the KV-cache QA); or at ±inf where the other is mask-sized (MASK_MAGNITUDE: a cast gives inf).
    An activation that overflowed (a CNN's 205,081 computed in float16, inf) is no mask: an error,
    counted. None when no element is so."""
    if (a.dtype == np.float16) == (b.dtype == np.float16):
        return None
    wide = b if a.dtype == np.float16 else a
    if wide.size and wide.min() >= -FLOAT16_MAX and wide.max() <= FLOAT16_MAX:  # nothing past its range
        return None
    x, y = np.asarray(a, np.float64), np.asarray(b, np.float64)
    wide, narrow = (y, x) if a.dtype == np.float16 else (x, y)
    past = np.isfinite(wide) & (np.abs(wide) > FLOAT16_MAX)
    if not past.any():
        return None
    at_limit = np.isfinite(narrow) | (np.abs(wide) >= MASK_MAGNITUDE)
    held = past & at_limit & (np.sign(narrow) == np.sign(wide)) & (np.abs(narrow) >= FLOAT16_MAX / 2)
    return held if held.any() else None


def _tolerance_needed(x: np.ndarray, y: np.ndarray, diff: np.ndarray, scale: float) -> float | None:
    """The smallest tolerance t at which x is "close" to y (|x - y| <= t·|y| + t·scale everywhere,
    NaN where NaN, each infinity where the same one): a verdict judged again at another tolerance
    needs no new run. None: close at none (a NaN or an infinity moved, a change where y and its
    scale are 0)."""
    finite = np.isfinite(diff)
    if not finite.all():
        odd = ~finite
        kept = (np.isnan(x[odd]) & np.isnan(y[odd])) | (x[odd] == y[odd])
        if not kept.all():
            return None
    d, bound = diff[finite], scale + np.abs(y[finite])
    if not d.size or not d.any():
        return 0.0
    if (d[bound == 0] > 0).any():
        return None
    moved = bound > 0
    return float((d[moved] / bound[moved]).max())
