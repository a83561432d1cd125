"""A refused edit whose fault is only a graph output declared as its producer wrote it before:
the refusal offers the same batch with the output re-declared (QA17 F8)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from testkit import argmax_classifier, upload


def test_an_attribute_changing_a_declared_outputs_shape_is_refused_with_the_batch_that_redeclares_it(client):
    mid = upload(client, argmax_classifier().SerializeToString()).get_json()["id"]
    ops = [
        {"op": "set_attribute", "node": "argmax", "name": "axis", "value": 1},
        {"op": "set_attribute", "node": "argmax", "name": "keepdims", "value": 0},
    ]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 422, r.get_json()
    error = r.get_json()["error"]
    assert "class_id" in error["message"] and "declared" in error["message"]
    fix = error["fix"]
    assert fix["label"] == "Also declare class_id as INT64 [batch]"
    assert fix["ops"][-1] == {"op": "set_io_shape", "name": "class_id", "shape": ["batch"]}
    assert [op["op"] for op in fix["ops"]] == ["set_attribute", "set_attribute", "set_io_shape"]

    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": fix["ops"]})
    assert r.status_code == 200, r.get_json()
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(model, full_check=True)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    logits, class_id = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    assert class_id.shape == (2,) and np.array_equal(class_id, logits.argmax(axis=1))


def test_a_refusal_the_node_itself_causes_offers_nothing(client):
    mid = upload(client, argmax_classifier().SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "argmax", "name": "axis", "value": 5}]},
    )
    assert r.status_code == 422, r.get_json()
    assert "fix" not in r.get_json()["error"]
