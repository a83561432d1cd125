"""Compare on the page (QA 11, F3): a change inside a model-local function's body is listed node
by node ("in function local.fns.Block"), each node's link opens the function with it selected,
the body's changed and added boxes are marked when it is on screen, and the Functions section
says what changed in the function itself."""

from __future__ import annotations

import onnx
import onnx.parser

from .browser_pages import compared_with_revision, hash_params, upload, wait_ready

MODEL = """
<ir_version: 10, opset_import: ["" : 18, "local.fns" : 1]>
main (float[N, 4] X) => (float[N, 4] Y) {
  H = local.fns.Block <slope: float = 0.2> (X)
  Y = local.fns.Inner (H)
}
<domain: "local.fns", opset_import: ["" : 18, "local.fns" : 1]>
Block <slope, gain: float = 2.0> (X) => (Y) {
  a = LeakyRelu <alpha: float = @slope> (X)
  g = Constant <value_float: float = @gain> ()
  b = Mul (a, g)
  Y = local.fns.Inner (b)
}
<domain: "local.fns", opset_import: ["" : 18]>
Inner (X) => (Y) {
  Y = Relu (X)
}
"""


def test_compare_lists_and_marks_the_changes_in_a_function_body(page, server, artifacts):
    model = onnx.parser.parse_model(MODEL)
    onnx.checker.check_model(model, full_check=True)
    mid = upload(page, server, model, "functions.onnx")["id"]
    edits = [
        {"op": "rename_node", "node": "fn[0]/n2", "name": "act_mul_renamed"},
        {"op": "add_node", "op_type": "Neg", "name": "extra_neg", "inputs": ["b"], "graph": "fn[0]"},
        {"op": "set_metadata", "target": "fn[0]", "key": "reviewed", "value": "yes"},
    ]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": edits})
    assert r.status == 200, r.text()

    # on the main graph: the changes are all in the body, which the lists open
    summary = compared_with_revision(page, server, mid, 1)
    assert "From revision 0 to revision 1: 1 node changed, 1 added, 0 removed; 1 function changed" in summary
    assert (
        "none of the changed or added nodes is in the graph on screen"
        in page.locator("#compare-step-note").text_content()
    )
    changed = page.locator("#compare-changed li[data-node='fn[0]/n2']")
    assert "in function local.fns.Block" in changed.text_content()
    assert changed.locator(".compare-before").first.text_content() == "''"
    assert changed.locator(".compare-now").first.text_content() == "'act_mul_renamed'"
    added = page.locator("#compare-added li[data-node='fn[0]/n4']")
    assert "extra_neg" in added.text_content() and "in function local.fns.Block" in added.text_content()
    # the Functions section: the function's own field, in words, and what its body holds
    fn = page.locator("#compare-functions li[data-path='fn[0]']")
    assert "local.fns.Block changed" in fn.text_content()
    assert "its body: 1 node changed, 1 node added" in fn.text_content()
    assert fn.locator("td").first.text_content() == "metadata 'reviewed' = 'yes' added"
    assert page.locator("#graph g.box.diff-changed").count() == 0  # nothing of the main graph changed
    page.locator("#compare-body").screenshot(path=str(artifacts / "compare-functions-main-graph.png"))

    # the changed node's link opens the function with it selected
    changed.locator("a.compare-node").click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='fn[0]/n2']")
    wait_ready(page)
    assert hash_params(page)["path"] == "fn[0]"
    assert page.locator("#sidebar[data-panel=node]").count() == 1
    assert "act_mul_renamed" in page.locator("#sidebar").text_content()
    # the body's boxes marked (the node panel opened from Compare keeps the marks)
    assert page.locator("#graph g.box.diff-changed[data-node-id='fn[0]/n2']").count() == 1
    assert page.locator("#graph g.box.diff-added[data-node-id='fn[0]/n4']").count() == 1

    # back in Compare, on the body: the marks stay, Next steps through them
    page.click("#btn-compare")
    page.locator("#compare-body[data-ready=true]").wait_for()
    assert "through the changed and added nodes, into the bodies" in page.locator("#compare-step-note").text_content()
    page.locator("#graph g.box.diff-changed[data-node-id='fn[0]/n2']").wait_for()
    assert page.locator("#graph g.box.diff-added[data-node-id='fn[0]/n4']").count() == 1
    page.click("#compare-next")
    assert page.locator("#graph g.box.diff-focus").count() == 1
    assert page.locator("#sidebar .compare-current").count() == 1
    page.screenshot(path=str(artifacts / "compare-function-body.png"))

    # from the main graph, Next goes on from where it was (n2) in the body, Compare still open
    page.locator("#breadcrumb a").first.click()
    page.wait_for_function("() => new URLSearchParams(location.hash.slice(1)).get('path') === ''")
    wait_ready(page)
    page.click("#btn-compare")
    page.locator("#compare-body[data-ready=true]").wait_for()
    page.click("#compare-next")
    page.wait_for_selector("#graph[data-state=ready] g.box.diff-focus[data-node-id='fn[0]/n4']")
    assert hash_params(page)["path"] == "fn[0]"
    assert page.locator("#sidebar #compare-body").count() == 1
    page.click("#compare-next")
    page.wait_for_selector("#graph g.box.diff-focus[data-node-id='fn[0]/n2']")
    page.locator("#compare-functions").screenshot(path=str(artifacts / "compare-functions-section.png"))
