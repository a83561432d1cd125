"""A run output's largest values along its last axis (views/top_values.py): a classifier's top
classes, a language model's likeliest tokens; none for an image or a feature map."""

from __future__ import annotations

import numpy as np
from browser.browser_models import tiny_cnn
from test_run import run
from testkit import upload

from app.views.top_values import top_values


def test_a_classifiers_top_classes_largest_first():
    probs = np.array([[0.1, 0.05, 0.6, 0.2, 0.05, 0.0]], np.float32)
    top = top_values(probs)
    assert top["of"] == 1 and top["rows"][0]["index"] == [0]
    assert [k for k, _ in top["rows"][0]["top"]] == [2, 3, 0, 1, 4]  # ties kept in index order
    assert top["rows"][0]["top"][0][1] == float(np.float32(0.6))


def test_rows_shown_are_the_first_and_the_last():
    logits = np.arange(6 * 5, dtype=np.float32).reshape(1, 6, 5)
    top = top_values(logits)
    assert top["of"] == 6 and [r["index"] for r in top["rows"]] == [[0, 0], [0, 1], [0, 2], [0, 5]]
    assert top["rows"][-1]["top"][0] == [4, 29.0]


def test_nan_sorts_last_and_integers_stay_exact():
    top = top_values(np.array([np.nan, 1.0, 3.0, -np.inf], np.float64))
    assert [k for k, _ in top["rows"][0]["top"]] == [2, 1, 3, 0] and top["rows"][0]["top"][3][1] == "NaN"
    big = np.array([[2**63 + 1, 5, 7]], np.uint64)  # a row of scores (a bare [3] of integers: labels)
    assert top_values(big)["rows"][0]["top"][0] == [0, 2**63 + 1]


def test_none_where_the_last_axis_says_nothing():
    assert top_values(np.zeros((1, 8, 16, 16), np.float32)) is None  # a feature map
    assert top_values(np.zeros((1, 128, 768), np.float32)) is None  # hidden states
    assert top_values(np.zeros((1, 100, 6), np.float32)) is None  # boxes
    assert top_values(np.full((1, 1000), 0.001, np.float32)) is None  # uniform: nothing is largest
    assert top_values(np.arange(128 * 32000, dtype=np.float32).reshape(1, 128, 32000))["of"] == 128  # logits
    assert top_values(np.zeros((1, 2), np.float32)) is None  # two values: read whole
    assert top_values(np.array([True, False, True])) is None
    assert top_values(np.float32(3.0)) is None
    assert top_values(np.array(["a", "b", "c"])) is None


def test_a_runs_outputs_carry_them_and_its_inputs_dont(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"inputs": {"input": {"random": {"seed": 4}}}, "outputs": ["p1", "probs"]})
    probs = answer["outputs"]["probs"]
    values = np.array(probs["values"])
    (row,) = probs["top"]["rows"]
    assert [k for k, _ in row["top"]] == list(np.argsort(-values, kind="stable")[:5])
    assert "top" not in answer["outputs"]["p1"] and "top" not in answer["inputs"]["input"]


def test_a_batch_of_labels_has_no_top():
    # QA21 F12: a classifier's label output [20] read "Largest along the last axis: 2 → 2 · 7 → 2"
    assert top_values(np.array([2, 7, 1, 2, 0, 2, 1, 1], np.int64)) is None
    assert top_values(np.arange(1000, dtype=np.uint8).reshape(1, 1000) % 251) is not None  # quantized scores
