"""Optional token authentication (issue 12): with a token set, pages redirect to the login page
and the API answers 401 until the token comes as a Bearer header or the login's cookie; the
page's scripts and styles stay public; the login only sends people back to this server."""

from __future__ import annotations

import pytest
from test_guard import upload_with

from app import create_app
from app.cli import _is_loopback
from app.web.auth import COOKIE

TOKEN = "s3cret-token"


@pytest.fixture
def guarded(tmp_path):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "AUTH_TOKEN": TOKEN}).test_client()


def test_without_the_token_nothing_is_answered(guarded):
    r = guarded.get("/api/models")
    assert r.status_code == 401 and r.get_json()["error"]["code"] == "unauthorized"
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert upload_with(guarded, {}).status_code == 401
    r = guarded.get("/models/abc?x=1")
    assert r.status_code == 302 and r.headers["Location"].startswith("/login?next=/models/abc")
    assert guarded.get("/api/models", headers={"Authorization": "Bearer wrong"}).status_code == 401
    # what the login page itself needs stays public
    assert guarded.get("/login").status_code == 200
    assert guarded.get("/static/css/app.css").status_code == 200


def test_a_bearer_token_opens_the_api(guarded):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert guarded.get("/api/models", headers=auth).status_code == 200
    assert upload_with(guarded, auth).status_code == 201


def test_logging_in_sets_a_cookie_that_opens_pages_and_the_api(guarded):
    r = guarded.post("/login", data={"token": "nope", "next": "/"})
    assert r.status_code == 401 and b"not this server" in r.data
    assert guarded.get("/api/models").status_code == 401
    r = guarded.post("/login", data={"token": TOKEN, "next": "/models/abc"})
    assert r.status_code == 302 and r.headers["Location"] == "/models/abc"
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert TOKEN not in cookie  # the cookie is derived from the token, not the token
    assert guarded.get("/api/models").status_code == 200
    assert guarded.get("/").status_code == 200


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "javascript:alert(1)", "evil"])
def test_the_login_sends_people_back_to_this_server_only(guarded, target):
    r = guarded.post("/login", data={"token": TOKEN, "next": target})
    assert r.status_code == 302 and r.headers["Location"] == "/"


def test_no_token_no_login(client):
    assert client.get("/api/models").status_code == 200
    upload_with(client, {})
    assert client.get("/").status_code == 200


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("0.0.0.0", False), ("10.1.2.3", False)],
)
def test_a_token_is_made_up_beyond_loopback(host, loopback):
    assert _is_loopback(host) is loopback


def test_signing_out_takes_the_cookie_off(guarded):
    assert b"Sign out" not in guarded.get("/login").data  # nobody is signed in yet
    guarded.post("/login", data={"token": TOKEN, "next": "/"})
    page = guarded.get("/").data.decode()
    assert 'action="/logout"' in page and "Sign out" in page
    # nothing a signed-in browser was sent is kept in its cache (Back after Sign out shows nothing)
    for path in ("/", "/api/models"):
        assert guarded.get(path).headers["Cache-Control"] == "no-store"
    assert "no-store" not in guarded.get("/static/css/app.css").headers.get("Cache-Control", "")
    r = guarded.post("/logout")
    assert r.status_code == 303 and r.headers["Location"] == "/login"
    assert f"{COOKIE}=;" in r.headers["Set-Cookie"] and "Expires=Thu, 01 Jan 1970" in r.headers["Set-Cookie"]
    assert guarded.get("/api/models").status_code == 401
    assert guarded.get("/").status_code == 302
    # a script's Bearer token is no session: pages it reads offer no sign-out
    page = guarded.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).data.decode()
    assert "Sign out" not in page


def test_another_site_cannot_sign_a_browser_out(guarded):
    guarded.post("/login", data={"token": TOKEN, "next": "/"})
    r = guarded.post("/logout", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403 and "Set-Cookie" not in r.headers
    assert guarded.get("/api/models").status_code == 200


def test_signing_out_ends_the_session_not_only_the_browsers_cookie(guarded):
    """QA18 F7: the cookie was a fixed hash of the token, the same for every sign-in and still
    good after Sign out: a copied cookie stayed valid until the token changed."""
    r = guarded.post("/login", data={"token": TOKEN, "next": "/"})
    cookie = r.headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
    assert f"Max-Age={7 * 24 * 3600}" in r.headers["Set-Cookie"]
    other = guarded.application.test_client()  # another browser, signed in too
    assert cookie not in other.post("/login", data={"token": TOKEN, "next": "/"}).headers["Set-Cookie"]

    guarded.post("/logout")
    guarded.set_cookie(COOKIE, cookie)  # a copy kept of the signed-out cookie
    assert guarded.get("/api/models").status_code == 401
    assert other.get("/api/models").status_code == 200  # its own session goes on


def test_a_session_ends_when_the_token_changes(tmp_path):
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "AUTH_TOKEN": TOKEN})
    c = app.test_client()
    c.post("/login", data={"token": TOKEN, "next": "/"})
    assert c.get("/api/models").status_code == 200
    app.config["AUTH_TOKEN"] = "another-s3cret-token"
    assert c.get("/api/models").status_code == 401


def test_behind_a_tls_proxy_the_cookie_is_https_only(guarded):
    r = guarded.post("/login", data={"token": TOKEN, "next": "/"}, headers={"X-Forwarded-Proto": "https"})
    assert "Secure" in r.headers["Set-Cookie"]
    assert "Secure" not in guarded.post("/login", data={"token": TOKEN, "next": "/"}).headers["Set-Cookie"]


def test_a_wrong_bearer_token_is_said_to_be_wrong(guarded):
    r = guarded.get("/api/models", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.get_json()["error"]["message"] == "the access token sent is not this server's"
    assert guarded.get("/api/models").get_json()["error"]["message"] == "this server needs its access token"
