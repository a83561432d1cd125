"""A stale base's 409 names the head in a field of its own (QA26: a CI script had to parse the
message, or ask again, to rebase)."""

from __future__ import annotations

from test_bad_input import small_model
from testkit import upload


def test_a_stale_edit_undo_and_recipe_say_the_head(client):
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    op = {"op": "set_metadata", "key": "k", "value": "v"}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    for path, body in (
        ("edits", {"base": 0, "ops": [op]}),
        ("recipe", {"base": 0, "recipe": {"ops": [op]}}),
        ("undo", {"base": 0}),
    ):
        r = client.post(f"/api/models/{mid}/{path}", json=body)
        assert r.status_code == 409, (path, r.get_json())
        error = r.get_json()["error"]
        assert error["code"] == "stale_base" and error["head"] == 1, (path, error)
