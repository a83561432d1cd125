"""An attribute list too long to edit whole (a forest's thresholds, a wide linear model's
weights; QA21 F5): the node panel sets one item by its number (set_attribute_items), the list
never sent back, every other item kept bit for bit."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .browser_pages import open_model, upload, wait_revision

FEATURES = 5000  # past the 4,096 items the panel shows


def wide_regressor() -> onnx.ModelProto:
    coefficients = (np.arange(FEATURES, dtype=np.float32) / 7).tolist()
    node = helper.make_node(
        "LinearRegressor", ["X"], ["Y"], name="wide", domain="ai.onnx.ml", coefficients=coefficients, intercepts=[0.5]
    )
    graph = helper.make_graph(
        [node],
        "wide",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", FEATURES])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 1])],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)], ir_version=8
    )


def test_one_item_of_a_long_list_is_set_by_its_number(page, server, artifacts):
    model = wide_regressor()
    summary = upload(page, server, model, "wide.onnx")
    open_model(page, server, summary["id"], "#node=n0")
    row = page.locator(".attr[data-attr=coefficients]")
    assert "change one by its number below" in row.locator(".attr-note").text_content()
    form = row.locator("form.attr-items")
    # an item among those shown says its value now
    form.locator(".attr-item-index").fill("70")
    assert form.locator(".attr-item-now").text_content() == "now 10"
    # a number past the list is refused on the page, nothing sent
    form.locator(".attr-item-index").fill(str(FEATURES))
    form.locator(".attr-item-value").fill("1")
    form.locator("button[type=submit]").click()
    assert form.locator(".field-error").text_content() == "an item number from 0 to 4,999"
    form.locator(".attr-item-index").fill("4500")
    form.locator(".attr-item-value").fill("abc")
    form.locator("button[type=submit]").click()
    assert form.locator(".field-error").text_content() == "a number (or NaN, inf, -inf)"
    row.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "attribute-long-list-item.png"))
    # an item past those shown, set
    form.locator(".attr-item-value").fill("2.5")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    r = page.request.get(f"{server}/api/models/{summary['id']}/download?revision=1")
    assert r.ok
    after = onnx.load_from_string(r.body())
    got = list(after.graph.node[0].attribute[0].floats)
    want = list(model.graph.node[0].attribute[0].floats)
    want[4500] = 2.5
    assert got == want
    history = page.request.get(f"{server}/api/models/{summary['id']}/revisions").json()
    assert "[4500] = 2.5" in str(history)
