"""A model deleted while a page shows it (QA18 F14: "no model with id 'c3e49079d8d2'", and the page
went on offering every edit): the page says it was deleted, once, above the drawing, with the way
to the models list, and stops offering edits."""

from __future__ import annotations

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload


def test_a_model_deleted_elsewhere_is_said_so_and_edits_stop(page, server, artifacts):
    mid = upload(page, server, tiny_cnn(), "gone.onnx")["id"]
    open_model(page, server, mid)
    assert page.request.delete(f"{server}/api/models/{mid}").status == 204  # a teammate deletes it

    page.locator("#btn-history").click()
    banner = page.locator("#model-gone")
    banner.wait_for()
    page.screenshot(path=str(artifacts / "model_gone.png"))
    assert banner.text_content().startswith("This model was deleted, on another page or by another user")
    assert banner.locator("a", has_text="Open the models list").get_attribute("href") == "/"
    assert page.locator("#btn-undo").is_disabled()
    assert "no model with id" not in page.locator("body").text_content()
