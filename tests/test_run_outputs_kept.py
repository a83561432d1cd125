"""A run's outputs whole: the answer previews each output's first values only, and keeps each
tensor output's .npy as a blob ("npy" on its preview) that GET /api/blobs/<digest> gives whole —
a detector's 1×84×8400 or a decoder's logits save as onnxruntime gave them."""

from __future__ import annotations

import io
import time

import numpy as np
import onnx
from browser.browser_models import zipmap_model
from onnx import helper
from test_run import reference, run
from testkit import npy_blob, upload

from app.api import run as run_api
from app.store.store import COLLECT_GRACE_SECONDS

F = onnx.TensorProto.FLOAT


def wide_model() -> onnx.ModelProto:
    """x [1, 3, 40, 200] → Sin (24,000 values, past the answer's 10,000) and its ReduceMean."""
    graph = helper.make_graph(
        [
            helper.make_node("Sin", ["x"], ["waves"]),
            helper.make_node("ReduceMean", ["waves"], ["mean"], keepdims=0),
        ],
        "wide",
        [helper.make_tensor_value_info("x", F, [1, 3, 40, 200])],
        [helper.make_tensor_value_info("waves", F, [1, 3, 40, 200]), helper.make_tensor_value_info("mean", F, [])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def saved(client, digest: str) -> np.ndarray:
    r = client.get(f"/api/blobs/{digest}")
    assert r.status_code == 200, r.get_json()
    assert r.headers["Content-Disposition"].startswith("attachment") and int(r.headers["Content-Length"]) == len(r.data)
    return np.load(io.BytesIO(r.data), allow_pickle=False)


def test_an_output_past_the_preview_is_given_whole(client):
    model = wide_model()
    x = np.random.default_rng(1).standard_normal((1, 3, 40, 200)).astype(np.float32)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"inputs": {"x": {"npy": npy_blob(client, x)}}})
    expected = reference(model.SerializeToString(), {"x": x})
    waves = answer["outputs"]["waves"]
    assert waves["size"] == 24_000 and len(waves["values"]) == 10_000  # the answer: the first values
    got = saved(client, waves["npy"])
    assert got.dtype == np.float32 and np.array_equal(got, expected["waves"])
    named = client.get(f"/api/blobs/{waves['npy']}?name=../present.0.key")  # a name of the page's, made safe
    assert named.headers["Content-Disposition"].endswith("filename=present.0.key.npy"), named.headers
    scalar = saved(client, answer["outputs"]["mean"]["npy"])  # a scalar stays 0-d
    assert scalar.shape == () and scalar == expected["mean"]
    # an uploaded array is a stored .npy too
    np.testing.assert_array_equal(saved(client, npy_blob(client, x)), x)


def test_what_is_no_stored_npy_is_refused_by_name(client):
    sent = client.post("/api/blobs", data={"file": (io.BytesIO(wide_model().SerializeToString()), "m.onnx")})
    for digest, words in (
        ("0" * 64, "run it again"),  # none stored (a run's output collected since)
        ("not-a-digest", "'not-a-digest' is no blob digest (64 hex digits"),
        (sent.get_json()["blob"], "is no .npy"),  # a model's bytes: its download gives them
    ):
        r = client.get(f"/api/blobs/{digest}")
        assert r.status_code == 404 and r.get_json()["error"]["code"] == "unknown_blob", digest
        assert words in r.get_json()["error"]["message"]


def test_a_run_keeps_its_outputs_up_to_a_bound_and_no_sequence(client, monkeypatch):
    model = wide_model()
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    monkeypatch.setattr(run_api, "RUN_OUTPUTS_KEPT_BYTES", 1000)  # the scalar fits, 24,000 floats don't
    answer = run(client, mid, {"inputs": {"x": {"random": {"seed": 0}}}})
    assert "npy" not in answer["outputs"]["waves"] and "npy" in answer["outputs"]["mean"]
    zipmap = upload(client, zipmap_model().SerializeToString()).get_json()["id"]
    probs = run(client, zipmap, {"inputs": {"X": {"random": {"seed": 0}}}})["outputs"]["probs"]
    assert probs["kind"] == "sequence" and "npy" not in probs


def test_kept_outputs_go_at_the_collection_after_their_grace(client):
    """Nothing references a run's outputs: a collection is due once they are past the grace (they
    don't pile up until the next delete), and it removes them; the download then says to run again."""
    store = client.application.extensions["store"]
    mid = upload(client, wide_model().SerializeToString()).get_json()["id"]
    digest = run(client, mid, {"inputs": {"x": {"random": {"seed": 0}}}})["outputs"]["waves"]["npy"]
    assert store._timer is not None and store._timer.is_alive()  # the collection after the grace
    store.collect(now=time.time() + COLLECT_GRACE_SECONDS + 5)
    r = client.get(f"/api/blobs/{digest}")
    assert r.status_code == 404 and "run it again" in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}").status_code == 200  # the model's own blobs stay
    assert run(client, mid, {"inputs": {"x": {"random": {"seed": 0}}}})["outputs"]["waves"]["npy"] == digest
