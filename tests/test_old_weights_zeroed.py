"""A weight replaced in a model whose data is in an external file: the file still ships "as
stored" (offsets kept, other weights and padding byte for byte), but the replaced weight's old
bytes are zeros in every download, and the edit says so."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper
from testkit import upload

from app.onnx_io.unread_data import unread

A = (np.arange(32 * 32, dtype=np.float32).reshape(32, 32) % 7 + 1) / 8
B = (np.arange(32 * 32, dtype=np.float32).reshape(32, 32) % 5 + 1) / 4
PAD = b"PADDING!" * 8  # bytes no tensor reads at upload: the upload's own, shipped as they came


def two_weights() -> tuple[bytes, bytes]:
    """(.onnx, w.bin) of y = (x @ A) @ B, A and B external with padding before and between them."""
    data = PAD + A.tobytes() + PAD + B.tobytes()
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "A"], ["h"], name="first"), helper.make_node("MatMul", ["h", "B"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 32])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 32])],
    )
    for name, arr, offset in (("A", A, len(PAD)), ("B", B, 2 * len(PAD) + A.nbytes)):
        t = onnx.TensorProto(name=name, data_type=onnx.TensorProto.FLOAT, dims=arr.shape)
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", "w.bin"), ("offset", str(offset)), ("length", str(arr.nbytes))):
            t.external_data.add(key=k, value=v)
        g.initializer.append(t)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString(), data


def outputs(zip_bytes: bytes, folder: str = "") -> np.ndarray:
    """y for x = ones, run by onnxruntime on the model and data file the zip holds."""
    z = zipfile.ZipFile(io.BytesIO(zip_bytes))
    onnx_name = next(n for n in z.namelist() if n.endswith(".onnx"))
    model = onnx.load_from_string(z.read(onnx_name))
    for t in model.graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: int(e.value) if e.key != "location" else e.value for e in t.external_data}
        raw = z.read(folder + info["location"])[info.get("offset", 0) :][: info["length"]]
        t.ClearField("external_data")
        t.data_location = onnx.TensorProto.DEFAULT
        t.raw_data = raw
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": np.ones((1, 32), np.float32)})[0]


def test_unread_takes_away_what_is_still_read():
    assert unread([(0, 10), (20, 30)], [(2, 4), (8, 25)]) == [(0, 2), (4, 8), (25, 30)]
    assert unread([(0, 10)], []) == [(0, 10)]
    assert unread([(0, 10)], [(0, 10)]) == []
    assert unread([(5, 10)], [(0, 3), (12, 20)]) == [(5, 10)]


def test_a_replaced_external_weight_ships_as_zeros(client):
    model_bytes, data = two_weights()
    mid = upload(client, model_bytes, "m.onnx", [(data, "w.bin")]).get_json()["id"]
    new_a = np.full((32, 32), 0.25, np.float32)
    value = {"dtype": "FLOAT", "shape": [32, 32], "values": new_a.ravel().tolist()}
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "set_initializer", "name": "A", "value": value}]}
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][-1] == (
        "external data file 'w.bin' still holds 4.0 KiB of old weights no tensor reads: the As stored download"
        " carries zeros there (Embedded or External data writes only what the model reads)"
    )
    shipped = client.get(f"/api/models/{mid}/download")
    assert shipped.status_code == 200
    got = zipfile.ZipFile(io.BytesIO(shipped.data)).read("w.bin")
    # same size and offsets; A's old values gone, B and the padding byte for byte
    assert got == PAD + bytes(A.nbytes) + PAD + B.tobytes()
    np.testing.assert_allclose(outputs(shipped.data), np.ones((1, 32), np.float32) @ new_a @ B, rtol=1e-5)

    # the zoo layout (with its test data sets) carries the same file
    zoo = client.get(f"/api/models/{mid}/download?tests=1")
    assert zipfile.ZipFile(io.BytesIO(zoo.data)).read("m.r1/w.bin") == got

    # an edit that replaces no weight keeps the zeros it inherits, and no new line is said
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 1, "ops": [{"op": "set_metadata", "key": "owner", "value": "us"}]},
    )
    assert r.status_code == 200, r.get_json()
    assert not any("old weights" in line for line in r.get_json()["changes"])
    assert zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{mid}/download").data)).read("w.bin") == got


def test_a_file_nothing_replaced_in_ships_byte_for_byte(client):
    model_bytes, data = two_weights()
    mid = upload(client, model_bytes, "m.onnx", [(data, "w.bin")]).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "rename_node", "node": "first", "name": "proj"}]}
    )
    assert r.status_code == 200, r.get_json()
    assert not any("old weights" in line for line in r.get_json()["changes"])
    shipped = client.get(f"/api/models/{mid}/download").data
    assert zipfile.ZipFile(io.BytesIO(shipped)).read("w.bin") == data
    np.testing.assert_allclose(outputs(shipped), np.ones((1, 32), np.float32) @ A @ B, rtol=1e-5)


def test_the_model_is_found_among_its_data_files_in_any_order(client):
    model_bytes, data = two_weights()
    r = client.post(
        "/api/models",
        data={"file": [(io.BytesIO(data), "w.bin"), (io.BytesIO(model_bytes), "m.onnx")]},
        content_type="multipart/form-data",
    )
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["name"] == "m.onnx" and r.get_json()["external_files"] == ["w.bin"]
