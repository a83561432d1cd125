"""Rewiring (set_node_input) and free-standing nodes (add_node) through the real API: the model
that comes back passes onnx.checker, keeps a topological node order (moving the fewest nodes),
and computes in onnxruntime what the new wiring says; cycles, unknown tensors, required inputs
left out and taken names are refused with the head unchanged."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload

X = np.linspace(-2, 2, 4, dtype=np.float32).reshape(1, 4)


def chain_model() -> onnx.ModelProto:
    """a = Relu(x) "r"; b = Sigmoid(a) "s"; y = Add(a, b) "add"; t = Tanh(x) "late" (last, unread);
    c = Clip(x) "clip" reading `lo` only when asked; an initializer `lo` = -0.5."""
    vi = lambda name: h.make_tensor_value_info(name, T.FLOAT, [1, 4])  # noqa: E731
    g = h.make_graph(
        [
            h.make_node("Relu", ["x"], ["a"], name="r"),
            h.make_node("Sigmoid", ["a"], ["b"], name="s"),
            h.make_node("Add", ["a", "b"], ["y"], name="add"),
            h.make_node("Clip", ["x"], ["c"], name="clip"),
            h.make_node("Tanh", ["x"], ["t"], name="late"),
        ],
        "chain",
        [vi("x")],
        [vi("y"), vi("c")],
        [nh.from_array(np.array(-0.5, np.float32), "lo")],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(m, full_check=True)
    return m


def run(data: bytes, **feeds) -> dict[str, np.ndarray]:
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds or {"x": X}), strict=True))


def edited(client, model: onnx.ModelProto, *ops) -> tuple[bytes, dict]:
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": list(ops)})
    assert r.status_code == 200, r.get_json()
    data = client.get(f"/api/models/{mid}/download").data
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data, r.get_json()


def refused(client, model: onnx.ModelProto, op: dict, status: int, code: str) -> str:
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == status, r.get_json()
    error = r.get_json()["error"]
    assert error["code"] == code, error
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0
    assert client.get(f"/api/models/{mid}/download").data == model.SerializeToString()
    return error["message"]


def test_an_input_reads_a_later_tensor_and_one_node_moves(client):
    data, answer = edited(client, chain_model(), {"op": "set_node_input", "node": "add", "index": 1, "tensor": "t"})
    m = onnx.load_from_string(data)
    assert [n.name for n in m.graph.node] == ["r", "s", "clip", "late", "add"]
    assert answer["changes"] == [
        "node \"add\" (Add) input 1 now reads 't' (was 'b'); 1 node(s) moved to keep the order"
    ]
    np.testing.assert_allclose(run(data)["y"], np.maximum(X, 0) + np.tanh(X), rtol=1e-6)


def test_an_optional_input_is_added_then_left_out(client):
    data, _ = edited(client, chain_model(), {"op": "set_node_input", "node": "clip", "index": 1, "tensor": "lo"})
    np.testing.assert_allclose(run(data)["c"], np.maximum(X, -0.5))
    model = onnx.load_from_string(data)
    data2, _ = edited(client, model, {"op": "set_node_input", "node": "clip", "index": 1, "tensor": ""})
    assert list(onnx.load_from_string(data2).graph.node[3].input) == ["x"]  # the trailing "" is dropped
    np.testing.assert_allclose(run(data2)["c"], X)


@pytest.mark.parametrize(
    ("op", "status", "code", "words"),
    [
        ({"node": "s", "index": 0, "tensor": "y"}, 400, "cycle", "makes a cycle"),
        ({"node": "s", "index": 0, "tensor": "b"}, 400, "cycle", "its own output"),
        ({"node": "s", "index": 0, "tensor": "ghost"}, 404, "unknown_tensor", "no tensor 'ghost'"),
        ({"node": "r", "index": 0, "tensor": ""}, 400, "schema_mismatch", "input 0 (X) of Relu is required"),
        ({"node": "r", "index": 1, "tensor": "x"}, 400, "schema_mismatch", "Relu has no input 1"),
        ({"node": "add", "index": 5, "tensor": "x"}, 400, "bad_value", "index 5 is past the next one"),
    ],
)
def test_wrong_rewiring_is_refused(client, op, status, code, words):
    assert words in refused(client, chain_model(), {"op": "set_node_input", **op}, status, code)


def branch_model() -> onnx.ModelProto:
    """y = If(cond) then Identity(a) else Neg(a), a = Relu(x); t = Tanh(x) computed after the If."""
    vi = lambda name: h.make_tensor_value_info(name, T.FLOAT, [1, 4])  # noqa: E731
    then_g = h.make_graph([h.make_node("Identity", ["a"], ["o1"], name="pick")], "then", [], [vi("o1")])
    else_g = h.make_graph([h.make_node("Neg", ["a"], ["o2"], name="neg")], "else", [], [vi("o2")])
    g = h.make_graph(
        [
            h.make_node("Relu", ["x"], ["a"], name="r"),
            h.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
            h.make_node("Tanh", ["x"], ["t"], name="late"),
        ],
        "branchy",
        [vi("x"), h.make_tensor_value_info("cond", T.BOOL, [])],
        [vi("y"), vi("t")],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(m, full_check=True)
    return m


def test_a_subgraph_reads_an_outer_tensor_and_the_outer_graph_is_reordered(client):
    data, _ = edited(
        client, branch_model(), {"op": "set_node_input", "node": "n1/then_branch/n0", "index": 0, "tensor": "t"}
    )
    assert [n.name for n in onnx.load_from_string(data).graph.node] == ["r", "late", "branch"]
    out = run(data, x=X, cond=np.array(True))
    np.testing.assert_allclose(out["y"], np.tanh(X), rtol=1e-6)
    np.testing.assert_allclose(run(data, x=X, cond=np.array(False))["y"], -np.maximum(X, 0))


def test_a_subgraph_reading_its_holders_output_is_a_cycle(client):
    op = {"op": "set_node_input", "node": "n1/else_branch/n0", "index": 0, "tensor": "y"}
    assert "makes a cycle" in refused(client, branch_model(), op, 400, "cycle")


def function_model() -> onnx.ModelProto:
    """y = F(x, w), F(A, B) = Mul(A, B) + A as a model-local function."""
    fn = h.make_function(
        "local",
        "F",
        ["A", "B"],
        ["D"],
        [h.make_node("Mul", ["A", "B"], ["C"]), h.make_node("Add", ["C", "A"], ["D"])],
        [h.make_opsetid("", 17)],
    )
    vi = lambda name: h.make_tensor_value_info(name, T.FLOAT, [1, 4])  # noqa: E731
    g = h.make_graph([h.make_node("F", ["x", "w"], ["y"], domain="local")], "fn", [vi("x"), vi("w")], [vi("y")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("local", 1)], functions=[fn])
    onnx.checker.check_model(m)
    return m


def test_a_function_body_is_rewired(client):
    data, _ = edited(client, function_model(), {"op": "set_node_input", "node": "fn[0]/n1", "index": 1, "tensor": "B"})
    w = np.full((1, 4), 3, np.float32)
    np.testing.assert_allclose(run(data, x=X, w=w)["y"], X * w + w)


def test_an_added_node_reads_tensors_writes_fresh_names_and_moves_nothing(client):
    data, answer = edited(
        client,
        chain_model(),
        {"op": "add_node", "op_type": "Mul", "name": "scale", "inputs": ["b", "t"]},
        {"op": "add_node", "op_type": "Split", "inputs": ["a"], "attributes": {"axis": 1}, "outputs": ["p", "q"]},
        {"op": "add_output", "tensor": "scale_out"},
        {"op": "add_output", "tensor": "q"},
    )
    m = onnx.load_from_string(data)
    assert [n.name or n.op_type for n in m.graph.node] == ["r", "s", "add", "clip", "late", "scale", "Split"]
    assert answer["changes"][0] == "added node \"scale\" (Mul) in the main graph, reading 'b', 't', writing 'scale_out'"
    out = run(data)
    relu = np.maximum(X, 0)
    np.testing.assert_allclose(out["scale_out"], 1 / (1 + np.exp(-relu)) * np.tanh(X), rtol=1e-6)
    np.testing.assert_allclose(out["q"], relu[:, 2:])


@pytest.mark.parametrize(
    ("op", "status", "code"),
    [
        ({"op_type": "Relu", "name": "s", "inputs": ["x"]}, 400, "duplicate_name"),
        ({"op_type": "Relu", "inputs": ["x"], "outputs": ["y"]}, 400, "name_taken"),
        ({"op_type": "Split", "inputs": ["x"], "outputs": ["z", "z"]}, 400, "name_taken"),
        ({"op_type": "Add", "inputs": ["x", "x"], "outputs": ["z", "w"]}, 400, "schema_mismatch"),
        ({"op_type": "Relu", "inputs": ["ghost"]}, 404, "unknown_tensor"),
        ({"op_type": "Relu", "inputs": ["x"], "graph": "n9/body"}, 404, "unknown_graph"),
    ],
)
def test_wrong_added_nodes_are_refused(client, op, status, code):
    refused(client, chain_model(), {"op": "add_node", **op}, status, code)


def test_a_node_added_in_a_branch_reads_the_outer_scope(client):
    data, _ = edited(
        client,
        branch_model(),
        {"op": "add_node", "op_type": "Add", "inputs": ["o1", "t"], "outputs": ["o3"], "graph": "n1/then_branch"},
    )
    g = onnx.load_from_string(data).graph
    assert [n.name for n in g.node] == ["r", "late", "branch"]  # t is computed before the If reads it
    then_g = next(a.g for a in g.node[2].attribute if a.name == "then_branch")
    assert [n.op_type for n in then_g.node] == ["Identity", "Add"]
    # o3 is computed but not yet a branch output: the branch's result is unchanged
    np.testing.assert_allclose(run(data, x=X, cond=np.array(True))["y"], np.maximum(X, 0))
