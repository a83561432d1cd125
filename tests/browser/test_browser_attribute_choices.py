"""A closed-set string attribute (Resize's mode) is offered its values as the field's choices
(QA23 F9: a free text field where "bilinear" was caught only by onnxruntime's run)."""

from __future__ import annotations

from test_attribute_rules import resize_model

from .browser_pages import open_model, upload


def test_resize_mode_offers_resizes_modes(page, server, artifacts):
    summary = upload(page, server, resize_model(), "resize.onnx")
    open_model(page, server, summary["id"], "#node=n0")
    field = page.locator(".attr[data-attr=mode] input[name=value]")
    page.wait_for_function(
        "() => document.querySelector('.attr[data-attr=mode] input[name=value]')?.getAttribute('list')"
    )
    listed = page.locator(f"datalist#{field.get_attribute('list')} option")
    assert [listed.nth(i).get_attribute("value") for i in range(listed.count())] == ["nearest", "linear", "cubic"]
    assert field.get_attribute("title") == "One of nearest, linear, cubic"
    field.fill("bilinear")
    field.press("Enter")
    error = page.locator(".attr[data-attr=mode] .field-error")
    error.wait_for(state="visible")
    assert "must be one of nearest, linear, cubic; got 'bilinear'" in error.text_content()
    page.screenshot(path=str(artifacts / "attribute-choices.png"))
