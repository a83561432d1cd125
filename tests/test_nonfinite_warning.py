"""An edit that makes the model's outputs NaN or ±Inf on onnxruntime's smoke run, where its base's
were finite (a typo'd attribute, a weight of NaN), is stored with a warning line; what was
non-finite already is not said again."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from testkit import upload


def gemm_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    g = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc", beta=1.0)],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3])],
        [
            numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w"),
            numpy_helper.from_array(np.ones(3, np.float32), "b"),
        ],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def edit(client, mid, base, *ops):
    return client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": list(ops)})


def test_an_attribute_making_every_output_nan_is_warned_once(client):
    mid = upload(client, gemm_model().SerializeToString(), "fc.onnx").get_json()["id"]
    r = edit(client, mid, 0, {"op": "set_attribute", "node": "fc", "name": "beta", "value": "NaN"})
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    assert answer["changes"][-1] == (
        "warning: onnxruntime's smoke run now gives NaN or ±Inf in 'y' (3 of 3 values), "
        "where the base gave none on the same inputs"
    )
    assert answer["validation"]["runtime"]["nonfinite"] == {"y": [3, 3]}
    # the next edit's base already gives NaN there: nothing new to say
    r = edit(client, mid, 1, {"op": "rename_node", "node": "fc", "name": "dense"})
    assert r.status_code == 200, r.get_json()
    assert not any(line.startswith("warning:") for line in r.get_json()["changes"])


def test_a_finite_edit_says_nothing(client):
    mid = upload(client, gemm_model().SerializeToString(), "fc.onnx").get_json()["id"]
    r = edit(client, mid, 0, {"op": "set_attribute", "node": "fc", "name": "beta", "value": 0.5})
    assert r.status_code == 200, r.get_json()
    assert not any(line.startswith("warning:") for line in r.get_json()["changes"])
    assert r.get_json()["validation"]["runtime"]["nonfinite"] == {}
