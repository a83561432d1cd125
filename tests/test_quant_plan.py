"""The search for the fewest nodes to leave out of a quantization (onnx_io/quant_plan.py), driven
by error functions of its own: points add their costs, so what the search returns can be checked
against every subset."""

from __future__ import annotations

from itertools import combinations

import pytest

from app.onnx_io.quant_plan import PRUNE_MAX, fewest_left_out, runs_needed, turned_float


def additive(costs: list[float], calls: list | None = None):
    """An error function: the sum of the costs of the points left quantized."""

    def error_of(off: set[int]) -> dict:
        if calls is not None:
            calls.append(set(off))
        return {"rel_error": sum(c for k, c in enumerate(costs) if k not in off)}

    return error_of


def test_a_point_turns_float_once_every_node_quantizing_it_is_left_out():
    owners = [[0], [0, 1], [1], [2], []]
    assert turned_float([0], owners) == {0}  # point 1 still quantized for node 1
    assert turned_float([0, 2], owners) == {0, 1, 2}
    assert turned_float([1], owners) == {0, 1, 2}  # leaving out both of its nodes frees their own points
    assert turned_float([], owners) == set() and 4 not in turned_float([0, 1, 2, 3], owners)


def test_the_smallest_prefix_within_the_target_then_pruned():
    """The ranking (by each point's cost alone) puts point 1 first, but it adds little once point
    0 is float: the shortest prefix within the target is [1, 0], and the target holds without 1."""
    costs = [0.5, 0.04, 0.03, 0.01]
    owners = [[10 + k] for k in range(len(costs))]
    calls: list = []
    plan = fewest_left_out([1, 0, 2, 3], owners, additive(costs, calls), 0.08)
    assert plan["reached"] and plan["points"] == [0] and plan["nodes"] == [10]
    assert plan["error"]["rel_error"] == pytest.approx(0.08)
    assert plan["runs"] == len(calls) <= runs_needed(4)
    assert {1, 0} in calls and {0} in calls  # the prefix found, then pruned


def test_bisection_finds_the_shortest_prefix():
    costs = [0.3, 0.2, 0.1, 0.05, 0.04, 0.03, 0.02, 0.01]
    plan = fewest_left_out(list(range(8)), [[k] for k in range(8)], additive(costs), 0.07)
    # the three costliest float leave 0.15, four 0.10, five 0.06: five it is, none of them spare
    assert plan["reached"] and plan["points"] == [0, 1, 2, 3, 4]
    smaller = [s for s in combinations(range(8), 4) if sum(costs) - sum(costs[k] for k in s) <= 0.07]
    assert not smaller


def test_shared_owners_count_once():
    """Points 0 and 1 are both node 7's: leaving it out turns both float."""
    owners = [[7], [7], [8]]
    plan = fewest_left_out([0, 2, 1], owners, additive([0.3, 0.3, 0.1]), 0.15)
    assert plan["reached"] and plan["nodes"] == [7] and plan["points"] == [0]


def test_a_target_out_of_reach_says_so_with_the_least_error_found():
    """Point 1 has no node that can be left out: it stays quantized whatever is left out."""
    owners = [[0], [], [2]]
    plan = fewest_left_out([0, 2], owners, additive([0.2, 0.3, 0.1]), 0.1)
    assert not plan["reached"] and plan["points"] == [0, 2] and plan["error"]["rel_error"] == pytest.approx(0.3)
    assert plan["runs"] == 1


def test_an_error_that_is_not_finite_is_never_within_the_target():
    owners = [[0], [1]]

    def error_of(off):
        return {"rel_error": None if 0 not in off else 0.0}

    plan = fewest_left_out([1, 0], owners, error_of, 0.5)
    assert plan["reached"] and plan["points"] == [0]


def test_long_prefixes_are_not_pruned():
    """Past PRUNE_MAX points the search keeps its prefix: pruning would cost a run per point."""
    n = PRUNE_MAX + 8
    costs = [1.0] * n
    calls: list = []
    plan = fewest_left_out(list(range(n)), [[k] for k in range(n)], additive(costs, calls), 0.5)
    assert plan["reached"] and len(plan["points"]) == n and plan["runs"] == len(calls) <= runs_needed(n)
