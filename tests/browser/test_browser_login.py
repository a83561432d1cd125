"""A server with an access token (issue 12): the page asks for it once, then works as usual;
Sign out, in the top bar, asks for it again."""

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
        sign_out = page.get_by_role("button", name="Sign out")
        box, bar = sign_out.bounding_box(), page.locator(".topbar").bounding_box()
        assert box and bar and box["x"] + box["width"] <= bar["width"] and box["y"] >= bar["y"]  # on screen, in the bar
        page.screenshot(path=str(artifacts / "signed-in-model-page.png"))
        sign_out.click()
        page.wait_for_url(url + "/login")
        page.goto(url + "/")
        assert "/login" in page.url
        assert page.request.get(url + "/api/models").status == 401
    finally:
        stop()
