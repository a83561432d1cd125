"""A refused attribute edit whose fault is a graph output declared as its producer wrote it
before offers to save it with the output re-declared (QA17 F8)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from testkit import argmax_classifier

from .browser_pages import open_model, upload, wait_revision


def test_an_argmax_axis_refused_for_its_declared_output_is_saved_with_the_output_redeclared(page, server, artifacts):
    summary = upload(page, server, argmax_classifier(), "classifier.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "ArgMax"
    panel.locator(".attr[data-attr=axis] input[name=value]").fill("1")
    panel.locator(".attr[data-attr=axis] button[type=submit]").click()
    error = panel.locator(".attr[data-attr=axis] .field-error")
    error.wait_for(state="visible")
    assert "declared" in error.text_content()
    fix = error.locator(".refusal-fix")
    assert fix.text_content() == "Also declare class_id as INT64 [batch, 1] and save"
    page.screenshot(path=str(artifacts / "refusal-fix.png"))
    fix.click()
    wait_revision(page, 1)

    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    onnx.checker.check_model(model, full_check=True)
    argmax = next(n for n in model.graph.node if n.name == "argmax")
    assert onnx.helper.get_attribute_value(next(a for a in argmax.attribute if a.name == "axis")) == 1
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    logits, class_id = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    assert class_id.shape == (2, 1) and np.array_equal(class_id[:, 0], logits.argmax(axis=1))
