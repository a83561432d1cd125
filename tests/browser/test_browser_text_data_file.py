"""The text form's note after an edit (QA item 9): the .data file it names is the one the
download it links holds, <stem>.r<N>.data beside <stem>.r<N>.onnx."""

from __future__ import annotations

import io
import zipfile

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from .browser_pages import open_model, upload, wait_revision


def weights_model():
    w = nh.from_array(np.arange(1024, dtype=np.float32), "w")  # 4 KiB: a reference into the .data file
    b = nh.from_array(np.ones(4, np.float32), "b")
    nodes = [h.make_node("Slice", ["x", "s", "e"], ["head"], name="head"), h.make_node("Add", ["x", "w"], ["y"])]
    s, e = nh.from_array(np.array([0], np.int64), "s"), nh.from_array(np.array([4], np.int64), "e")
    nodes.append(h.make_node("Add", ["head", "b"], ["z"], name="bias"))
    graph = h.make_graph(
        nodes,
        "weights",
        [h.make_tensor_value_info("x", T.FLOAT, [1024])],
        [h.make_tensor_value_info("y", T.FLOAT, [1024]), h.make_tensor_value_info("z", T.FLOAT, [4])],
        [w, b, s, e],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_the_note_names_the_data_file_its_link_holds(page, server, artifacts):
    summary = upload(page, server, weights_model(), "weights.onnx")
    r = page.request.post(
        f"{server}/api/models/{summary['id']}/edits",
        data={"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]},
    )
    assert r.status == 200, r.text()
    open_model(page, server, summary["id"])
    wait_revision(page, 1)
    page.click("#btn-text")
    note = page.locator("#text-view[data-state=ready] .text-note")
    note.wait_for()
    assert note.text_content() == (
        "Weights over 1 KiB are references into weights.r1.data, as in the download with external data "
        "(that file beside the .onnx)."
    )
    page.screenshot(path=str(artifacts / "text-form-data-file.png"))
    with page.expect_download() as info:
        note.locator("a").click()
    z = zipfile.ZipFile(io.BytesIO(info.value.path().read_bytes()))
    assert sorted(z.namelist()) == ["weights.r1.data", "weights.r1.onnx"]
    assert 'float[1024] w = ["location": "weights.r1.data"' in page.locator("#text-view .text-lines").text_content()
