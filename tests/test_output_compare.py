"""Output comparison details: values a float16 conversion holds at its limit."""

from __future__ import annotations

import numpy as np

from app.onnx_io.output_compare import FLOAT16_MAX, compare_arrays, rows_words

LOWEST = float(np.finfo(np.float32).min)  # a torch export's mask value: "minus infinity"


def test_a_masks_lowest_float_held_at_float16s_limit_is_the_same_value():
    mask32 = np.array([[0.0, LOWEST, LOWEST], [0.0, 0.0, LOWEST]], np.float32)
    mask16 = mask32.astype(np.float16)  # numpy gives -inf; the converter clamps: both held
    clamped = np.clip(mask32, -FLOAT16_MAX, FLOAT16_MAX).astype(np.float16)
    for held in (mask16, clamped):
        c = compare_arrays(held, mask32, close=True)
        assert c["float16_limit"] == 3 and c["equal"] and c["rel_error"] == 0.0 and c["max_abs"] == 0.0, c
    # scores added to it stay near the limit: the same
    scores = np.array([[0.3, 0.2, -0.1]], np.float32)
    c = compare_arrays((scores + clamped[:1].astype(np.float32)).astype(np.float16), scores + mask32[:1], close=True)
    assert c["float16_limit"] == 2 and c["rel_error"] < 1e-3, c
    # the other way round (the float16 revision as the reference): the same
    assert compare_arrays(mask32, clamped, close=True)["float16_limit"] == 3


def test_values_past_float16s_range_that_are_not_held_there_are_errors():
    wide = np.array([1e6, -1e6, 5.0], np.float32)
    off = np.array([100.0, 1e3, 5.0], np.float16)  # far from the limit: a real error
    c = compare_arrays(off, wide, close=True)
    assert "float16_limit" not in c and not c["equal"] and c["rel_error"] > 0.9, c
    flipped = np.array([-FLOAT16_MAX, FLOAT16_MAX, 5.0], np.float16)  # held, but the other sign
    assert "float16_limit" not in compare_arrays(flipped, wide, close=True)
    # two float32 tensors are compared as they are
    c = compare_arrays(np.array([-FLOAT16_MAX], np.float32), np.array([LOWEST], np.float32), close=True)
    assert "float16_limit" not in c and not c["equal"]


def test_detections_in_another_order_are_matched_row_by_row():
    rng = np.random.default_rng(0)
    boxes = rng.uniform(0, 640, (28, 4)).astype(np.float32)
    order = rng.permutation(28)
    c = compare_arrays(boxes[order], boxes, close=False)
    assert not c["close"] and c["rows"] == {
        "here": 28,
        "there": 28,
        "matched": 28,
        "in_place": int((order == np.arange(28)).sum()),
    }
    assert rows_words(c["rows"]) == "the same 28 rows in another order"
    # float16's rounding: still the same rows; five moved far: 23 of 28
    moved = boxes[order].astype(np.float16).astype(np.float32)
    moved[:5] += 50
    c = compare_arrays(moved, boxes)
    assert c["rows"]["matched"] == 23 and rows_words(c["rows"]) == "23 of 28 rows the same, reordered"
    # NonMaxSuppression's selected indices: whole numbers, matched exactly; one fewer detection
    selected = np.array([[0, 0, k] for k in (5, 3, 9, 1)], np.int64)
    c = compare_arrays(selected[[1, 0, 3]], selected)
    assert c["shape"] == [[3, 3], [4, 3]] and c["rows"]["matched"] == 3
    assert rows_words(c["rows"]) == "3 of its 3 rows among the other's 4"
    near = selected.copy()
    near[:, 2] += 1  # every index off by one: no row the same
    assert "rows" not in compare_arrays(near, selected)
    # rows in place that differ say nothing more than the element-wise comparison
    assert "rows" not in compare_arrays(boxes + 100, boxes)
    assert "rows" not in compare_arrays(boxes, boxes)


def test_rows_are_matched_in_chunks_and_not_for_each_nodes_comparison(monkeypatch):
    import app.onnx_io.output_compare as oc

    monkeypatch.setattr(oc, "ROW_CHUNK", 8)  # a row of a at a time
    rows = np.array([[1.0, np.inf], [2.0, 3.0], [4.0, -np.inf]], np.float32)
    c = compare_arrays(rows[[2, 0, 1]], rows)
    assert c["rows"] == {"here": 3, "there": 3, "matched": 3, "in_place": 0}, c
    # node by node (Run's locate: close=True), reordering isn't looked for
    assert "rows" not in compare_arrays(rows[[2, 0, 1]], rows, close=True)


def test_reordered_rows_are_measured_against_the_rows_they_match():
    rng = np.random.default_rng(1)
    # NonMaxSuppression's selected indices (batch, class, box), the same 60 in another order
    selected = np.stack([np.zeros(60), np.zeros(60), rng.permutation(200)[:60]], axis=1).astype(np.int64)
    order = rng.permutation(60)
    c = compare_arrays(selected[order], selected)
    assert c["rows"]["matched"] == 60 and not c["equal"] and not c["close"], c
    # measured row against row: nothing off (element by element an index said 90 % of range off)
    assert c["max_abs"] == 0 and c["max_rel_to_range"] == 0 and c["rel_error"] == 0, c
    assert c["tolerance_needed"] is None  # close at no tolerance: another order
    # 56 of 60 the same: the four left are held against the four rows left, in their order
    moved = selected[order].copy()
    moved[-4:, 2] = [500, 501, 502, 503]
    c = compare_arrays(moved, selected)
    assert c["rows"]["matched"] == 56
    left = selected[np.sort(order[56:]), 2]  # b's rows no row matched, in their order
    assert c["max_abs"] == float(np.abs(np.array([500, 501, 502, 503]) - left).max()), c
    # node by node (locate) too, for whole numbers: the same rows, no error to rank
    c = compare_arrays(selected[order], selected, close=True)
    assert c["rows"]["matched"] == 60 and c["rel_error"] == 0 and not c["equal"], c


def test_values_held_at_float16s_limit_are_left_out_of_every_number():
    mask = np.array([0.0, 0.0, LOWEST, LOWEST], np.float32)
    scores = np.array([0.25, -0.5, 0.75, 0.1], np.float32)
    exact = scores + mask
    half = np.clip(exact, -FLOAT16_MAX, FLOAT16_MAX).astype(np.float16)
    half[:2] += np.float16(0.01)  # the scores beside the mask lost precision
    c = compare_arrays(half, exact, close=True)
    assert c["float16_limit"] == 2
    # measured over the two scores only: ~1 % of their magnitude, not 1e-40 of -3.4e38's
    assert 0.005 < c["max_rel_to_range"] < 0.05 and 0.005 < c["rel_error"] < 0.05, c
    assert c["sqnr_db"] < 60, c


def test_an_activation_that_overflows_float16_is_an_error_not_a_mask():
    """QA17 F1: a CNN's activations of 205,081 computed in float16 are inf: no mask held at
    its limit, but the very overflow a float16 deployment must hear of."""
    wide = np.array([205_081.0, -150_000.0, 3.0, 4.0], np.float32)
    half = np.array([np.inf, -np.inf, 3.0, 4.0], np.float16)
    c = compare_arrays(half, wide, close=True)
    assert not c.get("float16_limit") and not c["close"] and not c["equal"], c
