"""Uploaded zips are read without trusting them (issue 12): what members decompress to is
counted while reading (a total and a ratio), and encrypted, corrupt or strangely named members
are a 4xx naming the problem; nothing is stored and the server keeps serving."""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from app import create_app


def _model_with_external(size: int) -> tuple[bytes, str]:
    """A model whose one initializer (`size` float32s) lives in weights.bin."""
    w = numpy_helper.from_array(np.zeros(size, np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", str(4 * size))):
        e = w.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size])],
        [w],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(), "weights.bin"


def _zip(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _post(client, data: bytes, name: str = "m.zip"):
    return client.post("/api/models", data={"file": [(io.BytesIO(data), name)]}, content_type="multipart/form-data")


def _app(tmp_path, **config):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, **config})


def _stored_bytes(tmp_path) -> int:
    return sum(f.stat().st_size for f in (tmp_path / "data").rglob("*") if f.is_file() and f.suffix != ".db")


def test_a_zip_bomb_is_refused_while_reading(tmp_path):
    client = _app(tmp_path).test_client()
    size = 16 << 20  # 64 MiB of zeros: ~65 KB compressed, 1000x
    model, weights = _model_with_external(size)
    r = _post(client, _zip({"m.onnx": model, weights: bytes(4 * size)}))
    assert r.status_code == 413 and r.get_json()["error"]["code"] == "zip_bomb", r.get_json()
    assert "weights.bin" in r.get_json()["error"]["message"]
    assert client.get("/api/models").get_json()["models"] == []
    assert _stored_bytes(tmp_path) < 8 << 20  # nothing like the 64 MiB was kept


def test_what_a_zip_unpacks_to_is_bounded(tmp_path):
    client = _app(tmp_path, ZIP_MAX_UNCOMPRESSED=1 << 20).test_client()
    model, weights = _model_with_external(1 << 19)  # 2 MiB of random floats: no compression helps
    data = np.random.default_rng(0).standard_normal(1 << 19).astype(np.float32).tobytes()
    r = _post(client, _zip({"m.onnx": model, weights: data}))
    assert r.status_code == 413 and r.get_json()["error"]["code"] == "zip_too_big"
    assert client.get("/api/models").get_json()["models"] == []
    # within the limits the same archive is stored and downloads whole
    client = _app(tmp_path / "ok").test_client()
    r = _post(client, _zip({"m.onnx": model, weights: data}))
    assert r.status_code == 201, r.get_json()


def _flip(data: bytes, what: bytes, offset: int, value: int) -> bytes:
    """Set the byte at `offset` after each occurrence of `what` (a zip header signature)."""
    out = bytearray(data)
    start = 0
    while (i := out.find(what, start)) >= 0:
        out[i + offset] |= value
        start = i + 1
    return bytes(out)


@pytest.mark.parametrize("damage", ["encrypted", "bad_crc", "truncated", "bad_method"])
def test_damaged_members_are_a_400_naming_them(client, damage):
    model, weights = _model_with_external(256)
    data = _zip({"m.onnx": model, weights: os.urandom(1024)}, zipfile.ZIP_STORED)
    if damage == "encrypted":  # the general-purpose flag's bit 0, local and central headers
        data = _flip(_flip(data, b"PK\x03\x04", 6, 1), b"PK\x01\x02", 8, 1)
    elif damage == "bad_crc":
        i = data.index(model) + len(model) + 40  # inside weights.bin's bytes
        data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1 :]
    elif damage == "truncated":
        data = data[: len(data) // 2]
    else:  # compression method 99 (AES), local and central headers
        data = _flip(_flip(data, b"PK\x03\x04", 8, 99), b"PK\x01\x02", 10, 99)
    r = _post(client, data)
    assert 400 <= r.status_code < 500, (damage, r.status_code, r.data[:300])
    assert r.get_json()["error"]["message"]
    assert client.get("/api/models").get_json()["models"] == []


@pytest.mark.parametrize("member", ["w\r\n.bin", "a\nb/weights.bin", "../weights.bin", "/abs/weights.bin"])
def test_strange_member_names_never_fail_the_server(client, member):
    model, _ = _model_with_external(16)
    r = _post(client, _zip({"m.onnx": model, member: bytes(64)}))
    assert r.status_code < 500, r.data[:300]


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _post_blob(client, data: bytes, name: str = "samples.npz"):
    return client.post("/api/blobs", data={"file": (io.BytesIO(data), name)}, content_type="multipart/form-data")


def test_an_npz_is_stored_as_an_array_each(client):
    """numpy.savez of two inputs' samples: one blob per array, each a .npy numpy reads back."""
    ids, mask = np.arange(24, dtype=np.int64).reshape(2, 3, 4), np.ones((2, 3, 4), np.int64)
    r = _post_blob(client, _npz(input_ids=ids, attention_mask=mask))
    assert r.status_code == 201, r.get_json()
    arrays = r.get_json()["arrays"]
    assert {k: (v["dtype"], v["shape"]) for k, v in arrays.items()} == {
        "input_ids": ("int64", [2, 3, 4]),
        "attention_mask": ("int64", [2, 3, 4]),
    }
    store = client.application.extensions["store"]
    assert np.array_equal(np.load(io.BytesIO(store.blobs.get(arrays["input_ids"]["blob"]))), ids)


def test_an_npz_bomb_or_a_pickle_in_one_is_a_4xx(tmp_path):
    client = _app(tmp_path).test_client()
    zeros = np.zeros(16 << 20, np.uint8)  # 16 MiB of zeros compress ~1000x: a bomb
    r = _post_blob(client, _npz(x=zeros))
    assert r.status_code == 413 and r.get_json()["error"]["code"] == "zip_bomb", r.get_json()
    buf = io.BytesIO()
    np.savez(buf, x=np.array([{"a": 1}], dtype=object))  # an object array: a pickle inside
    r = _post_blob(client, buf.getvalue())
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_npy", r.get_json()
    r = _post_blob(client, _zip({"x.npy": b"\x93NUMPY junk", "notes.txt": b"hi"}))
    assert r.status_code == 400 and "'notes.txt' is not an .npy" in r.get_json()["error"]["message"]
    r = _post_blob(client, b"PK\x03\x04 not a zip at all")
    assert r.status_code == 400 and "not a readable .npz" in r.get_json()["error"]["message"]


def _one_file_per_weight(count: int) -> tuple[bytes, dict[str, bytes]]:
    """y = x + w0 + w1 + ... with each w_k saved to a file of its own (onnx's
    all_tensors_to_one_file=False): one upload part per weight."""
    inits, nodes, files, prev = [], [], {}, "x"
    for k in range(count):
        t = numpy_helper.from_array(np.full(4, k, np.float32), f"w{k}")
        files[f"w{k}.bin"] = t.raw_data
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value=f"w{k}.bin")
        inits.append(t)
        nodes.append(helper.make_node("Add", [prev, f"w{k}"], [f"s{k}"]))
        prev = f"s{k}"
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(), files


def test_a_model_with_more_weight_files_than_werkzeugs_part_limit_uploads(tmp_path):
    """QA: 1,100 parts (a model saved one file per weight) were refused as "larger than this server
    accepts" on an 8 GiB limit: werkzeug's 1,000 form parts. A part limit says itself."""
    model, files = _one_file_per_weight(1_100)
    parts = [("file", (io.BytesIO(model), "m.onnx"))] + [("file", (io.BytesIO(b), n)) for n, b in files.items()]
    client = create_app({"DATA_DIR": str(tmp_path / "a"), "TESTING": True}).test_client()
    r = client.post("/api/models", data={"file": [p[1] for p in parts]}, content_type="multipart/form-data")
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["missing_data"] == [] and len(r.get_json()["external_files"]) == 1_100
    small = create_app({"DATA_DIR": str(tmp_path / "b"), "TESTING": True, "MAX_FORM_PARTS": 50}).test_client()
    parts = [("file", (io.BytesIO(model), "m.onnx"))] + [("file", (io.BytesIO(b), n)) for n, b in files.items()]
    r = small.post("/api/models", data={"file": [p[1] for p in parts]}, content_type="multipart/form-data")
    assert (
        r.status_code == 413
        and r.get_json()["error"]["message"] == "an upload holds at most 50 files; send more as one .zip"
    )
