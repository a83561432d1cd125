"""Compare on the page (issue 15): pick a revision or another model, see the added and changed
boxes marked on the drawing, the changed fields before and now, and step through them."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload, wait_revision


def test_compare_with_a_revision_and_with_another_model(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    edits = [
        {"op": "set_attribute", "node": "n6", "name": "alpha", "value": 0.5},
        {"op": "insert_node", "tensor": "p1", "op_type": "Relu", "name": "extra_relu"},
    ]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": edits})
    assert r.status == 200, r.text()
    open_model(page, server, mid)
    wait_revision(page, 1)

    page.click("#btn-compare")
    assert page.locator("#sidebar[data-panel=compare]").count() == 1
    page.locator("#compare-with option[value='rev:0']").wait_for(state="attached")
    page.select_option("#compare-with", "rev:0")
    page.locator("#compare-body[data-ready=true]").wait_for()
    assert (
        "From revision 0 to revision 1: 2 nodes changed, 1 added, 0 removed"
        in page.locator("#compare-summary").text_content()
    )
    gemm = page.locator("#compare-changed li[data-node=n7]")  # the Gemm moved one place down
    assert gemm.locator(".compare-before").first.text_content() == "(none)"
    assert gemm.locator(".compare-now").first.text_content() == "0.5"
    page.click("#expand-all")
    page.locator("#graph g.box.diff-added").first.wait_for()
    assert page.locator("#graph g.box.diff-added").count() == 1
    assert page.locator("#graph g.box.diff-changed").count() == 2
    # what each costs: the inserted Relu adds its 2,048 FLOPs (1×8×16×16) and no parameter
    before, now = (page.request.get(f"{server}/api/models/{mid}/stats?revision={r}").json() for r in (0, 1))
    assert now["totals"]["flops"] - before["totals"]["flops"] == 2048
    costs = page.locator("#compare-costs table")
    costs.wait_for()
    assert costs.locator("tr[data-cost=params] td").last.text_content() == "same"
    flops = costs.locator("tr[data-cost=flops] td").all_text_contents()
    assert flops[3].startswith("+2.05 K (+")
    assert "cost-moved" in (costs.locator("tr[data-cost=flops]").get_attribute("class") or "")
    page.click("#compare-next")
    assert page.locator("#graph g.box.diff-focus").count() == 1
    assert page.locator("#sidebar .compare-current").count() == 1
    page.screenshot(path=str(artifacts / "compare-revision.png"))

    # another model: the same graph with other weights
    other = tiny_cnn()
    other.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "conv1.weight"))
    other_id = upload(page, server, other, "retrained.onnx")["id"]
    page.reload()
    wait_revision(page, 1)
    page.click("#btn-compare")
    page.locator(f"#compare-with option[value='model:{other_id}']").wait_for(state="attached")
    page.select_option("#compare-with", f"model:{other_id}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    text = page.locator("#compare-body").text_content()
    assert "From retrained.onnx (revision 0) to revision 1" in text and "conv1.weight: values changed" in text
    page.click("#compare-stop")
    assert page.locator("#graph g.box.diff-changed").count() == 0
