"""Costs of control-flow models (QA pass 20): a while loop's body counted per iteration, with its
count a symbol a person gives like a dim; a model function holding an If costs its costlier
branch; a Scan over a symbolic length gives well-formed formulas; an If's skipped branch is
marked; what an If, Loop or Scan holds is on its row."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def stats(client, m: onnx.ModelProto, query: str = "") -> dict:
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    r = client.get(f"/api/models/{mid}/stats{query}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def rows(answer: dict) -> dict:
    return {n["node"]: n for n in answer["nodes"]}


def while_loop(trip_count_input: bool = True) -> onnx.ModelProto:
    """A tf2onnx-style while loop (QA20's beam_loop_if, small): the trip count `max_len` a graph
    input, a condition the body computes, a hidden state carried and a scan output stacked."""
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "W")
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["h_in", "W"], ["h_mm"], name="while/MatMul"),  # 2·1·4·4 = 32
            helper.make_node("Tanh", ["h_mm"], ["h_out"], name="while/Tanh"),  # 4
            helper.make_node("ReduceMax", ["h_out"], ["top"], name="while/ReduceMax", keepdims=0),  # 4
            helper.make_node("Less", ["top", "limit"], ["cond_out"], name="while/Less"),  # 1
            helper.make_node("Identity", ["h_out"], ["h_scan"]),  # unnamed: "#4 (unnamed) in while/body"
        ],
        "while/body",
        [
            helper.make_tensor_value_info("iter", I64, []),
            helper.make_tensor_value_info("cond_in", B, []),
            helper.make_tensor_value_info("h_in", F, [1, 4]),
        ],
        [
            helper.make_tensor_value_info("cond_out", B, []),
            helper.make_tensor_value_info("h_out", F, [1, 4]),
            helper.make_tensor_value_info("h_scan", F, [1, 4]),
        ],
        [numpy_helper.from_array(np.array(0.9, np.float32), "limit")],
    )
    inputs = [helper.make_tensor_value_info("h0", F, [1, 4])]
    initializers = [w, numpy_helper.from_array(np.array(True), "cond0")]
    if trip_count_input:
        inputs.insert(0, helper.make_tensor_value_info("max_len", I64, []))
    else:
        initializers.append(numpy_helper.from_array(np.array(8, np.int64), "max_len"))
    graph = helper.make_graph(
        [
            helper.make_node("Loop", ["max_len", "cond0", "h0"], ["h_last", "hs"], name="while", body=body),
            helper.make_node("Relu", ["hs"], ["y"], name="after"),
        ],
        "beam",
        inputs,
        [helper.make_tensor_value_info("h_last", F, [1, 4]), helper.make_tensor_value_info("y", F, [None, 1, 4])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


PER_ITERATION = 32 + 4 + 4 + 1


def test_a_while_loops_body_is_counted_per_iteration_and_its_count_is_a_symbol(client):
    answer = stats(client, while_loop())
    nodes = rows(answer)
    [loop] = answer["loops"]
    assert loop == {
        "node": "n0",
        "name": "while",
        "body": "n0/body",
        "symbol": "while.iterations",
        "iterations": None,
        "trip_count": "max_len",
        "why": "max_len, or the body's condition",
    }
    # each body row: one iteration's FLOPs, marked so; the total a lower bound
    assert nodes["n0/body/n0"]["flops"] == 32 and nodes["n0/body/n0"]["per_iteration"] == ["n0"]
    assert "runs" not in nodes["n0/body/n0"] and "per_iteration" not in nodes["n1"]
    assert answer["totals"]["flops"] == PER_ITERATION and answer["totals"]["flops_lower_bound"] is True
    # the total as a formula in the iteration count (the Relu after it reads the stacked outputs)
    formula = answer["formula"]
    assert formula["symbols"] == ["while.iterations"]
    assert formula["flops"] == [{"coefficient": PER_ITERATION + 4, "symbols": {"while.iterations": 1}}]
    # the Loop's row: what its body costs, per iteration, and the weights it reads
    assert nodes["n0"]["flops"] == 0 and nodes["n0"]["inner_flops"] == PER_ITERATION
    assert nodes["n0"]["inner_params"] == 16 + 1  # W and limit
    # the stacked outputs' length is the count: not asked as a size of its own
    assert answer["unknown"]["dims"] == []
    # an unnamed body node is told from the main graph's #4 by its graph
    assert answer["graphs"] == {"n0/body": "while/body"}

    # the count given like a dim: every iteration counted, the stacked outputs sized with it
    given = stats(client, while_loop(), "?dims=while.iterations=10")
    nodes = rows(given)
    assert given["dims"] == {"while.iterations": 10}
    assert given["loops"][0]["iterations"] == 10 and "flops_lower_bound" not in given["totals"]
    assert nodes["n0/body/n0"]["flops"] == 10 * 32 and nodes["n0/body/n0"]["runs"] == 10
    assert "per_iteration" not in nodes["n0/body/n0"]
    assert nodes["n1"]["flops"] == 10 * 4  # the Relu over the 10 stacked [1, 4] slices
    assert given["totals"]["flops"] == 10 * PER_ITERATION + 10 * 4 and given["formula"] is None


def test_a_constant_trip_count_made_an_input_keeps_its_body_per_iteration(client):
    """QA20: a for loop of 8 trips counted 8 times; made dynamic it silently dropped to one."""
    fixed = stats(client, while_loop(trip_count_input=False))
    assert fixed["loops"][0]["why"] == "at most 8, or the body's condition"
    assert fixed["totals"]["flops_lower_bound"] is True and fixed["loops"][0]["iterations"] is None
    # a for loop proper (its body passing its condition on) is counted over its trips, no symbol
    m = while_loop(trip_count_input=False)
    body = m.graph.node[0].attribute[0].g
    body.node[3].CopyFrom(helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"))
    counted = stats(client, m)
    [loop] = counted["loops"]
    assert loop["symbol"] is None and loop["iterations"] == 8 and loop["why"] == "a constant trip count"
    assert rows(counted)["n0/body/n0"]["runs"] == 8 and "flops_lower_bound" not in counted["totals"]


def test_a_model_function_holding_an_if_costs_its_costlier_branch(client):
    """QA20 F5: a call of a function whose body is an If counted 0 at any size."""
    m = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["" : 17, "custom" : 1]>
        agraph (float[N, 4] X, bool use_swish) => (float[N, 4] Y) {
            A = custom.Act <alpha: float = 0.5> (X, use_swish)
            Y = custom.Act (A, use_swish)
        }
        <domain: "custom", opset_import: ["" : 17]>
        Act <alpha> (x, flag) => (y) {
            y = If (flag) <then_branch = g1 () => (float[N, 4] t) {
                s = Sigmoid (x)
                t = Mul (x, s)
            }, else_branch = g2 () => (float[N, 4] e) {
                e = LeakyRelu <alpha: float = @alpha> (x)
            }>
        }
        """
    )
    sized = stats(client, m, "?dims=N=3")
    nodes = rows(sized)
    # then: Sigmoid 12 + Mul 12 over [3, 4], the costlier; else: LeakyRelu 12
    assert nodes["n0"]["flops"] == nodes["n1"]["flops"] == 24 and nodes["n0"]["flops_from"] == "function body"
    assert sized["totals"]["flops"] == 48 and sized["unknown"]["flops_nodes"] == 0
    # N not given: unknown, never 0
    open_ = stats(client, m)
    assert open_["totals"]["flops"] is None and open_["unknown"]["flops_ops"] == {"Act": 2}


def rnn_scan() -> onnx.ModelProto:
    """An RNN cell as a Scan (paddle2onnx style, QA20's rnn_scan): the body ends with an Identity,
    the sequence length `seq` symbolic."""
    w = numpy_helper.from_array(np.ones((8, 12), np.float32), "rnn/W")
    r = numpy_helper.from_array(np.ones((12, 12), np.float32), "rnn/R")
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["x_t", "rnn/W"], ["xw"], name="rnn/cell/MatMul_x"),
            helper.make_node("MatMul", ["h_prev", "rnn/R"], ["hr"], name="rnn/cell/MatMul_h"),
            helper.make_node("Add", ["xw", "hr"], ["s1"], name="rnn/cell/add"),
            helper.make_node("Tanh", ["s1"], ["h_next"], name="rnn/cell/tanh"),
            helper.make_node("Identity", ["h_next"], ["y_t"], name="rnn/cell/out"),
        ],
        "rnn_cell",
        [helper.make_tensor_value_info("h_prev", F, [1, 12]), helper.make_tensor_value_info("x_t", F, [1, 8])],
        [helper.make_tensor_value_info("h_next", F, [1, 12]), helper.make_tensor_value_info("y_t", F, [1, 12])],
    )
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h_init", "x"], ["h_last", "ys"], name="rnn/scan", body=body, num_scan_inputs=1)],
        "rnn_scan",
        [helper.make_tensor_value_info("h_init", F, [1, 12]), helper.make_tensor_value_info("x", F, ["seq", 1, 8])],
        [helper.make_tensor_value_info("h_last", F, [1, 12]), helper.make_tensor_value_info("ys", F, ["seq", 1, 12])],
        [w, r],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


def test_a_scan_over_a_symbolic_length_gives_well_formed_formulas(client):
    """QA20 F6: the body's Identity came as FLOPs null with an empty formula, which broke the page."""
    answer = stats(client, rnn_scan())
    nodes = rows(answer)
    assert nodes["n0/body/n4"]["flops"] == 0 and "flops_formula" not in nodes["n0/body/n4"]
    for n in answer["nodes"]:  # a formula where FLOPs are unknown, never an empty one
        assert n["flops"] is not None or n["flops_formula"], n
    per_step = 2 * 12 * 8 + 2 * 12 * 12 + 12 + 12
    assert nodes["n0/body/n0"]["flops_formula"] == [{"coefficient": 2 * 12 * 8, "symbols": {"seq": 1}}]
    assert answer["formula"]["flops"] == [{"coefficient": per_step, "symbols": {"seq": 1}}]
    assert answer["unknown"]["flops_ops"] == {"MatMul": 2, "Add": 1, "Tanh": 1}  # not the Identity
    # the Scan's row: its body's cost as a formula, its captured weights
    assert nodes["n0"]["inner_flops"] is None and nodes["n0"]["inner_params"] == 8 * 12 + 12 * 12
    assert nodes["n0"]["inner_flops_formula"] == [{"coefficient": per_step, "symbols": {"seq": 1}}]
    sized = rows(stats(client, rnn_scan(), "?dims=seq=5"))
    assert sized["n0"]["inner_flops"] == 5 * per_step and sized["n0/body/n4"]["flops"] == 0


def chain(prefix: str, n: int) -> list[onnx.NodeProto]:
    """n MatMul/Relu pairs on x with W: a branch of 2·(2·1·8·8 + 8) FLOPs a pair."""
    nodes, cur = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("MatMul", [cur, "W"], [f"{prefix}/mm{i}"], name=f"{prefix}/MatMul_{i}"))
        nodes.append(helper.make_node("Relu", [f"{prefix}/mm{i}"], [f"{prefix}/r{i}"], name=f"{prefix}/Relu_{i}"))
        cur = f"{prefix}/r{i}"
    return nodes


def if_heavy() -> onnx.ModelProto:
    """Most nodes in If branches, an If nested in the then branch (QA20's if_heavy, small)."""
    out = lambda name: [helper.make_tensor_value_info(name, F, [1, 8])]  # noqa: E731
    inner_then = helper.make_graph(
        [*chain("inner_then", 1), helper.make_node("Identity", ["inner_then/r0"], ["it"])], "inner_then", [], out("it")
    )
    inner_else = helper.make_graph(
        [*chain("inner_else", 2), helper.make_node("Identity", ["inner_else/r1"], ["ie"])], "inner_else", [], out("ie")
    )
    then_g = helper.make_graph(
        [
            *chain("then", 3),
            helper.make_node(
                "If", ["flag"], ["inner"], name="then/inner_if", then_branch=inner_then, else_branch=inner_else
            ),
            helper.make_node("Add", ["then/r2", "inner"], ["t"], name="then/add"),
        ],
        "then_g",
        [],
        out("t"),
    )
    else_g = helper.make_graph(
        [*chain("else", 4), helper.make_node("Identity", ["else/r3"], ["e"], name="else/out")], "else_g", [], out("e")
    )
    graph = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["x"], ["xs"], name="sum", keepdims=0),
            helper.make_node("Greater", ["xs", "zero"], ["flag"], name="greater"),
            helper.make_node("If", ["flag"], ["y"], name="cond_block", then_branch=then_g, else_branch=else_g),
        ],
        "if_heavy",
        [helper.make_tensor_value_info("x", F, [1, 8])],
        out("y"),
        [
            numpy_helper.from_array(np.ones((8, 8), np.float32), "W"),
            numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_skipped_branchs_rows_are_marked_and_an_if_row_holds_the_counted_branch(client):
    answer = stats(client, if_heavy())
    nodes = rows(answer)
    pair = 2 * 1 * 8 * 8 + 8
    # outer: then = 3 pairs + the inner If's costlier (else: 2 pairs) + Add 8 = 5 pairs + 8; else = 4 pairs
    assert {b["node"]: b["skipped"] for b in answer["branches"]} == {
        "n2/then_branch/n6": "n2/then_branch/n6/then_branch",
        "n2": "n2/else_branch",
    }
    assert nodes["n2/else_branch/n0"]["branch_skipped"] == "n2"
    assert nodes["n2/then_branch/n6/then_branch/n0"]["branch_skipped"] == "n2/then_branch/n6"
    counted = [n for n in answer["nodes"] if "branch_skipped" not in n]
    assert all(not n["node"].startswith(("n2/else_branch/", "n2/then_branch/n6/then_branch/")) for n in counted)
    assert nodes["n2/then_branch/n6"]["inner_flops"] == 2 * pair  # its counted (else) branch
    assert nodes["n2"]["inner_flops"] == 5 * pair + 8
    assert answer["totals"]["flops"] == 8 + 1 + 5 * pair + 8
    assert nodes["n2"]["inner_params"] == 64  # W once, however many nodes read it


def test_a_loops_growing_accumulators_are_not_asked_for_as_sizes(client):
    """QA20 F18: a detector's Loop over its classes concatenates what NMS keeps: "unk__0 = ? dim
    0 of acc_in" has no one answer. NMS's own count is still asked."""
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["scores", "c"], ["sc"], name="loop/gather", axis=1),
            helper.make_node("Unsqueeze", ["sc", "ax"], ["sc3"], name="loop/unsq"),
            helper.make_node("NonMaxSuppression", ["boxes", "sc3", "max_out"], ["sel"], name="loop/NMS"),
            helper.make_node("Gather", ["sel", "col"], ["idx"], name="loop/take", axis=1),
            helper.make_node("Concat", ["acc_in", "idx"], ["acc_out"], name="loop/concat", axis=0),
            helper.make_node("Identity", ["cond"], ["cond_out"], name="loop/cond"),
        ],
        "loop/body",
        [
            helper.make_tensor_value_info("c", I64, []),
            helper.make_tensor_value_info("cond", B, []),
            helper.make_tensor_value_info("acc_in", I64, [None]),
        ],
        [helper.make_tensor_value_info("cond_out", B, []), helper.make_tensor_value_info("acc_out", I64, [None])],
        [numpy_helper.from_array(np.array(2, np.int64), "col"), numpy_helper.from_array(np.array([0], np.int64), "ax")],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Shape", ["scores"], ["shape"], name="shape"),
            helper.make_node("Gather", ["shape", "one"], ["classes"], name="classes", axis=0),
            helper.make_node("Loop", ["classes", "", "empty"], ["kept"], name="loop", body=body),
        ],
        "detector",
        [helper.make_tensor_value_info("boxes", F, [1, 50, 4]), helper.make_tensor_value_info("scores", F, [1, 3, 50])],
        [helper.make_tensor_value_info("kept", I64, [None])],
        [
            numpy_helper.from_array(np.array([10], np.int64), "max_out"),
            numpy_helper.from_array(np.array(1, np.int64), "one"),
            numpy_helper.from_array(np.zeros((0,), np.int64), "empty"),
        ],
    )
    answer = stats(client, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    growing = answer["unknown"]["growing_dims"]
    assert {w["tensor"] for w in growing.values()} == {"acc_in", "acc_out"}
    assert not set(growing) & set(answer["unknown"]["dims"])
    assert [answer["unknown"]["dims_at"][d]["tensor"] for d in answer["unknown"]["dims"]] == ["sel"]
    [loop] = answer["loops"]
    # its trip count is the scores' class axis (Shape → Gather): 3, counted, not asked
    assert loop["symbol"] is None and loop["iterations"] == 3 and loop["why"] == "dim 1 of scores"


def per_token_loop(gather: str = "gather", seq: int | str = "seq") -> onnx.ModelProto:
    """torch's for loop over a sequence: its trip count Gather(Shape(x), 1) — or Shape(x) sliced
    to that one dim — and the body passing its condition on (QA20: the count was asked)."""
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["h_in", "W"], ["h_mm"], name="step/MatMul"),  # 2·1·4·4 = 32
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="step/keep"),
        ],
        "step",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("cond_in", B, []),
            helper.make_tensor_value_info("h_in", F, [1, 4]),
        ],
        [helper.make_tensor_value_info("cond_out", B, []), helper.make_tensor_value_info("h_mm", F, [1, 4])],
    )
    if gather == "gather":
        count = [
            helper.make_node("Shape", ["x"], ["x_shape"], name="shape"),
            helper.make_node("Gather", ["x_shape", "one"], ["n"], name="seq_len", axis=0),
        ]
    elif gather == "slice_last":  # [-1:] of Shape(x): its last dim
        count = [
            helper.make_node("Shape", ["x"], ["x_shape"], name="shape"),
            helper.make_node("Slice", ["x_shape", "minus_one", "big"], ["n1"], name="seq_len"),
            helper.make_node("Squeeze", ["n1"], ["n"], name="scalar"),
        ]
    else:  # Shape-15's start and end
        count = [
            helper.make_node("Shape", ["x"], ["n1"], name="shape", start=1, end=2),
            helper.make_node("Squeeze", ["n1"], ["n"], name="scalar"),
        ]
    graph = helper.make_graph(
        [
            *count,
            helper.make_node("Loop", ["n", "", "h0"], ["h_last"], name="per_token", body=body),
        ],
        "per_token",
        [helper.make_tensor_value_info("x", F, [1, seq]), helper.make_tensor_value_info("h0", F, [1, 4])],
        [helper.make_tensor_value_info("h_last", F, [1, 4])],
        [
            numpy_helper.from_array(np.ones((4, 4), np.float32), "W"),
            numpy_helper.from_array(np.array(1, np.int64), "one"),
            numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
            numpy_helper.from_array(np.array([2**62], np.int64), "big"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_for_loop_over_a_tensors_dim_counts_that_dim(client):
    for how in ("gather", "slice_last", "shape_start"):
        answer = stats(client, per_token_loop(how))
        [loop] = answer["loops"]
        # the count is the input's dim: asked once, as "seq", not as a symbol of the Loop's own
        assert loop["symbol"] == "seq" and loop["why"] == ("dim -1 of x" if how == "slice_last" else "dim 1 of x")
        assert loop["iterations"] is None and answer["totals"]["flops_lower_bound"] is True
        assert answer["formula"]["symbols"] == ["seq"]
        assert answer["formula"]["flops"] == [{"coefficient": 32, "symbols": {"seq": 1}}], how
        given = stats(client, per_token_loop(how), "?dims=seq=7")
        assert given["loops"][0]["iterations"] == 7 and "flops_lower_bound" not in given["totals"]
        assert rows(given)[f"{loop['node']}/body/n0"]["runs"] == 7
        assert given["totals"]["flops"] == 7 * 32
    # a fixed dim is a constant trip count: counted in full, nothing asked
    fixed = stats(client, per_token_loop("gather", seq=5))
    [loop] = fixed["loops"]
    assert loop["symbol"] is None and loop["iterations"] == 5 and loop["why"] == "dim 1 of x"
    assert fixed["totals"]["flops"] == 5 * 32 and "flops_lower_bound" not in fixed["totals"]
    # a while loop bounded by the dim: still a count of its own (its condition may end it sooner)
    m = per_token_loop("gather")
    body = m.graph.node[2].attribute[0].g
    body.node[1].CopyFrom(helper.make_node("Not", ["cond_in"], ["cond_out"], name="flip"))
    [loop] = stats(client, m)["loops"]
    assert loop["symbol"] == "per_token.iterations" and loop["why"] == "n, or the body's condition"
