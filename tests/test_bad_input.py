"""Malformed uploads and edit requests: a clear 4xx, nothing stored or changed, server keeps serving."""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import upload


def small_model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.ones((2, 2), np.float32), "W")
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
        helper.make_node("LeakyRelu", ["h"], ["y"], name="act", alpha=0.1),
        helper.make_node("Identity", ["y"], ["z"], name="id"),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 2])],
        [w],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field, encoded by hand (protobuf refuses to build this deep)."""
    key, n, size = (number << 3) | 2, len(payload), b""
    while True:
        size += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            break
    return bytes([key]) + size + payload


def nested_bomb(depth: int) -> bytes:
    """A model whose graph nests If -> then_branch -> If ... `depth` times."""
    graph = b""
    for _ in range(depth):
        attr = _field(1, b"then_branch") + bytes([0xA0, 0x01, 5]) + _field(6, graph)  # name, type=GRAPH, g
        node = _field(4, b"If") + _field(5, attr)  # op_type, attribute
        graph = _field(1, node)
    return bytes([0x08, 8]) + _field(7, graph)  # ir_version 8, graph


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a.txt", "hello")
    return buf.getvalue()


GOOD = small_model().SerializeToString()
BAD_UPLOADS = {
    "empty": (b"", "empty.onnx is empty: no bytes were uploaded"),
    "random_bytes": (os.urandom(4096), "not"),
    "truncated": (GOOD[: len(GOOD) // 2], "malformed or truncated"),
    "json_text": (b'{"graph": "nope"}', "not"),
    "zip_archive": (_zip_bytes(), "not"),
    "tensor_with_missing_data": (
        TensorProto(dims=[10], data_type=TensorProto.FLOAT, float_data=[1.0, 2.0, 3.0]).SerializeToString(),
        "not",
    ),
    "bad_text_syntax": (
        b'<ir_version: 8, opset_import: ["" : 17]>\ng (float x) => (float y) { y = Relu(x',
        "text syntax",
    ),
    "absurd_ir_version": (helper.make_model(small_model().graph, ir_version=10**9).SerializeToString(), "ir_version"),
    "nesting_bomb": (nested_bomb(150), "not"),
    "png_header": (b"\x89PNG\r\n\x1a\n" + os.urandom(64), "not"),
}


def _assert_serving(client):
    assert client.get("/api/models").status_code == 200


@pytest.mark.parametrize("case", sorted(BAD_UPLOADS))
def test_bad_upload_is_refused(client, case):
    data, words = BAD_UPLOADS[case]
    r = upload(client, data, f"{case}.onnx")
    assert 400 <= r.status_code < 500
    err = r.get_json()["error"]
    assert err["code"] and words in err["message"]
    if case == "empty":  # nothing to read as a data file either: said once, plainly
        assert err["message"] == "empty.onnx is empty: no bytes were uploaded"
    assert client.get("/api/models").get_json()["models"] == []  # nothing stored
    _assert_serving(client)


def test_upload_without_file_field(client):
    r = client.post("/api/models", data={"other": (io.BytesIO(GOOD), "m.onnx")}, content_type="multipart/form-data")
    assert r.status_code == 400 and "file" in r.get_json()["error"]["message"]


def test_upload_with_unusable_external_file_name(client):
    r = upload(client, GOOD, "m.onnx", extra=[(b"xx", "..")])
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_filename"
    assert client.get("/api/models").get_json()["models"] == []


@pytest.fixture
def stored(client):
    r = upload(client, GOOD, "m.onnx")
    assert r.status_code == 201
    return r.get_json()["id"]


BAD_EDITS = {
    "not_json": ("garbage{", 400, "JSON object"),
    "missing_base": ({"ops": [{"op": "set_metadata", "key": "a", "value": "b"}]}, 400, "base"),
    "unknown_base": ({"base": 7, "ops": [{"op": "set_metadata", "key": "a", "value": "b"}]}, 404, "has no revision 7"),
    "ops_not_list": ({"base": 0, "ops": {"op": "set_metadata"}}, 400, "list"),
    "empty_ops": ({"base": 0, "ops": []}, 400, "non-empty"),
    "unknown_op": ({"base": 0, "ops": [{"op": "explode"}]}, 400, "unknown op 'explode'"),
    "unknown_node": (
        {"base": 0, "ops": [{"op": "set_attribute", "node": "nope", "name": "alpha", "value": 1.0}]},
        404,
        "no node 'nope'",
    ),
    "node_id_out_of_range": ({"base": 0, "ops": [{"op": "rename_node", "node": "n99", "name": "x"}]}, 404, "n99"),
    # int() chokes past 4,300 digits (a 500 before); the address is quoted cut short, not echoed whole
    "node_id_of_5000_digits": (
        {"base": 0, "ops": [{"op": "rename_node", "node": "n" + "9" * 5000, "name": "x"}]},
        404,
        "no node 'n999",
    ),
    "node_id_in_other_digits": ({"base": 0, "ops": [{"op": "rename_node", "node": "n٠", "name": "x"}]}, 404, "no node"),
    "wrong_attribute_type": (
        {"base": 0, "ops": [{"op": "set_attribute", "node": "act", "name": "alpha", "value": "high"}]},
        400,
        "must be a number",
    ),
    "unknown_attribute": (
        {"base": 0, "ops": [{"op": "set_attribute", "node": "act", "name": "beta", "value": 1.0}]},
        400,
        "has no attribute 'beta'",
    ),
    "unexpected_field": (
        {"base": 0, "ops": [{"op": "rename_node", "node": "mm", "name": "x", "colour": 1}]},
        400,
        "unexpected field",
    ),
    "missing_field": (
        {"base": 0, "ops": [{"op": "set_metadata", "key": "a"}]},
        400,
        'op #1 (set_metadata): field "value" is required',
    ),
    "negative_dim": ({"base": 0, "ops": [{"op": "set_io_shape", "name": "x", "shape": [-1, 2]}]}, 400, "non-negative"),
    "rename_onto_existing": (
        {"base": 0, "ops": [{"op": "rename_tensor", "from": "h", "to": "y"}]},
        400,
        "already exists",
    ),
    "delete_missing_metadata": (
        {"base": 0, "ops": [{"op": "set_metadata", "key": "nope", "value": None}]},
        404,
        "no metadata key",
    ),
    "breaks_checker": ({"base": 0, "ops": [{"op": "delete_node", "node": "mm"}]}, 422, "invalid"),
    "huge_tensor_shape": (
        {"base": 0, "ops": [{"op": "set_model_field", "field": "model_version", "value": 2**70}]},
        400,
        "64-bit",
    ),
    "bad_model_field": (
        {"base": 0, "ops": [{"op": "set_model_field", "field": "ir_version", "value": 3}]},
        400,
        'op #1 (set_model_field): field "field" must be one of',
    ),
    "dtype_in_another_case": (
        {
            "base": 0,
            "ops": [{"op": "add_initializer", "name": "c", "value": {"dtype": "bool", "shape": [], "values": [True]}}],
        },
        400,
        'field "value.dtype" must be a tensor element type name (FLOAT, INT64, FLOAT16, ...), got "bool" (did you mean "BOOL"?)',
    ),
    "second_op_fails": (
        {
            "base": 0,
            "ops": [
                {"op": "set_metadata", "key": "a", "value": "b"},
                {"op": "rename_node", "node": "ghost", "name": "x"},
            ],
        },
        404,
        "op #2",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_EDITS))
def test_bad_edit_is_refused_and_changes_nothing(client, stored, case):
    body, status, words = BAD_EDITS[case]
    if isinstance(body, str):
        r = client.post(f"/api/models/{stored}/edits", data=body, content_type="application/json")
    else:
        r = client.post(f"/api/models/{stored}/edits", json=body)
    assert r.status_code == status, r.get_json()
    assert words in r.get_json()["error"]["message"]
    assert len(r.data) < 2000  # nothing sent is echoed whole
    summary = client.get(f"/api/models/{stored}").get_json()
    assert summary["revision"] == 0 and not summary["can_undo"]
    assert client.get(f"/api/models/{stored}/download").data == GOOD
    assert len(client.get(f"/api/models/{stored}/revisions").get_json()["revisions"]) == 1


@pytest.mark.parametrize(
    "url, status, words",
    [
        ("/api/models/ffffffffffff", 404, "no model"),
        ("/api/models/ffffffffffff/graph", 404, "no model"),
        ("/api/models/{id}/graph?path=n99/body", 404, "not a node"),
        ("/api/models/{id}/graph?path=n0/body", 404, "no graph attribute"),
        ("/api/models/{id}/tensors/ghost", 404, "no tensor"),
        ("/api/models/{id}/tensors/W?offset=-1", 400, "non-negative"),
        ("/api/models/{id}/tensors/W?count=lots", 400, "integer"),
        ("/api/models/{id}/download?revision=5", 404, "no revision 5"),
        # past what an index holds (SQLite: OverflowError, a 500 before) and not ASCII digits
        ("/api/models/{id}?revision=9223372036854775808", 404, "no revision 9223372036854775808"),
        ("/api/models/{id}/graph?revision=18446744073709551616", 404, "no revision"),
        ("/api/models/{id}/diff?from=" + "9" * 50 + "&to=0", 400, "revision must be a whole number"),
        ("/api/models/{id}?revision=%201", 400, 'revision must be a whole number, got " 1"'),
        ("/api/models/{id}?revision=１", 400, "revision must be a whole number"),
    ],
)
def test_bad_reads(client, stored, url, status, words):
    r = client.get(url.format(id=stored))
    assert r.status_code == status, r.get_json()
    assert words in r.get_json()["error"]["message"]
    assert len(r.data) < 2000  # nothing sent is echoed whole


def test_revision_numbers_an_index_cant_hold_are_unknown_in_json_bodies_too(client, stored):
    for path, body in [
        ("run", {"revision": 2**63}),
        ("run", {"compare_to": 2**64}),
        ("edits", {"base": 2**63, "ops": [{"op": "set_metadata", "key": "a", "value": "b"}]}),
    ]:
        r = client.post(f"/api/models/{stored}/{path}", json=body)
        assert r.status_code == 404 and r.get_json()["error"]["code"] == "unknown_revision", (path, r.get_json())


def test_undo_at_origin_and_redo_at_tip(client, stored):
    assert client.post(f"/api/models/{stored}/undo").status_code == 409
    assert client.post(f"/api/models/{stored}/redo").status_code == 409
    _assert_serving(client)


def test_hostile_external_data_path_is_never_read(client, tmp_path):
    m = small_model()
    t = m.graph.initializer[0]
    t.ClearField("float_data")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="../../../../etc/passwd")
    t.external_data.add(key="length", value="16")
    r = upload(client, m.SerializeToString(), "m.onnx")
    assert r.status_code == 201
    mid = r.get_json()["id"]
    p = client.get(f"/api/models/{mid}/tensors/W")
    assert p.status_code == 422
    assert "was not uploaded" in p.get_json()["error"]["message"]


def _external_uint8(location: str) -> onnx.TensorProto:
    t = TensorProto(name="t", data_type=TensorProto.UINT8, dims=[16], data_location=TensorProto.EXTERNAL)
    t.external_data.add(key="location", value=location)
    t.external_data.add(key="length", value="16")
    return t


@pytest.mark.parametrize("location", ["pyproject.toml", "/etc/passwd", "../../../../etc/passwd"])
def test_a_value_file_pointing_at_an_outside_file_is_never_read(client, location):
    """A sequence, map or optional .pb whose tensor keeps its values in an "external file": onnx
    would read it relative to the server's folder (pyproject.toml is there as the tests run)."""
    assert os.path.exists("pyproject.toml")  # what a read of the first would find
    tensor = _external_uint8(location)
    seq = onnx.SequenceProto(name="s", elem_type=onnx.SequenceProto.TENSOR, tensor_values=[tensor])
    nested = onnx.SequenceProto(name="n", elem_type=onnx.SequenceProto.SEQUENCE, sequence_values=[seq])
    mapped = onnx.MapProto(name="m", key_type=TensorProto.INT64, keys=[1], values=seq)
    optional = onnx.OptionalProto(name="o", elem_type=onnx.OptionalProto.TENSOR, tensor_value=tensor)
    for value in (seq, nested, mapped, optional):
        r = client.post("/api/blobs", data={"file": (io.BytesIO(value.SerializeToString()), "input_0.pb")})
        assert r.status_code == 400, (type(value).__name__, r.get_json())
        assert "external file" in r.get_json()["error"]["message"], r.get_json()
