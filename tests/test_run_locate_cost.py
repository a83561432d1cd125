"""What "locate" (compare with a revision, measuring each node's output) costs (QA17 F4): most of
a ResNet-50's 14.6 s went to measuring its 175 node outputs (75 M values) in Python, pass after
pass over float64 copies; output_compare measures finite values in fewer passes, to the same
numbers. The API measures each node only when asked."""

from __future__ import annotations

import numpy as np
import pytest
from browser.browser_models import tiny_cnn
from testkit import upload

from app.onnx_io import output_compare
from app.onnx_io.output_compare import FLOAT16_MAX, compare_arrays


def _pairs():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    relu = np.maximum(x, 0)  # zeros in the reference: no relative error there
    near = (x * (1 + 1e-5 * rng.standard_normal(x.shape))).astype(np.float32)
    held = x.copy()
    held[0, 0] = np.finfo(np.float32).min  # a mask's -3.4e38 the float16 side holds as -65504
    held16 = held.astype(np.float16)
    held16[0, 0] = -FLOAT16_MAX
    big = x.copy()
    big[1, 1, 1] = 205081.0  # an activation float16 can't hold: inf there, an error
    yield x, x.copy()  # identical
    yield near, x  # within rounding
    yield x.astype(np.float16), x  # a float16 conversion
    yield relu + 0.01, relu  # a change where the reference is 0
    yield np.zeros_like(x), np.zeros_like(x)
    yield x, np.zeros_like(x)  # a reference of zeros: close at no tolerance
    yield np.float32(2.5), np.float32(2.0)  # a scalar
    yield np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)
    yield held16, held
    yield big.astype(np.float16), big
    yield np.array([1.0, np.nan, 3.0], np.float32), np.array([1.0, np.nan, 3.5], np.float32)
    yield np.array([1.0, np.inf], np.float32), np.array([1.0, 2.0], np.float32)
    yield np.arange(12, dtype=np.int64).reshape(3, 4), np.arange(12, dtype=np.int64).reshape(3, 4)[::-1]
    yield rng.integers(0, 5, (4, 4)).astype(np.int32), rng.integers(0, 5, (4, 4)).astype(np.int32)


@pytest.mark.parametrize("pair", list(_pairs()), ids=lambda p: f"{p[0].dtype}{list(np.shape(p[0]))}")
@pytest.mark.parametrize("close", [True, False])
def test_finite_values_are_measured_to_the_same_numbers_as_before(monkeypatch, pair, close):
    a, b = pair
    fast = compare_arrays(a, b, close)
    monkeypatch.setattr(output_compare, "_finite_measures", lambda *args: None)  # every value the general way
    before = compare_arrays(a, b, close)
    # the norms' squares summed another way: their last digits
    for k in ("rel_error", "sqnr_db"):
        was = before.pop(k)
        assert fast.pop(k) == (None if was is None else pytest.approx(was, rel=1e-12))
    assert fast == before


def test_a_tensor_of_many_chunks_is_measured_as_one(monkeypatch):
    """Values measured a chunk at a time (in cache): the same numbers as the whole tensor at once."""
    rng = np.random.default_rng(3)
    b = rng.standard_normal(5 * output_compare.FINITE_CHUNK + 17).astype(np.float32).reshape(-1, 1)
    b[::7] = 0
    a = (b * (1 + 2e-4 * rng.standard_normal(b.shape))).astype(np.float16)
    for close in (True, False):
        fast = compare_arrays(a, b, close)
        monkeypatch.setattr(output_compare, "_finite_measures", lambda *args: None)
        before = compare_arrays(a, b, close)
        monkeypatch.undo()
        for k in ("rel_error", "sqnr_db"):
            assert fast.pop(k) == pytest.approx(before.pop(k), rel=1e-12)
        assert fast == before and not before["equal"]


def test_each_node_is_measured_only_when_asked(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    edit = [{"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.5}]
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": edit}).status_code == 200
    body = {"inputs": {"input": {"random": {"seed": 3}}}, "compare_to": 0}
    plain = client.post(f"/api/models/{mid}/run", json=body).get_json()["compare"]
    assert "nodes" not in plain and "diverges" not in plain
    located = client.post(f"/api/models/{mid}/run", json={**body, "locate": True}).get_json()["compare"]
    assert located["outputs"] == plain["outputs"]
    assert located["diverges"]["node"] == "n1" and len(located["nodes"]) == 8


def test_locate_ranks_a_node_whose_output_changed_shape_first(client):
    """QA20 F2: a node whose output has another shape in the two revisions (a Loop run another
    number of times; here a Slice given another end) answered 500 (KeyError 'rel_error')."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    g = h.make_graph(
        [
            h.make_node("Relu", ["x"], ["r"], name="relu"),
            h.make_node("Slice", ["r", "starts", "ends", "axes"], ["s"], name="cut"),
            h.make_node("Neg", ["s"], ["y"], name="neg"),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, None])],
        [
            h.make_tensor("starts", T.INT64, [1], [0]),
            h.make_tensor("ends", T.INT64, [1], [4]),
            h.make_tensor("axes", T.INT64, [1], [1]),
        ],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    op = {"op": "set_initializer", "name": "ends", "value": {"values": [2], "dtype": "INT64", "shape": [1]}}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    r = client.post(
        f"/api/models/{mid}/run",
        json={"revision": 1, "inputs": {"x": {"values": [[1, 2, 3, 4]]}}, "compare_to": 0, "locate": True},
    )
    assert r.status_code == 200, r.get_json()
    compare = r.get_json()["compare"]
    rows = {n["name"]: n for n in compare["nodes"]}
    assert rows["relu"]["equal"] and rows["cut"]["shape"] == [[1, 2], [1, 4]] and not rows["cut"]["equal"]
    assert compare["diverges"]["node"] == rows["cut"]["node"]
