"""Editing the whole model from the model panel: fields, graph metadata, graph inputs, opset
conversion, shape inference, clean-up, subgraph extraction, download layouts."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from .browser_models import three_convs, tiny_cnn
from .browser_pages import downloaded, open_model, upload, wait_revision


def with_dead_parts() -> onnx.ModelProto:
    """x -> Relu -> y, plus a dead Neg node and an unused initializer."""
    x = h.make_tensor_value_info("x", T.FLOAT, [4])
    y = h.make_tensor_value_info("y", T.FLOAT, [4])
    nodes = [h.make_node("Relu", ["x"], ["y"], name="relu"), h.make_node("Neg", ["x"], ["dead"], name="neg")]
    unused = nh.from_array(np.arange(4, dtype=np.float32), "unused_w")
    graph = h.make_graph(nodes, "g", [x], [y], [unused], value_info=[h.make_tensor_value_info("dead", T.FLOAT, [4])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def test_model_fields_metadata_inputs_and_downloads(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    # checks still running in the background redraw the panel when they end (closing a form
    # opened before): wait for them, as CI's loaded machine once had to
    page.wait_for_function("() => document.querySelector('#model-validity').textContent !== 'Checking…'")

    # the model fields, saved as one revision
    panel.locator(".ed-fields-toggle").click()
    form = panel.locator("#model-fields")
    assert form.locator("input[name=producer_name]").input_value() == "onnx-studio-tests"
    form.locator("input[name=producer_name]").fill("studio")
    form.locator("input[name=model_version]").fill("7")
    form.locator("textarea[name=doc_string]").fill("# Tiny CNN\nEdited in the browser.")
    page.screenshot(path=str(artifacts / "editor-model-fields.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    panel.locator(".model-doc h1").wait_for()

    # a model_version that is not a number: said inline, nothing sent
    panel.locator(".ed-fields-toggle").click()
    form = panel.locator("#model-fields")
    form.locator("input[name=model_version]").fill("seven")
    form.locator("button[type=submit]").click()
    assert "whole number" in form.locator(".field-error").text_content()

    # main graph metadata (target "")
    panel.locator(".ed-graph-meta-toggle").click()
    panel.locator("#graph-metadata-edit-add input[name=key]").fill("graph_key")
    panel.locator("#graph-metadata-edit-add textarea[name=value]").fill("graph value")
    panel.locator("#graph-metadata-edit-add button[type=submit]").click()
    wait_revision(page, 2)
    assert panel.locator(".graph-metadata [data-key=graph_key]").count() == 1

    # a new graph input, with a dynamic dim
    panel.locator(".ed-add-input-toggle").click()
    form = panel.locator("#add-input")
    form.locator("input[name=name]").fill("mask")
    form.locator("select[name=dtype]").select_option("BOOL")
    form.locator("input[name=shape]").fill("batch, 10")
    form.locator("button[type=submit]").click()
    wait_revision(page, 3)
    assert panel.locator(".panel-kicker").text_content() == "Graph input"  # its panel opens

    page.click("#btn-model")
    panel.locator("#downloads").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "editor-model-panel.png"))
    hrefs = panel.locator("#downloads a.ed-download").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert any("layout=embedded" in x for x in hrefs) and any("layout=external" in x for x in hrefs)

    model = downloaded(page, server, summary["id"], "?layout=embedded")
    assert model.producer_name == "studio"
    assert model.producer_version == "1.0"
    assert model.model_version == 7
    assert model.doc_string == "# Tiny CNN\nEdited in the browser."
    assert {p.key: p.value for p in model.graph.metadata_props} == {"graph_key": "graph value"}
    mask = model.graph.input[1]
    assert mask.name == "mask" and mask.type.tensor_type.elem_type == T.BOOL
    assert [d.dim_param or d.dim_value for d in mask.type.tensor_type.shape.dim] == ["batch", 10]

    # the external-data layout: a .zip holding the model (no tensor here is over 1 KiB)
    with page.expect_download() as info:
        panel.locator("#downloads [data-layout=external] a").click()
    assert info.value.suggested_filename == "tiny_cnn.r3.external-data.zip"  # not the zoo layout's tiny_cnn.r3.zip
    with zipfile.ZipFile(io.BytesIO(open(info.value.path(), "rb").read())) as z:
        assert z.namelist() == ["tiny_cnn.r3.onnx"]
        onnx.checker.check_model(onnx.load_from_string(z.read("tiny_cnn.r3.onnx")))


def tool_form(page, server, model: onnx.ModelProto, action: str, form_id: str):
    """The model uploaded and opened, its Tools bar's `action` clicked: (summary, sidebar, the form)."""
    summary = upload(page, server, model, "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator(f"#model-tools [data-action={action}]").click()
    return summary, panel, panel.locator(f"#{form_id}")


def test_opset_conversion_and_shape_inference(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(omit_value_info=("p1", "g1")), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")

    # shape inference stores what the model leaves out (p1, g1 and the Constant's output)
    panel.locator("#model-tools [data-action=infer]").click()
    panel.locator("#infer-shapes button[type=submit]").click()
    wait_revision(page, 1)
    assert "stored 3 inferred value_info entries" in panel.locator("#model-tools .callout").text_content()

    # a version the converter refuses for this model: its reason, inline
    panel.locator("#model-tools [data-action=opset]").click()
    form = panel.locator("#convert-opset")
    form.locator("select[name=version] option[value='1']").wait_for(state="attached")
    # versions below the model's are set apart, with what to expect of them
    older = form.locator("select[name=version] optgroup[label^=older]")
    assert "often refused" in older.get_attribute("label") and older.locator("option").first.text_content() == "16"
    form.locator("select[name=version]").select_option("1")
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "not possible" in error.text_content() and "Reshape" in error.text_content()
    assert "Assertion" not in error.text_content()
    page.screenshot(path=str(artifacts / "editor-model-opset-refused.png"))
    assert page.locator("#model-revision").text_content() == "rev 1"

    form.locator("select[name=version]").select_option("18")
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)
    report = panel.locator("#model-tools .callout")
    assert "converted from opset 17 to 18" in report.text_content()
    page.screenshot(path=str(artifacts / "editor-model-opset.png"))

    model = downloaded(page, server, summary["id"])
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 18)]
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in model.graph.value_info}
    assert shapes["p1"] == [1, 8, 16, 16] and shapes["g1"] == [1, 8, 1, 1]


def test_float16_conversion_with_a_blocked_operator(page, server, artifacts):
    summary, panel, form = tool_form(page, server, tiny_cnn(), "float16", "convert-float16")
    assert form.locator("input[name=keep_io_types]").is_checked()
    form.locator("input[name=op_block_list]").fill("Softmax")
    page.screenshot(path=str(artifacts / "editor-model-float16.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    report = panel.locator("#model-tools .callout").text_content()
    assert "converted to float16: 4 float32 weight(s)" in report and "Cast node(s) added" in report
    # the report leads on to what a person checks next: how far did the outputs move?
    panel.locator("#model-tools .ed-report-run").click()
    compare_to = page.locator("#run-compare-to")
    page.wait_for_function("() => document.querySelector('#run-compare-to').value === '0'")
    page.click("#run-go")
    page.locator("#run-compare").wait_for()
    row = page.locator("#run-compare tr[data-output=probs]")
    assert row.count() == 1 and compare_to.input_value() == "0"
    page.screenshot(path=str(artifacts / "editor-model-float16-compare.png"))

    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    assert {t.data_type for t in model.graph.initializer} == {onnx.TensorProto.FLOAT16}
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    softmax = next(n for n in model.graph.node if n.op_type == "Softmax")
    feeding = next(n for n in model.graph.node if softmax.input[0] in n.output)
    assert feeding.op_type == "Cast"  # back to float32 for the blocked Softmax


def test_int8_quantization_from_the_tools(page, server, artifacts):
    summary, panel, form = tool_form(page, server, tiny_cnn(), "int8", "quantize-dynamic")
    form.locator("input[name=per_channel]").check()
    page.screenshot(path=str(artifacts / "editor-model-int8.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert (
        "quantized to QInt8: 2 MatMul/Conv node(s) now integer" in panel.locator("#model-tools .callout").text_content()
    )
    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    ops = {n.op_type for n in model.graph.node}
    assert {"ConvInteger", "MatMulInteger"} <= ops and "Conv" not in ops


def test_static_int8_quantization_calibrated_on_an_uploaded_npy(page, server, artifacts, tmp_path):
    """Static mode: a file picker per graph input; without one the form says which input lacks
    samples; with an .npy of 4 rows of the batch-1 input, QDQ pairs around the Conv and Gemm."""
    summary, panel, form = tool_form(page, server, tiny_cnn(), "int8", "quantize-dynamic")
    assert form.locator(".q-static").is_hidden()
    weights = "values => [...values.options].map((o) => o.value)"
    assert form.locator("select[name=weight_type]").evaluate(weights) == ["QInt8", "QUInt8"]  # dynamic: 8 bits
    form.locator("select[name=mode]").select_option("static")
    assert "QInt4" in form.locator("select[name=weight_type]").evaluate(weights)  # static QDQ: 4 and 16 bits too
    assert form.locator(".q-input").all_text_contents() == ["input FLOAT ⟨1×3×32×32⟩"]
    form.locator("button[type=submit]").click()
    assert "Choose an .npy of calibration samples for input." in form.locator(".field-error").text_content()
    samples = tmp_path / "calibration.npy"
    np.save(samples, np.random.default_rng(0).standard_normal((4, 3, 32, 32)).astype(np.float32))
    form.locator(".q-npy").set_input_files(str(samples))
    form.locator("select[name=calibrate_method]").select_option("Entropy")
    page.screenshot(path=str(artifacts / "editor-model-int8-static.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    report = panel.locator("#model-tools .callout").text_content()
    assert "Quantized (static) — saved as revision 1" in report
    assert "calibrated on 4 sample(s) (Entropy)" in report, report
    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    produced = {o: n.op_type for n in model.graph.node for o in n.output}
    for op in ("Conv", "Gemm"):
        node = next(n for n in model.graph.node if n.op_type == op)
        assert produced[node.input[0]] == produced[node.input[1]] == "DequantizeLinear", op


def test_simplify_from_the_tools(page, server):
    summary, panel, form = tool_form(page, server, tiny_cnn(), "simplify", "simplify")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    report = panel.locator("#model-tools .callout").text_content()
    assert "simplified with onnxruntime's basic optimizations: 8 -> 7 nodes (fewer Constant ×1)" in report
    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    assert "Constant" not in [n.op_type for n in model.graph.node]  # the Reshape's shape, an initializer now


def test_cleanup_offers_the_inputs_nothing_reads(page, server):
    """QA45 #9: an input a freeze and simplify left unread stayed, and Clean up said "nothing
    changed": it is offered by name, unticked (its callers feed it), and removed when ticked."""
    f = onnx.TensorProto.FLOAT
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [onnx.helper.make_tensor_value_info(n, f, [2]) for n in ("x", "encoder_hidden_states")],
        [onnx.helper.make_tensor_value_info("y", f, [2])],
    )
    summary = upload(page, server, onnx.helper.make_model(graph), "unread.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=cleanup]").click()
    box = panel.locator("#cleanup input[name=unread_inputs]")
    assert not box.is_checked()
    label = panel.locator("#cleanup label:has(input[name=unread_inputs])").text_content()
    assert "Inputs nothing reads (encoder_hidden_states)" in label
    box.check()
    panel.locator("#cleanup button[type=submit]").click()
    wait_revision(page, 1)
    assert (
        "1 graph input nothing read ('encoder_hidden_states')" in panel.locator("#model-tools .callout").text_content()
    )
    assert [i.name for i in downloaded(page, server, summary["id"]).graph.input] == ["x"]


def test_cleanup_and_extract_subgraph(page, server):
    dead = upload(page, server, with_dead_parts(), "dead.onnx")
    open_model(page, server, dead["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=cleanup]").click()
    form = panel.locator("#cleanup")
    assert form.locator("input[type=checkbox]").count() == 4
    assert not form.locator("input[name=initializer_inputs]").is_checked()  # asked for, never by default
    form.locator("input[name=value_info]").uncheck()
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert (
        "removed 1 dead node, 1 unused initializer, 0 stale value_info"
        in panel.locator("#model-tools .callout").text_content()
    )
    model = downloaded(page, server, dead["id"])
    assert [n.name for n in model.graph.node] == ["relu"]
    assert len(model.graph.initializer) == 0
    assert [v.name for v in model.graph.value_info] == ["dead"]  # value_info was left alone

    cnn = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, cnn["id"])
    panel.locator("#model-tools [data-action=extract]").click()
    form = panel.locator("#extract-subgraph")
    assert form.locator("textarea[name=inputs]").input_value() == "input"
    assert form.locator("textarea[name=outputs]").input_value() == "probs"
    form.locator("textarea[name=outputs]").fill("r1")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert page.locator("#graph [data-node-id]").count() == 2
    model = downloaded(page, server, cnn["id"])
    assert [n.op_type for n in model.graph.node] == ["Conv", "LeakyRelu"]
    assert [o.name for o in model.graph.output] == ["r1"]
    assert sorted(t.name for t in model.graph.initializer) == ["conv1.bias", "conv1.weight"]


def test_the_weights_are_checked_before_quantizing(page, server, artifacts):
    """Quantize… → "Check the weights first": conv2's weights (one outlier) lose nearly all their
    values to 0 with one int8 scale per tensor, few per channel — listed first; "Quantize per
    channel" ticks the form's box, "Leave their 1 node in float" names conv2 in its field."""
    summary = upload(page, server, three_convs(), "three_convs.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=int8]").click()
    form = panel.locator("#quantize-dynamic")
    form.locator("#weight-check-go").click()
    form.locator("#weight-check[data-ready=true]").wait_for()
    summary_text = form.locator("#weight-check-summary").text_content()
    assert "1 loses more than 5 % of its values to 0" in summary_text and "1 of them keeps most" in summary_text
    first = form.locator("#weight-check tbody tr").first
    assert first.get_attribute("data-tensor") == "w2" and "conv2" in first.text_content()
    form.locator("#weight-check").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "weight-check.png"))
    form.locator("#weight-check-per-channel").click()
    assert form.locator("input[name=per_channel]").is_checked()
    form.locator("#weight-check-exclude").click()
    assert form.locator("input[name=nodes_to_exclude]").input_value() == "conv2"


def test_a_model_without_weight_initializers_says_there_is_nothing_to_check(page, server):
    """light_inception_v1 computes its weights (ConstantOfShape): the check says so in words."""
    from testkit import ONNX_DATA

    summary = upload(page, server, onnx.load(ONNX_DATA / "light" / "light_inception_v1.onnx"), "inception.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=int8]").click()
    panel.locator("#weight-check-go").click()
    panel.locator("#weight-check[data-ready=true]").wait_for()
    text = panel.locator("#weight-check").text_content()
    assert text.startswith("No weights to check") and "null" not in text


def test_four_bit_weights_from_the_tools(page, server, artifacts):
    """The 4-bit tool on a small language model: MatMul weights and the embedding table in 4 bits
    by blocks of 32 (MatMulNBits, GatherBlockQuantized), the report offering to compare outputs."""
    from test_weight_only import tiny_lm

    summary, panel, form = tool_form(page, server, tiny_lm(), "int4", "quantize-weights")
    assert form.locator("select[name=block_size]").input_value() == "32"
    form.locator("select[name=format]").select_option("QDQ")
    assert "opset 21" in form.locator(".ed-hint").nth(1).text_content()
    form.locator("select[name=format]").select_option("MatMulNBits")
    form.locator("input[name=embeddings]").check()
    page.screenshot(path=str(artifacts / "editor-model-int4.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    report = panel.locator("#model-tools .callout").text_content()
    assert "Weights in 4 bits — saved as revision 1" in report
    assert "weights quantized to 4 bits by blocks of 32 (RTN, com.microsoft MatMulNBits): 3 node(s)" in report, report
    assert panel.locator("#model-tools .ed-report-run").text_content() == "Compare its outputs with revision 0…"
    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model)
    assert sorted(n.op_type for n in model.graph.node) == ["GatherBlockQuantized", "MatMulNBits", "MatMulNBits", "Relu"]


def test_an_ml_only_model_converts_its_ai_onnx_ml_opset(page, server, artifacts):
    """onnxmltools' XGBoost imports ai.onnx.ml alone (QA21 F4): the tools offer its conversion."""
    from test_convert_ml_opset import tree_model

    summary = upload(page, server, tree_model(1, ai_onnx=False), "xgb.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=opset]").click()
    assert "imports no ai.onnx opset" in panel.locator("#model-tools").text_content()
    assert panel.locator("#convert-opset").count() == 0
    form = panel.locator("#convert-opset-ai-onnx-ml")
    form.locator("select[name=version] option[value='3']").wait_for(state="attached")
    assert form.locator("label").first.text_content() == "ai.onnx.ml opset 1 →"
    form.locator("select[name=version]").select_option("3")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    report = panel.locator("#model-tools .callout").text_content()
    assert "TreeEnsembleRegressor (1 -> 3)" in report, report
    page.screenshot(path=str(artifacts / "editor-model-ml-opset.png"))
    model = downloaded(page, server, summary["id"])
    assert [(o.domain, o.version) for o in model.opset_import] == [("ai.onnx.ml", 3)]


def test_make_static_from_the_tools(page, server, artifacts):
    """QA37 #11: fixing every symbolic dim was found only under Costs."""
    from encoder_block import encoder_block

    summary = upload(page, server, encoder_block(), "enc.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=static]").click()
    form = panel.locator("#make-static")
    assert [f.get_attribute("name") for f in form.locator("input[type=number]").all()] == ["batch", "sequence"]
    form.locator("input[name=batch]").fill("1")
    form.locator("input[name=sequence]").fill("128")
    page.screenshot(path=str(artifacts / "tools-make-static.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [1, 128, 64] and [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == dims
    # nothing left open: said, no form
    panel.locator("#model-tools [data-action=static]").click()
    assert "static already" in panel.locator("#make-static").text_content()


def test_check_a_target_from_the_tools_and_keep_its_limits(page, server, artifacts):
    """QA37 #10: the NPU's limits (opset ≤ 13, static shapes, no control flow, a node budget)
    were checked by scripts: each a rule, its breaking nodes linked; the limits kept for the next model."""
    from encoder_block import encoder_block

    summary = upload(page, server, encoder_block(), "enc.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=target]").click()
    form = panel.locator("#target-check")
    form.locator("input[name=max_opset]").fill("13")
    form.locator("input[name=max_nodes]").fill("40")
    form.locator("input[name=static]").check()
    form.locator("input[name=no_control_flow]").check()
    form.locator("button[type=submit]").click()
    rules = form.locator(".target-rules > li")
    rules.first.wait_for()
    assert form.locator(".target-broken").text_content() == "Breaks 3 of 4 limits."
    broke = {li.get_attribute("data-rule") for li in form.locator(".target-rules > li.target-broke").all()}
    assert broke == {"max_opset", "static", "max_nodes"}
    assert "Write out of LayerNormalization ×2" in form.locator("[data-rule=max_opset] .target-fix").text_content()
    form.locator(".target-rules").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "tools-target-check.png"))
    # the next model opens the form with the same limits
    other = upload(page, server, encoder_block(seed=2), "enc2.onnx")
    open_model(page, server, other["id"])
    panel.locator("#model-tools [data-action=target]").click()
    assert panel.locator("#target-check input[name=max_opset]").input_value() == "13"
    assert panel.locator("#target-check input[name=static]").is_checked()


def test_make_static_with_an_unnamed_dim_makes_the_outputs_static_too(page, server):
    """QA38 #3: an input's unnamed dim given a size left the outputs' dims open (unk__0)."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 16])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="act")], "g", [x], [y])
    summary = upload(page, server, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "open.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=static]").click()
    form = panel.locator("#make-static")
    form.locator("input[type=number]").fill("3")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    model = downloaded(page, server, summary["id"])
    shapes = [
        [d.dim_value for d in v.type.tensor_type.shape.dim] for v in (model.graph.input[0], model.graph.output[0])
    ]
    assert shapes == [[3, 16], [3, 16]]


def test_simplify_warns_of_float16_weights_before_it_is_pressed(page, server):
    """QA38 #5: a float16 model's Simplify was refused, said only after pressing it."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    half = [{"op": "convert_float16", "keep_io_types": True}]
    assert page.request.post(f"{server}/api/models/{summary['id']}/edits", data={"base": 0, "ops": half}).status == 200
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=simplify]").click()
    assert (
        "simplify the float32 model, then convert it to float16" in panel.locator("#simplify .callout").text_content()
    )
