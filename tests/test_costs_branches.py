"""Costs of an If's branches that repeat each other's value names (QA31 #2, #10), as an Optimum
merged decoder's do: each branch's nodes are counted with that branch's own shapes (then_branch's
self-attention over past + new keys, not else_branch's same-named values over the new keys
alone), the costlier branch is the one counted, and the If's outputs take the counted branch's
shapes, so no size onnxruntime's inference made up for them (If_0_o1__d2) is asked for."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from merged_decoder import HEAD_DIM, HEADS, decoder_feeds, merged_decoder
from onnx import TensorProto, helper, numpy_helper
from test_costs import evaluate, stats
from testkit import upload

F = TensorProto.FLOAT
BRANCHES = ("then_branch", "else_branch")


def _branch_model(m: onnx.ModelProto, branch: str) -> onnx.ModelProto:
    """One branch as a model of its own, every value it makes an output (typed by onnx's inference)."""
    g = next(a.g for a in m.graph.node[0].attribute if a.name == branch)

    def flat(outputs: list) -> onnx.ModelProto:
        graph = helper.make_graph(list(g.node), branch, list(m.graph.input), outputs, list(m.graph.initializer))
        return helper.make_model(graph, opset_imports=m.opset_import, ir_version=m.ir_version)

    typed = onnx.shape_inference.infer_shapes(flat(list(g.output)))
    types = {v.name: v.type.tensor_type.elem_type for v in [*typed.graph.value_info, *typed.graph.output]}
    return flat([helper.make_tensor_value_info(o, types[o], None) for n in g.node for o in n.output])


def true_matmul_flops(seq: int, past: int, encoder: int) -> dict[str, dict[str, int]]:
    """branch -> MatMul name -> 2·(output elements)·K, from the shapes onnxruntime computes."""
    m = merged_decoder()
    out: dict[str, dict[str, int]] = {}
    for branch in BRANCHES:
        flat = _branch_model(m, branch)
        session = ort.InferenceSession(flat.SerializeToString(), providers=["CPUExecutionProvider"])
        fed = decoder_feeds(branch == "then_branch", seq, past, encoder)
        feeds = {i.name: fed[i.name] for i in session.get_inputs()}
        values = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))
        values.update(feeds)
        values.update({t.name: numpy_helper.to_array(t) for t in m.graph.initializer})
        out[branch] = {
            n.name: 2 * int(np.prod(values[n.output[0]].shape)) * values[n.input[0]].shape[-1]
            for n in flat.graph.node
            if n.op_type == "MatMul"
        }
    return out


def sized(seq: int, past: int, encoder: int) -> str:
    return (
        f"?dims=batch_size=1,decoder_sequence_length={seq},past_decoder_sequence_length={past},"
        f"encoder_sequence_length={encoder},encoder_sequence_length_out={encoder}"
    )


def matmul_rows(answer: dict) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {b: {} for b in BRANCHES}
    for row in answer["nodes"]:
        if row["op_type"] == "MatMul":
            out[row["node"].split("/")[1]][row["name"]] = row["flops"]
    return out


@pytest.mark.parametrize("seq, past, encoder", [(1, 4, 6), (5, 1, 6), (1, 400, 1)])
def test_each_branch_counts_its_own_shapes(client, seq, past, encoder):
    answer = stats(client, merged_decoder().SerializeToString(), sized(seq, past, encoder))
    assert matmul_rows(answer) == true_matmul_flops(seq, past, encoder)
    # the scores over the cache: 2 · heads · seq · 16 · (past + seq)
    then_scores = next(
        r for r in answer["nodes"] if r["node"].startswith("n0/then_branch/") and r["name"].endswith("self_attn/MatMul")
    )
    assert then_scores["flops"] == 2 * HEADS * seq * HEAD_DIM * (past + seq)


@pytest.mark.parametrize("seq, past, encoder", [(1, 400, 1), (5, 1, 50)])
def test_the_costlier_branch_is_counted(client, seq, past, encoder):
    truth = {b: sum(f.values()) for b, f in true_matmul_flops(seq, past, encoder).items()}
    costlier = max(truth, key=lambda b: truth[b])
    answer = stats(client, merged_decoder().SerializeToString(), sized(seq, past, encoder))
    (branch,) = answer["branches"]
    assert branch["counted"] == f"n0/{costlier}"
    counted = [r for r in answer["nodes"] if r["node"].startswith(f"n0/{costlier}/")]
    assert sum(r["flops"] for r in counted if r["op_type"] == "MatMul") == truth[costlier]
    # each branch's FLOPs as its rows count them, the one left out too (QA32: the step with the
    # cache, the one budgeted for, appeared nowhere when the first step cost more)
    for b in BRANCHES:
        rows = [r for r in answer["nodes"] if r["node"].startswith(f"n0/{b}/")]
        assert branch["flops"][b] == sum(r["flops"] for r in rows), b
    assert branch["flops"][costlier] > branch["flops"][next(b for b in BRANCHES if b != costlier)]


def test_both_cases_of_the_costlier_branch_are_tried():
    """The test above covers a step with a long cache (then_branch costs more) and a first step
    over a long encoder output (else_branch projects it: it costs more)."""
    picks = set()
    for case in [(1, 400, 1), (5, 1, 50)]:
        truth = {b: sum(f.values()) for b, f in true_matmul_flops(*case).items()}
        picks.add(max(truth, key=lambda b: truth[b]))
    assert picks == set(BRANCHES)


@pytest.mark.parametrize("seq, past, encoder", [(1, 4, 6), (1, 400, 1)])
def test_no_made_up_size_is_asked_once_the_inputs_are_sized(client, seq, past, encoder):
    answer = stats(client, merged_decoder().SerializeToString(), sized(seq, past, encoder))
    assert answer["unknown"]["dims"] == []
    assert not [d for d in answer["unknown"]["dims_at"] if d.startswith("If_")]
    assert answer["unknown"]["output_nodes"] == 0
    # the If's outputs are the counted branch's: logits, present self-attention K/V (past + seq
    # with the cache, seq without) and cross-attention K/V
    counted = answer["branches"][0]["counted"]
    keys = past + seq if counted == "n0/then_branch" else seq
    floats = seq * 50 + 2 * HEADS * keys * HEAD_DIM + 2 * HEADS * encoder * HEAD_DIM
    (if_row,) = [r for r in answer["nodes"] if r["op_type"] == "If"]
    assert if_row["output_bytes"] == 4 * floats


def _same_names_in_branches() -> bytes:
    """An If whose branches name their values alike: then t = x·W ([b, s, 4]), else t = z·W
    ([b, m, 4]), each followed by u = t·W2 — each u costs 2·4·4 per row of its own t."""
    w = numpy_helper.from_array(np.ones((8, 4), np.float32), "W")
    w2 = numpy_helper.from_array(np.ones((4, 4), np.float32), "W2")

    def branch(source: str, name: str) -> onnx.GraphProto:
        nodes = [
            helper.make_node("MatMul", [source, "W"], ["t"], name="proj"),
            helper.make_node("MatMul", ["t", "W2"], ["u"], name="mix"),
            helper.make_node("Identity", ["u"], [f"y_{name}"]),
        ]
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(f"y_{name}", F, None)])

    node = helper.make_node(
        "If", ["cond"], ["y"], name="pick", then_branch=branch("x", "then"), else_branch=branch("z", "else")
    )
    inputs = [
        helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x", F, ["b", "s", 8]),
        helper.make_tensor_value_info("z", F, ["b", "m", 8]),
    ]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", F, None)], [w, w2])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_formulas_read_each_branch_own_shapes(client):
    """Without sizes, each node's formula is in its own branch's dims: then's mix in s, else's in m."""
    answer = stats(client, _same_names_in_branches())
    mix = {r["node"].split("/")[1]: r for r in answer["nodes"] if r["name"] == "mix"}
    at = {"b": 2, "s": 3, "m": 7}
    assert evaluate(mix["then_branch"]["flops_formula"], at) == 2 * 2 * 3 * 4 * 4
    assert evaluate(mix["else_branch"]["flops_formula"], at) == 2 * 2 * 7 * 4 * 4


def test_sized_rows_read_each_branch_own_shapes(client):
    answer = stats(client, _same_names_in_branches(), "?dims=b=2,s=3,m=7")
    mix = {r["node"].split("/")[1]: r["flops"] for r in answer["nodes"] if r["name"] == "mix"}
    assert mix == {"then_branch": 2 * 2 * 3 * 4 * 4, "else_branch": 2 * 2 * 7 * 4 * 4}
    assert answer["branches"][0]["counted"] == "n0/else_branch"  # m = 7 rows cost more than s = 3
    assert answer["unknown"]["dims"] == []


def _loops_over_same_named_values() -> bytes:
    """Each branch loops once per row of its own t (Shape(t)[1]: torch's per-token loop): then's
    t is [b, s, 4], else's [b, m, 4] — same name, other sizes."""
    w = numpy_helper.from_array(np.ones((8, 4), np.float32), "W")
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")

    def branch(source: str, name: str) -> onnx.GraphProto:
        body = helper.make_graph(
            [
                helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                helper.make_node("Add", ["h_in", "one"], ["h_out"], name="step"),
            ],
            f"{name}_body",
            [
                helper.make_tensor_value_info("i", TensorProto.INT64, []),
                helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                helper.make_tensor_value_info("h_in", F, []),
            ],
            [
                helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
                helper.make_tensor_value_info("h_out", F, []),
            ],
        )
        index = numpy_helper.from_array(np.array(1, np.int64), "index")
        nodes = [
            helper.make_node("MatMul", [source, "W"], ["t"], name="proj"),
            helper.make_node("Shape", ["t"], ["t_shape"]),
            helper.make_node("Constant", [], ["rows_at"], value=index),
            helper.make_node("Gather", ["t_shape", "rows_at"], ["rows"], axis=0),
            helper.make_node("Loop", ["rows", "", "one"], [f"y_{name}"], name=f"per_row_{name}", body=body),
        ]
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(f"y_{name}", F, None)])

    node = helper.make_node("If", ["cond"], ["y"], then_branch=branch("x", "then"), else_branch=branch("z", "else"))
    inputs = [
        helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x", F, ["b", "s", 8]),
        helper.make_tensor_value_info("z", F, ["b", "m", 8]),
    ]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", F, None)], [w, one])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_a_loop_counts_its_own_branch_dim(client):
    """A for loop over a dim of a branch's own value counts that branch's dim, not the sibling's."""
    data = _loops_over_same_named_values()
    symbols = {loop["name"]: loop["symbol"] for loop in stats(client, data)["loops"]}
    assert symbols == {"per_row_then": "s", "per_row_else": "m"}
    counts = {loop["name"]: loop["iterations"] for loop in stats(client, data, "?dims=b=2,s=3,m=7")["loops"]}
    assert counts == {"per_row_then": 3, "per_row_else": 7}


@pytest.mark.parametrize("flag, branch", [("1", "then_branch"), ("true", "then_branch"), ("false", "else_branch")])
def test_a_flag_given_counts_the_branch_it_takes(client, flag, branch):
    """At (5, 1, 50) the first step (else_branch) costs more; given use_cache_branch, the branch it
    takes is counted: a decoder's per-token cost is its with-cache step's."""
    truth = {b: sum(f.values()) for b, f in true_matmul_flops(5, 1, 50).items()}
    plain = stats(client, merged_decoder().SerializeToString(), sized(5, 1, 50))
    assert plain["branch_inputs"] == ["use_cache_branch"]
    assert plain["branches"][0]["by"] == "flops" and plain["branches"][0]["counted"] == "n0/else_branch"
    answer = stats(client, merged_decoder().SerializeToString(), sized(5, 1, 50) + f",use_cache_branch={flag}")
    (said,) = answer["branches"]
    assert said["counted"] == f"n0/{branch}" and said["by"] == "given"
    assert said["given"] == {"use_cache_branch": branch == "then_branch"}
    assert said["why"] == f"its condition follows from use_cache_branch = {str(branch == 'then_branch').lower()}, given"
    assert answer["dims"]["use_cache_branch"] == (1 if branch == "then_branch" else 0)
    counted = [r for r in answer["nodes"] if r["node"].startswith(f"n0/{branch}/") and r["op_type"] == "MatMul"]
    assert sum(r["flops"] for r in counted) == truth[branch]
    other = "else_branch" if branch == "then_branch" else "then_branch"
    assert all(r.get("branch_skipped") == "n0" for r in answer["nodes"] if r["node"].startswith(f"n0/{other}/"))


def test_a_value_for_no_flag_is_not_echoed(client):
    answer = stats(client, merged_decoder().SerializeToString(), sized(1, 4, 6) + ",input_ids=1")
    assert "input_ids" not in answer["dims"] and answer["branches"][0]["by"] == "flops"


def _nested_fast_or_slow() -> bytes:
    """If(use_cache) whose then_branch holds If(use_fast): then 1 MatMul, else MatMul → Relu →
    Reshape to [0, -1, 16] → MatMul (the -1 leaves the second MatMul's size unknown to inference)."""
    rng = np.random.default_rng(0)
    w = [numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), f"w{i}") for i in (1, 2)]
    table = numpy_helper.from_array(rng.standard_normal((50, 16)).astype(np.float32), "table")
    shape = numpy_helper.from_array(np.array([0, -1, 16], np.int64), "shape")
    out = lambda n: helper.make_tensor_value_info(n, F, None)  # noqa: E731
    fast = helper.make_graph([helper.make_node("MatMul", ["e", "w1"], ["yf"], name="fast")], "fast", [], [out("yf")])
    slow = helper.make_graph(
        [
            helper.make_node("MatMul", ["e", "w2"], ["t"], name="slow1"),
            helper.make_node("Relu", ["t"], ["t2"]),
            helper.make_node("Reshape", ["t2", "shape"], ["t3"]),
            helper.make_node("MatMul", ["t3", "w1"], ["ys"], name="slow2"),
        ],
        "slow",
        [],
        [out("ys")],
    )
    inner = helper.make_node("If", ["use_fast"], ["y"], name="inner", then_branch=fast, else_branch=slow)
    then = helper.make_graph([helper.make_node("Gather", ["table", "ids"], ["e"]), inner], "cached", [], [out("y")])
    other = helper.make_graph([helper.make_node("Gather", ["table", "ids"], ["g"])], "first", [], [out("g")])
    graph = helper.make_graph(
        [helper.make_node("If", ["use_cache"], ["h"], name="outer", then_branch=then, else_branch=other)],
        "nested",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("use_cache", TensorProto.BOOL, [1]),
            helper.make_tensor_value_info("use_fast", TensorProto.BOOL, [1]),
        ],
        [out("h")],
        [*w, table, shape],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_a_branch_partly_unknown_at_no_sizes_is_not_judged_the_cheaper(client):
    """QA32 N2: with no sizes given, the inner If counted its 1-MatMul branch (512·batch·seq)
    over the slow one (512·batch·seq and a MatMul of unknown size): 20 % low at every size."""
    plain = stats(client, _nested_fast_or_slow())
    inner = next(b for b in plain["branches"] if b["node"] == "n0/then_branch/n1")
    assert inner["counted"] == "n0/then_branch/n1/else_branch", inner
    assert inner["why"] == ("the costlier branch, each size not given at 64: which one runs is known only when it runs")
    # at sizes, the slow branch is counted too, every node known
    sized_answer = stats(client, _nested_fast_or_slow(), "?dims=batch=1,seq=4")
    inner = next(b for b in sized_answer["branches"] if b["node"] == "n0/then_branch/n1")
    assert inner["counted"] == "n0/then_branch/n1/else_branch"
    assert inner["flops"] == {"then_branch": 2048, "else_branch": 2048 + 64 + 2048}


def test_a_dim_name_the_revision_has_not_is_answered_ignored_with_the_closest(client):
    """QA35 #2: `dims=bacth=2` answered 200 as if nothing were wrong."""
    answer = stats(client, _nested_fast_or_slow(), "?dims=bacth=2,seq=3")
    assert answer["dims"] == {"seq": 3}
    assert answer["ignored"] == {"bacth": "no dim of this revision (did you mean 'batch'?)"}
    assert "ignored" not in stats(client, _nested_fast_or_slow(), "?dims=batch=2")


def test_an_if_inside_a_branch_left_out_is_said_never_to_run(client):
    """QA35 #4: with use_cache false, the inner If in the with-cache branch was still "the
    costlier branch counted", beside a total that (rightly) left it out."""
    answer = stats(client, _nested_fast_or_slow(), "?dims=batch=1,seq=4,use_cache=0")
    outer, inner = (next(b for b in answer["branches"] if b["node"] == n) for n in ("n0", "n0/then_branch/n1"))
    assert outer["counted"] == "n0/else_branch" and outer["by"] == "given"
    assert inner["by"] == "outer" and inner["why"] == "inside n0/then_branch, which the totals leave out"


def test_outputs_of_unknown_size_in_a_branch_left_out_are_no_gap_in_the_totals(client):
    """QA35 #5: an If on a constant: its other branch, which inference never sized, made the
    totals say "not counting 2 outputs of unknown size" with every size given."""
    model = onnx.ModelProto.FromString(_nested_fast_or_slow())
    flag = next(i for i, v in enumerate(model.graph.input) if v.name == "use_cache")
    del model.graph.input[flag]
    model.graph.node.insert(
        0, helper.make_node("Constant", [], ["use_cache"], value=numpy_helper.from_array(np.array([False])))
    )
    answer = stats(client, model.SerializeToString(), "?dims=batch=1,seq=4")
    outer = next(b for b in answer["branches"] if b["node"] == "n1")  # after the Constant
    assert outer["by"] == "constant" and outer["counted"] == "n1/else_branch"
    assert answer["unknown"]["output_nodes"] == 0


def test_a_flag_given_past_one_is_refused_naming_it(client):
    """QA35: use_cache_branch=2 was read as true and echoed back as 2."""
    mid = upload(client, merged_decoder().SerializeToString()).get_json()["id"]
    r = client.get(f"/api/models/{mid}/stats{sized(1, 4, 6)},use_cache_branch=2")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "bad_dims"
    assert r.get_json()["error"]["message"] == "use_cache_branch is a flag: true or false (1 or 0), not 2"
