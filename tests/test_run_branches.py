"""A run of an Optimum merged decoder (QA31 #8): the main graph is one If on `use_cache_branch`
whose branches read the token ids and the embedding table from the graph around them. Random
token ids are drawn below the table's rows (the Gather that looks them up is inside the
branches), and the answer says which branch ran."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from merged_decoder import VOCAB, decoder_feeds, merged_decoder
from onnx import TensorProto, helper
from test_input_roles import run, values
from testkit import npy_blob, upload

from app.onnx_io.vocabularies import input_vocabularies

DIMS = {
    "batch_size": 1,
    "decoder_sequence_length": 8,
    "past_decoder_sequence_length": 4,
    "encoder_sequence_length": 6,
    "encoder_sequence_length_out": 6,
}


def test_random_token_ids_index_the_table_the_branches_read(client):
    mid = upload(client, merged_decoder().SerializeToString()).get_json()["id"]
    for seed in range(3):
        answer = run(client, mid, {"inputs": {"input_ids": {"random": {"seed": seed}}}, "dims": DIMS})
        ids = values(answer["inputs"]["input_ids"])
        assert ids.shape == (1, 8) and ids.min() >= 0 and ids.max() < VOCAB, ids
        assert ids.any() and len(set(ids.flat)) > 1, ids  # not every position the same token 0


def test_the_answer_says_which_branch_ran(client):
    mid = upload(client, merged_decoder().SerializeToString()).get_json()["id"]
    for use_cache, ran in ((True, "then_branch"), (False, "else_branch")):
        feeds = decoder_feeds(use_cache)
        inputs = {name: {"npy": npy_blob(client, value)} for name, value in feeds.items()}
        answer = run(client, mid, {"inputs": inputs, "dims": {}})
        assert answer["branches"] == [
            {"node": "n0", "name": "optimum::if", "ran": ran, "input": "use_cache_branch", "value": use_cache}
        ]
        # the with-cache step's present key holds the past and the new tokens
        present = values(answer["outputs"]["present.0.decoder.key"]).shape
        assert present[2] == (4 + 3 if use_cache else 3)
    # a flag typed in says so too
    typed = {n: {"npy": npy_blob(client, v)} for n, v in decoder_feeds(False).items()}
    typed["use_cache_branch"] = {"values": [False]}
    assert run(client, mid, {"inputs": typed})["branches"][0]["ran"] == "else_branch"


def _flagged_if(condition_nodes: list[onnx.NodeProto], cond: str, initializers=()) -> onnx.ModelProto:
    """An If on `cond` (made by `condition_nodes` from the bool input `flag`), then: x + 1, else: x."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    then = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["t"], name="add")],
        "then",
        [],
        [helper.make_tensor_value_info("t", 1, [2])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"], name="keep")],
        "else",
        [],
        [helper.make_tensor_value_info("e", 1, [2])],
    )
    node = helper.make_node("If", [cond], ["y"], name="pick", then_branch=then, else_branch=other)
    one = onnx.numpy_helper.from_array(np.ones(2, np.float32), "one")
    flag = helper.make_tensor_value_info("flag", TensorProto.BOOL, [1])
    graph = helper.make_graph([*condition_nodes, node], "g", [x, flag], [y], [one, *initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_condition_through_not_or_a_constant_is_said_and_others_are_not(client):
    negated = _flagged_if(
        [helper.make_node("Identity", ["flag"], ["f1"]), helper.make_node("Not", ["f1"], ["c"], name="flip")], "c"
    )
    mid = upload(client, negated.SerializeToString()).get_json()["id"]
    answer = run(client, mid, {"inputs": {"flag": {"values": [True]}}})
    assert answer["branches"] == [
        {"node": "n2", "name": "pick", "ran": "else_branch", "input": "flag", "value": True, "negated": True}
    ]
    constant = helper.make_tensor("c", TensorProto.BOOL, [1], [True])
    fixed = _flagged_if([helper.make_node("Constant", [], ["c"], value=constant)], "c")
    answer = run(client, upload(client, fixed.SerializeToString()).get_json()["id"], {"inputs": {}})
    assert answer["branches"] == [{"node": "n1", "name": "pick", "ran": "then_branch", "value": True}]
    # a condition computed from values (x > 0): not said
    computed = _flagged_if(
        [
            helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
        ],
        "c",
        [onnx.numpy_helper.from_array(np.zeros((), np.float32), "zero")],
    )
    answer = run(client, upload(client, computed.SerializeToString()).get_json()["id"], {"inputs": {}})
    assert "branches" not in answer


def test_a_name_a_body_defines_itself_is_not_the_outer_input():
    """A Loop body whose own input is named `ids` reads that, not the graph's `ids`: the Gather
    inside says nothing of the outer input's values — but of `first`, the value the Loop hands
    that body input to carry (a decoding loop's token ids: QA32 N4, all zeros)."""
    table = onnx.numpy_helper.from_array(np.zeros((7, 2), np.float32), "table")
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "ids"], ["rows"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("ids", TensorProto.INT64, [3]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("rows", 1, None),
        ],
    )
    loop = helper.make_node("Loop", ["", "", "first"], ["last"], body=body)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["ids"], ["unused"]), loop],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.INT64, [3]) for n in ("ids", "first")],
        [helper.make_tensor_value_info("last", TensorProto.INT64, [3])],
        [table],
    )
    assert input_vocabularies(graph, ["ids", "first"]) == {"first": {"values": [], "below": 7, "text": False}}
    # without the body's own `ids`, its Gather reads the graph's: the table's 7 rows
    del graph.node[1].attribute[0].g.input[2]
    assert input_vocabularies(graph, ["ids"]) == {"ids": {"values": [], "below": 7, "text": False}}


def _nested_ifs() -> onnx.ModelProto:
    """outer: If(flag) whose then_branch holds inner: If(Equal(step, 0)) — the inner one's
    condition an integer input of the main graph compared with a constant, read from inside."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])

    def out(name: str) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, [2])

    first = helper.make_graph([helper.make_node("Neg", ["x"], ["f"])], "first", [], [out("f")])
    later = helper.make_graph([helper.make_node("Abs", ["x"], ["l"])], "later", [], [out("l")])
    inner = helper.make_node("If", ["is_first"], ["i"], name="inner", then_branch=first, else_branch=later)
    then = helper.make_graph(
        [helper.make_node("Equal", ["step", "zero"], ["is_first"], name="eq"), inner], "then", [], [out("i")]
    )
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [], [out("e")])
    outer = helper.make_node("If", ["flag"], ["y"], name="outer", then_branch=then, else_branch=other)
    graph = helper.make_graph(
        [outer],
        "g",
        [
            x,
            helper.make_tensor_value_info("flag", TensorProto.BOOL, [1]),
            helper.make_tensor_value_info("step", TensorProto.INT64, [1]),
        ],
        [out("y")],
        [onnx.numpy_helper.from_array(np.zeros(1, np.int64), "zero")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("step, inner", [(0, "then_branch"), (3, "else_branch")])
def test_an_if_inside_a_branch_that_ran_is_said_with_how_its_condition_came(client, step, inner):
    mid = upload(client, _nested_ifs().SerializeToString()).get_json()["id"]
    fed = {"x": {"values": [1.0, -2.0]}, "flag": {"values": [True]}, "step": {"values": [step]}}
    answer = run(client, mid, {"inputs": fed})
    assert answer["branches"] == [
        {"node": "n0", "name": "outer", "ran": "then_branch", "input": "flag", "value": True},
        {
            "node": "n0/then_branch/n1",
            "name": "inner",
            "ran": inner,
            "input": "step",
            "value": step,
            "through": ["Equal"],
        },
    ]
    # what onnxruntime computed agrees: Neg on the first step, Abs after
    assert values(answer["outputs"]["y"]).tolist() == ([-1.0, 2.0] if step == 0 else [1.0, 2.0])
    # the else branch ran: nothing inside then_branch is said
    fed["flag"] = {"values": [False]}
    assert [b["node"] for b in run(client, mid, {"inputs": fed})["branches"]] == ["n0"]


@pytest.mark.parametrize("use_cache", [True, False])
def test_measuring_each_node_reaches_into_the_branch_that_ran(client, use_cache):
    """QA45 #3: a merged decoder quantized (dynamic int8) and compared node by node with its float
    revision measured one row, the If's: all 818 nodes sit in its branches. The branch that ran
    is measured node by node, each row addressed in it (n0/then_branch/n5), the first to part
    named, and its MatMuls' errors there to pick from; the other branch is not measured."""
    mid = upload(client, merged_decoder().SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "quantize_dynamic"}]})
    assert r.status_code == 200, r.get_json()
    feeds = decoder_feeds(use_cache)
    inputs = {name: {"npy": npy_blob(client, value)} for name, value in feeds.items()}
    answer = run(client, mid, {"inputs": inputs, "compare_to": 0, "locate": True})
    ran = "then_branch" if use_cache else "else_branch"
    assert answer["branches"][0]["ran"] == ran
    compared = answer["compare"]
    rows = compared["nodes"]
    inside = [row for row in rows if f"/{ran}/" in row["node"]]
    assert len(inside) >= 10 and len(inside) == len(rows), [row["node"] for row in rows][:5]
    assert not [row for row in rows if "/then_branch/" in row["node"] and "/else_branch/" in row["node"]]
    other = "else_branch" if use_cache else "then_branch"
    assert not [row for row in rows if f"/{other}/" in row["node"]]
    assert compared["diverges"] is not None and f"/{ran}/" in compared["diverges"]["node"]
    # the node a row names is the one at that address
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision=1").data)
    for row in rows[:20]:
        top, branch, k = row["node"].split("/")
        node = model.graph.node[int(top[1:])]
        body = next(a.g for a in node.attribute if a.name == branch)
        assert body.node[int(k[1:])].name == row["name"], row
    # the quantized MatMuls are there to leave out (what "quantize again without them" reads)
    matmuls = [row for row in inside if row["op_type"] == "MatMul" or row.get("other_op") == "MatMul"]
    assert matmuls and all(row["rel_error"] is not None for row in matmuls)
    # the plain comparison of the outputs is the same as without locate
    plain = run(client, mid, {"inputs": inputs, "compare_to": 0})["compare"]["outputs"]
    assert compared["outputs"] == plain
