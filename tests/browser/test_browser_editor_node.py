"""Editing a node through its panel: rename, attributes, metadata, delete, insert, operator, outputs.
Each test checks the downloaded model with onnx.checker and asserts the exact change."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from .browser_models import tiny_cnn
from .browser_pages import downloaded, open_model, replace_json, upload, wait_revision


def node_named(model: onnx.ModelProto, name: str) -> onnx.NodeProto:
    return next(n for n in model.graph.node if n.name == name)


def attrs(node: onnx.NodeProto) -> dict:
    return {a.name: h.get_attribute_value(a) for a in node.attribute}


def identity_chain() -> onnx.ModelProto:
    """x -> Relu -> Identity -> Sigmoid -> y"""
    x = h.make_tensor_value_info("x", T.FLOAT, [2, 3])
    y = h.make_tensor_value_info("y", T.FLOAT, [2, 3])
    nodes = [
        h.make_node("Relu", ["x"], ["a"], name="relu"),
        h.make_node("Identity", ["a"], ["b"], name="pass"),
        h.make_node("Sigmoid", ["b"], ["y"], name="sig"),
    ]
    model = h.make_model(h.make_graph(nodes, "chain", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def test_rename_attributes_and_metadata(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "Conv"

    # rename the node
    panel.locator(".ed-rename-node input[name=name]").fill("stem_conv")
    panel.locator(".ed-rename-node button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator(".ed-rename-node input[name=name]").input_value() == "stem_conv"
    assert page.locator("#graph [data-node-id=n0].selected").count() == 1  # still selected

    # delete an attribute (strides 1 is Conv's default: the shapes stay)
    panel.locator("[data-attr=strides] .attr-delete").click()
    wait_revision(page, 2)
    assert panel.locator("[data-attr=strides]").count() == 0

    # add one the node doesn't set: the list offers only those
    panel.locator(".ed-add-attr-toggle").click()
    form = panel.locator("#add-attribute")
    # the list comes from the operator catalog, a module loaded on first use
    form.locator("select[name=name] option", has_text="dilations").first.wait_for(state="attached")
    options = form.locator("select[name=name] option").all_text_contents()
    assert any(o.startswith("dilations") for o in options)
    assert not any(o.startswith("kernel_shape") for o in options)  # already set
    form.locator("select[name=name]").select_option("dilations")
    form.locator("input[name=value]").fill("1, 1")
    form.locator("button[type=submit]").click()
    wait_revision(page, 3)
    assert panel.locator("[data-attr=dilations] input[name=value]").input_value() == "[1, 1]"

    # an attribute the operator refuses: the server's words, inline
    panel.locator(".ed-add-attr-toggle").click()
    form = panel.locator("#add-attribute")
    form.locator("select[name=name]").select_option("group")
    form.locator("input[name=value]").fill("two")
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "integer" in error.text_content()
    assert not error.text_content().startswith("op #")
    assert page.locator("#model-revision").text_content() == "rev 3"

    # node metadata: add a key, then change it
    meta = panel.locator("#node-metadata-section")
    meta.locator(".ed-node-meta-toggle").click()
    meta.locator("#node-metadata-add input[name=key]").fill("owner")
    meta.locator("#node-metadata-add textarea[name=value]").fill("vision")
    meta.locator("#node-metadata-add button[type=submit]").click()
    wait_revision(page, 4)
    assert meta.locator(".node-metadata [data-key=owner]").text_content() == "ownervision"
    meta.locator(".ed-node-meta-toggle").click()  # the editor shows the full values
    row = panel.locator("#node-metadata [data-meta-key=owner]")
    assert row.locator("textarea[name=value]").input_value() == "vision"
    row.locator("textarea[name=value]").fill("vision-team")
    row.locator("button[type=submit]").click()
    wait_revision(page, 5)
    panel.locator("#node-edit").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "editor-node-panel.png"))

    model = downloaded(page, server, summary["id"])
    conv = model.graph.node[0]
    assert conv.name == "stem_conv"
    assert attrs(conv) == {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "dilations": [1, 1]}
    assert {p.key: p.value for p in conv.metadata_props} == {"owner": "vision-team"}
    assert [n.name for n in model.graph.node][1:] == [n.name for n in tiny_cnn().graph.node][1:]


def test_delete_identity_with_reconnect(page, server, artifacts):
    summary = upload(page, server, identity_chain(), "chain.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "Identity"
    panel.locator("#node-edit [data-action=delete]").click()
    form = panel.locator(".ed-delete-node")
    assert form.locator("input[name=reconnect]").is_checked()  # a one-output node: reconnect by default
    assert "its first input that is no weight or constant feeds its readers" in form.text_content()
    page.screenshot(path=str(artifacts / "editor-node-delete.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert page.locator("#graph [data-node-id]").count() == 2
    assert page.locator("#btn-model.active").count() == 1  # the deleted node's panel is gone

    model = downloaded(page, server, summary["id"])
    assert [n.op_type for n in model.graph.node] == ["Relu", "Sigmoid"]
    # the Relu keeps writing its own "a" (no tensor named after the node gone), the Sigmoid reads it
    assert list(model.graph.node[0].output) == ["a"] and list(model.graph.node[1].input) == ["a"]
    assert [o.name for o in model.graph.output] == ["y"]


def test_a_dropout_deletes_with_reconnect_ticked(page, server):
    """QA28: a Dropout has two outputs (its mask unused): Reconnect was left unticked and Delete
    refused. Ticked when no output but the first is read; unticked when one is."""
    from test_refusal_reads import dropout_model

    model = dropout_model()
    mid = upload(page, server, model, "dropout.onnx")["id"]
    open_model(page, server, mid, "#path=&node=n1")
    panel = page.locator("#sidebar")
    panel.locator("#node-edit [data-action=delete]").click()
    form = panel.locator(".ed-delete-node")
    assert form.locator("input[name=reconnect]").is_checked()
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert [n.op_type for n in downloaded(page, server, mid).graph.node] == ["Relu", "Relu"]

    model.graph.output.append(h.make_tensor_value_info("mask", T.BOOL, [1, 4]))  # the mask read
    open_model(page, server, upload(page, server, model, "dropout_mask.onnx")["id"], "#path=&node=n1")
    panel.locator("#node-edit [data-action=delete]").click()
    assert not panel.locator(".ed-delete-node input[name=reconnect]").is_checked()


def test_insert_node_after_and_before(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    page.click("#btn-fit")  # the whole small CNN in the window: every box clickable
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "LeakyRelu"

    # after: a Relu on LeakyRelu's output, for all its readers
    panel.locator("#node-edit [data-action=insert-after]").click()
    form = panel.locator(".ed-insert-after")
    form.locator("input[name=op_type]").fill("Relu")
    form.locator("input[name=name]").fill("extra_relu")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator(".panel-title").text_content() == "Relu"  # the new node is selected
    assert "node=@extra_relu" in page.url

    # before: a LeakyRelu with alpha on Softmax's input (now n8), feeding only the Softmax
    page.click("#graph [data-node-id=n8]")
    assert panel.locator(".panel-title").text_content() == "Softmax"
    panel.locator("#node-edit [data-action=insert-before]").click()
    form = panel.locator(".ed-insert-before")
    assert form.locator("select[name=tensor]").input_value() == "logits"
    # a required attribute left empty is said in the form; nothing is sent
    form.locator("input[name=op_type]").fill("Cast")
    form.locator("input[data-attr-name=to]").wait_for()
    form.locator("button[type=submit]").click()
    form.locator(".field-error").wait_for(state="visible")
    assert form.locator(".field-error").text_content() == "Cast requires to: give it a value."
    assert page.locator("#model-revision").text_content() == "rev 1"
    form.locator("input[name=op_type]").fill("LeakyRelu")
    form.locator("input[data-attr-name=alpha]").wait_for()  # the operator's attributes appear
    form.locator("input[data-attr-name=alpha]").fill("0.2")
    page.screenshot(path=str(artifacts / "editor-node-insert.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)
    assert panel.locator(".panel-title").text_content() == "LeakyRelu"

    model = downloaded(page, server, summary["id"])
    ops = [n.op_type for n in model.graph.node]
    assert ops == [
        "Conv",
        "LeakyRelu",
        "Relu",
        "MaxPool",
        "GlobalAveragePool",
        "Constant",
        "Reshape",
        "Gemm",
        "LeakyRelu",
        "Softmax",
    ]
    relu = node_named(model, "extra_relu")
    assert list(relu.input) == [model.graph.node[1].output[0]] and list(relu.output) == ["r1"]
    assert list(node_named(model, "pool1").input) == ["r1"]
    before = model.graph.node[8]
    assert list(before.input) == ["logits"] and attrs(before) == {"alpha": pytest.approx(0.2)}
    assert list(node_named(model, "softmax").input) == list(before.output)


def test_rewire_an_input_and_add_a_node_as_an_output(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=@gap")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "GlobalAveragePool"

    # rewire: the pool skipped, GlobalAveragePool reads the LeakyRelu's output
    panel.locator("#node-edit [data-action=rewire]").click()
    form = panel.locator(".ed-rewire")
    slot = form.locator("input[data-index='0']")
    slot.wait_for()
    assert slot.input_value() == "p1"
    assert form.locator("label", has_text="X").count() == 1  # the slot is named by the schema
    options = form.locator("datalist option").evaluate_all("os => os.map(o => o.value)")
    assert "r1" in options and "g1" not in options  # its own output can't feed it
    slot.fill("r1")
    page.screenshot(path=str(artifacts / "editor-node-rewire.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator(".panel-title").text_content() == "GlobalAveragePool"  # still selected
    assert "r1" in panel.locator(".tensor-list").first.text_content()

    # add a node beside the graph: a Sigmoid reading its output, made a graph output
    panel.locator("#node-edit [data-action=add-node]").click()
    form = panel.locator(".ed-add-node")
    assert form.locator("input[name=inputs]").input_value() == "g1"
    form.locator("input[name=op_type]").fill("Sigmoid")
    form.locator("input[name=name]").fill("gate")
    assert form.locator("input[name=output]").is_checked()
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)
    assert panel.locator(".panel-title").text_content() == "Sigmoid"  # the new node is selected
    assert page.locator("#graph [data-node-id=n8]").count() == 1

    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    assert list(node_named(model, "gap").input) == ["r1"]
    gate = node_named(model, "gate")
    assert gate.op_type == "Sigmoid" and list(gate.input) == ["g1"] and list(gate.output) == ["gate_out"]
    assert [o.name for o in model.graph.output] == ["probs", "gate_out"]
    assert [n.name for n in model.graph.node][:8] == [n.name for n in tiny_cnn().graph.node]


def test_change_operator_and_add_graph_output(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    page.click("#btn-fit")  # the whole small CNN in the window: every box clickable
    panel = page.locator("#sidebar")

    # LeakyRelu -> Relu: Relu has no alpha, the server refuses and says so next to the form
    panel.locator("#node-edit [data-action=change-op]").click()
    form = panel.locator(".ed-change-op")
    form.locator("input[name=op_type]").fill("Relu")
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "alpha" in error.text_content()
    page.screenshot(path=str(artifacts / "editor-node-change-op-refused.png"))
    assert page.locator("#model-revision").text_content() == "rev 0"
    # the form offers to drop it, and shows the new operator's attributes (Relu: none)
    assert form.locator(".ed-attrs-box").text_content() == "Relu has no attributes."
    assert form.locator(".ed-drop-attrs").text_content() == "Drop alpha — Relu has no such attribute"
    # Selu has an alpha: the node's is filled in, nothing to drop
    form.locator("input[name=op_type]").fill("Selu")
    form.locator("input[name=attr-alpha]").wait_for()
    assert form.locator("input[name=attr-alpha]").input_value() == "0.1"
    assert form.locator(".ed-drop-attrs input").count() == 0
    form.locator("input[name=op_type]").fill("Relu")
    form.locator("input[name=drop_attributes]").check()
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert "dropped its 'alpha'" in page.locator("#toast").text_content()
    page.click("#btn-undo")
    wait_revision(page, 0)

    # Softmax -> LogSoftmax fits (same inputs, outputs and attribute axis)
    page.click("#graph [data-node-id=n7]")
    panel.locator("#node-edit [data-action=change-op]").click()
    form = panel.locator(".ed-change-op")
    form.locator("input[name=op_type]").fill("LogSoftmax")
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)  # revision 1, undone, stays in the history
    assert panel.locator(".panel-title").text_content() == "LogSoftmax"

    # make GlobalAveragePool's output a graph output
    page.click("#graph [data-node-id=n3]")
    panel.locator(".ed-add-output[data-tensor=g1] button").click()
    wait_revision(page, 3)
    assert panel.locator(".ed-is-output").count() == 1
    assert page.locator("#graph [data-io=output]").count() == 2

    model = downloaded(page, server, summary["id"])
    assert model.graph.node[7].op_type == "LogSoftmax"
    assert [o.name for o in model.graph.output] == ["probs", "g1"]
    assert [d.dim_value for d in model.graph.output[1].type.tensor_type.shape.dim] == [1, 8, 1, 1]


def test_tensor_attribute_from_json_and_npy(page, server, tmp_path):
    y = h.make_tensor_value_info("y", T.FLOAT, [3])
    const = h.make_node(
        "Constant", [], ["y"], name="c", value=onnx.numpy_helper.from_array(np.array([1, 2, 3], np.float32))
    )
    model = h.make_model(h.make_graph([const], "g", [], [y]), opset_imports=[h.make_opsetid("", 17)])
    summary = upload(page, server, model, "const.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    row = page.locator("#sidebar [data-attr=value]")

    # JSON, prefilled with the current values
    row.locator(".attr-replace").click()
    replace_json(
        page,
        row.locator("textarea[name=values]"),
        row.locator(".ed-json-form button[type=submit]"),
        "[1, 2, 3]",
        "[4, 5.5, 6]",
    )
    wait_revision(page, 1)
    got = onnx.numpy_helper.to_array(downloaded(page, server, summary["id"]).graph.node[0].attribute[0].t)
    np.testing.assert_array_equal(got, np.array([4, 5.5, 6], np.float32))

    # an .npy of float64: converted to the attribute's FLOAT
    np.save(tmp_path / "v.npy", np.array([7.0, 8.0, 9.0]))
    row.locator(".attr-replace").click()
    row.locator("input[type=file]").set_input_files(str(tmp_path / "v.npy"))
    row.locator(".ed-npy button[type=submit]").click()
    wait_revision(page, 2)
    got = onnx.numpy_helper.to_array(downloaded(page, server, summary["id"]).graph.node[0].attribute[0].t)
    assert got.dtype == np.float32 and got.tolist() == [7, 8, 9]


def test_a_top_k_beside_the_softmax_reads_a_k_typed_in_its_form(page, server, artifacts):
    """Add node: TopK reading the probabilities and "=[3]": the constant K is made INT64, as
    TopK's schema wants (not the FLOAT of the probabilities), in the same revision; the top-3
    values, made a graph output, are the three largest probabilities in onnxruntime."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n7")
    page.click("#btn-fit")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "Softmax"
    panel.locator("#node-edit [data-action=add-node]").click()
    form = panel.locator(".ed-add-node")
    form.locator("input[name=op_type]").fill("TopK")
    form.locator("input[data-attr-name=axis]").wait_for()  # the catalog is loaded
    form.locator("input[name=name]").fill("top3")
    form.locator("input[name=inputs]").fill("probs, =[3]")
    form.locator("input[name=outputs]").fill("top_values, top_classes")
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)

    model = downloaded(page, server, summary["id"])
    onnx.checker.check_model(model, full_check=True)
    k = next(t for t in model.graph.initializer if t.name == "top3_const")
    assert k.data_type == onnx.TensorProto.INT64 and list(k.dims) == [1]
    assert list(node_named(model, "top3").input) == ["probs", "top3_const"]
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    probs, top = sess.run(["probs", "top_values"], {"input": x})
    assert top.shape == (1, 3) and np.allclose(top[0], np.sort(probs[0])[::-1][:3])


def test_a_float_past_any_double_is_refused_on_the_page(page, server):
    """1e400 is no number JavaScript (or a FLOAT) holds: said at once, not saved as Infinity;
    an infinite value typed as one is what the person meant."""
    from test_bad_input import small_model  # tests/ is on sys.path

    summary = upload(page, server, small_model(), "small.onnx")
    open_model(page, server, summary["id"], "#node=@act")
    attr = page.locator(".attr[data-attr=alpha]")
    attr.locator("input[name=value]").fill("1e400")
    attr.locator("button[type=submit]").click()
    error = attr.locator(".field-error")
    error.wait_for(state="visible")
    assert (
        error.text_content() == "1e400 is beyond the largest FLOAT (3.40282e+38); type Infinity for an infinite value."
    )
    assert page.locator("#model-revision").text_content() == "rev 0"
    attr.locator("input[name=value]").fill("Infinity")
    attr.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert downloaded(page, server, summary["id"]).graph.node[1].attribute[0].f == float("inf")


def test_an_unnamed_inserted_node_joins_its_neighbours_group(page, server, artifacts):
    """Inserted after /features/act1/LeakyRelu without a name, a Relu is named in that scope
    (/features/act1/Relu): the drawing puts it inside the features group, beside its neighbour,
    not below the group with its edges running out and back in (QA pass 12)."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    panel = page.locator("#sidebar")
    panel.locator("#node-edit [data-action=insert-after]").click()
    form = panel.locator(".ed-insert-after")
    assert "/features/act1/<operator>" in form.locator("input[name=name]").get_attribute("placeholder")
    form.locator("input[name=op_type]").fill("Relu")
    # out of the field first: a click while its list of operators is open only closes the list
    form.locator("input[name=op_type]").press("Tab")
    with page.expect_request(lambda r: r.url.endswith("/edits") and r.method == "POST"):
        form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    model = downloaded(page, server, summary["id"])
    assert model.graph.node[2].op_type == "Relu" and model.graph.node[2].name == "/features/act1/Relu"
    inside = page.evaluate(
        """() => {
          const frame = document.querySelector('#graph g[data-group-id="/features"]').getBoundingClientRect();
          const box = document.querySelector('#graph [data-node-id=n2]').getBoundingClientRect();
          return box.top >= frame.top && box.bottom <= frame.bottom && box.left >= frame.left && box.right <= frame.right;
        }"""
    )
    assert inside
    page.screenshot(path=str(artifacts / "insert-in-scope.png"))
