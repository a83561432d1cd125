"""A server with an access token (issue 12): the page asks for it once, then works as usual."""

from __future__ import annotations

from .browser_models import tiny_cnn
from .conftest import serve

TOKEN = "browser-test-token"


def test_signing_in_then_uploading_and_opening_a_model(page, tmp_path, artifacts):
    url, stop = serve({"DATA_DIR": str(tmp_path / "data"), "AUTH_TOKEN": TOKEN})
    try:
        page.goto(url + "/")
        assert "/login" in page.url
        page.fill("#token", "wrong")
        page.click("button[type=submit]")
        page.wait_for_selector(".field-error")
        page.screenshot(path=str(artifacts / "login.png"))
        page.fill("#token", TOKEN)
        page.click("button[type=submit]")
        page.wait_for_url(url + "/")
        # the page's own requests carry the cookie: an upload through the API, then its page
        r = page.request.post(
            url + "/api/models",
            multipart={
                "file": {
                    "name": "cnn.onnx",
                    "mimeType": "application/octet-stream",
                    "buffer": tiny_cnn().SerializeToString(),
                }
            },
        )
        assert r.status == 201, r.text()
        page.goto(f"{url}/models/{r.json()['id']}")
        page.wait_for_selector("#graph[data-state=ready] [data-node-id=n0]")
    finally:
        stop()
