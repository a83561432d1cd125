"""A call of a model-local function in the node panel: the attributes it leaves to the function
(with the defaults it computes with), and "Add attribute" offering the function's own, typed."""

from __future__ import annotations

import onnx
import onnx.parser

from .browser_models import function_calls_model
from .browser_pages import downloaded, open_model, upload, wait_revision


def test_a_call_shows_and_sets_the_functions_attributes(page, server, artifacts):
    model = function_calls_model()
    model.graph.node[0].name = "block0"
    mid = upload(page, server, model, "blocks.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n0")
    panel = page.locator("#sidebar")
    left = panel.locator(".fn-call-defaults")
    left.wait_for()
    assert left.locator("[data-fn-attr=gain]").text_content().replace("\u00a0", " ") == "gain = 2 · its default"
    assert "not set, no default" in left.locator("[data-fn-attr=note]").text_content()
    assert left.locator("[data-fn-attr=slope]").count() == 0  # the call sets it

    panel.locator(".ed-add-attr-toggle").click()
    add = panel.locator("#add-attribute")
    names = add.locator("select[name=name]")
    names.locator("option[value=gain]").wait_for(state="attached")
    assert [o.strip() for o in names.locator("option").all_text_contents()] == [
        "note (type not declared)",
        "gain (FLOAT)",
    ]
    assert add.locator("select[name=type]").is_visible()  # note's type: the person's to give
    names.select_option("gain")
    assert not add.locator("select[name=type]").is_visible()  # the function says FLOAT
    assert "Default: 2." in add.locator(".ed-attr-desc").text_content()
    add.locator("input[name=value]").fill("5")
    add.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "function-call-attributes.png"))
    add.locator("button[type=submit]").click()
    wait_revision(page, 1)
    [gain] = [a for a in downloaded(page, server, mid).graph.node[0].attribute if a.name == "gain"]
    assert gain.type == onnx.AttributeProto.FLOAT and gain.f == 5.0
    # set now: no longer left to the function
    panel.locator(".fn-call-defaults [data-fn-attr=note]").wait_for()
    assert panel.locator(".fn-call-defaults [data-fn-attr=gain]").count() == 0


def test_overloaded_calls_say_which_and_a_bodys_inputs_are_the_functions(page, server):
    from onnx import TensorProto
    from onnx import helper as h

    def act(overload: str, op: str) -> onnx.FunctionProto:
        f = h.make_function("local.fns", "Act", ["X"], ["Y"], [h.make_node(op, ["X"], ["Y"])], [h.make_opsetid("", 18)])
        f.overload = overload
        return f

    calls = [h.make_node("Act", ["x"], ["t"], domain="local.fns"), h.make_node("Act", ["t"], ["y"], domain="local.fns")]
    calls[0].overload, calls[1].overload = "relu", "sigmoid"
    graph = h.make_graph(
        calls,
        "overloads",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = h.make_model(
        graph,
        opset_imports=[h.make_opsetid("", 18), h.make_opsetid("local.fns", 1)],
        functions=[act("relu", "Relu"), act("sigmoid", "Sigmoid")],
        ir_version=10,
    )
    onnx.checker.check_model(model, full_check=True)
    mid = upload(page, server, model, "overloads.onnx")["id"]
    open_model(page, server, mid)
    texts = [page.locator(f"#graph [data-node-id=n{k}]").text_content() for k in (0, 1)]
    assert "local.fns · relu" in texts[0] and "local.fns · sigmoid" in texts[1], texts
    open_model(page, server, mid, "#path=fn%5B1%5D&node=fn%5B1%5D%2Fn0")
    rows = page.locator("#sidebar .tensor-row").all_text_contents()
    assert any("from function input X" in r for r in rows), rows
    assert any("function output Y" in r for r in rows), rows


def test_the_operator_lists_offer_the_models_functions_with_their_attributes(page, server, artifacts):
    mid = upload(page, server, function_calls_model(), "blocks.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n0")
    panel = page.locator("#sidebar")
    panel.locator("#node-edit [data-action=insert-after]").click()
    form = panel.locator(".ed-insert-after")
    option = form.locator("datalist option[value='local.Block']")
    option.wait_for(state="attached")
    assert option.text_content() == "function of this model · 3 nodes"
    form.locator("input[name=op_type]").fill("local.Block")
    form.locator("input[data-attr-name=gain]").wait_for()  # the function's attributes, as fields
    assert form.locator("input[name=domain]").input_value() == "local"
    form.locator("input[data-attr-name=slope]").fill("0.5")
    page.keyboard.press("Tab")
    page.screenshot(path=str(artifacts / "function-call-insert.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    call = downloaded(page, server, mid).graph.node[1]
    assert (call.domain, call.op_type) == ("local", "Block")
    assert [(a.name, a.type, a.f) for a in call.attribute] == [("slope", onnx.AttributeProto.FLOAT, 0.5)]


def test_a_reference_to_an_attribute_the_function_does_not_declare_is_said(page, server):
    """onnx's checker and onnxruntime pass it; it never takes a value (QA15 F9)."""
    model = onnx.parser.parse_model(
        """
        <ir_version: 10, opset_import: ["" : 18, "local" : 1]>
        main (float[2] X) => (float[2] Y) { Y = local.Act (X) }
        <domain: "local", opset_import: ["" : 18]>
        Act <gain> (X) => (Y) { Y = LeakyRelu <alpha: float = @slope> (X) }
        """
    )
    mid = upload(page, server, model, "undeclared.onnx")["id"]
    open_model(page, server, mid, "#path=fn%5B0%5D&node=fn%5B0%5D%2Fn0")
    note = page.locator("#sidebar .attr-ref-undeclared")
    note.wait_for()
    assert note.text_content().startswith("refers to slope, which the function doesn't declare")
