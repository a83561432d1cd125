"""A closed-set string attribute (Resize's mode) is edited by picking one of its values from a
list showing them all (QA23 F9: a free text field where "bilinear" was caught only by
onnxruntime's run; then a datalist that showed only the values matching what the field held)."""

from __future__ import annotations

from test_attribute_rules import resize_model

from .browser_pages import open_model, upload, wait_revision


def test_resize_mode_is_picked_from_resizes_modes(page, server, artifacts):
    summary = upload(page, server, resize_model(), "resize.onnx")
    open_model(page, server, summary["id"], "#node=n0")
    picker = page.locator(".attr[data-attr=mode] select.attr-choice")
    picker.wait_for()
    options = picker.locator("option")
    assert [options.nth(i).get_attribute("value") for i in range(options.count())] == ["nearest", "linear", "cubic"]
    assert picker.input_value() == "nearest" and picker.get_attribute("title") == "One of nearest, linear, cubic"
    assert page.locator(".attr[data-attr=mode] input[name=value]").is_hidden()
    picker.select_option("cubic")
    picker.press("Escape")  # puts the value back, as in a text field
    assert picker.input_value() == "nearest"
    picker.select_option("linear")
    page.screenshot(path=str(artifacts / "attribute-choices.png"))
    page.locator(".attr[data-attr=mode] button[type=submit]").click()
    wait_revision(page, 1)
    graph = page.request.get(f"{server}/api/models/{summary['id']}/graph?revision=1").json()
    [mode] = [a for a in graph["nodes"][0]["attributes"] if a["name"] == "mode"]
    assert mode["value"] == "linear"
    page.locator(".attr[data-attr=mode] select.attr-choice").wait_for()
    assert page.locator(".attr[data-attr=mode] select.attr-choice").input_value() == "linear"


def test_a_new_closed_set_attribute_offers_its_values(page, server):
    """Add attribute: picking Resize's nearest_mode offers its four values in the value field."""
    summary = upload(page, server, resize_model(), "resize.onnx")
    open_model(page, server, summary["id"], "#node=n0")
    page.locator("#sidebar .ed-add-attr-toggle").click()
    form = page.locator("#add-attribute")
    form.locator("select[name=name] option[value=nearest_mode]").wait_for(state="attached")
    form.locator("select[name=name]").select_option("nearest_mode")
    value = form.locator("input[name=value]")
    listed = page.locator(f"datalist#{value.get_attribute('list')} option")
    assert [listed.nth(i).get_attribute("value") for i in range(listed.count())] == [
        "round_prefer_floor",
        "round_prefer_ceil",
        "floor",
        "ceil",
    ]
    form.locator("select[name=name]").select_option("cubic_coeff_a")
    assert value.get_attribute("list") is None
