"""An upload under way can be cancelled (QA40 #11: a 1.5 GiB model's upload had no way back but
closing the tab): the bytes stop, nothing is stored, the server goes on, the next upload works."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .browser_models import tiny_cnn

STATUS = "document.getElementById('upload-status').textContent"


def weighty(mib: int) -> onnx.ModelProto:
    w = numpy_helper.from_array(np.ones((mib * 1024, 256), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, mib * 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_an_upload_under_way_is_cancelled_and_stores_nothing(page, server, tmp_path):
    path = tmp_path / "big.onnx"
    onnx.save(weighty(8), path)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    # a slow link: 8 MiB take ~16 s, time to see the progress and press Cancel
    throttled = {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 512 * 1024}
    cdp.send("Network.emulateNetworkConditions", throttled)
    page.goto(server + "/")
    cancel = page.locator("#upload-cancel")
    assert cancel.is_hidden()
    page.set_input_files("#file-input", str(path))
    page.wait_for_function(f"() => /Uploading big.onnx… [1-9][0-9]?%/.test({STATUS})")
    assert cancel.is_visible() and cancel.text_content() == "Cancel upload"
    cancel.click()
    page.wait_for_function(f"() => {STATUS}.includes('cancelled')")
    assert page.evaluate(f"() => {STATUS}") == "Upload of big.onnx cancelled: nothing was stored."
    assert cancel.is_hidden()
    assert page.evaluate("() => document.activeElement.id") == "dropzone"
    assert page.request.get(f"{server}/api/models").json()["models"] == []
    # the server goes on and the next upload opens its model
    cdp.send("Network.emulateNetworkConditions", {**throttled, "uploadThroughput": -1})
    small = tmp_path / "tiny_cnn.onnx"
    onnx.save(tiny_cnn(), small)
    page.set_input_files("#file-input", str(small))
    page.wait_for_url("**/models/*")
    assert [m["name"] for m in page.request.get(f"{server}/api/models").json()["models"]] == ["tiny_cnn.onnx"]
