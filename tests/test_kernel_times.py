"""onnxruntime's optimised run on the model's own nodes (app/api/kernel_times.py): each kernel of
the graph onnxruntime runs put on the node it runs, the nodes fused into it named, onnxruntime's
own kernels apart — on hand-made kernel lists for each rule, and on real profiles of a conv net
and a transformer MLP through POST .../run."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload

from app.api.kernel_times import kernel_times


def conv_relu_add() -> onnx.ModelProto:
    """x -> Conv "conv" -> c -> Relu "relu" -> r -> Add "add" (+ x) -> y."""
    w = nh.from_array(np.ones((3, 3, 1, 1), np.float32), "w")
    g = h.make_graph(
        [
            h.make_node("Conv", ["x", "w"], ["c"], name="conv"),
            h.make_node("Relu", ["c"], ["r"], name="relu"),
            h.make_node("Add", ["r", "x"], ["y"], name="add"),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 3, 4, 4])],
        [w],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def kernel(name, op, us, inputs=(), outputs=()):
    return {"name": name, "op_type": op, "time_us": us}, {
        "name": name,
        "op_type": op,
        "inputs": list(inputs),
        "outputs": list(outputs),
    }


def times(*kernels):
    ks, graph = zip(*kernels, strict=True)
    answer = kernel_times(conv_relu_add(), list(ks), list(graph))
    return {n["node"]: n for n in answer["nodes"]}, answer["other"]


def test_a_fusion_keeping_its_first_nodes_name_takes_the_rest():
    nodes, other = times(kernel("conv", "FusedConv", 10, ["x", "w"], ["r"]), kernel("add", "Add", 2, ["r", "x"], ["y"]))
    assert nodes["n0"]["time_us"] == 10 and nodes["n0"]["kernel_op"] == "FusedConv" and nodes["n0"]["fused"] == ["n1"]
    assert nodes["n1"] == {"node": "n1", "name": "relu", "op_type": "Relu", "time_us": 0.0, "fused_into": "n0"}
    assert nodes["n2"]["time_us"] == 2 and "fused" not in nodes["n2"] and other == []


def test_a_kernel_named_after_its_nchwc_tensor_is_its_operators_node():
    """ "r_nchwc" makes the Relu's tensor in NCHWc layout (renamed outputs): the Conv it runs,
    back through the Relu fused into it; the reorder restoring "y" reads none of the model's
    tensors: onnxruntime's own."""
    nodes, other = times(
        kernel("r_nchwc", "Conv", 8, ["x_token", "w"], ["reorder_token_0"]),
        kernel("ReorderOutput", "ReorderOutput", 1, ["reorder_token_0"], ["y"]),
    )
    assert nodes["n0"]["time_us"] == 8 and nodes["n0"]["fused"] == ["n1"] and nodes["n1"]["fused_into"] == "n0"
    assert "n2" not in nodes  # no kernel ran it here
    assert other == [{"name": "ReorderOutput", "op_type": "ReorderOutput", "time_us": 1}]


def test_a_fusion_named_under_a_node_is_that_node():
    nodes, other = times(kernel("add/AddFusion/", "FusedAdd", 3, ["a_token"], ["b_token"]))
    assert nodes["n2"]["time_us"] == 3 and other == []


def test_a_fusion_with_a_name_of_its_own_is_found_by_the_tensors_it_makes():
    """A new name (BiasGelu_token_7): the model's nodes between its inputs and its output."""
    nodes, other = times(kernel("Fused_token_7", "ReluAdd", 4, ["c", "x"], ["y"]))
    # its time on the node of the operator it ends as (a ReluAdd is an Add)
    assert nodes["n2"]["time_us"] == 4 and nodes["n2"]["fused"] == ["n1"] and nodes["n1"]["fused_into"] == "n2"
    assert "n0" not in nodes and other == []


def test_a_quantized_conv_named_after_its_node_with_a_token_is_that_node():
    """QA17 F5: an int8 model's QLinearConv kernels, named "<node>_token_<k>" by onnxruntime's
    QDQ and NHWC transformers and writing tensors of their own: 80 % of the run was filed as
    onnxruntime's own nodes."""
    nodes, other = times(kernel("conv_token_2", "QLinearConv", 9, ["x_q_token"], ["c_q_token"]))
    assert nodes["n0"]["time_us"] == 9 and nodes["n0"]["kernel_op"] == "QLinearConv" and other == []


def mlp() -> onnx.ModelProto:
    """A transformer's MLP: MatMul -> bias Add -> Gelu as torch exports it (Div, Erf, Add, Mul,
    Mul) -> MatMul; onnxruntime runs the first MatMul and the bias as one Gemm
    ("fc1/MatMulAddFusion", between two reshapes of its own) and the Gelu as one kernel."""
    rng = np.random.default_rng(0)
    inits = [
        nh.from_array(rng.standard_normal((64, 256)).astype(np.float32), "w1"),
        nh.from_array(rng.standard_normal(256).astype(np.float32), "b1"),
        nh.from_array(rng.standard_normal((256, 64)).astype(np.float32), "w2"),
        nh.from_array(np.array(1.4142135, np.float32), "sqrt2"),
        nh.from_array(np.array(1.0, np.float32), "one"),
        nh.from_array(np.array(0.5, np.float32), "half"),
    ]
    nodes = [
        h.make_node("MatMul", ["x", "w1"], ["m"], name="fc1"),
        h.make_node("Add", ["m", "b1"], ["a"], name="bias"),
        h.make_node("Div", ["a", "sqrt2"], ["d"], name="gelu/div"),
        h.make_node("Erf", ["d"], ["e"], name="gelu/erf"),
        h.make_node("Add", ["e", "one"], ["e1"], name="gelu/add"),
        h.make_node("Mul", ["a", "e1"], ["p"], name="gelu/mul"),
        h.make_node("Mul", ["p", "half"], ["g"], name="gelu/mul_1"),
        h.make_node("MatMul", ["g", "w2"], ["y"], name="fc2"),
    ]
    g = h.make_graph(
        nodes,
        "mlp",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 16, 64])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 16, 64])],
        inits,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def profiled(client, model: onnx.ModelProto) -> dict:
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {}, "profile": True})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["profile"]["optimized_run"]


def test_a_real_profile_puts_the_fused_gelu_on_the_models_nodes(client):
    run = profiled(client, mlp())
    nodes = {n["name"]: n for n in run["by_node"]}
    assert nodes["fc1"]["kernel_op"] == "Gemm" and nodes["fc1"]["fused"] == [nodes["bias"]["node"]]
    gelu = [n for n in run["by_node"] if n.get("kernel_op") == "Gelu"]
    assert len(gelu) == 1 and gelu[0]["name"] == "gelu/div", run["by_node"]
    fused = {n["name"] for n in run["by_node"] if n.get("fused_into") == gelu[0]["node"]}
    assert fused == {"gelu/erf", "gelu/add", "gelu/mul", "gelu/mul_1"}
    assert nodes["fc2"]["time_us"] > 0 and nodes["fc2"]["kernel_op"] == "MatMul"
    assert {o["op_type"] for o in run["other"]} <= {"Reshape"}  # the Gemm's reshapes: onnxruntime's own
    # every kernel counted once: on a model node or as onnxruntime's own
    accounted = sum(n["time_us"] for n in run["by_node"]) + sum(o["time_us"] for o in run["other"])
    assert abs(accounted - sum(o["time_us"] for o in run["ops"])) < 1


def test_a_real_profile_of_a_conv_net_in_nchwc(client):
    """Conv -> Relu on 16 channels: onnxruntime runs it in NCHWc layout, its kernel named
    after the Relu's tensor; the time lands on the Conv with the Relu fused into it."""
    rng = np.random.default_rng(1)
    g = h.make_graph(
        [
            h.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            h.make_node("Relu", ["c"], ["r"], name="relu"),
            h.make_node("Conv", ["r", "w2"], ["y"], name="conv2", pads=[1, 1, 1, 1]),
        ],
        "net",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 16, 32, 32])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 16, 32, 32])],
        [
            nh.from_array(rng.standard_normal((16, 16, 3, 3)).astype(np.float32), "w"),
            nh.from_array(rng.standard_normal((16, 16, 3, 3)).astype(np.float32), "w2"),
        ],
    )
    run = profiled(client, h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    nodes = {n["name"]: n for n in run["by_node"]}
    assert nodes["conv"]["time_us"] > 0 and nodes["conv"]["fused"] == [nodes["relu"]["node"]], run
    assert nodes["relu"]["fused_into"] == nodes["conv"]["node"] and nodes["conv2"]["time_us"] > 0
