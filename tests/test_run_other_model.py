"""Run compared with another stored model (QA24 #10): a model quantized or converted outside the
app, uploaded beside its float source, runs against it on the very same inputs — outputs
compared, and with locate the node where they part — as a revision of the same model does."""

from __future__ import annotations

import numpy as np
from browser.browser_models import tiny_cnn
from test_run import run
from testkit import npy_blob, upload


def test_a_model_converted_elsewhere_runs_against_its_source(client):
    source = upload(client, tiny_cnn().SerializeToString(), "cnn_fp32.onnx").get_json()["id"]
    converted = upload(client, tiny_cnn().SerializeToString(), "cnn_fp16.onnx").get_json()["id"]
    r = client.post(f"/api/models/{converted}/edits", json={"base": 0, "ops": [{"op": "convert_float16"}]})
    assert r.status_code == 200, r.get_json()
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    body = {"inputs": {"input": {"npy": npy_blob(client, x)}}, "compare_model": source, "locate": True}
    c = run(client, converted, body)["compare"]
    assert c["model"] == {"id": source, "name": "cnn_fp32.onnx"} and c["revision"] == 0
    assert c["outputs"]["probs"]["close"] is True and c["outputs"]["probs"]["equal"] is False
    assert c["nodes"] and c["diverges"] is not None  # float16 rounds from the first node on
    # a revision of the other model: compare_to picks it
    r = client.post(
        f"/api/models/{source}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "softmax", "name": "axis", "value": 0}]},
    )
    assert r.status_code == 200, r.get_json()
    head = run(client, converted, {**body, "locate": False})["compare"]
    assert head["revision"] == 1 and head["outputs"]["probs"]["close"] is False
    first = run(client, converted, {**body, "locate": False, "compare_to": 0})["compare"]
    assert first["revision"] == 0 and first["outputs"]["probs"]["close"] is True


def test_another_model_that_does_not_exist_or_is_no_model(client):
    mid = upload(client, tiny_cnn().SerializeToString()).get_json()["id"]
    inputs = {"input": {"random": {"seed": 0}}}
    error = run(client, mid, {"inputs": inputs, "compare_model": "nope"}, 404)["error"]
    assert error["code"] in ("unknown_model", "not_found")
    error = run(client, mid, {"inputs": inputs, "compare_model": 3}, 400)["error"]
    assert '"compare_model"' in error["message"]
