"""What a newcomer reads in the first ten minutes (QA34): a shape mismatch the smoke run's made-up
values may have made, a graph input renamed where its name is shown, the model panel's inputs
and outputs near the top, a weight preview brought into view, "filled" explained, the duplicate
upload's question before its answers, and the words "with subgraphs" and "smoke run fails"."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from .browser_models import if_model, reflect_padded, tiny_cnn
from .browser_pages import open_model, upload, wait_ready, wait_revision


def string_split() -> onnx.ModelProto:
    """StringSplit of 2 strings declared ⟨2×2⟩ substrings: right for real text, but the smoke run's
    made-up strings split into none (⟨2×0⟩)."""
    graph = h.make_graph(
        [h.make_node("StringSplit", ["x"], ["substrings", "length"], name="split")],
        "split",
        [h.make_tensor_value_info("x", T.STRING, [2])],
        [h.make_tensor_value_info("substrings", T.STRING, [2, 2]), h.make_tensor_value_info("length", T.INT64, [2])],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 20)])


def ir3_conv() -> onnx.ModelProto:
    """An IR 3 Conv whose weights are listed as graph inputs too, as IR < 4 lists initializers."""
    w = nh.from_array(np.ones((4, 3, 3, 3), np.float32), "W")
    b = nh.from_array(np.zeros(4, np.float32), "B")
    graph = h.make_graph(
        [h.make_node("Conv", ["x", "W", "B"], ["y"], name="conv", pads=[1, 1, 1, 1])],
        "ir3",
        [
            h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8]),
            h.make_tensor_value_info("W", T.FLOAT, [4, 3, 3, 3]),
            h.make_tensor_value_info("B", T.FLOAT, [4]),
        ],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 8, 8])],
        [w, b],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 8)], ir_version=3)
    onnx.checker.check_model(model)
    return model


def filled_conv() -> onnx.ModelProto:
    """A Conv whose weight a ConstantOfShape makes (as the onnx wheel's light models make every
    weight), its bias an initializer of 64 values."""
    graph = h.make_graph(
        [
            h.make_node(
                "Constant", [], ["w_shape"], name="w_shape", value=nh.from_array(np.array([8, 3, 3, 3], np.int64))
            ),
            h.make_node(
                "ConstantOfShape",
                ["w_shape"],
                ["conv_w"],
                name="w_fill",
                value=nh.from_array(np.array([0.5], np.float32)),
            ),
            h.make_node("Conv", ["x", "conv_w", "conv_b"], ["y"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1]),
        ],
        "filled",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 16, 16])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 16, 16])],
        [nh.from_array(np.linspace(-1, 1, 8).astype(np.float32), "conv_b")],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def test_a_shape_from_made_up_values_is_said_so_and_loosening_it_is_no_prominent_fix(page, server, artifacts):
    """QA34 #5: substrings came back ⟨2×0⟩ on the smoke run's made-up strings where ⟨2×2⟩ is
    declared (and right): the box says the inputs were made up, and "Declare it ⟨2×?⟩" is a link
    whose title says the sizes follow the values fed, not the box's button."""
    open_model(page, server, upload(page, server, string_split(), "split.onnx")["id"])
    note = page.locator("#validation .callout-warn", has_text="Not the shape the model declares")
    note.wait_for(timeout=30_000)
    text = note.text_content()
    assert "Output substrings came back ⟨2×0⟩ on the smoke run's made-up inputs; the model declares ⟨2×2⟩" in text
    assert "run it on real inputs (Run) to know" in text
    fix = note.locator("button.run-declare")
    assert fix.text_content() == "Declare it ⟨2×?⟩"
    assert fix.get_attribute("class").split() == ["linklike", "run-declare"]  # no .btn: not the box's action
    assert "sizes may depend on the values fed" in fix.get_attribute("title")
    note.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "qa34-made-up-mismatch.png"))


def test_a_graph_inputs_name_is_renamed_where_it_is_shown_and_undo_keeps_its_panel(page, server, artifacts):
    """QA34 #6: the Name row at the top of a graph input's panel renames it (as a node's does);
    Undo brings back its old name with its panel still open, not the model panel."""
    summary = upload(page, server, tiny_cnn(), "cnn.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    page.click("#graph [data-io=input]")
    first = panel.locator("section.panel-section").first
    rename = first.locator(".ed-rename-tensor")  # in the Type section, the Name row
    assert rename.locator("input[name=to]").input_value() == "input"
    assert "Renamed everywhere" in rename.get_attribute("title")
    assert panel.locator("#tensor-edit .ed-rename-tensor").count() == 0  # one place to rename it
    page.screenshot(path=str(artifacts / "qa34-input-rename-row.png"))
    rename.locator("input[name=to]").fill("image")
    rename.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator(".panel-title").text_content() == "image"

    page.click("#btn-undo")
    wait_revision(page, 0)
    page.wait_for_function("() => document.querySelector('#sidebar .panel-title')?.textContent === 'input'")
    assert panel.locator(".panel-kicker").text_content() == "Graph input"
    assert "input=input" in page.url
    page.screenshot(path=str(artifacts / "qa34-input-after-undo.png"))


def test_the_model_panel_lists_inputs_and_outputs_with_types_right_after_its_properties(page, server, artifacts):
    """QA34 #7: inputs and outputs with type and shape follow Properties (not after the costs);
    an IR 3 model's "3 inputs" says 2 of them are weights; the costs header puts "op" under
    "Node", as each row puts a node's op under its name."""
    open_model(page, server, upload(page, server, ir3_conv(), "ir3.onnx")["id"])
    io = page.locator("#model-io")
    io.wait_for()
    before = io.evaluate("s => s.previousElementSibling.querySelector('h3').textContent")
    assert before.lower() == "properties"
    assert io.locator("[data-io-item='input:x']").text_content() == "x FLOAT ⟨1×3×8×8⟩"
    assert io.locator("[data-io-item='output:y']").text_content() == "y FLOAT ⟨1×4×8×8⟩"
    assert io.locator("[data-io-item='input:W']").count() == 0  # a weight, not a caller's input
    assert io.locator(".io-weights").text_content() == "also 2 weights (IR 3 lists initializers as inputs)"
    contents = page.locator("#sidebar .props dd", has=page.locator(".model-node-count")).text_content()
    assert "3 inputs (2 of them weights: IR 3 lists initializers as inputs)" in contents
    io.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "qa34-model-io.png"))

    # the costs header: "op" under "Node", in the same cell
    head = page.locator("#cost-table th[data-key=name]")
    head.wait_for()
    node, op = head.locator("[data-sort=name]").bounding_box(), head.locator("[data-sort=op_type]").bounding_box()
    assert op["y"] >= node["y"] + node["height"] - 1 and abs(op["x"] - node["x"]) < 2
    head.scroll_into_view_if_needed()
    page.locator("#cost-table").screenshot(path=str(artifacts / "qa34-costs-header.png"))


def test_a_weight_preview_is_scrolled_into_view_and_filled_is_explained(page, server, artifacts):
    """QA34 #8: "preview" of a weight low in a node's panel brings its values into the window;
    a weight drawn "filled" says on hover what that means."""
    page.set_viewport_size({"width": 1280, "height": 620})
    open_model(page, server, upload(page, server, filled_conv(), "filled.onnx")["id"])
    line = page.locator("#graph text[data-init=conv_w]")
    assert "filled" in line.evaluate("t => t.firstChild.textContent")
    title = line.locator("title").text_content()
    assert title == "conv_w: filled — made by a ConstantOfShape in the graph, every element = 0.5"

    page.click("#graph g[data-node-id=n2] .t-op")
    panel = page.locator("#sidebar")
    preview = panel.locator(".preview-link[data-ref=conv_b]")
    preview.evaluate("b => b.scrollIntoView({ block: 'end' })")  # at the window's bottom, as a long panel has it
    preview.click()
    values = panel.locator(".tensor-preview[data-ref=conv_b] .tp-values")
    values.wait_for()
    page.wait_for_function(
        """() => { const v = document.querySelector('.tensor-preview[data-ref=conv_b] .tp-values');
                   const s = document.getElementById('sidebar').getBoundingClientRect();
                   const r = v.getBoundingClientRect();
                   return r.top >= s.top && r.bottom <= Math.min(s.bottom, innerHeight) + 1; }""",
        timeout=5_000,
    )
    page.screenshot(path=str(artifacts / "qa34-weight-preview.png"))


def test_the_duplicate_upload_dialog_says_what_it_asks_before_its_buttons(page, server, tmp_path, artifacts):
    """QA34 #9: "Open it / Keep a separate copy / Close" come after the explanation."""
    path = tmp_path / "cnn.onnx"
    path.write_bytes(tiny_cnn().SerializeToString())
    upload(page, server, tiny_cnn(), "cnn.onnx")
    page.goto(server + "/")
    page.wait_for_selector("#models-table:not([hidden]) tbody tr")
    page.set_input_files("#file-input", str(path))
    dialog = page.locator("dialog#duplicate-upload[open]")
    dialog.wait_for()
    body = dialog.locator(".modal-body").bounding_box()
    for button in ("button.open-existing", "button.keep-copy", "button.modal-close"):
        assert dialog.locator(button).bounding_box()["y"] >= body["y"] + body["height"] - 1, button
    dialog.screenshot(path=str(artifacts / "qa34-duplicate-dialog.png"))
    dialog.locator("button.modal-close").click()  # backs out: the new entry goes


def test_contents_and_the_smoke_run_badge_say_what_they_mean(page, server, artifacts):
    """QA34 #11: "1 node, 5 with subgraphs" read as five nodes holding subgraphs: the count says
    which are in the main graph and which in its subgraphs; the badge "smoke run fails" says
    in its title what the smoke run is."""
    model = if_model()
    main = len(model.graph.node)
    inside = sum(len(a.g.node) for n in model.graph.node for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)
    open_model(page, server, upload(page, server, model, "if.onnx")["id"])
    count = page.locator(".model-node-count")
    page.wait_for_function("() => document.querySelector('.model-node-count').textContent.includes('subgraphs')")
    assert count.text_content() == f"{main} nodes in the main graph, {inside} more in its subgraphs"
    count.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "qa34-contents-subgraphs.png"))

    open_model(page, server, upload(page, server, reflect_padded(2000, fixed=False), "padded.onnx")["id"])
    page.wait_for_function(
        "() => document.querySelector('#model-validity').textContent === 'smoke run fails'", timeout=30_000
    )
    title = page.locator("#model-validity").get_attribute("title")
    assert title.startswith("Smoke run: onnxruntime runs the model once on inputs the check makes up")
    assert "Run it on real ones to know" in title
    wait_ready(page)


def test_the_model_panels_sections_are_one_click_from_its_top(page, server, artifacts):
    """QA34 #7: Tools sat about 2,000 px down the model panel, found only by scrolling."""
    from .browser_models import tiny_cnn
    from .browser_pages import open_model, upload

    page.set_viewport_size({"width": 1280, "height": 720})
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-model")
    index = page.locator(".panel-head .panel-index")
    index.wait_for()
    assert index.locator("button").all_text_contents() == [
        "Validation",
        "Inputs and outputs",
        "Costs",
        "Tools",
        "Download",
    ]
    page.screenshot(path=str(artifacts / "model-panel-index-top.png"))
    tools = page.locator("#model-tools")
    index.locator("button[data-target='#model-tools']").click()
    # scrolled to its section (as far as the panel scrolls: Tools is near its end)
    page.wait_for_function(
        "() => { const t = document.querySelector('#model-tools').getBoundingClientRect();"
        " const s = document.querySelector('#sidebar').getBoundingClientRect();"
        " return t.top >= s.top - 2 && t.bottom <= window.innerHeight; }"
    )
    assert tools.is_visible()
    page.screenshot(path=str(artifacts / "model-panel-index.png"))
