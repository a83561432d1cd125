"""The uploaded files an edit's ops name stay while a revision names them (QA40 #3): a weight
replaced from a .npy made every recipe through that edit a 404 once the collector took the .npy
ten minutes later, though the revision held its values."""

from __future__ import annotations

import numpy as np
from browser.browser_models import tiny_cnn
from testkit import npy_blob, upload


def test_a_recipe_through_a_npy_edit_downloads_after_a_collection_and_not_after_the_model(client):
    mid = upload(client, tiny_cnn().SerializeToString(), "cnn.onnx").get_json()["id"]
    digest = npy_blob(client, np.full((10,), 0.5, np.float32))
    op = {"op": "set_initializer", "name": "fc.bias", "value": {"npy": digest}}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    from app.api.documents import store

    with client.application.app_context():
        s = store()
        s.collect(now=10**10)  # far in the future: only what is referenced stays
        assert s.blobs.exists(digest)
        r = client.get(f"/api/models/{mid}/recipe?from=0&to=1")
        assert r.status_code == 200 and digest in r.get_json()["blobs"], r.get_json()
        assert client.delete(f"/api/models/{mid}").status_code == 204
        s.collect(now=10**10)
        assert not s.blobs.exists(digest)  # nothing names it any more
