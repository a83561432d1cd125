"""Tools → "Add a model…": another .onnx joined after (or before) the model on screen, its inputs
matched with this model's tensors on the page, the result drawn and stored as a revision."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from .browser_models import argmax_post, classifier
from .browser_pages import open_model, upload, wait_revision


def test_a_post_processing_model_is_added_after_this_one(page, server, artifacts, tmp_path):
    """The classifier's one output (y, FLOAT) is offered for the added model's one input (scores,
    FLOAT) and chosen at once; "Add the model" stores revision 1 whose outputs are the added
    model's, and the drawing shows its nodes."""
    summary = upload(page, server, classifier(), "classifier.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=compose]").click()
    form = panel.locator("#compose")
    submit = form.locator("button[type=submit]")
    submit.click()  # no file yet: says so
    assert "Choose the .onnx" in form.locator(".field-error").text_content()
    path = tmp_path / "argmax_post.onnx"
    onnx.save(argmax_post(), path)
    form.locator("#compose-file").set_input_files(str(path))
    row = form.locator("#compose-rows li[data-input=scores]")
    row.wait_for()
    assert "3 nodes" in form.locator("#compose-added").text_content()
    assert form.locator(".field-error").is_hidden()  # the complaint about no file went with it
    assert row.locator("select").input_value() == "y"  # the only FLOAT output: chosen
    page.screenshot(path=str(artifacts / "compose-form.png"))
    submit.click()
    wait_revision(page, 1)
    assert "Model added after this one" in panel.locator("#model-tools .callout").text_content()
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert [o.name for o in model.graph.output] == ["probs", "label"]
    page.locator("#graph [data-node-id=n4]").wait_for(state="attached")  # the ArgMax, drawn
    page.screenshot(path=str(artifacts / "compose-added.png"))


def test_a_pre_processing_model_feeds_this_ones_input(page, server, tmp_path):
    """Before: this model's input x is listed, fed by the added model's output of the same name."""
    pre = h.make_model(
        h.make_graph(
            [h.make_node("Cast", ["image"], ["f"], to=T.FLOAT), h.make_node("Mul", ["f", "k"], ["x"])],
            "pre",
            [h.make_tensor_value_info("image", T.UINT8, [1, 8])],
            [h.make_tensor_value_info("x", T.FLOAT, [1, 8])],
            [nh.from_array(np.array(0.5, np.float32), "k")],
        ),
        opset_imports=[h.make_opsetid("", 17)],
    )
    summary = upload(page, server, classifier(), "classifier.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=compose]").click()
    form = panel.locator("#compose")
    path = tmp_path / "pre.onnx"
    onnx.save(pre, path)
    form.locator("#compose-file").set_input_files(str(path))
    form.locator("#compose-rows li").first.wait_for()
    form.locator("#compose-position").select_option("before")
    row = form.locator("#compose-rows li[data-input=x]")
    assert row.locator("select").input_value() == "x"
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert [i.name for i in model.graph.input] == ["image"]


def test_a_model_stored_here_can_be_added(page, server):
    """ "or one stored here": the other models of the store listed; picking one lists its inputs
    to connect, as a file would."""
    post = upload(page, server, argmax_post(), "argmax_post.onnx")
    summary = upload(page, server, classifier(), "classifier.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=compose]").click()
    form = panel.locator("#compose")
    form.locator(f"#compose-stored option[value='{post['id']}']").wait_for(state="attached")
    form.locator("#compose-stored").select_option(post["id"])
    row = form.locator("#compose-rows li[data-input=scores]")
    row.wait_for()
    assert row.locator("select").input_value() == "y"
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert [o.name for o in model.graph.output] == ["probs", "label"]
