"""The models list holds whatever another user does meanwhile, and a store that lost some data
(QA18 with a team server): a model deleted while the list is made is left out, not a 404 for
everyone (9 % of list calls with 10 clients); a model whose blobs the blob store no longer has
is listed as damaged, not a 500 for everyone, and its own requests say what is missing."""

from __future__ import annotations

from test_store import weighty_model
from testkit import upload

from app.api.documents import store
from app.store.index import SqlIndex


def uploaded(client, seed: int) -> str:
    r = upload(client, weighty_model(seed).SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def test_a_model_deleted_while_the_list_is_made_is_left_out(client, monkeypatch):
    keep, gone = uploaded(client, 0), uploaded(client, 1)
    listed = SqlIndex.all_revisions

    def deleted_meanwhile(self):
        self.delete_model(gone)  # between the models' query and the revisions'
        return listed(self)

    monkeypatch.setattr(SqlIndex, "all_revisions", deleted_meanwhile)
    r = client.get("/api/models")

    assert r.status_code == 200, r.get_json()
    assert [m["id"] for m in r.get_json()["models"]] == [keep]


def test_a_model_whose_blobs_are_gone_is_listed_damaged_and_says_what_is_missing(client, app):
    healthy, damaged = uploaded(client, 0), uploaded(client, 1)
    edit = {"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    assert client.post(f"/api/models/{damaged}/edits", json=edit).status_code == 200
    with app.app_context():
        s = store()
        revision = s.revision(damaged)  # its graph: the edit's own blob
        s.blobs.remove(revision.blob)  # either blob store: a folder, or S3

    r = client.get("/api/models")
    assert r.status_code == 200, r.get_json()
    entries = {m["id"]: m for m in r.get_json()["models"]}
    assert entries[healthy]["size"] > 0 and "damaged" not in entries[healthy]
    assert entries[damaged]["size"] is None
    assert entries[damaged]["damaged"].startswith("data this needs is missing from the blob store: no blob ")

    r = client.get(f"/api/models/{damaged}/download")
    assert r.status_code == 500
    error = r.get_json()["error"]
    assert error["code"] == "blob_missing" and f"no blob {revision.blob} " in error["message"], error
