"""The spec's other file kinds open from their content: the node tests' input/output data
(TensorProto, SequenceProto, OptionalProto), MapProto, OperatorSetProto and ONNX text syntax."""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from test_bad_input import small_model
from test_corpus_tensors import _json_expected
from testkit import node_testcase_names, node_testcases, upload

pytestmark = pytest.mark.corpus


def as_proto(value, name: str):
    """A node test's data value as the .pb message onnx writes for it."""
    if isinstance(value, onnx.TensorProto):
        return value, "tensor"
    if isinstance(value, (np.ndarray, np.generic)):
        return numpy_helper.from_array(np.asarray(value), name), "tensor"
    if isinstance(value, list):
        return numpy_helper.from_list(value, name), "sequence"
    if isinstance(value, dict):
        return numpy_helper.from_dict(value, name), "map"
    return numpy_helper.from_optional(value, name), "optional"


def first_tensor(summary_data: dict):
    """(ref, dtype) of the first tensor in a data view, walking sequences and optionals."""
    stack = [summary_data]
    while stack:
        d = stack.pop(0)
        if d is None:
            continue
        if d["kind"] == "tensor":
            return d["ref"]
        stack.extend(d.get("items", []) + [e["value"] for e in d.get("entries", [])] + [d.get("value")])
    return None


SHARDS = 4  # the ~5,000 files in parts xdist can hand to both workers (one test took 130 s)


def test_node_test_data_holds_every_data_kind():
    kinds = {
        as_proto(value, "v")[1]
        for name in node_testcase_names()
        for ds in (node_testcases()[name].data_sets or [])[:1]
        for values in ds
        for value in values
    }
    assert kinds >= {"tensor", "sequence", "optional"}


@pytest.mark.parametrize("shard", range(SHARDS))
def test_node_test_data_sets_open_with_right_values(client, shard):
    checked = 0
    for name in node_testcase_names()[shard::SHARDS]:
        case = node_testcases()[name]
        for ds in (case.data_sets or [])[:1]:
            for direction, values in zip(("input", "output"), ds, strict=True):
                for k, value in enumerate(values):
                    proto, kind = as_proto(value, f"{direction}_{k}")
                    r = upload(client, proto.SerializeToString(), f"{direction}_{k}.pb")
                    assert r.status_code == 201, (name, r.get_json())
                    s = r.get_json()
                    assert s["kind"] == kind, name
                    ref = first_tensor(s["data"])
                    if ref is None:
                        continue
                    t = proto if kind == "tensor" else _tensor_at(proto, ref)
                    p = client.get(f"/api/models/{s['id']}/tensors/{quote(ref, safe='')}?count=64").get_json()
                    assert p["values"] == _json_expected(numpy_helper.to_array(t)), (name, ref)
                    checked += 1
                    client.delete(f"/api/models/{s['id']}")
    assert checked > 2000 // SHARDS


def _tensor_at(proto, ref: str):
    from app.views.data_files import resolve_data_tensor

    return resolve_data_tensor(proto, ref)


def test_map_file(client):
    m = numpy_helper.from_dict({1: np.array([1.5], np.float32), 7: np.array([2.5], np.float32)}, "m")
    s = upload(client, m.SerializeToString(), "m.pb").get_json()
    assert s["kind"] == "map" and s["data"]["key_type"] == "INT64"
    assert [e["key"] for e in s["data"]["entries"]] == [1, 7]
    p = client.get(f"/api/models/{s['id']}/tensors/{quote('$/1', safe='')}").get_json()
    assert p["values"] == [2.5]
    assert client.get(f"/api/models/{s['id']}/graph").get_json()["error"]["code"] == "not_a_model"


def test_operator_set_file(client):
    ops = onnx.OperatorSetProto(magic="ONNXOPSET", ir_version=8, domain="my.ops", opset_version=3, doc_string="mine")
    ops.operator.add(op_type="Frob", since_version=2, status=onnx.OperatorStatus.EXPERIMENTAL, doc_string="frobs")
    s = upload(client, ops.SerializeToString(), "ops.pb").get_json()
    assert s["kind"] == "operator_set"
    assert s["data"]["operators"] == [
        {"op_type": "Frob", "since_version": 2, "status": "EXPERIMENTAL", "doc_string": "frobs"}
    ]
    assert client.get(f"/api/models/{s['id']}/download").data == ops.SerializeToString()


def test_text_syntax_model_opens_and_edits(client):
    text = onnx.printer.to_text(small_model())
    r = upload(client, text.encode(), "m.onnxtxt")
    assert r.status_code == 201, r.get_json()
    s = r.get_json()
    assert s["kind"] == "model" and s["source"] == "text" and s["counts"]["nodes"] == 3
    ok = client.post(
        f"/api/models/{s['id']}/edits", json={"base": 0, "ops": [{"op": "set_metadata", "key": "a", "value": "b"}]}
    )
    assert ok.status_code == 200
    model = onnx.load_from_string(client.get(f"/api/models/{s['id']}/download").data)
    onnx.checker.check_model(model)
    assert model.metadata_props[0].key == "a" and [n.op_type for n in model.graph.node] == [
        "MatMul",
        "LeakyRelu",
        "Identity",
    ]
