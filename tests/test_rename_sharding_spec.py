"""rename_tensor renames a tensor in the nodes' sharding specs too (QA finding m3): a
NodeProto.device_configurations[*].sharding_spec[*].tensor_name naming the old tensor names the
new one after, in the graph of the tensor and in the bodies that read it from there, as the
quantization annotations already were; nothing else changes."""

from __future__ import annotations

import numpy as np
import onnx
from google.protobuf.json_format import MessageToDict
from onnx import TensorProto, helper, numpy_helper
from testkit import upload


def shard(node: onnx.NodeProto, *tensors: str) -> None:
    """Split each of `tensors` over 2 devices along axis 0 (configuration "pair")."""
    config = node.device_configurations.add(configuration_id="pair", pipeline_stage=0)
    for name in tensors:
        spec = config.sharding_spec.add(tensor_name=name, device=[0, 1])
        spec.sharded_dim.add(axis=0).simple_sharding.add(dim_value=4, num_shards=2)


def sharded_model(h: str) -> onnx.ModelProto:
    """x @ w -> `h`, Relu(`h`) -> y, and an If whose then branch reads `h` from the main graph:
    each node's sharding names the tensors it reads and writes (and "h_not", a name like "h" but another)."""
    f = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa: E731
    then_g = helper.make_graph([helper.make_node("Neg", [h], ["t"], name="neg")], "then", [], [f("t", [4, 4])])
    shard(then_g.node[0], h, "t")
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"], name="same")], "else", [], [f("e", [4, 4])])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], [h], name="mm"),
        helper.make_node("Relu", [h], ["y"], name="relu"),
        helper.make_node("If", ["c"], ["branch"], name="if", then_branch=then_g, else_branch=else_g),
    ]
    shard(nodes[0], "x", "w", h)
    shard(nodes[1], h, "y", "h_not")
    shard(nodes[2], "c")
    g = helper.make_graph(
        nodes,
        "g",
        [f("x", [4, 4]), helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [f("y", [4, 4]), f("branch", [4, 4])],
        [numpy_helper.from_array(np.eye(4, dtype=np.float32), "w")],
        value_info=[f(h, [4, 4])],
    )
    g.quantization_annotation.add(tensor_name=h).quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="w")
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 11
    m.configuration.add(name="pair", num_devices=2, device=["gpu:0", "gpu:1"])
    return m


def specs(m: onnx.ModelProto) -> list[str]:
    then_g = next(a.g for a in m.graph.node[2].attribute if a.name == "then_branch")
    nodes = [*m.graph.node, *then_g.node]
    return [s.tensor_name for n in nodes for c in n.device_configurations for s in c.sharding_spec]


def test_rename_tensor_renames_it_in_the_sharding_specs_and_nothing_else_changes(client):
    original = sharded_model("h")
    onnx.checker.check_model(original, full_check=True)
    r = upload(client, original.SerializeToString())
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    held = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=0").data)
    assert MessageToDict(held) == MessageToDict(original)  # the store keeps what the test builds

    op = {"op": "rename_tensor", "from": "h", "to": "hidden"}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()

    got = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)
    assert specs(got) == ["x", "w", "hidden", "hidden", "y", "h_not", "c", "hidden", "t"]
    # field by field, the model built with the new name from the start: nothing else moved
    assert MessageToDict(got) == MessageToDict(sharded_model("hidden"))


def test_a_body_defining_its_own_value_of_that_name_keeps_its_sharding(client):
    """A body with a value of its own named like the renamed one shadows it: that body's nodes'
    sharding specs name the body's value, and stay."""
    m = sharded_model("h")
    then_g = next(a.g for a in m.graph.node[2].attribute if a.name == "then_branch")
    then_g.node.insert(0, helper.make_node("Abs", ["x"], ["h"], name="own_h"))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    op = {"op": "rename_tensor", "from": "h", "to": "hidden"}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    got = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)
    assert specs(got) == ["x", "w", "hidden", "hidden", "y", "h_not", "c", "h", "t"]
