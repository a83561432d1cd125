"""The edit-op contract against the real API: every registered op x every field x wrong values
(missing, null, booleans, numbers, huge integers, strings, lone surrogates, arrays, objects,
nested junk) answers 2xx or a 4xx JSON error, never a 5xx; a refused batch leaves the head
where it was; a field that breaks its declaration is a 400 naming the op's index, op and field,
found before any op runs."""

from __future__ import annotations

import copy
import hashlib
import io
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_bad_input import small_model
from testkit import upload

from app.edits import REGISTRY
from app.edits.jsontypes import Array, Integer, Null, OneOf, String


def fuzz_model() -> onnx.ModelProto:
    """x -> MatMul(W) "mm" -> h -> LeakyRelu "act" -> y -> Dropout "drop" -> yd -> Identity "id"
    -> z, outputs z and y, a Transpose "flip" of yd read by nothing (a list attribute, `perm`), a
    Loop "rep" negating yd twice (read by nothing), an unread input `spare` and an unread
    initializer `U`: every op has
    something to work on (simplify: the Dropout, a no-op at inference)."""
    m = small_model()
    m.graph.node.insert(2, helper.make_node("Dropout", ["y"], ["yd"], name="drop"))
    m.graph.node[3].input[0] = "yd"
    m.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2]))
    m.graph.input.append(helper.make_tensor_value_info("spare", TensorProto.FLOAT, ["n"]))  # fix_dims' n
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(3, np.float32), "U"))
    # a list attribute for set_attribute_items: a Transpose whose output nothing reads
    m.graph.node.append(helper.make_node("Transpose", ["yd"], ["yt"], name="flip", perm=[0, 1]))
    m.graph.node.append(helper.make_node("Loop", ["twice", "", "yd"], ["looped"], name="rep", body=_negate_body()))
    m.graph.initializer.append(numpy_helper.from_array(np.array(2, np.int64), "twice"))
    onnx.checker.check_model(m, full_check=True)
    return m


def _negate_body() -> onnx.GraphProto:
    """A Loop body: i, cond, v -> cond, -v."""
    return helper.make_graph(
        [helper.make_node("Neg", ["v"], ["neg_v"], name="negate")],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 2]),
        ],
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("neg_v", TensorProto.FLOAT, [1, 2]),
        ],
    )


def added_model() -> bytes:
    """The model the compose sample adds after fuzz_model: inp [1, 2] -> Neg -> neg."""
    g = helper.make_graph(
        [helper.make_node("Neg", ["inp"], ["neg"], name="negate")],
        "added",
        [helper.make_tensor_value_info("inp", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("neg", TensorProto.FLOAT, [1, 2])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


ADDED = added_model()  # uploaded as a blob by the `stored` fixture: blobs are named by their sha-256
_TENSOR = {"dtype": "FLOAT", "shape": [2, 2], "values": [1, 2, 3, 4]}
# one op per registered op that the server accepts, naming every field the op declares
SAMPLES = {
    "set_metadata": {"key": "k", "value": "v", "target": "model", "tensor": None},
    "set_model_field": {"field": "doc_string", "value": "d"},
    "set_attribute": {"node": "act", "name": "alpha", "value": 0.2, "type": "FLOAT"},
    "delete_attribute": {"node": "act", "name": "alpha"},
    "set_attribute_items": {"node": "flip", "name": "perm", "items": [{"index": 0, "value": 0}]},
    "rename_node": {"node": "mm", "name": "mm2"},
    "rename_tensor": {"from": "h", "to": "h2", "graph": ""},
    "set_io_shape": {"name": "x", "shape": [1, 2], "dtype": "FLOAT", "update_types": False, "cast": False, "graph": ""},
    "add_output": {"tensor": "h", "dtype": "FLOAT", "shape": [1, 2], "graph": "", "replace": "y"},
    "remove_output": {"name": "y", "graph": ""},
    "add_input": {"name": "extra", "dtype": "FLOAT", "shape": [1]},
    "remove_input": {"name": "spare"},
    "fix_dims": {"dims": {"n": 1}, "update_types": None},
    "rename_dim": {"from": "n", "to": "m", "graph": "", "merge": False},
    "freeze_input": {"name": "spare", "value": {"dtype": "FLOAT", "shape": [1], "values": [0.5]}},
    "set_initializer": {"name": "W", "value": _TENSOR, "graph": "", "dtype": "FLOAT", "allow_type_change": False},
    "add_initializer": {"name": "W2", "value": _TENSOR, "graph": "", "dtype": "FLOAT"},
    "delete_initializer": {"name": "U", "graph": ""},
    "delete_node": {"node": "id", "reconnect": True, "keep_initializers": False},
    "insert_node": {
        "tensor": "h",
        "op_type": "LeakyRelu",
        "domain": "",
        "name": "r",
        "attributes": {"alpha": 0.5},
        "inputs": [],
        "output": "h_relu",
        "consumers": ["n1"],
        "graph": "",
    },
    "set_node_op": {"node": "id", "op_type": "Relu", "domain": "", "attributes": {}, "drop_attributes": False},
    "set_node_input": {"node": "id", "index": 0, "tensor": "h"},
    "add_node": {
        "op_type": "LeakyRelu",
        "domain": "",
        "name": "extra",
        "inputs": ["h"],
        "outputs": ["h_extra"],
        "attributes": {"alpha": 0.5},
        "graph": "",
    },
    "infer_shapes": {},
    "cleanup": {
        "nodes": True,
        "initializers": True,
        "value_info": True,
        "functions": True,
        "initializer_inputs": False,
        "unread_inputs": False,
    },
    "extract_subgraph": {"inputs": ["x"], "outputs": ["h"]},
    "convert_opset": {"version": 16, "domain": "ai.onnx"},
    "convert_float16": {"keep_io_types": True, "op_block_list": ["Softmax"], "node_block_list": ["act"]},
    "simplify": {},
    "write_out": {"op_types": ["LeakyRelu"], "nodes": ["act"]},
    "unroll_loop": {"node": "rep"},
    "quantize_static": {
        "calibration": {
            "x": {"dtype": "FLOAT", "shape": [3, 1, 2], "values": [1, 2, -1, 0.5, 3, -2]},
            "spare": {"dtype": "FLOAT", "shape": [3, 1], "values": [0, 1, 2]},
        },
        "quant_format": "QDQ",
        "activation_type": "QUInt8",
        "weight_type": "QInt8",
        "calibrate_method": "MinMax",
        "op_types": ["MatMul"],
        "nodes_to_exclude": [],
        "per_channel": False,
        "reduce_range": False,
    },
    "quantize_dynamic": {
        "weight_type": "QInt8",
        "op_types": ["MatMul"],
        "nodes_to_exclude": [],
        "per_channel": False,
        "reduce_range": False,
    },
    "quantize_weights": {
        "bits": 4,
        "block_size": 16,
        "algorithm": "RTN",
        "format": "MatMulNBits",
        "symmetric": False,
        "embeddings": False,
        "accuracy_level": 0,
        "nodes_to_exclude": [],
    },
    "compose": {
        "model": {"onnx": hashlib.sha256(ADDED).hexdigest()},
        "connect": {"inp": "z"},
        "position": "after",
        "prefix": "post/",
        "keep_outputs": True,
    },
}


def _deep(n: int):
    v: list = [1]
    for _ in range(n):
        v = [v]
    return v


JUNK = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    1e308,
    2**63,
    2**70,
    -(2**70),
    "",
    "junk",
    "\ud800",
    "a\udfffb",
    "x" * 5000,
    [],
    [None],
    ["\ud800"],
    [[[]]],
    [{"a": 1}],
    [2**70],
    {},
    {"a": {"b": [1, None]}},
    {"\ud800": 1},
    {"npy": 3},
    {"dtype": {}, "values": []},
    _deep(40),
]
_MISSING = object()


def mutations(sample: dict):
    """(label, fields, field path, junk) variants of a sample: an unknown field; each field missing
    or junk; one level into objects (each key missing or junk) and arrays (the first item junk)."""
    yield "unknown field", {**sample, "colour": 1}, "colour", 1
    for name, good in sample.items():
        yield f"{name} missing", {k: v for k, v in sample.items() if k != name}, name, _MISSING
        for junk in JUNK:
            yield f"{name}={junk!r:.30}", {**sample, name: junk}, name, junk
        if isinstance(good, dict):
            for key in good:
                yield f"{name}.{key} missing", {**sample, name: {k: v for k, v in good.items() if k != key}}, None, None
                for junk in JUNK:
                    yield f"{name}.{key}={junk!r:.30}", {**sample, name: {**good, key: junk}}, None, None
        if isinstance(good, list) and good:
            for junk in JUNK:
                yield f"{name}[0]={junk!r:.30}", {**sample, name: [junk, *good[1:]]}, None, None


@pytest.fixture
def stored(client):
    r = upload(client, fuzz_model().SerializeToString(), "fuzz.onnx")
    assert r.status_code == 201
    added = client.post("/api/blobs", data={"file": (io.BytesIO(ADDED), "added.onnx")})
    assert added.get_json()["blob"] == SAMPLES["compose"]["model"]["onnx"]
    return r.get_json()["id"]


def _edit(client, mid: str, base: int, *ops: dict):
    return client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": list(ops)})


def _head(app, mid: str) -> int:
    return app.extensions["store"].model(mid).head


def test_every_op_has_a_sample_naming_all_its_fields():
    assert set(SAMPLES) == set(REGISTRY)
    for name, entry in REGISTRY.items():
        assert set(SAMPLES[name]) == {f.name for f in entry.fields}, name


@pytest.mark.parametrize("op", sorted(SAMPLES))
def test_each_sample_is_accepted(client, stored, op):
    r = _edit(client, stored, 0, {"op": op, **SAMPLES[op]})
    assert r.status_code == 200, r.get_json()


@pytest.mark.fuzz
def test_fuzz_every_op_field_and_wrong_type(app, client, stored, capsys):
    counts = {"requests": 0, "2xx": 0, "4xx": 0, "5xx": 0}
    for op, sample in SAMPLES.items():
        entry = REGISTRY[op]
        declared = {f.name: f for f in entry.fields}
        for label, fields, path, junk in mutations(sample):
            head = _head(app, stored)
            r = _edit(client, stored, head, {"op": op, **copy.deepcopy(fields)})
            counts["requests"] += 1
            counts[f"{r.status_code // 100}xx"] += 1
            assert r.status_code < 500, (op, label, r.data[:300])
            if r.status_code < 300 and r.get_json().get("unchanged"):
                assert _head(app, stored) == r.get_json()["revision"] == head  # a no-op: no new revision
                continue
            if r.status_code < 300:
                assert _head(app, stored) == r.get_json()["revision"] != head
                assert client.post(f"/api/models/{stored}/undo").status_code == 200
                continue
            error = r.get_json()["error"]
            assert isinstance(error["code"], str) and isinstance(error["message"], str), (op, label)
            assert _head(app, stored) == head, (op, label)
            # a top-level field that breaks its declaration: refused by the contract, naming it
            if path == "colour":
                assert r.status_code == 400 and error["message"].startswith(f'op #1 ({op}): unexpected field "colour"')
            elif junk is _MISSING and declared[path].required:
                assert error["message"] == f'op #1 ({op}): field "{path}" is required', (op, label)
            elif path is not None and junk is not _MISSING and declared[path].type.check(junk, path):
                assert r.status_code == 400, (op, label, error)
                named = rf'op #1 \({op}\): (unexpected )?field "{re.escape(path)}\b'
                assert re.match(named, error["message"]), (op, label, error)
    with capsys.disabled():
        print(f"\nedit contract fuzz: {counts}")
    assert counts["5xx"] == 0 and counts["requests"] > 1500 and counts["2xx"] and counts["4xx"]


@pytest.mark.parametrize(
    "op, message",
    [
        ({"op": "set_io_shape", "name": "x"}, 'op #2 (set_io_shape): field "shape" is required'),
        ({"op": "add_input", "name": "n", "shape": [1]}, 'op #2 (add_input): field "dtype" is required'),
        ({"op": "set_initializer", "name": "W"}, 'op #2 (set_initializer): field "value" is required'),
        (
            {"op": "set_attribute", "node": "act", "name": "alpha", "value": 1.0, "type": {}},
            'op #2 (set_attribute): field "type" must be one of "FLOAT", "INT", "STRING", "TENSOR", "FLOATS", '
            '"INTS", "STRINGS", "TENSORS", got object',
        ),
        (
            {"op": "add_input", "name": "n", "dtype": {}, "shape": [1]},
            'op #2 (add_input): field "dtype" must be a tensor element type name (FLOAT, INT64, FLOAT16, ...), '
            "got object",
        ),
        (
            {"op": "convert_opset", "version": True},
            'op #2 (convert_opset): field "version" must be a positive integer, got boolean',
        ),
        (
            {"op": "set_io_shape", "name": "x", "shape": [1, 2.5]},
            'op #2 (set_io_shape): field "shape[1]" must be an integer, a symbolic name or null, got number',
        ),
        (
            {"op": "set_initializer", "name": "W", "value": {"dtype": "FLOAT", "values": [1], "extra": 0}},
            'op #2 (set_initializer): unexpected field "value.extra" (fields: dtype, shape, values)',
        ),
        (
            {"op": "rename_node", "node": "mm", "name": "\ud800"},
            'op #2 (rename_node): field "name" must be valid Unicode text, got "\\ud800" (a lone surrogate)',
        ),
        (
            {"op": "set_model_field", "field": "model_version", "value": 2**64},
            'op #2 (set_model_field): field "value" must fit in a 64-bit integer, got 18446744073709551616',
        ),
    ],
)
def test_contract_is_checked_before_any_op_runs(client, stored, op, message):
    # op #1 would fail when run (404: no such node); the contract refuses op #2 first
    r = _edit(client, stored, 0, {"op": "rename_node", "node": "ghost", "name": "g"}, op)
    assert (r.status_code, r.get_json()["error"]["message"]) == (400, message)
    assert client.get(f"/api/models/{stored}").get_json()["revision"] == 0


@pytest.mark.parametrize(
    "value, message",
    [
        (1e39, "1e+39 is beyond the largest FLOAT (3.40282e+38)"),
        (-1e39, "-1e+39 is beyond the largest FLOAT (3.40282e+38)"),
        (1e-50, "1e-50 is nearer 0 than a FLOAT holds (1.4013e-45): it would be 0"),
    ],
)
def test_a_float_attribute_that_float32_cant_hold_is_refused(client, stored, value, message):
    """An attribute's floats are float32: 1e39 was stored as inf and 1e-50 as 0 while the change
    said "set to 1e+39"."""
    for op in (
        {"op": "set_attribute", "node": "act", "name": "alpha", "value": value},
        {"op": "set_attribute", "node": "act", "name": "beta", "value": value, "type": "FLOAT"},
        {"op": "set_attribute", "node": "act", "name": "gammas", "value": [1.0, value], "type": "FLOATS"},
    ):
        r = _edit(client, stored, 0, op)
        assert r.status_code in (400, 422) and message in r.get_json()["error"]["message"], r.get_json()
    assert client.get(f"/api/models/{stored}").get_json()["revision"] == 0
    assert (
        _edit(client, stored, 0, {"op": "set_attribute", "node": "act", "name": "alpha", "value": 3e38}).status_code
        == 200
    )


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1E+309"])
def test_a_json_number_past_any_double_is_refused_not_read_as_infinity(client, stored, number):
    """Python's JSON reads 1e400 as inf: an attribute (or any value) then came out infinite with
    no word said. Infinity is asked for by name."""
    body = '{"base": 0, "ops": [{"op": "set_attribute", "node": "act", "name": "alpha", "value": NUMBER}]}'
    body = body.replace("NUMBER", number)
    r = client.post(f"/api/models/{stored}/edits", data=body, content_type="application/json")
    assert r.status_code == 400
    assert r.get_json()["error"] == {
        "code": "number_out_of_range",
        "message": f'{number} is beyond the largest number a double holds (1.8e308); send "Infinity" for an infinite value',
        "request_id": r.get_json()["error"]["request_id"],
    }
    assert client.get(f"/api/models/{stored}").get_json()["revision"] == 0
    r = _edit(client, stored, 0, {"op": "set_attribute", "node": "act", "name": "alpha", "value": "-Infinity"})
    assert r.status_code == 200, r.get_json()


def test_defaults_reach_the_op(client, stored):
    # cleanup's three switches default to true: the unread initializer U goes
    r = _edit(client, stored, 0, {"op": "cleanup"})
    assert r.status_code == 200
    model = onnx.load_from_string(client.get(f"/api/models/{stored}/download").data)
    assert "U" not in {t.name for t in model.graph.initializer}
    history = client.get(f"/api/models/{stored}/revisions").get_json()["revisions"]
    assert history[-1]["ops"] == [{"op": "cleanup"}]  # the history keeps the op as sent


@pytest.mark.parametrize(
    "body",
    [
        b'{"base": 0, "ops": [{"op": "rename_node", "node": "mm", "name": "\xff\xfe"}]}',  # not UTF-8
        b'{"base": 0, "ops": ' + b"[" * 5000 + b"]" * 5000 + b"}",  # deeper than the parser's stack
        b'{"base": 0, "ops": [{"op": "set_initializer", "name": "W", "value": {"dtype": "FLOAT", "values": '
        + b"[" * 900
        + b"1"
        + b"]" * 900
        + b"}}]}",
        b'{"base": 0, "ops": [{"op": "set_attribute", "node": "act", "name": "alpha", "value": NaN}]}',
        b'{"base": 0, "ops": [{"op": "\\ud800"}]}',
        b'{"base": 0, "ops": [{"op": "rename_node", "node": "mm", "name": "m", "\\udfff": 1}]}',
        b'{"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v", "target": "\\ud800"}]}',
        b'{"base": true, "ops": [{"op": "infer_shapes"}]}',
        b'{"base": 100000000000000000000000, "ops": [{"op": "infer_shapes"}]}',
        b'{"base": 0, "ops": [{"op": null}]}',
        b'{"base": 0, "ops": [17]}',
        b'{"base": 0, "ops": "infer_shapes"}',
        b"[]",
        b"",
    ],
)
def test_malformed_requests_are_4xx(client, stored, body):
    r = client.post(f"/api/models/{stored}/edits", data=body, content_type="application/json")
    assert 400 <= r.status_code < 500 or (r.status_code == 200 and b"NaN" in body), r.data[:300]
    if r.status_code != 200:
        error = r.get_json()["error"]
        assert error["code"] and error["message"]
        assert client.get(f"/api/models/{stored}").get_json()["revision"] == 0


def test_json_types_words_and_limits():
    dims = OneOf((Integer(minimum=0), String(), Null()))
    assert dims.check(True, "d") == 'field "d" must be a non-negative integer, a string or null, got boolean'
    assert Integer().check(2.0, "v") == 'field "v" must be an integer, got number'
    assert Integer().check(2**63, "v") == 'field "v" must fit in a 64-bit integer, got 9223372036854775808'
    assert Integer().check(2**63 - 1, "v") is None and Integer().check(-(2**63), "v") is None
    assert Array(String(), max_items=2).check(["a", "b", "c"], "a") == 'field "a" must have at most 2 items, got 3'
    assert Array(String()).check(["a", 1], "a") == 'field "a[1]" must be a string, got integer'
    assert String(min_length=1).check("", "s") == 'field "s" must be a non-empty string, got ""'
