"""POST .../restore: what an earlier revision holds becomes the head again, as a new revision
after the head — the same blobs (revision 0 downloads byte for byte again, the store does not
grow by the model), the history kept, a recipe to it following the edits to what it restored."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from testkit import upload


def weighty_model() -> bytes:
    """A MatMul with 1 MiB of weights: what a copy would cost shows in the store's size."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"), helper.make_node("Relu", ["m"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 512])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def edit(client, mid: str, base: int, *ops: dict) -> dict:
    r = client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": list(ops)})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def restore(client, mid: str, base, revision):
    return client.post(f"/api/models/{mid}/restore", json={"base": base, "revision": revision})


def download(client, mid: str, rev: int) -> bytes:
    r = client.get(f"/api/models/{mid}/download?revision={rev}")
    assert r.status_code == 200
    return r.data


def recipe_ops(client, mid: str, start: int, end: int) -> list:
    r = client.get(f"/api/models/{mid}/recipe?from={start}&to={end}")
    assert r.status_code == 200, r.get_json()
    return json.loads(r.data)["ops"]


def test_restore_makes_an_earlier_revision_the_head_without_copying_it(app, client):
    data = weighty_model()
    mid = upload(client, data, "m.onnx").get_json()["id"]
    meta = {"op": "set_metadata", "key": "stage", "value": "tuned"}
    rename = {"op": "rename_node", "node": "n1", "name": "act"}
    edit(client, mid, 0, meta)
    edit(client, mid, 1, rename)
    disk = app.extensions["store"].disk_usage()

    r = restore(client, mid, 2, 0)
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    assert answer["revision"] == 3 and answer["changes"] == ["the model as revision 0 held it"]
    assert answer["summary"]["revision"] == 3 and answer["summary"]["can_undo"]
    # the original's very bytes, and not one more weight stored
    assert download(client, mid, 3) == data
    assert app.extensions["store"].disk_usage()["total"] - disk["total"] < 4096
    hist = client.get(f"/api/models/{mid}/revisions").get_json()
    assert hist["head"] == 3
    assert [(h["revision"], h["parent"]) for h in hist["revisions"]] == [(0, None), (1, 0), (2, 1), (3, 2)]
    assert hist["revisions"][3]["ops"] == [{"op": "restore_revision", "revision": 0}]
    # nothing to replay from the original to it; the diff from the head before names the edits undone
    assert recipe_ops(client, mid, 0, 3) == []
    diff = client.get(f"/api/models/{mid}/diff?from=2&to=3").get_json()
    assert diff["metadata"]["removed"] == {"stage": "tuned"} and diff["counts"]["changed"] == 1

    # restoring revision 1 after that: its model, and a recipe to it is revision 1's edit alone
    assert restore(client, mid, 3, 1).get_json()["revision"] == 4
    assert onnx.load_from_string(download(client, mid, 4)) == onnx.load_from_string(download(client, mid, 1))
    assert recipe_ops(client, mid, 0, 4) == [meta]
    # undo goes back to the head the restore was made on
    assert client.post(f"/api/models/{mid}/undo", json={"base": 4}).get_json()["revision"] == 3


def test_restore_of_what_the_head_holds_changes_nothing(client):
    mid = upload(client, weighty_model(), "m.onnx").get_json()["id"]
    edit(client, mid, 0, {"op": "set_metadata", "key": "k", "value": "v"})
    edit(client, mid, 1, {"op": "set_metadata", "key": "k", "value": None})  # back to revision 0's content
    r = restore(client, mid, 2, 2)
    assert r.status_code == 200 and r.get_json()["unchanged"] and r.get_json()["revision"] == 2
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 2


def test_restore_keeps_the_marks_of_what_it_restores(client):
    """A revision stored past a gate (allow_invalid) is invalid again when restored."""
    mid = upload(client, weighty_model(), "m.onnx").get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_io_shape", "name": "y", "shape": [1, 7]}], "allow_invalid": True},
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["invalid"], (
        "an output declared [1, 7] the Relu makes [1, 512]: stored past the gate"
    )
    edit(client, mid, 1, {"op": "set_io_shape", "name": "y", "shape": [1, 512]})
    restored = restore(client, mid, 2, 1).get_json()
    hist = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    assert hist[2]["validation"]["invalid"] == []
    assert hist[restored["revision"]]["validation"]["invalid"] == hist[1]["validation"]["invalid"] != []


def test_bad_restore_requests_say_what_is_wrong(client):
    mid = upload(client, weighty_model(), "m.onnx").get_json()["id"]
    edit(client, mid, 0, {"op": "set_metadata", "key": "k", "value": "v"})
    cases = [
        ({"base": 1}, 400, "bad_request"),
        ({"base": 1, "revision": "0"}, 400, "bad_request"),
        ({"base": True, "revision": 0}, 400, "bad_request"),
        ({"base": 1, "revision": 7}, 404, "unknown_revision"),
        ({"base": 1, "revision": 2**70}, 404, "unknown_revision"),
        ({"base": -1, "revision": 0}, 404, "unknown_revision"),
        ({"base": 0, "revision": 0}, 409, "stale_base"),
    ]
    for body, status, code in cases:
        r = client.post(f"/api/models/{mid}/restore", json=body)
        assert (r.status_code, r.get_json()["error"]["code"]) == (status, code), (body, r.get_json())
    assert client.post("/api/models/nope/restore", json={"base": 0, "revision": 0}).status_code == 404
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 1
