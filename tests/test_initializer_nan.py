"""set_initializer says when the new values hold NaN or ±Inf the old ones did not (QA item 13):
a weight full of NaN runs "ok" in onnxruntime and answers NaN, so the change line warns —
without refusing (attention masks carry -Inf on purpose)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from browser.browser_models import tiny_cnn
from onnx import TensorProto, helper, numpy_helper
from testkit import npy_blob, upload

from app.api.documents import load
from app.edits.sources import CAST_CHECK_CHUNK, nonfinite_counts


def set_value(client, mid: str, name: str, value: dict) -> str:
    """The op's change line (the edit may add lines of its own after it: the smoke run's)."""
    head = client.get(f"/api/models/{mid}").get_json()["revision"]
    op = {"op": "set_initializer", "name": name, "value": value}
    r = client.post(f"/api/models/{mid}/edits", json={"base": head, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["changes"][0]


def test_an_all_nan_weight_is_stored_with_a_warning(client):
    mid = upload(client, tiny_cnn().SerializeToString(), "tiny_cnn.onnx").get_json()["id"]
    line = set_value(client, mid, "conv1.weight", {"npy": npy_blob(client, np.full((8, 3, 3, 3), np.nan))})
    assert line == (
        "initializer 'conv1.weight' set to FLOAT [8, 3, 3, 3] (converted from the .npy's float64); "
        "warning: 'conv1.weight' now holds 216 NaN of 216 values"
    )
    # stored, not refused: what the warning is about is real (onnxruntime answers NaN)
    edited = client.get(f"/api/models/{mid}/download").data
    stored = {t.name: t for t in onnx.load_from_string(edited).graph.initializer}["conv1.weight"]
    assert np.isnan(numpy_helper.to_array(stored)).all()
    x = np.ones((1, 3, 32, 32), np.float32)
    assert np.isnan(ort.InferenceSession(edited).run(None, {"input": x})[0]).all()


def test_finite_values_and_infinities_already_there_say_nothing(client):
    mid = upload(client, tiny_cnn().SerializeToString(), "tiny_cnn.onnx").get_json()["id"]
    values = {"dtype": "FLOAT", "shape": [10], "values": [0.5] * 10}
    assert set_value(client, mid, "fc.bias", values) == "initializer 'fc.bias' set to FLOAT [10], values 0.5"

    mask = {"dtype": "FLOAT", "shape": [10], "values": ["-Infinity"] + [0.0] * 9}
    first = set_value(client, mid, "fc.bias", mask)
    assert first.endswith("; warning: 'fc.bias' now holds 1 ±Inf of 10 values")
    moved = {"dtype": "FLOAT", "shape": [10], "values": [0.0] * 9 + ["-Infinity"]}
    assert set_value(client, mid, "fc.bias", moved) == "initializer 'fc.bias' set to FLOAT [10], values 0"
    more = {"dtype": "FLOAT", "shape": [10], "values": ["NaN", "Infinity", "-Infinity"] + [0.0] * 7}
    assert set_value(client, mid, "fc.bias", more) == (
        "initializer 'fc.bias' set to FLOAT [10], values 0; "
        "warning: 'fc.bias' now holds 1 NaN and 2 ±Inf (1 before) of 10 values"
    )


def big_weight_model(weight: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(weight.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(weight.shape))],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_old_values_of_a_weight_kept_as_a_blob_are_read(client):
    """A weight of 4 MiB is a blob of the store, outside the graph: its Inf are counted from there."""
    w = np.zeros(1 << 20, np.float32)
    w[123] = -np.inf
    mid = upload(client, big_weight_model(w).SerializeToString(), "big.onnx").get_json()["id"]
    with client.application.app_context():
        (old,) = load(mid)[2].graph.initializer
    assert old.data_location == TensorProto.EXTERNAL  # what the test is about
    same_mask = w.copy()
    same_mask[0], same_mask[123] = -np.inf, 1.0
    assert set_value(client, mid, "w", {"npy": npy_blob(client, same_mask)}) == (
        "initializer 'w' set to FLOAT [1048576], values 0 … 1 (mean 9.54e-07)"
    )
    two = same_mask.copy()
    two[-1] = np.inf  # in the last chunk checked
    assert set_value(client, mid, "w", {"npy": npy_blob(client, two)}) == (
        "initializer 'w' set to FLOAT [1048576], values 0 … 1 (mean 9.54e-07); warning: 'w' now holds 2 ±Inf (1 before) of 1048576 values"
    )


def test_narrow_floats_are_counted(client):
    m = big_weight_model(np.zeros(4, np.float32))
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(4, ml_dtypes.bfloat16), "b16"))
    mid = upload(client, m.SerializeToString(), "narrow.onnx").get_json()["id"]
    value = {"dtype": "BFLOAT16", "shape": [4], "values": ["NaN", 1.0, 2.0, "NaN"]}
    assert set_value(client, mid, "b16", value) == (
        "initializer 'b16' set to BFLOAT16 [4]; warning: 'b16' now holds 2 NaN of 4 values"
    )
    ints = {"dtype": "INT64", "shape": [4], "values": [1, 2, 3, 4]}
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(4, np.int64), "i"))
    mid = upload(client, m.SerializeToString(), "narrow.onnx").get_json()["id"]
    assert set_value(client, mid, "i", ints) == "initializer 'i' set to INT64 [4], values 1 … 4"


def test_nonfinite_counts_across_chunks_and_types():
    n = 2 * CAST_CHECK_CHUNK + 5
    arr = np.zeros(n, np.float32)
    nans = [0, CAST_CHECK_CHUNK - 1, CAST_CHECK_CHUNK, n - 1]
    infs = [7, 2 * CAST_CHECK_CHUNK + 1]
    arr[nans] = np.nan
    arr[infs] = [np.inf, -np.inf]
    assert nonfinite_counts(arr) == (4, 2)
    assert nonfinite_counts(arr.astype(np.float64)) == (4, 2)
    assert nonfinite_counts(arr[:100].astype(ml_dtypes.float8_e5m2)) == (1, 1)
    assert nonfinite_counts(np.array([complex(np.nan, 0), complex(0, np.inf), 1j])) == (1, 1)
    assert nonfinite_counts(np.arange(5)) == (0, 0)
    assert nonfinite_counts(np.zeros(0, np.float32)) == (0, 0)


def test_values_submitted_as_shown_keep_their_nan_bits(client):
    """Every FLOAT8E4M3FN code, typed back as the tensor view shows it ("NaN" for both NaNs),
    changes nothing: the -NaN 0xFF stays 0xFF (it became 0x7F, a new revision, QA22 p3); a NaN
    typed where a number was takes the typed NaN's bits."""
    codes = np.arange(256, dtype=np.uint8)
    w = helper.make_tensor("w", TensorProto.FLOAT8E4M3FN, [256], codes.tobytes(), raw=True)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [256])
    graph = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    mid = upload(client, model.SerializeToString(), "codes.onnx").get_json()["id"]
    shown = numpy_helper.to_array(w).astype(np.float64)
    typed = ["NaN" if np.isnan(v) else float(v) for v in shown]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={
            "base": 0,
            "ops": [
                {
                    "op": "set_initializer",
                    "name": "w",
                    "value": {"dtype": "FLOAT8E4M3FN", "shape": [256], "values": typed},
                }
            ],
        },
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["revision"] == 0 and r.get_json()["unchanged"]  # no new revision
    typed[1] = "NaN"  # a new NaN where 2^-9 was: the typed NaN, 0x7F
    r = client.post(
        f"/api/models/{mid}/edits",
        json={
            "base": 0,
            "ops": [
                {
                    "op": "set_initializer",
                    "name": "w",
                    "value": {"dtype": "FLOAT8E4M3FN", "shape": [256], "values": typed},
                }
            ],
        },
    )
    assert r.status_code == 200, r.get_json()
    stored = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data).graph.initializer[0]
    bits = numpy_helper.to_array(stored).view(np.uint8)
    assert bits[1] == 0x7F and bits[255] == 0xFF and bits[127] == 0x7F
    assert (np.delete(bits, 1) == np.delete(codes, 1)).all()


def test_a_quantization_scale_set_to_zero_is_warned(client):
    """A scale of 0 makes the quantized model answer the same whatever its input (QA24 #9):
    stored, with a warning naming it; another scale says nothing."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="q"),
        helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], name="dq"),
    ]
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "s"),
        numpy_helper.from_array(np.array(128, np.uint8), "zp"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)]
    )
    mid = upload(client, model.SerializeToString(), "qdq.onnx").get_json()["id"]
    line = set_value(client, mid, "s", {"dtype": "FLOAT", "shape": [], "values": 0.0})
    assert line == (
        "initializer 's' set to FLOAT [], values 0; warning: 's' now holds 1 zero of 1 value, and is the scale of "
        "2 QuantizeLinear/DequantizeLinear nodes: with a scale of 0 they answer their zero point whatever the input"
    )
    assert (
        set_value(client, mid, "s", {"dtype": "FLOAT", "shape": [], "values": 0.1})
        == "initializer 's' set to FLOAT [], values 0.1"
    )
