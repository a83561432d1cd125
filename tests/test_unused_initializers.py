"""Initializers nothing reads: deleting a node takes the ones only it read (not shared ones, not
a graph input's default, not what a training graph reads); delete_initializer and cleanup see
sparse initializers and training graphs."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from testkit import ONNX_DATA, upload

F = onnx.TensorProto.FLOAT


def edit(client, mid, base, *ops, allow_invalid=False):
    body = {"base": base, "ops": list(ops), "allow_invalid": allow_invalid}
    return client.post(f"/api/models/{mid}/edits", json=body)


def head(client, mid) -> onnx.ModelProto:
    return onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)


def test_deleting_a_conv_of_a_real_model_takes_its_weights_unless_kept(client):
    model = onnx.load(ONNX_DATA / "pytorch-converted" / "test_Conv2d" / "model.onnx")
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    weights = [x for x in conv.input[1:] if x]
    assert weights and all(any(t.name == w for t in model.graph.initializer) for w in weights)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    # the graph's only Conv: its output left unwritten (stored past the checker: not what is tested)
    r = edit(client, mid, 0, {"op": "delete_node", "node": "n0", "keep_initializers": True}, allow_invalid=True)
    assert r.status_code == 200, r.get_json()
    assert {t.name for t in head(client, mid).graph.initializer} == {t.name for t in model.graph.initializer}
    client.post(f"/api/models/{mid}/undo", json={"base": 1})
    r = edit(client, mid, 0, {"op": "delete_node", "node": "n0"}, allow_invalid=True)
    assert r.status_code == 200, r.get_json()
    after = head(client, mid)
    gone = set(weights)
    assert {t.name for t in after.graph.initializer} == {t.name for t in model.graph.initializer} - gone
    assert model.ir_version < 4 and not gone & {v.name for v in after.graph.input}  # their IR-3 input twins too


def shared_model(ir_version: int = 8) -> onnx.ModelProto:
    """a·W1 and a·W2 + S (S shared), D an input's default, T read only by the training graph."""
    w = {
        n: numpy_helper.from_array(np.full((2, 2), k, np.float32), n) for k, n in enumerate(["W1", "W2", "S", "D", "T"])
    }
    sparse = onnx.SparseTensorProto()
    sparse.values.CopyFrom(numpy_helper.from_array(np.array([1.0], np.float32), "SP"))
    sparse.indices.CopyFrom(numpy_helper.from_array(np.array([0], np.int64), "SP_i"))
    sparse.dims.extend([2, 2])
    nodes = [
        helper.make_node("MatMul", ["a", "W1"], ["m1"], name="mm1"),
        helper.make_node("Add", ["m1", "S"], ["s1"], name="add1"),
        helper.make_node("MatMul", ["a", "W2"], ["m2"], name="mm2"),
        helper.make_node("Add", ["m2", "S"], ["s2"], name="add2"),
        helper.make_node("Add", ["s2", "D"], ["s3"], name="add3"),
        helper.make_node("Add", ["s3", "SP"], ["y"], name="add4"),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("a", F, [2, 2]), helper.make_tensor_value_info("D", F, [2, 2])],
        [helper.make_tensor_value_info("y", F, [2, 2])],
        list(w.values()),
        sparse_initializer=[sparse],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = ir_version
    algo = helper.make_graph(
        [helper.make_node("Mul", ["T", "T"], ["t2"])], "algo", [], [helper.make_tensor_value_info("t2", F, [2, 2])]
    )
    m.training_info.add().algorithm.CopyFrom(algo)
    return m


def test_only_what_nothing_else_reads_goes_with_a_node(client):
    m = shared_model()
    onnx.checker.check_model(m)
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    r = edit(client, mid, 0, {"op": "delete_node", "node": "add1"}, {"op": "delete_node", "node": "mm1"})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][1].endswith("; and its initializer 'W1' (nothing else read it)")
    after = head(client, mid)
    names = {t.name for t in after.graph.initializer}
    assert "W1" not in names and {"W2", "S", "D", "T"} <= names  # S still read by add2; D an input; T training's
    r = edit(client, mid, 1, {"op": "delete_node", "node": "add4", "reconnect": True})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith("; and its initializer 'SP' (nothing else read it)")
    after = head(client, mid)
    assert not after.graph.sparse_initializer
    onnx.checker.check_model(after)


def test_delete_initializer_and_cleanup_see_sparse_ones_and_training_graphs(client):
    mid = upload(client, shared_model().SerializeToString()).get_json()["id"]
    r = edit(client, mid, 0, {"op": "delete_initializer", "name": "T"})
    assert r.get_json()["error"]["code"] == "in_use"  # the training graph reads it
    r = edit(client, mid, 0, {"op": "delete_node", "node": "add4", "reconnect": True, "keep_initializers": True})
    assert r.status_code == 200, r.get_json()
    assert head(client, mid).graph.sparse_initializer
    r = edit(client, mid, 1, {"op": "delete_initializer", "name": "SP"})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == ["deleted sparse initializer 'SP'"]
    client.post(f"/api/models/{mid}/undo", json={"base": 2})
    r = edit(client, mid, 1, {"op": "cleanup"})
    assert r.status_code == 200, r.get_json()
    after = head(client, mid)
    assert not after.graph.sparse_initializer  # unread now: cleaned up
    assert "T" in {t.name for t in after.graph.initializer}  # the training graph still reads it
    assert r.get_json()["changes"][0].startswith("removed 2 dead nodes, 2 unused initializers")  # mm1, add1; W1, SP
