"""Split the model at a value from its panel (QA37 #9): two new models, linked, each opening."""

from __future__ import annotations

from encoder_block import encoder_block

from .browser_pages import open_model, upload, wait_ready


def test_a_value_panel_splits_the_model_into_two_linked_parts(page, server, artifacts):
    mid = upload(page, server, encoder_block(), "enc.onnx")["id"]
    open_model(page, server, mid, "#tensor=res1")
    form = page.locator("#split-here")
    form.locator("button[type=submit]").click()
    parts = form.locator(".split-result a.split-part")
    parts.nth(1).wait_for()
    said = form.locator(".split-result").text_content()
    assert said.startswith("Made enc part 1 of 2.onnx (") and " and enc part 2 of 2.onnx (" in said, said
    page.screenshot(path=str(artifacts / "split-here.png"))
    listed = {m["name"] for m in page.request.get(f"{server}/api/models").json()["models"]}
    assert {"enc.onnx", "enc part 1 of 2.onnx", "enc part 2 of 2.onnx"} <= listed
    assert page.locator("#model-revision").text_content() == "rev 0"  # this model as it was
    parts.nth(1).click()
    wait_ready(page)
    assert page.locator("#model-name").text_content() == "enc part 2 of 2.onnx"
