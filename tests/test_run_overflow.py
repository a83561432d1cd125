"""A value infinite on one side of a comparison (QA30: a float16 conversion's sum of squares
overflowed to inf) is said as such and ranked furthest off, never "error 0" listed last."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload

from app.onnx_io.output_compare import compare_arrays


def test_an_inf_on_one_side_is_not_close_and_has_no_error():
    here, there = np.array([np.inf, 1, 2], np.float16), np.array([2.3e7, 1, 2], np.float32)
    c = compare_arrays(here, there, close=True)
    assert (c["equal"], c["close"], c["rel_error"], c["non_finite"]) == (
        False,
        False,
        None,
        {"here": 1, "there": 0, "both": 0},
    )
    assert compare_arrays(there, here)["non_finite"] == {"here": 0, "there": 1, "both": 0}
    assert "non_finite" not in compare_arrays(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))  # alike: no news
    assert compare_arrays(np.array([np.inf, 1.0]), np.array([np.nan, 1.0]))["non_finite"]["both"] == 1


def squares() -> onnx.ModelProto:
    """scaled = x · 1000 (fine in float16), sumsq = ReduceSumSquare(scaled): 4·1e6, past float16's
    65,504; then its square root, the output."""
    graph = h.make_graph(
        [
            h.make_node("Mul", ["x", "k"], ["scaled"], name="scale"),
            h.make_node("ReduceSumSquare", ["scaled"], ["sumsq"], name="sumsq", keepdims=1),
            h.make_node("Sqrt", ["sumsq"], ["y"], name="root"),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 1])],
        [nh.from_array(np.array(1000.0, np.float32), "k")],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


def test_a_node_overflowing_in_float16_is_the_first_off(client):
    mid = upload(client, squares().SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_float16"}]})
    assert r.status_code == 200, r.get_json()
    body = {"inputs": {"x": {"values": [[1, 1, 1, 1]]}}, "compare_to": 0, "locate": True}
    answer = client.post(f"/api/models/{mid}/run", json=body).get_json()
    nodes = {n["name"]: n for n in answer["compare"]["nodes"]}
    # the float16 sum of squares is inf; the output is not (onnxruntime's CPU widens that Sqrt)
    assert nodes["sumsq"]["non_finite"] == {"here": 1, "there": 0, "both": 0}
    assert (nodes["sumsq"]["close"], nodes["sumsq"]["rel_error"]) == (False, None)
    assert nodes["scale"]["equal"] and "non_finite" not in nodes["scale"]
