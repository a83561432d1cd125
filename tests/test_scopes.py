"""Name scopes for grouping: from torch's node metadata or from path-like node names."""
from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from app.views.scopes import node_scope
from testkit import upload


def _node(name="", **meta):
    n = helper.make_node("Relu", ["a"], ["b"], name=name)
    for k, v in meta.items():
        n.metadata_props.add(key=k.replace("__", "."), value=v)
    return n


def test_scope_from_torchscript_names():
    assert node_scope(_node("/model/layers.3/self_attn/q_proj/MatMul")) == [
        "/model", "/model/layers.3", "/model/layers.3/self_attn", "/model/layers.3/self_attn/q_proj"]
    assert node_scope(_node("/MatMul")) == [] and node_scope(_node("conv1")) == []


def test_scope_from_dynamo_metadata():
    n = _node("node_linear", pkg__torch__onnx__name_scopes="['', 'layers.0', 'layers.0.lin', 'linear']",
              namespace=": M/layers.0: B/layers.0.lin: Linear/linear: aten.linear.default")
    assert node_scope(n) == ["layers.0", "layers.0.lin"]
    only_ns = _node("node_x", namespace=": M/layers.0: B/layers.0.lin: Linear/linear: aten.linear.default")
    assert node_scope(only_ns) == ["layers.0", "layers.0.lin"]
    garbage = _node("/a/b/Relu", pkg__torch__onnx__name_scopes="__import__('os')")
    assert node_scope(garbage) == ["/a", "/a/b"]  # never evaluated; falls back to the name


def test_graph_json_carries_scope_and_cuts_long_metadata(client):
    n = _node("/enc/layer.0/Relu", pkg__torch__onnx__stack_trace="x" * 5000, note="y" * 5000)
    g = helper.make_graph([n], "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    node = client.get(f"/api/models/{mid}/graph").get_json()["nodes"][0]
    assert node["scope"] == ["/enc", "/enc/layer.0"]
    assert [p["key"] for p in node["metadata_props"]] == ["note"] and node["metadata_count"] == 2
    assert len(node["metadata_props"][0]["value"]) < 200
    full = client.get(f"/api/models/{mid}/node?id=n0").get_json()
    assert full["metadata_props"][0]["value"] == "x" * 5000 and full["metadata_props"][1]["value"] == "y" * 5000
    assert client.get(f"/api/models/{mid}/node").status_code == 400
