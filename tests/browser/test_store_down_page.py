"""The page while the server can't reach its storage (a 503 store_unavailable, QA36 #6): an edit's
form says it was not saved and to try again, and the card of a model that can't be opened keeps
its text and its button inside it."""

from __future__ import annotations

import json
import re

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload

DOWN = {
    "error": {
        "code": "store_unavailable",
        "message": "the blob store (S3) can't be reached: it failed to answer just now (Could not connect to the"
        " endpoint URL); it will be tried again in 10 s"
        + " and a long reason" * 12
        + " (blob "
        + "247dd798" * 8
        + ")",  # a digest: one word wider than the card
    }
}


def answer_down(route) -> None:
    route.fulfill(status=503, content_type="application/json", headers={"Retry-After": "10"}, body=json.dumps(DOWN))


def test_an_edit_the_storage_refuses_says_it_was_not_saved(page, server):
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n1")
    page.route(f"**/api/models/{mid}/edits", answer_down)
    form = page.locator("#sidebar .ed-rename-node")
    form.locator("input[name=name]").fill("act")
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.filter(has_text="Not saved").wait_for()
    assert error.text_content().startswith(
        "Not saved: the server can't reach its storage just now — try again in a moment (the blob store (S3)"
    )
    assert form.locator("input[name=name]").input_value() == "act"  # kept for the second try


def test_a_model_the_storage_cant_open_keeps_its_card_whole(page, server, artifacts):
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    page.route(f"**/api/models/{mid}", answer_down)
    page.route(f"**/api/models/{mid}?*", answer_down)

    def without_embedded_data(route) -> None:  # as a server that can't read the model sends it
        html = route.fetch().text()
        html = re.sub(r'<script type="application/json" id="embedded-[a-z]+">.*?</script>', "", html, flags=re.S)
        route.fulfill(status=200, content_type="text/html", body=html)

    page.route(f"{server}/models/{mid}", without_embedded_data)
    page.goto(f"{server}/models/{mid}")
    card = page.locator(".error-card")
    card.wait_for()
    assert page.locator("#model-name").text_content() == "Storage unavailable"
    page.screenshot(path=str(artifacts / "store-down-card.png"))
    inside = page.evaluate(
        "() => { const c = document.querySelector('.error-card').getBoundingClientRect();"
        " return [...document.querySelectorAll('.error-card > *')].every((e) => {"
        " const r = e.getBoundingClientRect(); return r.left >= c.left - 1 && r.right <= c.right + 1; }); }"
    )
    assert inside
