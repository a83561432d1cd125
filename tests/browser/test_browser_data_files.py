"""Data files (onnx-data.proto, onnx-operators.proto): the data view instead of a graph."""

from __future__ import annotations

import re

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .browser_pages import tensor_cells, upload_bytes, wait_ready


def test_tensor_pb_opened_from_the_start_page(page, server, tmp_path, artifacts):
    arr = (np.arange(12, dtype=np.float32) * 1.5 - 4).reshape(3, 4)
    path = tmp_path / "input_0.pb"
    path.write_bytes(numpy_helper.from_array(arr, "input_0").SerializeToString())

    page.goto(server + "/")
    page.set_input_files("#file-input", str(path))
    page.wait_for_url(re.compile(r"/models/[^/#]+"))
    wait_ready(page)

    # the data view replaces the drawing; graph controls are gone, Download stays
    assert page.locator("#data-view").is_visible()
    assert page.locator("#graph svg [data-node-id]").count() == 0
    for button in ("#btn-undo", "#btn-redo", "#btn-fit", "#btn-model", "#btn-text"):
        assert page.locator(button).is_hidden(), button
    assert page.locator("#btn-download").is_visible()
    assert page.locator("#model-validity").text_content() == "tensor file"

    # a tensor file opens its values at once
    view = page.locator("#data-view .tensor-preview[data-ref='$']")
    view.locator(".tp-values").wait_for()
    assert "FLOAT ⟨3×4⟩" in view.locator(".tp-head").text_content()
    assert [float(v) for v in tensor_cells(view)] == arr.flatten().tolist()
    assert page.locator("#sidebar .panel-kicker").text_content() == "Data file"
    page.screenshot(path=str(artifacts / "data-tensor.png"))

    # Download gives the file back unchanged
    with page.expect_download() as info:
        page.click("#btn-download")
    saved = tmp_path / "downloaded.pb"
    info.value.save_as(saved)
    assert saved.read_bytes() == path.read_bytes()

    # the start page names each file's kind
    page.click("#back-link")
    page.locator("#models-table a.model-link", has_text="input_0.pb").wait_for()
    row = page.locator("#models-table tr", has_text="input_0.pb")
    assert row.locator(".kind-badge").text_content() == "tensor"
    page.screenshot(path=str(artifacts / "index-kinds.png"))


def test_sequence_pb_items_open_in_the_tensor_view(page, server, artifacts):
    items = [
        np.array([[1.5, -2.0], [0.25, 8.0]], np.float32),
        np.array([7, -9, 11], np.int64),
        np.array(["a", "bc"], dtype=object),
    ]
    seq = numpy_helper.from_list(items, "batch")
    summary = upload_bytes(page, server, seq.SerializeToString(), "seq_0.pb")
    assert summary["kind"] == "sequence"
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto(f"{server}/models/{summary['id']}")
    wait_ready(page)
    # a data file has no graph: none asked for (QA22 p7: a 400 in the console at every open)
    assert not [u for u in asked if "/api/" in u and "/graph" in u], asked

    tree = page.locator("#data-view .data-tree")
    assert "sequence of tensor · 3 items" in tree.text_content()
    assert page.locator("#data-also-optional").count() == 0  # three items: no OptionalProto
    assert tree.locator(".data-node.data-tensor").count() == 3
    for k, arr in enumerate(items):
        node = tree.locator(f".data-node[data-ref='$/{k}']")
        node.locator(".data-open").click()
        node.locator(".tp-values").wait_for()
        shown = tensor_cells(node)
        if arr.dtype == object:
            assert shown == ['"a"', '"bc"']
        else:
            assert [float(v) for v in shown] == arr.flatten().astype(float).tolist()
    page.screenshot(path=str(artifacts / "data-sequence.png"))

    # a map file: keys label the entries
    m = numpy_helper.from_dict({3: np.ones(2, np.float32), 10: np.zeros(1, np.float32)}, "m")
    summary = upload_bytes(page, server, m.SerializeToString(), "map.pb")
    page.goto(f"{server}/models/{summary['id']}")
    wait_ready(page)
    labels = page.locator("#data-view .data-label").all_text_contents()
    assert labels == ["3", "10"]
    node = page.locator("#data-view .data-node[data-ref='$/1']")
    node.locator(".data-open").click()
    node.locator(".tp-values").wait_for()
    assert tensor_cells(node) == ["0"]

    # an empty optional
    summary = upload_bytes(page, server, onnx.OptionalProto(name="maybe").SerializeToString(), "none.pb")
    assert summary["kind"] == "optional"
    page.goto(f"{server}/models/{summary['id']}")
    wait_ready(page)
    assert "optional · empty: it holds no value" in page.locator("#data-view .data-optional").text_content()
    assert page.locator("#model-validity").text_content() == "optional file"

    # an optional holding a tensor: the bytes of a sequence of one, which the page says (QA22 p6)
    held = numpy_helper.from_optional(np.ones(3, np.float32), "maybe", onnx.OptionalProto.TENSOR)
    summary = upload_bytes(page, server, held.SerializeToString(), "held.pb")
    page.goto(f"{server}/models/{summary['id']}")
    wait_ready(page)
    assert "sequence of tensor · 1 item" in page.locator("#data-view .data-tree").text_content()
    assert "Or an OptionalProto holding this one value" in page.locator("#data-also-optional").text_content()


def test_operator_set_file_lists_operators_and_functions(page, server, artifacts):
    opset = onnx.OperatorSetProto(
        magic="ONNXOPSET", ir_version=10, domain="com.studio", opset_version=3, doc_string="Operators of **studio**."
    )
    opset.operator.add(
        op_type="ScaledRelu",
        since_version=1,
        status=onnx.OperatorStatus.STABLE,
        doc_string="Relu of `X` times *alpha*.",
    )
    opset.operator.add(op_type="Annotate", since_version=3, status=onnx.OperatorStatus.EXPERIMENTAL)
    opset.functions.append(
        helper.make_function(
            "com.studio",
            "Twice",
            ["X"],
            ["Y"],
            [helper.make_node("Add", ["X", "X"], ["Y"])],
            [helper.make_opsetid("", 17)],
        )
    )
    summary = upload_bytes(page, server, opset.SerializeToString(), "studio.opset")
    assert summary["kind"] == "operator_set"
    page.goto(f"{server}/models/{summary['id']}")
    wait_ready(page)
    ops = page.locator("#data-view .opset-ops tbody tr")
    assert ops.count() == 2
    assert ops.nth(0).locator("td").nth(0).text_content() == "ScaledRelu"
    assert ops.nth(1).locator(".tag").text_content() == "experimental"
    ops.nth(0).locator(".op-doc code").wait_for()  # the doc_string is Markdown
    fn = page.locator("#data-view .opset-fn[data-fn=Twice]")
    assert "com.studio.Twice (X) => (Y)" in fn.text_content()
    assert fn.locator(".fn-nodes li").all_text_contents() == ["Y = Add(X, X)"]
    page.screenshot(path=str(artifacts / "data-operator-set.png"))
