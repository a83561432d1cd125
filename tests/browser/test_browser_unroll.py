"""A Loop's panel offers "Unroll" (unroll_loop): the Loop gives way to its body once per
iteration in one edit; a Loop that stops by itself is refused with the reason under the form."""

from __future__ import annotations

import onnx
from onnx import helper

from .browser_pages import open_model, upload, wait_revision


def test_a_loop_is_unrolled_from_its_panel(page, server, artifacts):
    from test_unroll import loop_model

    summary = upload(page, server, loop_model(3), "loop.onnx")
    open_model(page, server, summary["id"], "#node=@loop")
    page.locator("#node-edit [data-action=unroll]").click()
    form = page.locator(".ed-unroll")
    assert "It must run a known number of times" in form.text_content()
    page.screenshot(path=str(artifacts / "unroll-form.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    done = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert "Loop" not in {n.op_type for n in done.graph.node}
    page.click("#btn-history")
    assert 'Unroll node "loop"' in page.locator(".hist-item[data-revision='1']").text_content()
    page.screenshot(path=str(artifacts / "unrolled.png"))


def test_a_loop_that_decides_when_to_stop_is_refused_saying_why(page, server):
    from test_unroll import loop_model

    model = loop_model(3)
    body = model.graph.node[0].attribute[0].g
    body.node[0].CopyFrom(helper.make_node("Not", ["cond_in"], ["cond_out"], name="keep_going"))
    summary = upload(page, server, model, "stops.onnx")
    open_model(page, server, summary["id"], "#node=@loop")
    page.locator("#node-edit [data-action=unroll]").click()
    page.locator(".ed-unroll button[type=submit]").click()
    error = page.locator(".ed-unroll .field-error")
    error.wait_for()
    assert "body computes its condition: it may stop early" in error.text_content()
