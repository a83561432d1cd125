"""The fewest nodes to leave out of a quantization for its error to stay within a target.

A sensitivity sweep (ort_worker.sweep) ranks a quantization's points by what each costs; this
searches, on the same switched model, for the shortest prefix of that ranking whose owners, left
out, bring the whole quantization's error down to the target, then drops from it each point the
target holds without (a point's cost alone over-states what it adds to the others', and the
reverse). Leaving nodes out turns float every point all of whose owners are left out — an
activation read by a left-out node and a quantized one stays quantized for the latter, so the
simulation never promises less error than the real quantization gives.

Standard library only: the onnxruntime worker loads this file by its path (it imports no app
module), and the tests drive the search with an error function of their own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

PRUNE_MAX = 128  # points of a prefix tried one by one for whether the target holds without them (a run each)


def turned_float(chosen: Sequence[int], owners: Sequence[Sequence[int]]) -> set[int]:
    """The points (indices into `owners`) that leaving out the owners of the `chosen` points
    turns float: those every owner of which is left out."""
    left_out = {node for point in chosen for node in owners[point]}
    return {point for point, nodes in enumerate(owners) if nodes and left_out.issuperset(nodes)}


def runs_needed(candidates: int) -> int:
    """At most how many configurations the search runs for `candidates` ranked points."""
    return 1 + math.ceil(math.log2(candidates + 1)) + min(candidates, PRUNE_MAX)


def fewest_left_out(
    ranking: Sequence[int],
    owners: Sequence[Sequence[int]],
    error_of: Callable[[set[int]], dict],
    target: float,
) -> dict:
    """The points of `ranking` (most worth turning float first) whose owners to leave out:
    {"points": [...] in ranking order, "nodes": sorted owners, "error": what `error_of` measured
    with them float, "reached": whether within `target`, "runs": configurations run}.
    `error_of(off)` runs the quantization with the points `off` float and measures it: a dict whose
    "rel_error" is None when not finite (never within the target). The whole quantization is
    assumed over the target (the caller ran it)."""
    runs = [0]
    errors: dict[int, dict] = {}

    def within(chosen: Sequence[int]) -> tuple[bool, dict]:
        runs[0] += 1
        error = error_of(turned_float(chosen, owners))
        return error["rel_error"] is not None and error["rel_error"] <= target, error

    def prefix(k: int) -> bool:
        ok, errors[k] = within(ranking[:k])
        return ok

    # bisect on the prefix length: every point float (the float model) is within any target
    # unless some point can't be turned float at all
    low, high = 0, len(ranking)
    if not prefix(high):
        return _plan(list(ranking), owners, errors[high], False, runs[0])
    while high - low > 1:
        middle = (low + high) // 2
        if prefix(middle):
            high = middle
        else:
            low = middle
    chosen, error = list(ranking[:high]), errors[high]
    if len(chosen) <= PRUNE_MAX:
        for point in reversed(chosen[:]):  # the least worth first
            rest = [p for p in chosen if p != point]
            ok, without = within(rest)
            if ok:
                chosen, error = rest, without
    return _plan(chosen, owners, error, True, runs[0])


def _plan(chosen: list[int], owners: Sequence[Sequence[int]], error: dict, reached: bool, runs: int) -> dict:
    return {
        "points": chosen,
        "nodes": sorted({node for point in chosen for node in owners[point]}),
        "error": error,
        "reached": reached,
        "runs": runs,
    }
