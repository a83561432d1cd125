"""Split a model into two at tensors (QA37 #9): two new models, each checked by onnx and run by
onnxruntime, chained giving the original's outputs; their weights the original's blobs."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from encoder_block import encoder_block
from testkit import upload


def run(data: bytes, feeds: dict) -> dict:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


def test_a_split_makes_two_models_that_chained_give_the_originals_outputs(client):
    model = encoder_block()
    mid = upload(client, model.SerializeToString(), "enc.onnx").get_json()["id"]
    blobs_before = _blob_names(client)
    r = client.post(f"/api/models/{mid}/split", json={"at": ["res1"], "revision": 0})
    assert r.status_code == 201, r.get_json()
    first, second = r.get_json()["parts"]
    assert (first["name"], second["name"]) == ("enc part 1 of 2.onnx", "enc part 2 of 2.onnx")
    assert (first["inputs"], first["outputs"]) == (["input_ids_embeds"], ["res1"])
    assert (second["inputs"], second["outputs"]) == (["res1"], ["last_hidden_state"])
    assert first["nodes"] + second["nodes"] == len(model.graph.node)
    parts = [client.get(f"/api/models/{p['id']}/download").data for p in (first, second)]
    for data in parts:
        onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    x = np.random.default_rng(0).standard_normal((2, 5, 64)).astype(np.float32)
    middle = run(parts[0], {"input_ids_embeds": x})
    np.testing.assert_array_equal(
        run(parts[1], middle)["last_hidden_state"],
        run(model.SerializeToString(), {"input_ids_embeds": x})["last_hidden_state"],
    )
    assert _blob_names(client) - blobs_before <= _graph_and_derived_blobs(client)  # no weight stored again
    # each part says where it came from; the model split is as it was
    history = client.get(f"/api/models/{first['id']}/revisions").get_json()["revisions"]
    assert history[0]["changes"][0].startswith("part 1 of 2 of enc.onnx (revision 0), split at res1: ")
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def _blob_names(client) -> set[str]:
    from app.api.documents import store

    with client.application.app_context():
        return set(store().blobs.digests())


def _graph_and_derived_blobs(client) -> set[str]:
    """The blobs the parts' revisions are (their graphs) and what was derived from them."""
    from app.api.documents import store

    with client.application.app_context():
        s = store()
        out = set()
        for _record, revisions in s.models_with_revisions():
            for r in revisions:
                out.add(r.blob)
        out |= {d for d, _ in s.index.derived_blobs()}
        return out


def test_a_split_names_what_it_cant_cut_at(client):
    mid = upload(client, encoder_block().SerializeToString(), "enc.onnx").get_json()["id"]
    cases = [
        ({"at": []}, 400, "bad_request"),
        ({"at": "res1"}, 400, "bad_request"),
        ({"at": ["res1"], "extra": 1}, 400, "bad_field"),
        ({"at": ["last_hidden_state"]}, 400, "bad_value"),  # nothing after it
        ({"at": ["nope"]}, 404, "unknown_tensor"),
        ({"at": ["res1"], "revision": "0"}, 400, "bad_request"),
        ({"at": ["res1"], "revision": 3}, 404, "unknown_revision"),
        ({"at": ["input_ids_embeds"]}, 400, "bad_value"),
    ]
    for body, status, code in cases:
        r = client.post(f"/api/models/{mid}/split", json=body)
        assert (r.status_code, r.get_json()["error"]["code"]) == (status, code), (body, r.get_json())
    assert len(client.get("/api/models").get_json()["models"]) == 1  # nothing made
