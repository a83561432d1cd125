"""Who did what (QA26): a browser signed in under a name, or a script sending X-Studio-Author,
makes revisions that say whose they are — in History (GET .../revisions) and the models list
(who uploaded a model, who made its head and when); an upload can be listed under a name of its
own. Names are cleaned (control and direction characters out, 60 characters at most)."""

from __future__ import annotations

import io
import sqlite3

import pytest
from onnx import TensorProto as T
from onnx import helper as h

from app import create_app

TOKEN = "s3cret-token-for-authors"


def relu_model() -> bytes:
    g = h.make_graph(
        [h.make_node("LeakyRelu", ["x"], ["y"], name="act", alpha=0.1)],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()


@pytest.fixture
def app(tmp_path):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "AUTH_TOKEN": TOKEN})


def signed_in(app, name: str | None):
    c = app.test_client()
    assert (
        c.post("/login", data={"token": TOKEN, "next": "/", **({"name": name} if name is not None else {})}).status_code
        == 302
    )
    return c


def upload(c, data: bytes, headers=None, **form):
    return c.post(
        "/api/models",
        data={"file": (io.BytesIO(data), "relu.onnx"), **form},
        content_type="multipart/form-data",
        headers=headers or {},
    )


def set_alpha(c, mid: str, base: int, value: float, headers=None):
    op = {"op": "set_attribute", "node": "act", "name": "alpha", "value": value}
    r = c.post(f"/api/models/{mid}/edits", json={"base": base, "ops": [op]}, headers=headers or {})
    assert r.status_code == 200, r.get_json()


def authors(c, mid: str) -> list:
    return [r["author"] for r in c.get(f"/api/models/{mid}/revisions").get_json()["revisions"]]


def test_each_revision_says_who_made_it(app):
    ana, ben = signed_in(app, "  Ana  Lima "), signed_in(app, "Ben")
    mid = upload(ana, relu_model()).get_json()["id"]
    set_alpha(ben, mid, 0, 0.2)
    script = {"Authorization": f"Bearer {TOKEN}", "X-Studio-Author": "nightly-export"}
    set_alpha(app.test_client(), mid, 1, 0.3, headers=script)
    set_alpha(app.test_client(), mid, 2, 0.4, headers={"Authorization": f"Bearer {TOKEN}"})  # says nobody
    anonymous = signed_in(app, None)
    set_alpha(anonymous, mid, 3, 0.5)
    # a restore is by whoever restores, not the author of what it brings back
    assert ana.post(f"/api/models/{mid}/restore", json={"base": 4, "revision": 1}).status_code == 200
    assert authors(ana, mid) == ["Ana Lima", "Ben", "nightly-export", None, None, "Ana Lima"]

    [listed] = ben.get("/api/models").get_json()["models"]
    assert (listed["created_by"], listed["edited_by"]) == ("Ana Lima", "Ana Lima")
    revisions = ben.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    assert listed["edited"] == revisions[-1]["created"] >= listed["created"]


def test_an_undo_or_a_redo_says_who_moved_the_head_until_the_next_edit(app):
    """QA36 #4: Ben's Redo showed on Ana's page as "revision 1 by Ana", and nothing kept who
    pressed it: the head's last undo or redo is kept with the model, until an edit."""
    ana, ben = signed_in(app, "Ana"), signed_in(app, "Ben")
    mid = upload(ana, relu_model()).get_json()["id"]
    set_alpha(ana, mid, 0, 0.2)
    moved = lambda: ana.get(f"/api/models/{mid}/revisions").get_json()["moved"]  # noqa: E731
    assert moved() is None
    assert ana.post(f"/api/models/{mid}/undo", json={"base": 1}).status_code == 200
    assert {k: moved()[k] for k in ("how", "by", "from", "to")} == {"how": "undo", "by": "Ana", "from": 1, "to": 0}
    assert ben.post(f"/api/models/{mid}/redo", json={"base": 0}).status_code == 200
    assert {k: moved()[k] for k in ("how", "by", "from", "to")} == {"how": "redo", "by": "Ben", "from": 0, "to": 1}
    assert authors(ana, mid) == ["Ana", "Ana"]  # the revision stays Ana's
    [listed] = ana.get("/api/models").get_json()["models"]  # the list says it too
    assert (listed["edited_by"], listed["moved"]["by"], listed["moved"]["how"]) == ("Ana", "Ben", "redo")
    set_alpha(ben, mid, 1, 0.3)
    assert moved() is None
    assert ana.get("/api/models").get_json()["models"][0]["moved"] is None


def test_a_name_is_cleaned_and_bounded(app):
    c = signed_in(app, "Eve\u202e\x00\tSmith" + "x" * 100)
    mid = upload(c, relu_model()).get_json()["id"]
    [name] = authors(c, mid)
    assert name == "Eve Smith" + "x" * 51 and len(name) == 60
    blank = signed_in(app, " \u200b ")
    set_alpha(blank, mid, 0, 0.2)
    assert authors(c, mid)[1] is None


def test_an_upload_is_listed_under_the_name_given(app):
    c = signed_in(app, "Ana")
    r = upload(c, relu_model(), name="  v2 int8 candidate ")
    assert r.status_code == 201 and r.get_json()["name"] == "v2 int8 candidate"
    r = upload(c, relu_model(), name="two\nlines")
    assert r.status_code == 400 and "one line" in r.get_json()["error"]["message"]
    assert [m["name"] for m in c.get("/api/models").get_json()["models"]] == ["v2 int8 candidate"]


@pytest.mark.local_store  # edits the SQLite index's file (PostgreSQL takes the columns as pg_index.py adds them)
def test_an_index_from_before_authors_takes_the_column(tmp_path):
    """An index made before revisions had authors (and sessions names) opens with the columns
    added; its revisions say nobody."""
    data = tmp_path / "data"
    app = create_app({"DATA_DIR": str(data), "TESTING": True, "AUTH_TOKEN": TOKEN})
    mid = upload(signed_in(app, "Ana"), relu_model()).get_json()["id"]
    conn = sqlite3.connect(data / "index.sqlite3")
    conn.execute("UPDATE revisions SET author = NULL")
    conn.execute("ALTER TABLE revisions DROP COLUMN author")
    conn.execute("ALTER TABLE sessions DROP COLUMN name")
    conn.commit()
    conn.close()
    again = create_app({"DATA_DIR": str(data), "TESTING": True, "AUTH_TOKEN": TOKEN})
    c = signed_in(again, "Ben")
    set_alpha(c, mid, 0, 0.2)
    assert authors(c, mid) == [None, "Ben"]
