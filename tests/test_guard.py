"""Other sites can't drive a local server (issue 12): wrong Host names refused (DNS rebinding),
cross-site state-changing requests refused, security headers on every answer, JSON errors on every
/api/ path, download names that can't split a header."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper
from testkit import upload

from app import create_app
from app.web.guard import HEADERS


def _model() -> bytes:
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.fixture
def mid(client) -> str:
    return upload(client, _model()).get_json()["id"]


def _count(client) -> int:
    return len(client.get("/api/models").get_json()["models"])


def test_every_answer_carries_the_security_headers(app, client, mid):
    """Every route the app has (each GET with its arguments filled in), and unknown paths."""
    fill = {"model_id": mid, "ref": "x", "package": "dagre", "filename": "dagre.min.js", "path": "x"}
    paths = ["/api/nope", "/nope"]
    for rule in app.url_map.iter_rules():
        if "GET" in rule.methods:
            paths.append(rule.build({k: fill.get(k, "x") for k in rule.arguments}, append_unknown=False)[1])
    assert len(paths) > 20
    for path in paths:
        r = client.get(path)
        assert r.status_code < 500, path
        for key, value in HEADERS.items():
            assert r.headers.get(key) == value, (path, key)
    csp = HEADERS["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "frame-ancestors 'none'" in csp


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "192.168.1.5"])
def test_other_host_names_are_refused(client, host):
    r = client.get("/api/models", headers={"Host": host})
    assert r.status_code == 421 and r.get_json()["error"]["code"] == "unknown_host"
    r = client.post("/api/models", headers={"Host": host}, data={"file": []})
    assert r.status_code == 421


@pytest.mark.parametrize("host", ["localhost", "localhost:8080", "127.0.0.1:5000", "[::1]:8080"])
def test_loopback_names_are_answered(client, host):
    assert client.get("/api/models", headers={"Host": host}).status_code == 200


def test_configured_host_names_are_answered(tmp_path):
    app = create_app({"DATA_DIR": str(tmp_path), "TESTING": True, "ALLOWED_HOSTS": ["studio.example.org"]})
    c = app.test_client()
    assert c.get("/api/models", headers={"Host": "studio.example.org:443"}).status_code == 200
    assert c.get("/api/models", headers={"Host": "other.example.org"}).status_code == 421


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://evil.example"},
        {"Origin": "http://localhost:9999"},
        {"Origin": "null"},
    ],
)
def test_cross_site_requests_change_nothing(client, mid, headers):
    before = _count(client)
    r = upload_with(client, headers)
    assert r.status_code == 403 and r.get_json()["error"]["code"] == "cross_site"
    assert _count(client) == before
    edit = {"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    assert client.post(f"/api/models/{mid}/edits", json=edit, headers=headers).status_code == 403
    assert client.post(f"/api/models/{mid}/undo", headers=headers).status_code == 403
    assert client.delete(f"/api/models/{mid}", headers=headers).status_code == 403
    # the reference cases: none added, no gate set, none dropped (PATCH is as unsafe as POST)
    assert client.post(f"/api/models/{mid}/checks", json={}, headers=headers).status_code == 403
    assert client.patch(f"/api/models/{mid}/checks", json={"gate": True}, headers=headers).status_code == 403
    assert client.delete(f"/api/models/{mid}/checks/x", headers=headers).status_code == 403
    assert client.get(f"/api/models/{mid}/checks").get_json()["cases"] == []
    assert client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 0
    # reading stays open (the page's own GETs, curl)
    assert client.get(f"/api/models/{mid}", headers=headers).status_code == 200


def upload_with(client, headers):
    import io

    files = [(io.BytesIO(_model()), "m.onnx")]
    return client.post("/api/models", data={"file": files}, content_type="multipart/form-data", headers=headers)


@pytest.mark.parametrize(
    "headers", [{"Sec-Fetch-Site": "same-origin"}, {"Origin": "http://localhost"}, {"Sec-Fetch-Site": "none"}, {}]
)
def test_same_origin_and_non_browser_requests_pass(client, headers):
    assert upload_with(client, headers).status_code == 201


def test_unknown_api_paths_answer_json(client, mid):
    for method, path, status in [
        ("get", "/api/nope", 404),
        ("get", f"/api/models/{mid}/nope", 404),
        ("post", "/api/models/x/y/z", 404),
        ("put", "/api/models", 405),
    ]:
        r = getattr(client, method)(path)
        assert r.status_code == status and r.is_json and r.get_json()["error"]["message"], path
    assert not client.get("/nope").is_json  # the pages' 404 stays a page


@pytest.mark.parametrize(
    "name", ['a"b\r\nSet-Cookie: x=1.onnx', "ü\u202eber.onnx", "../../etc/passwd.onnx", "\x00.onnx"]
)
def test_download_names_cannot_split_or_escape_headers(client, name):
    import io

    r = client.post("/api/models", data={"file": [(io.BytesIO(_model()), name)]}, content_type="multipart/form-data")
    if r.status_code == 400:  # refused at upload, naming the problem: nothing to download
        assert r.get_json()["error"]["code"] == "bad_filename"
        return
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    for path in [f"/api/models/{mid}/download", f"/api/models/{mid}/text?download=1"]:
        resp = client.get(path)
        assert resp.status_code == 200, path
        cd = resp.headers["Content-Disposition"]
        assert "\r" not in cd and "\n" not in cd and "Set-Cookie" not in resp.headers
        assert "/" not in cd.split("filename=")[1].split(";")[0]
    assert onnx.load_from_string(client.get(f"/api/models/{mid}/download").data).graph.node[0].name == "r"


@pytest.mark.parametrize(
    ("given", "safe"),
    [
        ('a"b\r\nSet-Cookie: x=1.onnx', "a_b_Set-Cookie: x=1.onnx"),
        ("../../etc/passwd.onnx", "etc_passwd.onnx"),
        ("\x00\x7f", "model"),
        ("résumé.onnx", "résumé.onnx"),  # non-ASCII stays: send_file writes filename*
    ],
)
def test_file_names_for_downloads(given, safe):
    """Names given on the command line (`onnx-studio FILE`) reach downloads without the upload's check."""
    from app.api.file_names import file_name

    assert file_name(given) == safe


def test_the_server_starts_only_on_protobufs_upb_backend(monkeypatch):
    from google.protobuf.internal import api_implementation

    from app import check_protobuf_backend

    check_protobuf_backend()  # this environment: upb
    monkeypatch.setattr(api_implementation, "Type", lambda: "python")
    with pytest.raises(RuntimeError, match="upb"):
        check_protobuf_backend()


def test_download_names_keep_their_extension_and_match_the_stored_name(client):
    """QA: a model uploaded as ".onnx" downloaded as "onnx"; one that arrived as "....win.onnx"
    was listed so but downloaded as "win.onnx"; the text form said its charset twice."""
    from browser.browser_models import tiny_cnn
    from testkit import upload

    data = tiny_cnn().SerializeToString()
    for sent, name in [(".onnx", "model.onnx"), ("....win.onnx", "win.onnx")]:
        r = upload(client, data, sent)
        assert r.status_code == 201 and r.get_json()["name"] == name, r.get_json()
        mid = r.get_json()["id"]
        disposition = client.get(f"/api/models/{mid}/download").headers["Content-Disposition"]
        assert disposition == f"attachment; filename={name}"
    text = client.get(f"/api/models/{mid}/text?download=1")
    assert text.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert text.headers["Content-Disposition"] == "attachment; filename=win.r0.onnxtxt"


def test_a_request_without_a_host_is_refused_and_probes_still_answer(client):
    """QA: an HTTP/1.1 request with no Host header was answered (werkzeug took the listening
    address for the name)."""
    r = client.get("/api/models", environ_overrides={"HTTP_HOST": ""})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "missing_host"
    assert client.get("/healthz", environ_overrides={"HTTP_HOST": ""}).status_code == 200


def test_one_file_a_blob_upload(client):
    """QA: a second file part was dropped without a word."""
    import io

    files = [(io.BytesIO(b"\x93NUMPY"), "a.npy"), (io.BytesIO(b"\x93NUMPY"), "b.npy")]
    r = client.post("/api/blobs", data={"file": files}, content_type="multipart/form-data")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "several_files"
