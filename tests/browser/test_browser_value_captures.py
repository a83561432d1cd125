"""The value panel of a tensor If/Loop bodies read from the graph around them (the dashed
capture edge in the drawing) names the node holding those bodies among its readers, and a
weight only a body reads is in use (its Delete button off)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from .browser_models import if_model
from .browser_pages import open_model, upload


def read_by(page) -> str:
    """The text of the value panel's "Read by" row."""
    row = page.locator("#sidebar dl.props dt", has_text="Read by").locator("xpath=following-sibling::dd[1]")
    return row.inner_text()


def shoot_connections(page, path) -> None:
    """A screenshot of the panel's Connections section (scrolled into view)."""
    props = page.locator("#sidebar dl.props", has=page.locator("dt", has_text="Read by"))
    props.scroll_into_view_if_needed()
    props.locator("xpath=..").screenshot(path=str(path))


def test_a_value_only_bodies_read_names_their_if_as_reader(page, server, artifacts):
    summary = upload(page, server, if_model(), "if.onnx")
    open_model(page, server, summary["id"], "#tensor=x")
    assert read_by(page) == "Sigmoid pre, If branch (in its branches)"
    shoot_connections(page, artifacts / "value-read-by-capture.png")
    page.locator("#sidebar .reader-capture button.linklike").click()
    page.wait_for_function("() => document.querySelector('#sidebar .panel-title')?.textContent === 'If'")


def test_a_weight_a_loop_body_reads_is_in_use_not_deletable(page, server, artifacts):
    """w, a main-graph initializer only the Loop's body reads: read by the Loop, its Delete
    button off."""
    f = lambda name: h.make_tensor_value_info(name, T.FLOAT, [3])  # noqa: E731
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="pass_cond"),
            h.make_node("Add", ["s_in", "w"], ["s_out"], name="body_add"),
        ],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []), f("s_in")],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), f("s_out")],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["trip", "", "s0"], ["s"], name="loop", body=body)],
        "g",
        [f("s0")],
        [f("s")],
        [nh.from_array(np.array(2, np.int64), "trip"), nh.from_array(np.ones(3, np.float32), "w")],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    summary = upload(page, server, model, "loop.onnx")
    open_model(page, server, summary["id"], "#tensor=w")
    assert read_by(page) == "Loop loop (in its body)"
    form = page.locator("#sidebar .ed-delete-initializer")
    assert form.locator("button[type=submit]").is_disabled()
    assert "In use (1 reader)" in form.inner_text()
    shoot_connections(page, artifacts / "value-read-by-loop-weight.png")
    form.scroll_into_view_if_needed()
    form.screenshot(path=str(artifacts / "value-loop-weight-in-use.png"))
