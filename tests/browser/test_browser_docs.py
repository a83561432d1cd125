"""Operator documentation, validation details, the text form, and Markdown rendered safely."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from .browser_models import custom_op_with_int64, inference_error_model, tiny_cnn
from .browser_pages import open_model, upload, wait_revision


def test_conv_schema_doc_and_flags_for_unknown_ops(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    schema = page.locator("#sidebar .schema-section[data-schema=schema]")
    schema.wait_for()
    assert "ai.onnx.Conv" in schema.locator(".schema-summary").text_content()
    assert "since opset 11" in schema.locator(".schema-summary").text_content()
    doc = schema.locator(".schema-doc")
    assert "The convolution operator consumes an input tensor and a filter" in doc.text_content()
    # inputs bound to the node's tensors, attributes with defaults, the ones set marked
    assert "← conv1.weight" in schema.locator("[data-formal=W]").text_content()
    assert schema.locator("[data-formal=B] .tag").text_content() == "optional"
    assert "set on this node" in schema.locator("[data-schema-attr=kernel_shape]").text_content()
    group = schema.locator("[data-schema-attr=group]").text_content()
    assert "default" in group and "1" in group and "set on this node" not in group
    assert "tensor(float)" in schema.locator("[data-constraint=T]").text_content()
    assert page.locator("#sidebar .panel-flags").text_content() == ""  # nothing to flag
    schema.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "schema-conv.png"))

    # an operator no schema knows is flagged at the top of the panel
    summary = upload(page, server, custom_op_with_int64(), "custom.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    flag = page.locator("#sidebar .panel-flags .callout-bad")
    flag.wait_for()
    assert "Unknown operator" in flag.text_content()
    assert "Window is not an operator of com.example opset 1" in flag.text_content()
    assert page.locator("#sidebar .schema-section[data-schema=unknown]").count() == 1
    page.screenshot(path=str(artifacts / "schema-unknown-op.png"))


def test_attributes_the_schema_does_not_define_are_flagged(page, server):
    x = h.make_tensor_value_info("x", T.FLOAT, [2])
    y = h.make_tensor_value_info("y", T.FLOAT, [2])
    node = h.make_node("Relu", ["x"], ["y"], name="relu", slope=0.5)
    model = h.make_model(h.make_graph([node], "g", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    summary = upload(page, server, model, "extra_attr.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    flag = page.locator("#sidebar .panel-flags .callout-warn")
    flag.wait_for()
    assert "Attributes the schema does not define" in flag.text_content()
    assert flag.locator(".flag-unknown-attrs").text_content() == "slope"
    assert page.locator("#sidebar .attr[data-attr=slope] .tag-bad").text_content() == "not in schema"
    assert page.locator("#model-validity").text_content() == "checker errors"


def test_inference_error_links_to_its_node(page, server, artifacts):
    summary = upload(page, server, inference_error_model(), "mismatch.onnx")
    open_model(page, server, summary["id"])
    validation = page.locator("#sidebar #validation")
    assert validation.locator(".check.ok").first.text_content().startswith("✓onnx.checker")
    assert "Full check" in validation.locator(".check.bad").first.text_content()
    # onnxruntime refuses the Add too; its verdict comes after the checker's
    assert "can't run it" in validation.locator(".runtime-check[data-status=fails]").text_content()
    assert page.locator("#model-validity").text_content() == "valid · full check fails"
    error = validation.locator(".inference-error")
    assert error.count() == 1
    assert "inconsistent type tensor(int64)" in error.text_content()
    page.screenshot(path=str(artifacts / "validation-inference-error.png"))

    link = error.locator("a.inference-link")
    assert link.text_content() == "Add bad_add ›"
    link.click()
    page.wait_for_selector("#graph [data-node-id=n1].selected")
    assert page.locator("#sidebar .panel-title").text_content() == "Add"
    assert "node=@bad_add" in page.url


def test_text_form_viewer_shows_the_model_text(page, server, artifacts):
    model = tiny_cnn()
    summary = upload(page, server, model, "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-text")
    dialog = page.locator("#text-view[data-state=ready]")
    dialog.wait_for()
    text = onnx.printer.to_text(model)
    shown = dialog.locator(".text-lines .tl")
    assert shown.count() == len(text.rstrip("\n").split("\n"))
    body = dialog.locator(".text-lines").text_content()
    assert "tiny_cnn (float[1,3,32,32] input) => (float[1,10] probs)" in body
    assert '["/features/conv1/Conv"] c1 = Conv <kernel_shape: ints = [3, 3]' in body
    assert dialog.locator(".tk-op", has_text="LeakyRelu").count() == 1
    page.screenshot(path=str(artifacts / "text-form.png"))

    download = dialog.locator("a.text-download")
    assert download.get_attribute("href").endswith(f"/api/models/{summary['id']}/text?revision=0&download=1")
    with page.expect_download() as info:
        download.click()
    assert info.value.suggested_filename == "tiny_cnn.r0.onnxtxt"
    assert info.value.path().read_text(encoding="utf-8") == text

    assert dialog.locator(".text-bits-note").count() == 0  # float32 values are written as numbers
    page.keyboard.press("Escape")
    page.wait_for_selector("#text-view", state="detached")

    # float16 weights are written as the integers of their bits: said above the text
    r = page.request.post(
        f"{server}/api/models/{summary['id']}/edits", data={"base": 0, "ops": [{"op": "convert_float16"}]}
    )
    assert r.status == 200, r.text()
    page.reload()
    page.wait_for_selector("#model-revision:has-text('rev 1')")
    page.click("#btn-text")
    note = page.locator("#text-view[data-state=ready] .text-bits-note")
    note.wait_for()
    assert note.text_content().startswith("float16 values are written as the integers of their bits")


def test_markdown_doc_strings_are_rendered_safely(page, server, artifacts):
    doc = (
        "# Title\n\nSome **bold** and `code`.\n\n"
        "[safe](https://onnx.ai) [evil](javascript:window.__pwned=1) [relative](notes.md)\n\n"
        '<script>window.__pwned=2</script>\n\n<img src=x onerror="window.__pwned=3">\n\n'
        '![picture](https://example.com/p.png)\n\n<a href="javascript:window.__pwned=4">raw link</a>'
    )
    model = tiny_cnn()
    model.doc_string = doc
    model.graph.node[0].doc_string = 'Node doc with *emphasis* <b onmouseover="window.__pwned=5">raw</b>'
    summary = upload(page, server, model, "markdown.onnx")
    open_model(page, server, summary["id"])
    md = page.locator("#sidebar .model-doc[data-md=ready]")
    md.wait_for()
    assert md.locator("h1").text_content() == "Title"
    assert md.locator("strong").text_content() == "bold"
    assert md.locator("code").text_content() == "code"
    links = md.locator("a").evaluate_all("as => as.map(a => [a.textContent, a.getAttribute('href'), a.rel])")
    hrefs = {text: href for text, href, _ in links}
    assert hrefs["safe"] == "https://onnx.ai"
    assert hrefs.get("evil") is None and hrefs.get("relative") is None  # unsafe or relative: no link
    assert all("noopener" in rel for _, href, rel in links if href)
    # raw HTML is shown as text, images as links: nothing runs, nothing loads
    text = md.text_content()
    assert "<script>window.__pwned=2</script>" in text
    assert '<img src=x onerror="window.__pwned=3">' in text
    assert '<a href="javascript:window.__pwned=4">raw link</a>' in text
    assert hrefs["image: picture"] == "https://example.com/p.png"
    assert page.locator("img").count() == 0
    assert page.locator("#sidebar [onerror], #sidebar [onmouseover], #sidebar script").count() == 0

    page.click("#graph [data-node-id=n0]")
    node_doc = page.locator("#sidebar .doc[data-md=ready]").first
    node_doc.wait_for()
    assert node_doc.locator("em").text_content() == "emphasis"
    assert '<b onmouseover="window.__pwned=5">raw</b>' in node_doc.text_content()
    node_doc.hover()
    assert page.evaluate("window.__pwned") is None
    page.click("#btn-model")
    page.locator("#sidebar .model-doc").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "markdown-doc.png"))


def test_onnxruntime_operators_are_documented_and_offered(page, server, artifacts):
    """A com.microsoft node (what onnxruntime's transformer optimizer writes) reads its docs from
    onnxruntime's registry, is not flagged unknown, and a model that imports no com.microsoft
    offers its operators when inserting a node: picking FastGelu imports the domain with it."""
    from test_runtime_schemas import skip_layer_norm_model

    summary = upload(page, server, skip_layer_norm_model(), "skip_ln.onnx")
    open_model(page, server, summary["id"], "#path=&node=@skip_ln")
    schema = page.locator("#sidebar .schema-section[data-schema=schema]")
    schema.wait_for()
    assert "com.microsoft.SkipLayerNormalization" in schema.locator(".schema-summary").text_content()
    assert "onnxruntime operator" in schema.locator(".schema-summary").text_content()
    assert "Defined by onnxruntime" in schema.locator(".schema-source").text_content()
    assert "← gamma" in schema.locator("[data-formal=gamma]").text_content()
    assert "set on this node" in schema.locator("[data-schema-attr=epsilon]").text_content()
    assert page.locator("#sidebar .panel-flags").text_content() == ""  # not an unknown operator
    schema.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "schema-onnxruntime-op.png"))

    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    panel = page.locator("#sidebar")
    panel.locator("#node-edit [data-action=insert-after]").click()
    form = panel.locator(".ed-insert-after")
    option = form.locator("datalist option[value=FastGelu]")
    option.wait_for(state="attached")
    assert option.text_content() == "com.microsoft · imported with it"
    form.locator("input[name=op_type]").fill("FastGelu")
    form.locator("input[name=op_type]").dispatch_event("input")
    assert form.locator("input[name=domain]").input_value() == "com.microsoft"
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator(".panel-title").text_content() == "FastGelu"
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert ("com.microsoft", 1) in [(o.domain, o.version) for o in model.opset_import]
    assert [n.op_type for n in model.graph.node][2] == "FastGelu"
