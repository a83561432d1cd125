"""Editing the graph's inputs and outputs in their panel: type and shape (a dynamic batch dim),
renaming, removing an output."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import numpy_helper as nh

from .browser_models import flag_model, tiny_cnn
from .browser_pages import downloaded, open_model, upload, wait_revision


def dims(value: onnx.ValueInfoProto) -> list:
    return [
        d.dim_param if d.HasField("dim_param") else d.dim_value if d.HasField("dim_value") else None
        for d in value.type.tensor_type.shape.dim
    ]


def test_dynamic_batch_rename_and_remove_output(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(omit_value_info=("c1", "r1", "p1", "g1", "f1", "logits")), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-fit")  # the whole small CNN in the window: every box clickable
    panel = page.locator("#sidebar")

    # the graph input: make its batch dim dynamic
    page.click("#graph [data-io=input]")
    assert panel.locator(".panel-kicker").text_content() == "Graph input"
    form = panel.locator("#io-edit form")
    assert form.locator("select[name=dtype]").input_value() == "FLOAT"
    assert [form.locator(f"input[name=dim-{i}]").input_value() for i in range(4)] == ["1", "3", "32", "32"]
    form.locator("input[name=dim-0]").fill("batch")
    # a field shows a whole name as it is typed ("sequence_length", not "sequer")
    form.locator("input[name=dim-1]").fill("sequence_length")
    assert form.locator("input[name=dim-1]").evaluate("e => e.scrollWidth <= e.clientWidth")
    form.locator("input[name=dim-1]").fill("3")
    # a dim made dynamic: re-inferring the outputs' shapes is ticked, or they'd still say 1
    assert form.locator("input[name=update_types]").is_checked()
    page.screenshot(path=str(artifacts / "editor-io-panel.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator("#io-edit input[name=dim-0]").input_value() == "batch"
    assert "input=input" in page.url  # the input stays selected
    # (the output stays [1, 10]: the model's Reshape to [1, -1] hard-codes it, which the change says)
    assert "Reshape" in page.locator("#toast").text_content()

    # the output too, with an unknown dim and a dim removed then added back
    page.click("#graph [data-io=output]")
    form = panel.locator("#io-edit form")
    form.locator("input[name=dim-0]").fill("batch")
    form.locator("[data-dim='1'] .ed-dim-remove").click()
    assert form.locator("input[name=dim-1]").count() == 0
    form.locator(".ed-dim-add").click()
    form.locator("input[name=dim-1]").fill("")  # unknown
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)

    # a shape the server refuses: its words next to the form
    form = panel.locator("#io-edit form")
    form.locator("input[name=dim-1]").fill("-3")
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "dim 1" in error.text_content()
    assert page.locator("#model-revision").text_content() == "rev 2"

    # rename the input everywhere; the panel follows the new name
    page.click("#graph [data-io=input]")
    rename = panel.locator(".ed-rename-tensor")
    rename.locator("input[name=to]").fill("image")
    rename.locator("button[type=submit]").click()
    wait_revision(page, 3)
    assert panel.locator(".panel-title").text_content() == "image"
    assert "input=image" in page.url
    # a named dim given a size ("batch" -> 1) is ticked too: the output's "batch" would name a
    # dim no input has any more, which the server re-infers anyway; put back, it is unticked
    form = panel.locator("#io-edit form")
    form.locator("input[name=dim-0]").fill("1")
    assert form.locator("input[name=update_types]").is_checked()
    form.locator("input[name=dim-0]").fill("batch")
    assert not form.locator("input[name=update_types]").is_checked()

    # make the Gemm's output a graph output, then remove it again from its own panel
    page.click("#graph [data-node-id=n6]")
    panel.locator(".ed-add-output[data-tensor=logits] button").click()
    wait_revision(page, 4)
    page.click("#graph [data-io=output][data-name=logits]")
    panel.locator(".ed-remove-output button[type=submit]").click()
    wait_revision(page, 5)
    assert page.locator("#graph [data-io=output]").count() == 1
    assert panel.locator(".panel-title").text_content() == "logits"  # now a plain tensor

    model = downloaded(page, server, summary["id"])
    x = model.graph.input[0]
    assert x.name == "image" and x.type.tensor_type.elem_type == T.FLOAT
    assert dims(x) == ["batch", 3, 32, 32]
    assert list(model.graph.node[0].input) == ["image", "conv1.weight", "conv1.bias"]
    assert [o.name for o in model.graph.output] == ["probs"]
    assert dims(model.graph.output[0]) == ["batch", None]


def test_shape_editor_sends_back_the_dims_it_did_not_change(page, server):
    """PaddlePaddle writes an input as [-1, 3, "?", "?"]: naming the batch keeps -1's neighbours
    exactly ("?" stays a dim_param, not an unknown dim); a dim removed before a "?" keeps it too."""
    model = tiny_cnn()
    shape = model.graph.input[0].type.tensor_type.shape
    shape.Clear()
    for d in (-1, 3, "?", "?"):
        dim = shape.dim.add()
        if isinstance(d, int):
            dim.dim_value = d
        else:
            dim.dim_param = d
    del model.graph.value_info[:]
    summary = upload(page, server, model, "paddle_like.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-fit")
    page.click("#graph [data-io=input]")
    form = page.locator("#sidebar #io-edit form")
    assert [form.locator(f"input[name=dim-{i}]").input_value() for i in range(4)] == ["-1", "3", "?", "?"]
    form.locator("input[name=dim-0]").fill("batch")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert dims(downloaded(page, server, summary["id"]).graph.input[0]) == ["batch", 3, "?", "?"]


def test_a_dim_past_2_53_opens_its_panel_and_is_kept_when_another_dim_changes(page, server):
    """A dim of 2^62 came back from the server as a BigInt: the input's panel answered "Do not
    know how to serialize a BigInt" (its shape editor kept each dim as JSON), and Costs "Cannot
    convert a BigInt value to a number"."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"], name="act")],
        "huge",
        [onnx.helper.make_tensor_value_info("x", T.FLOAT, [2**62, 3, 4, 4])],
        [onnx.helper.make_tensor_value_info("y", T.FLOAT, [2**62, 3, 4, 4])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    summary = upload(page, server, model, "huge_dim.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    panel.locator("#costs[data-ready=true]").wait_for()
    assert "could not be counted" not in panel.text_content()
    page.click("#btn-fit")
    page.click("#graph [data-io=input]")
    form = panel.locator("#io-edit form")
    assert form.locator("input[name=dim-0]").input_value() == str(2**62)
    form.locator("input[name=dim-1]").fill("3")
    form.locator("input[name=dim-3]").fill("size")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert dims(downloaded(page, server, summary["id"]).graph.input[0])[0] == 2**62


def test_fix_an_input_to_a_constant_from_its_panel(page, server, artifacts):
    """A bool flag input fixed to false from its panel: the input box goes, the name is now an
    initializer holding false, and the history says what was done. A value that doesn't fit the
    declared shape is refused next to the form."""
    summary = upload(page, server, flag_model(), "flagged.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    page.click("#graph [data-io=input][data-name=mask]")
    form = panel.locator("#freeze-input .ed-json-form")
    assert (
        "their shape must be ⟨batch×4⟩ (a named or unknown dim takes any size)"
        in panel.locator("#freeze-input").text_content()
    )
    form.locator("textarea[name=values]").fill("[1, 2, 3]")  # not [batch, 4]
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "declared [batch, 4]" in error.text_content()

    page.click("#graph [data-io=input][data-name=use_cache]")
    form = panel.locator("#freeze-input .ed-json-form")
    form.locator("textarea[name=values]").fill("false")
    page.screenshot(path=str(artifacts / "editor-freeze-input.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert page.locator("#graph [data-io=input][data-name=use_cache]").count() == 0
    assert panel.locator(".panel-kicker").text_content() == "Initializer"
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    rev1 = panel.locator("#history-list > li[data-revision='1']")
    assert rev1.locator(".hist-op div").first.text_content() == 'Fix graph input "use_cache" to false (BOOL scalar)'

    model = downloaded(page, server, summary["id"])
    assert [i.name for i in model.graph.input] == ["x", "mask"]
    assert [t.name for t in model.graph.initializer] == ["one", "use_cache"]


def test_a_new_input_type_keeps_the_graph_in_its_own_through_a_cast(page, server, artifacts):
    """Choosing another element type for an input offers "Keep the graph in FLOAT" (ticked): saved,
    a Cast after the input feeds every reader, and the model is valid. A Mul inserted after the
    Cast reads a constant typed in its form (=1/255), made in the same batch in the Cast's type."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-fit")
    panel = page.locator("#sidebar")
    page.click("#graph [data-io=input]")
    form = panel.locator("#io-edit form")
    keep = form.locator("label:has(input[name=cast])")
    assert keep.is_hidden()  # the type is unchanged: nothing to keep
    form.locator("select[name=dtype]").select_option("UINT8")
    assert keep.is_visible() and "Keep the graph in FLOAT (a Cast after this input)" in keep.text_content()
    page.screenshot(path=str(artifacts / "editor-io-cast.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert page.locator("#graph [data-node-id] .box-head, #graph [data-node-id]").filter(has_text="Cast").count() >= 1

    # then scale the pixels: a Mul after the Cast reading a new constant typed inline (=1/255)
    page.click("#graph [data-node-id=n0]")
    assert panel.locator(".panel-title").text_content() == "Cast"
    panel.locator("#node-edit [data-action=insert-after]").click()
    form = panel.locator(".ed-insert-after")
    form.locator("input[name=op_type]").fill("Mul")
    form.locator("input[name=name]").fill("scale")
    form.locator("input[name=inputs]").fill("=0.00392156862745098")
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    ops = panel.locator("#history-list > li[data-revision='2'] .hist-op > div")
    assert ops.nth(0).text_content() == 'Add initializer "scale_const" (0.00392156862745098 (FLOAT scalar))'

    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    first, second = model.graph.node[0], model.graph.node[1]
    assert first.op_type == "Cast" and first.input[0] == model.graph.input[0].name
    assert model.graph.input[0].type.tensor_type.elem_type == T.UINT8
    assert second.op_type == "Mul" and list(second.input) == [first.output[0], "scale_const"]
    scale = next(t for t in model.graph.initializer if t.name == "scale_const")
    assert scale.data_type == T.FLOAT and list(scale.dims) == [] and abs(nh.to_array(scale) - 1 / 255) < 1e-9


def test_a_dim_renamed_in_one_input_is_renamed_everywhere(page, server, artifacts):
    """QA29 #9: renaming seq on input_ids left position_ids and the output saying seq; the form
    renames it everywhere by default (rename_dim), and only this input when unticked."""
    from onnx import helper as h

    graph = h.make_graph(
        [h.make_node("Add", ["input_ids", "position_ids"], ["y"], name="add")],
        "g",
        [h.make_tensor_value_info(n, T.FLOAT, ["batch", "seq"]) for n in ("input_ids", "position_ids")],
        [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq"])],
    )
    summary = upload(page, server, h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), "two_inputs.onnx")
    open_model(page, server, summary["id"], "#input=input_ids")
    form = page.locator("#sidebar #io-edit form")
    everywhere = form.locator("input[name=everywhere]")
    assert not everywhere.is_visible()
    form.locator("input[name=dim-1]").fill("sequence_length")
    assert everywhere.is_visible() and everywhere.is_checked()
    assert not form.locator("input[name=update_types]").is_visible()  # nothing left to re-infer
    page.screenshot(path=str(artifacts / "rename-dim-everywhere.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    model = downloaded(page, server, summary["id"])
    assert {v.name: dims(v) for v in [*model.graph.input, *model.graph.output]} == {
        "input_ids": ["batch", "sequence_length"],
        "position_ids": ["batch", "sequence_length"],
        "y": ["batch", "sequence_length"],
    }
    history = page.request.get(f"{server}/api/models/{summary['id']}/revisions").json()
    assert history["revisions"][-1]["ops"] == [{"op": "rename_dim", "from": "seq", "to": "sequence_length"}]
