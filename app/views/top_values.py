"""The largest values along an output's last axis — a classifier's top classes, a language
model's likeliest next tokens — for the rows a person checks first: what a run's output says at
a glance, where its first values in reading order say little (class 0, 1, 2 …)."""

from __future__ import annotations

import numpy as np

from .tensors import json_values

TOP_K = 5  # values per row
MAX_ROWS = 4  # rows shown: the first ones and the last (a sequence's next-token row)
MIN_AXIS = 3  # a last axis shorter than this is read whole in the preview
# many rows are a batch of scores only this few; else only a vocabulary-sized last axis makes
# them scores (a language model's logits): 128 positions of hidden states, 100 boxes of 6
# numbers have no "top" along their last axis
FEW_ROWS, VOCABULARY = 16, 1000


def top_values(arr: np.ndarray) -> dict | None:
    """{"rows": [{"index": [i, j, …], "top": [[k, value], …]}], "of": rows in all} for a real-valued
    output with at most two axes past its leading 1s, a few rows or a vocabulary-sized last axis
    ([1, 1000], [4, 10], [1, 128, 32000]); None for others (an image, a feature map, hidden
    states: there, the largest values along the last axis say nothing)."""
    if arr.dtype.kind not in "biuf" or arr.dtype.kind == "b" or arr.ndim == 0 or arr.shape[-1] < MIN_AXIS:
        return None
    if arr.dtype.kind in "iu" and arr.ndim == 1:
        return None  # a batch's labels or indices (a classifier's label output), not scores (QA21 F12)
    lead = 0
    while lead < arr.ndim - 1 and arr.shape[lead] == 1:
        lead += 1
    if arr.ndim - lead > 2:
        return None
    rows = arr.reshape(-1, arr.shape[-1])
    n = rows.shape[0]
    if n > FEW_ROWS and arr.shape[-1] < VOCABULARY:
        return None
    if arr.size and np.all(arr == arr.reshape(-1)[0]):
        return None  # every value the same: nothing is largest
    picked = list(range(n)) if n <= MAX_ROWS else [*range(MAX_ROWS - 1), n - 1]
    k = min(TOP_K, rows.shape[1])
    out = []
    for r in picked:
        row = rows[r]
        values = row.astype(np.float64)
        nan = np.isnan(values)
        # largest first, ties in index order, NaN after everything (-inf included)
        order = np.lexsort((-np.where(nan, 0.0, values), nan))[:k]
        index = [0] * lead + ([r] if arr.ndim - lead == 2 else [])
        out.append({"index": index, "top": [[int(i), v] for i, v in zip(order, json_values(row[order]), strict=True)]})
    return {"rows": out, "of": n}
