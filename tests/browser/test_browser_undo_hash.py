"""Undo and redo keep the link in the address bar on the revision shown (QA20 F11: it kept the
revision before), in the main graph and inside a body whose holder moved."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload, wait_revision


def test_undo_and_redo_move_the_links_revision(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    panel = page.locator("#sidebar")
    panel.locator(".ed-rename-node input[name=name]").fill("act")
    panel.locator(".ed-rename-node button[type=submit]").click()
    wait_revision(page, 1)
    page.wait_for_function("() => location.hash.startsWith('#rev=1&')")
    page.locator("#btn-undo").click()
    page.wait_for_function("() => document.querySelector('#model-revision').textContent.startsWith('rev 0')")
    page.wait_for_function("() => location.hash.startsWith('#rev=0&')", timeout=5000)
    page.locator("#btn-redo").click()
    page.wait_for_function("() => document.querySelector('#model-revision').textContent === 'rev 1'")
    page.wait_for_function("() => location.hash.startsWith('#rev=1&')", timeout=5000)


def test_undo_of_an_edit_the_drawing_does_not_show_moves_the_links_revision(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    r = page.request.post(
        f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    )
    assert r.status == 200
    open_model(page, server, mid, "#path=&node=n1")
    page.wait_for_function("() => location.hash.startsWith('#rev=1&')")
    page.locator("#btn-undo").click()
    page.wait_for_function("() => document.querySelector('#model-revision').textContent.startsWith('rev 0')")
    page.wait_for_function("() => location.hash.startsWith('#rev=0&')", timeout=5000)


def unnamed_loop() -> onnx.ModelProto:
    """A Relu, then an unnamed Loop of 3 trips adding 1 to its carried value: the Loop's body is
    addressed by position (n1/body), which deleting the Relu moves (n0/body)."""
    body = h.make_graph(
        [h.make_node("Add", ["v_in", "one"], ["v_out"]), h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("v_in", T.FLOAT, [1, 4]),
        ],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, [1, 4])],
        [h.make_tensor("one", T.FLOAT, [], [1.0])],
    )
    g = h.make_graph(
        [
            h.make_node("Relu", ["x"], ["r"], name="pre"),
            h.make_node("Loop", ["trips", "", "r"], ["y"], body=body),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4])],
        [h.make_tensor("trips", T.INT64, [], [3])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_undo_inside_an_unnamed_loops_body_follows_the_loop(page, server):
    mid = upload(page, server, unnamed_loop(), "loop.onnx")["id"]
    r = page.request.post(
        f"{server}/api/models/{mid}/edits",
        data={"base": 0, "ops": [{"op": "delete_node", "node": "pre", "reconnect": True}]},
    )
    assert r.status == 200, r.text()
    open_model(page, server, mid, "#path=n0/body&node=n0/body/n0")
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='n0/body/n0'].selected")
    page.locator("#btn-undo").click()
    page.wait_for_function("() => location.hash.startsWith('#rev=0&')")
    # revision 0: the Loop is n1 again, its body still on screen with the Add selected
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='n1/body/n0'].selected")
    assert page.locator("#sidebar .panel-title").text_content() == "Add"
