"""Node attributes changed together (a MaxPool's kernel_shape with its pads: each alone is
refused) saved as one edit; no Delete for a required attribute; the "Compare with" list telling
same-named models apart; a refused run naming its node with a link, as Validation does; the
opset conversion report offering to compare outputs."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from .browser_models import tiny_cnn
from .browser_pages import downloaded, open_model, upload, wait_revision


def attrs(node: onnx.NodeProto) -> dict:
    return {a.name: h.get_attribute_value(a) for a in node.attribute}


def revisions(page, server: str, mid: str) -> list[dict]:
    return page.request.get(f"{server}/api/models/{mid}/revisions").json()["revisions"]


def pool_then_shift() -> onnx.ModelProto:
    """MaxPool 2×2 / 2 of a 32×32 input, then an Add of a fixed 16×16 offset: kernel 3 alone makes
    the pool 15×15 and pads 1 alone 17×17, both refused by the Add; together they keep 16×16."""
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 8, 32, 32])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 8, 16, 16])
    offset = nh.from_array(np.linspace(-1, 1, 8 * 16 * 16, dtype=np.float32).reshape(1, 8, 16, 16), "offset")
    nodes = [
        h.make_node("MaxPool", ["x"], ["pooled"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Add", ["pooled", "offset"], ["y"], name="shift"),
    ]
    model = h.make_model(h.make_graph(nodes, "pool_shift", [x], [y], [offset]), opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def test_kernel_shape_and_pads_are_saved_as_one_edit(page, server, artifacts):
    mid = upload(page, server, pool_then_shift(), "pool_shift.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n0")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "MaxPool"
    kernel = panel.locator(".attr[data-attr=kernel_shape]")
    bar = panel.locator(".attr-batch")

    # one field changed: marked, named under the list, its Save as before
    kernel.locator("input[name=value]").fill("3, 3")
    assert "attr-changed" in kernel.get_attribute("class").split()
    assert kernel.locator(".attr-unsaved").is_visible()
    assert bar.locator(".attr-batch-text").text_content() == "Not saved: kernel_shape"
    assert not bar.locator(".attr-batch-save").is_visible()
    assert kernel.locator("button[type=submit]").text_content() == "Save"
    # saved alone it is refused (the Add's other input is 16×16), and stays typed and marked
    kernel.locator("button[type=submit]").click()
    error = kernel.locator(".field-error")
    error.wait_for(state="visible")
    assert 'node "shift" (Add)' in error.text_content(), error.text_content()
    assert page.locator("#model-revision").text_content() == "rev 0"
    assert kernel.locator("input[name=value]").input_value() == "3, 3"
    assert "attr-changed" in kernel.get_attribute("class").split()

    # a second change, an attribute added: both fields say they save the two
    panel.locator(".ed-add-attr-toggle").click()
    add = panel.locator("#add-attribute")
    add.locator("select[name=name] option[value=pads]").wait_for(state="attached")
    add.locator("select[name=name]").select_option("pads")
    add.locator("input[name=value]").fill("1, 1, 1, 1")
    assert not error.is_visible()  # the refusal was of kernel_shape alone: gone once more is typed
    assert kernel.locator("button[type=submit]").text_content() == "Save 2 changes"
    assert add.locator("button[type=submit]").text_content() == "Save 2 changes"
    assert bar.locator(".attr-batch-text").text_content() == "Not saved: kernel_shape, pads (new)"
    assert bar.locator(".attr-batch-save").text_content() == "Save 2 changes"
    # an unchanged field's Save saves them too, and says so
    assert panel.locator(".attr[data-attr=strides] button[type=submit]").get_attribute("title") == (
        "Saves kernel_shape, pads (new) as one edit"
    )
    bar.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "attribute-batch-pending.png"))

    # Enter in one of them: ONE request with both ops
    with page.expect_request(lambda r: r.url.endswith("/edits") and r.method == "POST") as sent:
        kernel.locator("input[name=value]").press("Enter")
    wait_revision(page, 1)
    body = sent.value.post_data_json
    assert body["base"] == 0
    assert [(o["op"], o["name"], o["value"]) for o in body["ops"]] == [
        ("set_attribute", "kernel_shape", [3, 3]),
        ("set_attribute", "pads", [1, 1, 1, 1]),
    ]
    assert [r["revision"] for r in revisions(page, server, mid)] == [0, 1]  # one new revision
    # the panel drawn again: the saved values, nothing pending
    assert panel.locator(".attr[data-attr=pads] input[name=value]").input_value() == "[1, 1, 1, 1]"
    assert panel.locator(".attr.attr-changed").count() == 0
    assert not bar.is_visible()

    model = downloaded(page, server, mid)
    onnx.checker.check_model(model, full_check=True)
    assert attrs(model.graph.node[0]) == {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    # it runs, its output still 16×16: each value the max of a 3×3 window (padding never wins)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 8, 32, 32)).astype(np.float32)
    (y,) = session.run(None, {"x": x})
    assert y.shape == (1, 8, 16, 16)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    offset = nh.to_array(model.graph.initializer[0])
    assert np.allclose(y, windows.max(axis=(-2, -1))[:, :, :16, :16] + offset)


def test_pending_changes_are_discarded_and_a_refusal_names_its_attribute(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "Conv"
    strides = panel.locator(".attr[data-attr=strides] input[name=value]")
    pads = panel.locator(".attr[data-attr=pads] input[name=value]")
    strides.fill("1, 1")  # (unchanged in value, changed in text)
    pads.fill("1, x")
    bar = panel.locator(".attr-batch")
    assert bar.locator(".attr-batch-text").text_content() == "Not saved: pads, strides"
    assert panel.locator(".attr.attr-changed").count() == 2

    # one of the two refused: the refusal names its attribute, nothing is stored
    panel.locator(".attr[data-attr=strides] button[type=submit]").click()
    error = panel.locator(".attr[data-attr=strides] .field-error")
    error.wait_for(state="visible")
    assert "attribute 'pads'" in error.text_content() and not error.text_content().startswith("op #")
    assert page.locator("#model-revision").text_content() == "rev 0"

    bar.locator(".attr-batch-discard").click()
    assert strides.input_value() == "[1, 1]" and pads.input_value() == "[1, 1, 1, 1]"
    assert panel.locator(".attr.attr-changed").count() == 0
    assert not bar.is_visible()


def cast_chain() -> onnx.ModelProto:
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    nodes = [
        h.make_node("Cast", ["x"], ["half"], name="to_half", to=T.FLOAT16),
        h.make_node("Cast", ["half"], ["back"], name="to_float", to=T.FLOAT),
        h.make_node("LeakyRelu", ["back"], ["y"], name="act", alpha=0.2),
    ]
    model = h.make_model(h.make_graph(nodes, "casts", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def test_a_required_attribute_offers_no_delete(page, server, artifacts):
    summary = upload(page, server, cast_chain(), "casts.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    row = page.locator("#sidebar .attr[data-attr=to]")
    required = row.locator(".attr-required")
    required.wait_for()  # once the operator's schema is in
    assert required.text_content() == "required"
    assert required.get_attribute("title") == "Cast requires to: it can't be deleted, only changed"
    assert row.locator(".attr-delete").count() == 0
    row.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "attribute-required.png"))

    # an optional one keeps its Delete, which works
    open_model(page, server, summary["id"], "#path=&node=n2")
    alpha = page.locator("#sidebar .attr[data-attr=alpha]")
    alpha.locator(".attr-delete").click()
    wait_revision(page, 1)
    assert page.locator("#sidebar .attr[data-attr=alpha]").count() == 0
    assert attrs(downloaded(page, server, summary["id"]).graph.node[2]) == {}


def test_compare_with_tells_same_named_models_apart(page, server, artifacts):
    first = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    copy = upload(page, server, tiny_cnn(omit_value_info=("p1",)), "tiny_cnn.onnx")["id"]
    other = upload(page, server, cast_chain(), "casts.onnx")["id"]
    edit = {"base": 0, "ops": [{"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.3}]}
    assert page.request.post(f"{server}/api/models/{first}/edits", data=edit).status == 200
    open_model(page, server, first)
    page.click("#btn-compare")
    picker = page.locator("#compare-with")
    picker.locator(f"option[value='model:{copy}']").wait_for(state="attached")

    groups = picker.locator("optgroup")
    assert [groups.nth(i).get_attribute("label") for i in range(groups.count())] == [
        "Revisions of this model",
        "Other models named tiny_cnn.onnx",
        "Other models",
    ]
    assert groups.nth(0).locator("option").first.get_attribute("value") == "rev:0"
    when = r"uploaded \S[^·]*\d:\d\d\D*"  # a short date and time
    copy_text = picker.locator(f"option[value='model:{copy}']").text_content()
    assert re.fullmatch(rf"tiny_cnn\.onnx · {copy} · revision 0 · {when}", copy_text), copy_text
    other_text = picker.locator(f"option[value='model:{other}']").text_content()
    assert re.fullmatch(rf"casts\.onnx · revision 0 · {when}", other_text), other_text  # a name of its own: no id
    assert picker.locator(f"option[value='model:{first}']").count() == 0  # itself: its revisions above

    picker.select_option(f"model:{copy}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    page.screenshot(path=str(artifacts / "compare-with-copies.png"))

    # the Run panel's "Compare with" tells them apart the same way (QA27: two "tiny_cnn.onnx")
    page.click("#btn-run")
    run_copy = page.locator(f"#run-compare-to option[value='model:{copy}']")
    run_copy.wait_for(state="attached")
    assert re.fullmatch(rf"tiny_cnn\.onnx · {copy} · revision 0 · {when}", run_copy.text_content())
    run_other = page.locator(f"#run-compare-to option[value='model:{other}']").text_content()
    assert re.fullmatch(rf"casts\.onnx · revision 0 · {when}", run_other), run_other


def test_a_refused_edit_links_the_node_it_names(page, server, artifacts):
    """kernel_shape 3 alone makes the pool 15×15, which the Add "shift" can't take: the refusal
    names the Add, and its link opens it."""
    mid = upload(page, server, pool_then_shift(), "pool_shift.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n0")
    kernel = page.locator("#sidebar .attr[data-attr=kernel_shape]")
    kernel.locator("input[name=value]").fill("3, 3")
    kernel.locator("button[type=submit]").click()
    error = kernel.locator(".field-error")
    link = error.locator("a.refusal-node")
    link.wait_for()
    assert 'node "shift" (Add)' in error.text_content()
    assert link.text_content() == "Show the node ›" and link.get_attribute("data-node") == "n1"
    page.screenshot(path=str(artifacts / "refusal-node-link.png"))
    link.click()
    page.locator("#sidebar .panel-title", has_text="Add").wait_for()
    assert page.locator("#graph [data-node-id=n1].selected").count() == 1
    assert page.locator("#model-revision").text_content() == "rev 0"
    # back at the pool, what was typed is still there, marked not saved, with its pads to go with it
    page.go_back()
    page.locator("#sidebar .panel-title", has_text="MaxPool").wait_for()
    kernel = page.locator("#sidebar .attr[data-attr=kernel_shape]")
    assert kernel.locator("input[name=value]").input_value() == "3, 3"
    assert page.locator("#sidebar .attr-batch-text").text_content() == "Not saved: kernel_shape"
    # discarded, it is gone for good: away and back, the model's value
    page.locator("#sidebar .attr-batch-discard").click()
    page.go_forward()
    page.locator("#sidebar .panel-title", has_text="Add").wait_for()
    page.go_back()
    page.locator("#sidebar .panel-title", has_text="MaxPool").wait_for()
    assert page.locator("#sidebar .attr[data-attr=kernel_shape] input[name=value]").input_value() == "[2, 2]"
    assert page.locator("#sidebar .attr-batch").is_hidden()
    open_model(page, server, mid, "#path=&node=n0")
    # a refusal of the node on screen itself links nowhere: the person is there
    kernel = page.locator("#sidebar .attr[data-attr=kernel_shape]")
    kernel.locator("input[name=value]").fill("0, 0")
    kernel.locator("button[type=submit]").click()
    error = kernel.locator(".field-error")
    error.wait_for(state="visible")
    assert 'node "pool" (MaxPool)' in error.text_content(), error.text_content()
    assert error.locator("a.refusal-node").count() == 0


def hard_coded_flatten() -> onnx.ModelProto:
    """A dynamic batch reshaped to [1, 48]: it runs at batch 1 only."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 4, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, ["batch", 48])
    shape = nh.from_array(np.array([1, 48], np.int64), "flat_shape")
    nodes = [
        h.make_node("Reshape", ["x", "flat_shape"], ["f"], name="flatten"),
        h.make_node("Relu", ["f"], ["y"], name="act"),
    ]
    return h.make_model(h.make_graph(nodes, "flat", [x], [y], [shape]), opset_imports=[h.make_opsetid("", 17)])


def test_a_refused_run_names_its_node_with_a_link(page, server, artifacts):
    summary = upload(page, server, hard_coded_flatten(), "flat.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.fill(".run-dim[aria-label=batch]", "3")
    page.click("#run-go")
    failure = page.locator("#run-failure")
    failure.wait_for()
    message = failure.locator(".field-error").text_content()
    assert message.startswith('onnxruntime can\'t run the model: node "flatten" (Reshape) in the main graph: '), message
    assert "requested shape:{1,48}" in message
    assert "onnxruntime_src" not in message and "[ONNXRuntimeError]" not in message
    link = failure.locator("a.run-failure-node")
    assert link.text_content() == "Reshape flatten ›"
    page.screenshot(path=str(artifacts / "run-failure-node.png"))
    link.click()
    page.locator("#sidebar .panel-title", has_text="Reshape").wait_for()
    assert page.locator("#graph [data-node-id=n0].selected").count() == 1


def test_the_opset_conversion_report_offers_to_compare_outputs(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=opset]").click()
    form = panel.locator("#convert-opset")
    form.locator("select[name=version] option[value='18']").wait_for(state="attached")
    form.locator("select[name=version]").select_option("18")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    offer = panel.locator("#model-tools .ed-report-run")
    assert offer.text_content() == "Compare its outputs with revision 0…"
    offer.click()
    page.wait_for_function("() => document.querySelector('#run-compare-to')?.value === '0'")
    page.click("#run-go")
    page.locator("#run-compare tr[data-output=probs]").wait_for()


def test_a_draft_outlives_an_edit_saved_on_another_node(page, server):
    """Typed on the LeakyRelu and not saved, alpha 0.3 is still there after the Softmax's axis is
    saved (a new revision) (QA pass 13)."""
    mid = upload(page, server, tiny_cnn(), "cnn.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n1")
    alpha = page.locator("#sidebar .attr[data-attr=alpha] input[name=value]")
    alpha.fill("0.3")
    page.evaluate("() => { location.hash = '#path=&node=n7'; }")
    axis = page.locator("#sidebar .attr[data-attr=axis] input[name=value]")
    axis.wait_for()
    axis.fill("1")
    axis.press("Enter")
    wait_revision(page, 1)
    page.evaluate("() => { location.hash = '#path=&node=n1'; }")
    page.locator("#sidebar .panel-title", has_text="LeakyRelu").wait_for()
    assert alpha.input_value() == "0.3"
    assert page.locator("#sidebar .attr-batch-text").text_content() == "Not saved: alpha"
