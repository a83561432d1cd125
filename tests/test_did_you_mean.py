"""A tensor or input name mistyped in an edit names the nearest one the model has (QA25 #9:
"no tensor named 'pred'" where the model has 'preds')."""

from __future__ import annotations

from browser.browser_models import tiny_cnn
from testkit import upload


def test_a_mistyped_name_says_the_nearest(client):
    mid = upload(client, tiny_cnn().SerializeToString(), "tiny_cnn.onnx").get_json()["id"]
    op = {"op": "extract_subgraph", "inputs": ["input"], "outputs": ["prob"]}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 404, r.get_json()
    assert r.get_json()["error"]["message"].endswith("no tensor named 'prob' (did you mean 'probs'?)")
    op = {"op": "set_io_shape", "name": "inputs", "shape": [1, 3, 32, 32]}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 404, r.get_json()
    assert r.get_json()["error"]["message"].endswith("no input or output named 'inputs' (did you mean 'input'?)")
    op = {"op": "set_io_shape", "name": "zzz", "shape": [1]}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.get_json()["error"]["message"].endswith("no input or output named 'zzz'")  # nothing near: no guess
