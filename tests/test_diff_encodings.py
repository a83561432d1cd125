"""Compare (QA item 6): tensors are compared by what they hold — dtype, dims and values bit for
bit — not by the field their values are written in. The same weights in raw_data, in
float_data/int32_data/int64_data, in a blob of the store or in an uploaded .data file are no
change; one element changed is exactly that tensor's change."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper
from testkit import ONNX_DATA, upload

from app import create_app
from app.views.tensor_content import encoding, tensor_change

LIGHT = ONNX_DATA / "light" / "light_inception_v1.onnx"

# dtype -> the field onnx.proto writes it in when not in raw_data, and how an element goes there
_BITS16 = {TensorProto.FLOAT16, TensorProto.BFLOAT16}
_BYTES = {
    TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E4M3FNUZ,
    TensorProto.FLOAT8E5M2,
    TensorProto.FLOAT8E5M2FNUZ,
    TensorProto.FLOAT8E8M0,
    TensorProto.BOOL,
}
_NIBBLES = {TensorProto.INT4, TensorProto.UINT4, TensorProto.FLOAT4E2M1}


def typed(t: TensorProto) -> TensorProto:
    """`t` (raw_data) with its values written in the typed field onnx.proto names for its dtype."""
    arr = numpy_helper.to_array(t)
    out = TensorProto(name=t.name, data_type=t.data_type, dims=t.dims, doc_string=t.doc_string)
    flat = arr.reshape(-1)
    dt = t.data_type
    if dt == TensorProto.FLOAT:
        out.float_data.extend(flat.tolist())  # python floats: float32 bits kept, NaN payloads too
    elif dt == TensorProto.DOUBLE:
        out.double_data.extend(flat.tolist())
    elif dt == TensorProto.COMPLEX64:
        out.float_data.extend(flat.view(np.float32).tolist())
    elif dt == TensorProto.COMPLEX128:
        out.double_data.extend(flat.view(np.float64).tolist())
    elif dt == TensorProto.INT64:
        out.int64_data.extend(flat.tolist())
    elif dt in (TensorProto.UINT32, TensorProto.UINT64):
        out.uint64_data.extend(flat.tolist())
    elif dt in _BITS16:
        out.int32_data.extend(flat.view(np.uint16).tolist())
    elif dt in _BYTES:
        out.int32_data.extend(flat.view(np.uint8).tolist())
    elif dt in _NIBBLES:  # two elements an entry, the first in the low nibble
        nib = flat.view(np.uint8) & 0x0F
        nib = np.concatenate([nib, np.zeros(len(nib) % 2, np.uint8)])
        out.int32_data.extend((nib[0::2] | (nib[1::2] << 4)).tolist())
    elif dt in (TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16, TensorProto.INT32):
        out.int32_data.extend(flat.astype(np.int64).tolist())
    else:
        raise AssertionError(f"no typed field written for {TensorProto.DataType.Name(dt)}")
    return out


def typed_model(m: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every initializer and every tensor attribute (ConstantOfShape's value)
    written in its typed field instead of raw_data."""
    out = onnx.ModelProto()
    out.CopyFrom(m)
    for t in out.graph.initializer:
        t.CopyFrom(typed(t))
    for n in out.graph.node:
        for a in n.attribute:
            if a.type == AttributeProto.TENSOR and a.t.HasField("raw_data"):
                a.t.CopyFrom(typed(a.t))
    return out


def light() -> onnx.ModelProto:
    m = onnx.load(LIGHT)
    raw = [t for t in m.graph.initializer if t.HasField("raw_data")]
    attrs = [a for n in m.graph.node for a in n.attribute if a.type == AttributeProto.TENSOR]
    assert len(raw) == len(m.graph.initializer) > 100 and len(attrs) > 50  # what the test is about
    return m


@pytest.fixture
def split_client(tmp_path):
    """Every tensor with raw_data kept as a blob of the store (as big weights are): the side in
    raw_data is references to blobs, the other inline values."""
    return create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "STORE_SPLIT_MIN_BYTES": 1}).test_client()


def diff(client, a: str, b: str) -> dict:
    r = client.get(f"/api/models/{b}/diff?other={a}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def nothing_changed(d: dict) -> bool:
    return (
        d["counts"] == {"added": 0, "removed": 0, "changed": 0}
        and d["tensors"] == {"added": [], "removed": [], "changed": [], "renamed": [], "renamed_count": 0}
        and not d["model"]
    )


def test_the_same_weights_in_raw_data_and_in_typed_fields_are_no_change(split_client):
    m = light()
    other = typed_model(m)
    assert {encoding(t) for t in other.graph.initializer} == {"float_data", "int64_data"}
    a = upload(split_client, m.SerializeToString(), "raw.onnx").get_json()["id"]
    b = upload(split_client, other.SerializeToString(), "typed.onnx").get_json()["id"]
    for x, y in ((a, b), (b, a)):
        d = diff(split_client, x, y)
        assert nothing_changed(d), (d["tensors"], d["nodes"]["changed"][:3])
        assert not d["same"] and d["same_content"]  # not the same bytes, and nothing a person sees differs

    # one element of one weight: exactly that tensor
    weight = next(t for t in other.graph.initializer if t.data_type == TensorProto.FLOAT and t.dims[0] > 1)
    name = weight.name
    values = numpy_helper.to_array(weight).copy()
    values.reshape(-1)[1] = np.nextafter(values.reshape(-1)[1], np.float32(np.inf))  # one bit off
    weight.CopyFrom(typed(numpy_helper.from_array(values, name)))
    # and one ConstantOfShape's value: exactly that node
    node = next(n for n in other.graph.node if n.op_type == "ConstantOfShape")
    node.attribute[0].t.float_data[0] += 1
    c = upload(split_client, other.SerializeToString(), "typed2.onnx").get_json()["id"]
    d = diff(split_client, a, c)
    assert not d["same_content"]
    assert d["tensors"] == {
        "added": [],
        "removed": [],
        "changed": [{"name": name, "change": "values changed"}],
        "renamed": [],
        "renamed_count": 0,
    }
    assert [(x["name"], x["fields"]) for x in d["nodes"]["changed"]] == [
        (node.name, ["attribute value: tensor [1] FLOAT → tensor [1] FLOAT"])
    ]


def test_weights_in_an_uploaded_data_file_equal_the_same_weights_inside(client):
    """The bytes an external data file holds are read to tell (the store's own blobs by digest)."""
    m = light()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ext.onnx"
        external = onnx.ModelProto()
        external.CopyFrom(m)
        onnx.save(external, path, save_as_external_data=True, location="ext.data", size_threshold=0)
        ext_bytes, data = path.read_bytes(), (Path(folder) / "ext.data").read_bytes()
    assert sum(encoding(t) == "file" for t in onnx.load_from_string(ext_bytes).graph.initializer) > 100
    a = upload(client, ext_bytes, "ext.onnx", [(data, "ext.data")]).get_json()["id"]
    b = upload(client, typed_model(m).SerializeToString(), "typed.onnx").get_json()["id"]
    c = upload(client, m.SerializeToString(), "raw.onnx").get_json()["id"]
    for x, y in ((a, b), (b, a), (a, c), (c, a)):
        assert nothing_changed(diff(client, x, y))

    # another value at one weight's place in the .data file: that weight
    victim = next(
        t for t in onnx.load_from_string(ext_bytes).graph.initializer if t.name == m.graph.initializer[3].name
    )
    offset = int({e.key: e.value for e in victim.external_data}["offset"])
    changed = bytearray(data)
    changed[offset : offset + 4] = np.float32(0.125).tobytes()
    d_id = upload(client, ext_bytes, "ext.onnx", [(bytes(changed), "ext.data")]).get_json()["id"]
    d = diff(client, b, d_id)
    assert d["tensors"]["changed"] == [{"name": victim.name, "change": "values changed"}]
    assert d["counts"]["changed"] == 0


def _random_bits(dtype: int, n: int, rng) -> np.ndarray:
    """n values of `dtype` from random bytes: every bit pattern, NaNs with payloads included."""
    np_dtype = helper.tensor_dtype_to_np_dtype(dtype)
    if dtype == TensorProto.BOOL:
        return rng.integers(0, 2, n).astype(bool)
    if dtype in _NIBBLES:
        return (rng.integers(0, 16, n).astype(np.uint8)).view(np_dtype)
    size = np.dtype(np_dtype).itemsize
    return np.frombuffer(rng.bytes(n * size), dtype=np_dtype).copy()


DTYPES = [
    TensorProto.FLOAT,
    TensorProto.DOUBLE,
    TensorProto.FLOAT16,
    TensorProto.BFLOAT16,
    TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E4M3FNUZ,
    TensorProto.FLOAT8E5M2,
    TensorProto.FLOAT8E5M2FNUZ,
    TensorProto.FLOAT8E8M0,
    TensorProto.INT4,
    TensorProto.UINT4,
    TensorProto.FLOAT4E2M1,
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT16,
    TensorProto.UINT16,
    TensorProto.INT32,
    TensorProto.INT64,
    TensorProto.UINT32,
    TensorProto.UINT64,
    TensorProto.BOOL,
    TensorProto.COMPLEX64,
    TensorProto.COMPLEX128,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=[TensorProto.DataType.Name(d) for d in DTYPES])
def test_every_dtype_compares_by_its_values_bit_for_bit(dtype):
    rng = np.random.default_rng(dtype)
    arr = _random_bits(dtype, 7 * 5, rng).reshape(7, 5)  # odd count: a 4-bit tensor's last byte half full
    raw = numpy_helper.from_array(arr, "w")
    other = typed(raw)
    assert encoding(raw) == "raw_data" and encoding(other) != "raw_data"
    assert raw.SerializeToString() != other.SerializeToString()
    assert tensor_change(raw, other) is None and tensor_change(other, raw) is None

    flipped = arr.copy()
    view = flipped.reshape(-1).view(np.uint8)
    view[3 * flipped.itemsize] ^= 1  # the lowest bit of one element
    assert tensor_change(raw, typed(numpy_helper.from_array(flipped, "w"))) == "values changed"


def test_nan_payloads_are_compared_as_bits():
    bits = np.array([0x7FC00001, 0x7FC00000, 0xFF800000, 0x3F800000], np.uint32)
    raw = numpy_helper.from_array(bits.view(np.float32), "w")
    assert tensor_change(raw, typed(raw)) is None  # NaN equals itself, payload and all
    other = bits.copy()
    other[0] = 0x7FC00002  # another NaN
    # another NaN writes as the same text: the words can't quote the change, so they don't
    assert tensor_change(raw, typed(numpy_helper.from_array(other.view(np.float32), "w"))) == "values changed"
    assert (
        tensor_change(raw, typed(numpy_helper.from_array(-bits.view(np.float32), "w")))
        == "values [NaN, NaN, -Infinity, 1] → [NaN, NaN, Infinity, -1]"
    )


def test_a_change_of_type_or_doc_string_is_named_not_called_values():
    a = numpy_helper.from_array(np.arange(6, dtype=np.float32), "w")
    b = typed(numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w"))
    assert tensor_change(a, b) == "FLOAT [6] → FLOAT [2, 3]"
    c = typed(a)
    c.doc_string = "trained again"
    assert tensor_change(a, c) == "doc_string changed"
    assert tensor_change(a, numpy_helper.from_array(np.arange(6, dtype=np.float64), "w")) == "FLOAT [6] → DOUBLE [6]"


def test_float16_bfloat16_float8_and_int4_models_compare_by_values(split_client):
    """A model of narrow types, its weights in raw_data (blobs of the store) against int32_data
    (onnxruntime runs both to the same outputs)."""
    import onnxruntime as ort

    client = split_client
    rng = np.random.default_rng(0)
    w16 = rng.standard_normal((64, 64)).astype(np.float16)
    wb = rng.standard_normal(64).astype(ml_dtypes.bfloat16)
    w8 = rng.standard_normal(64).astype(ml_dtypes.float8_e4m3fn)
    w4 = rng.integers(-8, 8, (64, 63)).astype(ml_dtypes.int4)
    nodes = [
        helper.make_node("MatMul", ["x", "w16"], ["h"]),
        helper.make_node("Cast", ["wb"], ["wb16"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["w8"], ["w816"], to=TensorProto.FLOAT16),
        helper.make_node("Add", ["h", "wb16"], ["h2"]),
        helper.make_node("Add", ["h2", "w816"], ["h3"]),
        helper.make_node("DequantizeLinear", ["w4", "s4"], ["w4f"]),
        helper.make_node("MatMul", ["h3", "w4f"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(w16, "w16"),
        numpy_helper.from_array(wb, "wb"),
        numpy_helper.from_array(w8, "w8"),
        numpy_helper.from_array(w4, "w4"),
        numpy_helper.from_array(np.array(0.5, np.float16), "s4"),
    ]
    graph = helper.make_graph(
        nodes,
        "narrow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 63])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m, full_check=True)
    other = typed_model(m)
    assert {encoding(t) for t in other.graph.initializer} == {"int32_data"}
    x = rng.standard_normal((1, 64)).astype(np.float16)
    outs = [ort.InferenceSession(k.SerializeToString()).run(None, {"x": x})[0] for k in (m, other)]
    assert np.array_equal(outs[0].view(np.uint16), outs[1].view(np.uint16))
    a = upload(client, m.SerializeToString(), "raw.onnx").get_json()["id"]
    b = upload(client, other.SerializeToString(), "typed.onnx").get_json()["id"]
    assert nothing_changed(diff(client, a, b))
    other.graph.initializer[1].int32_data[5] ^= 1
    other.graph.initializer[3].int32_data[-1] ^= 1  # the int4 weight's last element
    c = upload(client, other.SerializeToString(), "typed2.onnx").get_json()["id"]
    assert diff(client, a, c)["tensors"]["changed"] == [
        {"name": "wb", "change": "values changed"},
        {"name": "w4", "change": "values changed"},
    ]


def test_an_npy_round_trip_of_a_weight_is_no_change(client):
    """set_initializer with the very values a weight holds (as float_data elsewhere) changes nothing."""
    buf = io.BytesIO()
    m = light()
    np.save(buf, numpy_helper.to_array(m.graph.initializer[0]))
    a = upload(client, typed_model(m).SerializeToString(), "typed.onnx").get_json()["id"]
    b = upload(client, m.SerializeToString(), "raw.onnx").get_json()["id"]
    blob = client.post("/api/blobs", data={"file": (io.BytesIO(buf.getvalue()), "w.npy")}).get_json()["blob"]
    op = {"op": "set_initializer", "name": m.graph.initializer[0].name, "value": {"npy": blob}}
    assert client.post(f"/api/models/{b}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    assert nothing_changed(diff(client, a, b))


def test_fields_around_the_values_written_otherwise_are_no_change():
    """A tensor an edit inlined says data_location DEFAULT outright; another leaves it out."""
    a = typed(numpy_helper.from_array(np.arange(6, dtype=np.float32), "w"))
    b = typed(numpy_helper.from_array(np.arange(6, dtype=np.float32), "w"))
    b.data_location = TensorProto.DEFAULT
    assert a.SerializeToString() != b.SerializeToString()
    assert tensor_change(a, b) is None
    c = numpy_helper.from_array(np.arange(6, dtype=np.float32), "w")
    d = numpy_helper.from_array(np.arange(6, dtype=np.float32), "w")
    d.data_location = TensorProto.DEFAULT
    assert tensor_change(c, d) is None
    d.raw_data = np.arange(1, 7, dtype=np.float32).tobytes()
    assert tensor_change(c, d) == "values [0, 1, 2, 3, 4, 5] → [1, 2, 3, 4, 5, 6]"  # a few values: said


def test_a_big_weight_kept_as_a_blob_is_read_to_compare(client):
    """Over HASH_BELOW a blob is compared by its bytes (memory-mapped), not by its digest."""
    from app.views.tensor_content import HASH_BELOW

    w = np.random.default_rng(1).standard_normal(HASH_BELOW // 4 + 3).astype(np.float32)
    w[5] = np.float32(np.nan)

    def model(weight: TensorProto) -> bytes:
        graph = helper.make_graph(
            [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [w.size])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [w.size])],
            [weight],
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()

    a = upload(client, model(numpy_helper.from_array(w, "w")), "raw.onnx").get_json()["id"]
    b = upload(client, model(typed(numpy_helper.from_array(w, "w"))), "typed.onnx").get_json()["id"]
    assert nothing_changed(diff(client, a, b)) and nothing_changed(diff(client, b, a))
    w[-1] += 1
    c = upload(client, model(typed(numpy_helper.from_array(w, "w"))), "typed2.onnx").get_json()["id"]
    assert diff(client, a, c)["tensors"]["changed"] == [{"name": "w", "change": "values changed"}]


def test_weights_whose_file_was_not_uploaded_are_not_called_changed(client, tmp_path):
    """The .onnx uploaded without its .data: its weight can't be read, so it is "not compared",
    never "values changed" (a person reads that as a real difference)."""
    w = numpy_helper.from_array(np.arange(2048, dtype=np.float32).reshape(32, 64), "W")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        [w],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    model_bytes, data = (tmp_path / "m.onnx").read_bytes(), (tmp_path / "m.data").read_bytes()
    whole = upload(client, model_bytes, "m.onnx", [(data, "m.data")]).get_json()["id"]
    alone = upload(client, model_bytes, "m.onnx").get_json()["id"]
    d = diff(client, whole, alone)
    assert d["tensors"]["changed"] == [
        {"name": "W", "change": "values not compared: external data file 'm.data' was not uploaded with this model"}
    ]
    assert not d["same_content"]
    # the same .onnx with another .data: its weight's values changed, though the graphs are byte-equal
    other = bytearray(data)
    other[4:8] = np.float32(-1).tobytes()
    changed = upload(client, model_bytes, "m.onnx", [(bytes(other), "m.data")]).get_json()["id"]
    assert diff(client, whole, changed)["tensors"]["changed"] == [{"name": "W", "change": "values changed"}]
    assert diff(client, whole, whole)["same"]
