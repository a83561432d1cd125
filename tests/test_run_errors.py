"""A run onnxruntime fails is told in the words the Validation panel uses for the same failure
(runtime_check.describe): the node by name and operator, without onnxruntime's status prefix or
the C++ source location it was raised at."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import npy_blob, upload

RAW_MARKS = ("[ONNXRuntimeError]", "onnxruntime_src", "Non-zero status code", "reshape_helper.h", "Name:'")


def hard_coded_flatten(name: str = "flatten") -> onnx.ModelProto:
    """A dynamic batch read by a Reshape to [1, 48]: it runs at batch 1 only, as an export traced
    at batch 1 does."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 4, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, ["batch", 48])
    shape = nh.from_array(np.array([1, 48], np.int64), "flat_shape")
    nodes = [
        h.make_node("Reshape", ["x", "flat_shape"], ["f"], name=name),
        h.make_node("Relu", ["f"], ["y"], name="act"),
    ]
    model = h.make_model(h.make_graph(nodes, "g", [x], [y], [shape]), opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def run(client, mid: str, batch: int):
    return client.post(
        f"/api/models/{mid}/run", json={"inputs": {"x": {"random": {"seed": 0}}}, "dims": {"batch": batch}}
    )


def test_a_run_that_fails_names_the_node_as_validation_does(client):
    mid = upload(client, hard_coded_flatten().SerializeToString()).get_json()["id"]
    assert run(client, mid, 1).status_code == 200  # the model runs at the size it was made for

    refused = run(client, mid, 3)
    assert refused.status_code == 422
    error = refused.get_json()["error"]
    assert error["code"] == "run_failed" and error["node"] == "n0"  # the page links it
    message = error["message"]
    assert message.startswith('onnxruntime can\'t run the model: node "flatten" (Reshape) in the main graph: '), message
    assert "Input shape:{3,3,4,4}, requested shape:{1,48}" in message  # onnxruntime's own reason stays
    assert not [mark for mark in RAW_MARKS if mark in message], message
    assert "\n" not in message

    # the Validation panel's line for the same failure (its smoke run at batch 2): the same words
    runtime = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    other = runtime["other_size"]
    assert other["status"] == "fails" and other["node"] == "n0", runtime
    said = message.removeprefix("onnxruntime can't run the model: ")
    assert said == other["message"].replace("{2,3,4,4}", "{3,3,4,4}")


def test_an_unnamed_node_is_named_by_its_operator(client):
    mid = upload(client, hard_coded_flatten(name="").SerializeToString()).get_json()["id"]
    refused = run(client, mid, 2)
    assert refused.status_code == 422
    message = refused.get_json()["error"]["message"]
    assert message.startswith("onnxruntime can't run the model: a Reshape node: input_shape_size"), message
    assert not [mark for mark in RAW_MARKS if mark in message], message


def test_a_run_failing_inside_a_loop_body_names_the_body_node(client):
    """QA: the failure was said of the Loop with onnxruntime's nested wording, and linked to it."""
    import numpy as np
    from onnx import numpy_helper as nh

    f = onnx.TensorProto.FLOAT
    body = onnx.helper.make_graph(
        [
            onnx.helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
            onnx.helper.make_node("Gather", ["data", "idx"], ["g"], name="body_gather", axis=0),
            onnx.helper.make_node("Add", ["acc_in", "g"], ["acc_out"], name="body_add"),
        ],
        "body",
        [
            onnx.helper.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
            onnx.helper.make_tensor_value_info("cond_in", onnx.TensorProto.BOOL, []),
            onnx.helper.make_tensor_value_info("acc_in", f, [2]),
        ],
        [
            onnx.helper.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
            onnx.helper.make_tensor_value_info("acc_out", f, [2]),
        ],
    )
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Loop", ["trip", "", "acc0"], ["acc"], name="loop", body=body)],
        "g",
        [onnx.helper.make_tensor_value_info("idx", onnx.TensorProto.INT64, [2])],
        [onnx.helper.make_tensor_value_info("acc", f, [2])],
        [
            nh.from_array(np.array(2, np.int64), "trip"),
            nh.from_array(np.zeros(2, np.float32), "acc0"),
            nh.from_array(np.arange(6, dtype=np.float32), "data"),
        ],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"idx": {"values": [7, 8]}}})
    assert r.status_code == 422
    error = r.get_json()["error"]
    assert error["node"] == "n0/body/n1"
    assert error["message"].startswith(
        'onnxruntime can\'t run the model: node "body_gather" (Gather) in loop/body: indices element out of data bounds'
    ), error["message"]
    assert "Non-zero status" not in error["message"]


def test_random_uint8_inputs_are_pixels_not_a_black_image(client):
    """QA17 F7: random uint8 inputs were all zeros, so a reference case kept on them passed an
    edit of the image's scaling (0/255 = 0/128)."""
    graph = h.make_graph(
        [h.make_node("Cast", ["img"], ["f"], to=T.FLOAT)],
        "g",
        [h.make_tensor_value_info("img", T.UINT8, [1, 3, 8, 8])],
        [h.make_tensor_value_info("f", T.FLOAT, [1, 3, 8, 8])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"img": {"random": {"seed": 3}}}})
    assert r.status_code == 200, r.get_json()
    stats = r.get_json()["outputs"]["f"]["stats"]
    assert stats["min"] >= 0 and stats["max"] <= 255 and stats["max"] - stats["min"] > 200, stats


def test_an_npy_of_another_width_is_fed_in_the_declared_type(client):
    """QA17 F3, F9: numpy's float64 for a float32 input was refused as if the model were broken,
    and a float16-in/out conversion could not be compared with its float32 original on any input."""
    graph = h.make_graph(
        [h.make_node("Relu", ["x"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    x = np.array([[-1.5, 0.25, 2.0], [3.0, -4.0, 0.5]])  # float64
    blob = npy_blob(client, x)
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"x": {"npy": blob}}})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["outputs"]["y"]["values"] == [0.0, 0.25, 2.0, 3.0, 0.0, 0.5]

    half = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_float16", "keep_io_types": False}]}
    )
    assert half.status_code == 200, half.get_json()
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"x": {"npy": blob}}, "compare_to": 0})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["compare"]["outputs"]["y"]["close"], r.get_json()["compare"]
