"""Surgery inside If branches from the page: Insert after / before on a body's node, renaming a
body's tensor, making a new body value the branch output in place of the old one; the refusal
of an edit inside a branch names the inner node. Each download passes onnx.checker and runs in
onnxruntime with the numbers the edits say."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort

from .browser_models import if_model, loop_model
from .browser_pages import downloaded, open_model, upload, wait_revision

X = np.array([[-3.0, 1.0, 2.0], [0.5, -0.5, 4.0]], np.float32)


def branch(model: onnx.ModelProto, attr: str) -> onnx.GraphProto:
    return next(a.g for a in model.graph.node[1].attribute if a.name == attr)


def run(model: onnx.ModelProto, cond: bool) -> np.ndarray:
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": X, "cond": np.array(cond)})[0]


def test_insert_after_and_before_in_branches(page, server, artifacts):
    summary = upload(page, server, if_model(), "if.onnx")
    panel = page.locator("#sidebar")

    # after the then_branch's only node, which writes the branch output
    open_model(page, server, summary["id"], "#path=n1%2Fthen_branch&node=n1%2Fthen_branch%2Fn0")
    assert panel.locator(".panel-title").text_content() == "Add"
    assert "Inserting nodes works in the main graph" not in panel.text_content()
    panel.locator("#node-edit [data-action=insert-after]").click()
    form = panel.locator(".ed-insert-after")
    form.locator("input[name=op_type]").fill("Abs")
    form.locator("input[name=name]").fill("then_abs")
    page.screenshot(path=str(artifacts / "subgraph-insert-after.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator(".panel-title").text_content() == "Abs"  # the new node is selected
    assert "path=@branch/then_branch" in page.url and "node=@branch/then_branch/@then_abs" in page.url

    # before else_relu, on what it reads (n), only for it
    open_model(page, server, summary["id"], "#path=n1%2Felse_branch&node=n1%2Felse_branch%2Fn1")
    assert panel.locator(".panel-title").text_content() == "Relu"
    panel.locator("#node-edit [data-action=insert-before]").click()
    form = panel.locator(".ed-insert-before")
    assert form.locator("select[name=tensor]").input_value() == "n"
    form.locator("input[name=op_type]").fill("Neg")
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)
    assert panel.locator(".panel-title").text_content() == "Neg"

    model = downloaded(page, server, summary["id"])
    then_g, else_g = branch(model, "then_branch"), branch(model, "else_branch")
    assert [n.op_type for n in then_g.node] == ["Add", "Abs"] and then_g.output[0].name == "then_y"
    assert [n.op_type for n in else_g.node] == ["Neg", "Neg", "Relu"]
    np.testing.assert_allclose(run(model, True), np.abs(X + 1))
    np.testing.assert_allclose(run(model, False), np.maximum(X, 0))


def test_rename_a_branch_tensor_and_make_a_new_value_the_branch_output(page, server, artifacts):
    summary = upload(page, server, if_model(), "if.onnx")
    panel = page.locator("#sidebar")

    open_model(page, server, summary["id"], "#path=n1%2Felse_branch&tensor=n")
    rename = panel.locator(".ed-rename-tensor")
    rename.locator("input[name=to]").fill("negated")
    rename.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator(".panel-title").text_content() == "negated"

    # negated is the branch's own value: it can take else_y's place as the branch output
    form = panel.locator(".ed-replace-output")
    assert form.locator("select[name=replace]").input_value() == "else_y"
    page.screenshot(path=str(artifacts / "subgraph-replace-output.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)

    model = downloaded(page, server, summary["id"])
    else_g = branch(model, "else_branch")
    assert [v.name for v in else_g.output] == ["negated"] and else_g.node[0].output[0] == "negated"
    assert branch(model, "then_branch").node[0].input[0] == "x"  # the main graph's x kept its name
    np.testing.assert_allclose(run(model, False), -X)

    # x comes from the main graph: the branch's panel of it says where to rename it
    open_model(page, server, summary["id"], "#path=n1%2Felse_branch&tensor=x")
    assert "It comes from a graph around this one: rename it there." in panel.text_content()
    assert panel.locator(".ed-rename-tensor").count() == 0


def test_a_refused_edit_in_a_branch_names_the_inner_node(page, server, artifacts):
    summary = upload(page, server, if_model(), "if.onnx")
    panel = page.locator("#sidebar")
    open_model(page, server, summary["id"], "#path=n1%2Fthen_branch&node=n1%2Fthen_branch%2Fn0")
    panel.locator("#node-edit [data-action=insert-after]").click()
    form = panel.locator(".ed-insert-after")
    form.locator("input[name=op_type]").fill("Cast")
    form.locator("select[data-attr-name=to], input[data-attr-name=to]").first.wait_for()
    to = form.locator("[data-attr-name=to]").first
    if to.evaluate("e => e.tagName") == "SELECT":
        to.select_option("FLOAT16")
    else:
        to.fill("FLOAT16")
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for()
    page.screenshot(path=str(artifacts / "subgraph-insert-refused.png"))
    assert error.text_content().startswith(
        "'then_y', output 0 of node \"branch\" (If), would be FLOAT16, but the other branch's output 'else_y' is FLOAT"
    ), error.text_content()


def test_a_loop_body_value_collected_each_iteration(page, server, artifacts):
    """The Loop's iteration count i, collected from its body's panel: a new output of the Loop
    stacking it (through an Identity: onnxruntime stacks zeros for a body input given back),
    then a graph output from the main graph's panel; the download gives 0..3."""
    summary = upload(page, server, loop_model(n=3, trips=4), "loop.onnx")
    panel = page.locator("#sidebar")
    # "in place of" offers the output of the value's own type first (the BOOL condition was first)
    open_model(page, server, summary["id"], "#path=n0%2Fbody&tensor=v_in")
    assert panel.locator(".ed-replace-output select[name=replace]").input_value() == "v_out"
    open_model(page, server, summary["id"], "#path=n0%2Fbody&tensor=i")
    form = panel.locator(".ed-scan-output")
    assert "the Loop stacks this value from every iteration" in form.text_content()
    page.screenshot(path=str(artifacts / "subgraph-scan-output.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    open_model(page, server, summary["id"], "#path=&tensor=i_all")
    panel.locator(".ed-add-output button[type=submit]").click()
    wait_revision(page, 2)
    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    assert list(model.graph.node[0].output) == ["out", "i_all"]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    _, stacked = sess.run(None, {"v": np.ones(3, np.float32)})
    assert stacked.tolist() == [0, 1, 2, 3]
    # an If branch has no scan outputs to offer
    summary = upload(page, server, if_model(), "if.onnx")
    open_model(page, server, summary["id"], "#path=n1%2Felse_branch&tensor=n")
    panel.locator(".ed-replace-output").wait_for()
    assert panel.locator(".ed-scan-output").count() == 0
