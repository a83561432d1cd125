"""The node panel's "Write out" (QA25 #2): offered where onnx defines the operator by others,
it puts the primitives in the node's place in one edit; not offered for a Conv."""

from __future__ import annotations

import onnx

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload, wait_revision


def test_a_hardswish_is_written_out_from_its_panel(page, server, artifacts):
    from test_opset_down import hardswish_layernorm

    summary = upload(page, server, hardswish_layernorm(), "edge.onnx")
    open_model(page, server, summary["id"], "#node=@act")
    button = page.locator("#node-edit [data-action=write-out]")
    button.wait_for()  # shown once the schema says HardSwish has a body
    button.click()
    form = page.locator(".ed-write-out")
    assert "onnx defines HardSwish by other operators" in form.text_content()
    page.screenshot(path=str(artifacts / "write-out.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    written = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert [n.op_type for n in written.graph.node][:2] == ["HardSigmoid", "Mul"]
    assert "LayerNormalization" in {n.op_type for n in written.graph.node}  # only the node asked


def test_a_conv_is_not_offered(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    with page.expect_response(lambda r: "/schema?node=" in r.url) as schema:
        open_model(page, server, summary["id"], "#node=n0")
    assert schema.value.json()["has_body"] is False
    page.locator("#node-edit [data-action=delete]").wait_for()
    assert page.locator("#node-edit [data-action=write-out]").is_hidden()


def test_an_edit_that_leaves_the_view_on_nothing_brings_the_drawing_back(page, server, artifacts):
    """QA29: the view is kept across an edit; where the drawing moved away from it (a node
    written out as 94 drawn elsewhere), the window showed nothing. The nearest box comes back."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    area = page.locator("#graph").bounding_box()
    cx, cy = area["x"] + area["width"] - 40, area["y"] + area["height"] / 2
    for _ in range(3):  # dragged far left, past the drawing's edge: the window shows nothing of it
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.mouse.move(cx - 900, cy, steps=4)
        page.mouse.up()
    in_window = "() => [...document.querySelectorAll('#graph g.box')].some(b => { const r = b.getBoundingClientRect(); const a = document.querySelector('#graph').getBoundingClientRect(); return r.right > a.left && r.left < a.right && r.bottom > a.top && r.top < a.bottom; })"
    assert not page.evaluate(in_window)
    panel = page.locator("#sidebar")
    panel.locator(".ed-graph-meta-toggle").click()
    panel.locator("#graph-metadata-edit-add input[name=key]").fill("k")
    panel.locator("#graph-metadata-edit-add textarea[name=value]").fill("v")
    panel.locator("#graph-metadata-edit-add button[type=submit]").click()
    wait_revision(page, 1)
    page.wait_for_function(in_window)
    page.screenshot(path=str(artifacts / "edit-view-kept-in-sight.png"))
