"""GET /api/models/<id>/readers: who reads a value, inside the bodies of its graph's nodes too
(QA31: a merged decoder's weights are read only inside its If's branches, and the weight's
panel could only say "If optimum::if (in its branches)")."""

from __future__ import annotations

from merged_decoder import merged_decoder
from onnx import TensorProto
from onnx import helper as h
from testkit import upload


def readers(client, mid, name, path=""):
    r = client.get(f"/api/models/{mid}/readers", query_string={"name": name, "path": path})
    assert r.status_code == 200, r.get_json()
    return [(x["graph"], x["name"], x["op_type"]) for x in r.get_json()["readers"]]


def test_a_weight_read_only_in_branches_names_each_reader_and_its_branch(client):
    mid = upload(client, merged_decoder().SerializeToString()).get_json()["id"]
    assert readers(client, mid, "model.decoder.layers.0.self_attn.k_proj.weight") == [
        ("n0/else_branch", "/model/decoder/layers.0/self_attn/k_proj/MatMul", "MatMul"),
        ("n0/then_branch", "/model/decoder/layers.0/self_attn/k_proj/MatMul", "MatMul"),
    ]
    # the with-cache branch takes the encoder's keys from the cache: only the other projects them
    assert [g for g, _, _ in readers(client, mid, "model.decoder.layers.0.encoder_attn.k_proj.weight")] == [
        "n0/else_branch"
    ]
    # the tied embedding: a Gather and the output projection's Transpose in each branch
    tied = readers(client, mid, "model.decoder.embed_tokens.weight")
    assert sorted(op for _, _, op in tied) == ["Gather", "Gather", "Transpose", "Transpose"]
    # asked in a branch: that branch's readers only
    assert {g for g, _, _ in readers(client, mid, "input_ids", "n0/then_branch")} == {"n0/then_branch"}


def test_a_body_defining_the_name_itself_hides_the_outer_value(client):
    inner = h.make_graph(
        [h.make_node("Constant", [], ["x"], value_floats=[1.0]), h.make_node("Neg", ["x"], ["y"], name="neg")],
        "then",
        [],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    other = h.make_graph(
        [h.make_node("Relu", ["x"], ["z"], name="relu")],
        "else",
        [],
        [h.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    graph = h.make_graph(
        [h.make_node("If", ["c"], ["out"], name="if", then_branch=inner, else_branch=other)],
        "g",
        [h.make_tensor_value_info("c", TensorProto.BOOL, []), h.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [h.make_tensor_value_info("out", TensorProto.FLOAT, None)],
    )
    mid = upload(client, h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]).SerializeToString()).get_json()[
        "id"
    ]
    assert readers(client, mid, "x") == [("n0/else_branch", "relu", "Relu")]
    assert client.get(f"/api/models/{mid}/readers").status_code == 400
    assert client.get(f"/api/models/{mid}/readers?name=x&path=n7/body").status_code == 404
