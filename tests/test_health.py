"""Operations (issue 14): health checks, request ids in headers and error bodies, one log line
per request (JSON when asked)."""

from __future__ import annotations

import json
import logging
import shutil

import pytest

from app import create_app, logs


@pytest.fixture
def guarded(tmp_path):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "AUTH_TOKEN": "s3cret"}).test_client()


def test_health_checks_answer_any_probe(guarded):
    for path in ("/healthz", "/readyz"):
        r = guarded.get(path, headers={"Host": "10.1.2.3:8080"})  # no token, a container's address
        assert r.status_code == 200 and r.get_json() == {"status": "ok"}, path
    assert guarded.get("/api/models").status_code == 401  # the rest still needs the token


@pytest.mark.local_store  # removes the blob folder (S3's case: test_s3_blobs.py)
def test_readyz_says_what_is_unreachable(app, client, monkeypatch):
    store = app.extensions["store"]
    shutil.rmtree(store.blobs.root)
    r = client.get("/readyz")
    assert r.status_code == 503
    assert r.get_json()["status"] == "unavailable"
    assert any(p.startswith("blob store:") for p in r.get_json()["problems"])
    store.blobs.root.mkdir()

    def down():
        raise OSError("database is locked")

    monkeypatch.setattr(store.index, "ping", down)
    r = client.get("/readyz")
    assert r.status_code == 503 and r.get_json()["problems"] == ["index: database is locked"]
    assert client.get("/healthz").status_code == 200  # the process itself is fine


def test_request_ids_in_headers_and_error_bodies(client, guarded):
    r = client.get("/api/models")
    rid = r.headers["X-Request-Id"]
    assert len(rid) == 16 and r.status_code == 200
    assert client.get("/api/models", headers={"X-Request-Id": "lb-42.a"}).headers["X-Request-Id"] == "lb-42.a"
    # a caller's id that isn't a plain token is replaced
    odd = "<script>" + "x" * 80
    assert client.get("/api/models", headers={"X-Request-Id": odd}).headers["X-Request-Id"] != odd
    for response in (
        client.get("/api/models/nope", headers={"X-Request-Id": "r1"}),  # the API's own errors
        client.get("/api/nope", headers={"X-Request-Id": "r1"}),  # unknown API paths
        client.get("/api/models", headers={"X-Request-Id": "r1", "Host": "evil.example"}),  # the host guard
        guarded.get("/api/models", headers={"X-Request-Id": "r1"}),  # the token check
    ):
        assert response.status_code >= 400
        assert response.headers["X-Request-Id"] == "r1"
        assert response.get_json()["error"]["request_id"] == "r1", response.get_json()


def test_one_log_line_per_request(client, caplog):
    with caplog.at_level(logging.INFO, logger="onnx_studio.requests"):
        client.get("/api/models/nope", headers={"X-Request-Id": "trace-1"})
    (record,) = [r for r in caplog.records if r.name == "onnx_studio.requests"]
    assert (record.request_id, record.method, record.path, record.status) == ("trace-1", "GET", "/api/models/nope", 404)
    assert record.route == "/api/models/<model_id>" and record.duration_ms >= 0
    line = json.loads(logs.JsonFormatter().format(record))
    assert {k: line[k] for k in ("level", "request_id", "route", "status")} == {
        "level": "info",
        "request_id": "trace-1",
        "route": "/api/models/<model_id>",
        "status": 404,
    }
    # the error's code is on the line too: what went wrong is read from the log alone
    assert line["error_code"] == "unknown_model" and record.getMessage().endswith("[trace-1] unknown_model")


def test_a_newline_in_a_url_cannot_forge_a_log_line(client, caplog):
    with caplog.at_level(logging.INFO, logger="onnx_studio.requests"):
        client.get("/api/models/abc%0A2026-12-05 FAKE admin logged in")
    (record,) = [r for r in caplog.records if r.name == "onnx_studio.requests"]
    line = logging.Formatter("%(message)s").format(record)
    assert "\n" not in line and "abc\\n2026-12-05 FAKE" in line, line


def test_a_server_error_is_logged_as_an_error(app, caplog):
    @app.get("/api/boom-for-test")
    def boom():
        raise RuntimeError("boom")

    app.config["PROPAGATE_EXCEPTIONS"] = False  # as served: the error handler answers 500

    with caplog.at_level(logging.INFO, logger="onnx_studio.requests"):
        assert app.test_client().get("/api/boom-for-test").status_code == 500
    (record,) = [r for r in caplog.records if r.name == "onnx_studio.requests"]
    assert record.levelno == logging.ERROR and record.status == 500


def test_every_log_line_of_a_request_carries_its_id(app, caplog):
    """A traceback or warning logged while a request runs can be found from the id in its error body."""
    from app.web.request_log import request_id

    with caplog.at_level(logging.WARNING, logger="onnx_studio.test"):
        with app.test_request_context("/api/models", headers={"X-Request-Id": "trace-2"}):
            request_id()
            logging.getLogger("onnx_studio.test").warning("deep in the store")
        logging.getLogger("onnx_studio.test").warning("outside any request")
    inside, outside = [r for r in caplog.records if r.name == "onnx_studio.test"]
    assert inside.request_id == "trace-2" and json.loads(logs.JsonFormatter().format(inside))["request_id"] == "trace-2"
    assert not hasattr(outside, "request_id")
