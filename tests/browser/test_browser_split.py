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
    # its History says where it came from (QA39 #8: "Opened enc part 2 of 2.onnx")
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    origin = page.locator("#history-list > li[data-revision='0'] .hist-ops").text_content()
    assert origin.startswith("part 2 of 2 of enc.onnx (revision 0), split at res1: "), origin


def test_a_cut_around_a_skip_connection_is_said_first_with_the_cut_that_separates(page, server, artifacts):
    """QA39 #2: "Made part 1 (3 nodes) and part 2 (3 nodes)" of a 5-node model: part 2 ran part
    1's Relu again. Said before anything is made, with the values to cut at too."""
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Neg", ["a"], ["c"], name="neg"),
            helper.make_node("Add", ["c", "a"], ["y"], name="add"),
        ],
        "g",
        [helper.make_tensor_value_info("x", f, [2])],
        [helper.make_tensor_value_info("y", f, [2])],
    )
    mid = upload(page, server, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "skip.onnx")["id"]
    open_model(page, server, mid, "#tensor=c")
    form = page.locator("#split-here")
    form.locator("button[type=submit]").click()
    note = form.locator(".split-overlap")
    note.wait_for()
    assert "leaves 1 node on both sides: the second part would compute a again" in note.text_content()
    assert len(page.request.get(f"{server}/api/models").json()["models"]) == 1  # nothing made yet
    page.screenshot(path=str(artifacts / "split-overlap.png"))
    form.locator(".split-apart").click()
    form.locator(".split-result a.split-part").nth(1).wait_for()
    assert "(2 nodes) and skip part 2 of 2.onnx (1 node)" in form.locator(".split-result").text_content()
