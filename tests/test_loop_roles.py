"""The part each input and output of a Loop, Scan or If plays, and of the bodies they hold, in the
graph JSON (views/loop_roles.py, QA20 F7): a Loop's trip count, condition, carried values (initial
value ↔ body input ↔ body output ↔ final value) and scan outputs; a Scan's state, scanned inputs
(along scan_input_axes, reversed by scan_input_directions) and scan outputs (stacked along
scan_output_axes); an If's branch outputs. The pairings are checked against what onnxruntime
computes: the numbers a role promises are the numbers the node gives."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload

F = T.FLOAT


def checked(m: onnx.ModelProto) -> onnx.ModelProto:
    onnx.checker.check_model(m, full_check=True)
    return m


def run(m: onnx.ModelProto, feeds: dict) -> dict[str, np.ndarray]:
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds), strict=True))


def beam_loop_if() -> onnx.ModelProto:
    """A tf2onnx-style while Loop (QA20's beam_loop_if.onnx): trip count `max_len`, condition
    `cond0`, carried start_tok/h0 (body tok_in/hidden_in -> tok_out/hidden_out, final
    final_tok/final_hidden), scan outputs tok_scan/score_scan (tokens/scores), an If in the body."""
    rng = np.random.default_rng(0)
    b, hs, v = 1, 16, 32
    then_b = h.make_graph(
        [h.make_node("ArgMax", ["while/logits_scaled"], ["then_tok"], name="while/cond/greedy/ArgMax", axis=-1)],
        "while/cond/then",
        [],
        [h.make_tensor_value_info("then_tok", T.INT64, [b, 1])],
    )
    else_b = h.make_graph(
        [
            h.make_node("Constant", [], ["k1"], name="while/cond/k", value=h.make_tensor("k1v", T.INT64, [1], [1])),
            h.make_node(
                "TopK", ["while/logits_scaled", "k1"], ["else_val", "else_tok"], name="while/cond/topk", axis=-1
            ),
        ],
        "while/cond/else",
        [],
        [h.make_tensor_value_info("else_tok", T.INT64, [b, 1])],
    )
    body = h.make_graph(
        [
            h.make_node("Gather", ["decoder/embedding", "tok_in"], ["while/emb"], name="while/embedding_lookup"),
            h.make_node("Squeeze", ["while/emb", "sq_axes"], ["while/emb2"], name="while/Squeeze"),
            h.make_node("MatMul", ["hidden_in", "decoder/rnn/kernel"], ["while/hh"], name="while/rnn/MatMul"),
            h.make_node("Add", ["while/hh", "while/emb2"], ["while/pre"], name="while/rnn/add"),
            h.make_node("Tanh", ["while/pre"], ["hidden_out"], name="while/rnn/Tanh"),
            h.make_node("MatMul", ["hidden_out", "decoder/proj/kernel"], ["while/logits"], name="while/proj/MatMul"),
            h.make_node("Div", ["while/logits", "temperature"], ["while/logits_scaled"], name="while/truediv"),
            h.make_node("Greater", ["iter", "greedy_after"], ["while/use_greedy"], name="while/Greater"),
            h.make_node(
                "If",
                ["while/use_greedy"],
                ["while/next_tok"],
                name="while/cond",
                then_branch=then_b,
                else_branch=else_b,
            ),
            h.make_node("Equal", ["while/next_tok", "eos_id"], ["while/is_eos"], name="while/Equal"),
            h.make_node("Cast", ["while/is_eos"], ["while/is_eos_i"], name="while/Cast", to=T.INT64),
            h.make_node("ReduceMax", ["while/is_eos_i"], ["while/any_eos"], name="while/ReduceMax", keepdims=0),
            h.make_node("Equal", ["while/any_eos", "zero_i"], ["cond_out"], name="while/not_done"),
            h.make_node("Identity", ["while/next_tok"], ["tok_out"], name="while/Identity_tok"),
            h.make_node("Identity", ["while/next_tok"], ["tok_scan"], name="while/Identity_scan"),
            h.make_node("ReduceMax", ["while/logits_scaled"], ["score_scan"], name="while/score", keepdims=0, axes=[1]),
        ],
        "while/body",
        [
            h.make_tensor_value_info("iter", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("tok_in", T.INT64, [b, 1]),
            h.make_tensor_value_info("hidden_in", F, [b, hs]),
        ],
        [
            h.make_tensor_value_info("cond_out", T.BOOL, []),
            h.make_tensor_value_info("tok_out", T.INT64, [b, 1]),
            h.make_tensor_value_info("hidden_out", F, [b, hs]),
            h.make_tensor_value_info("tok_scan", T.INT64, [b, 1]),
            h.make_tensor_value_info("score_scan", F, [b]),
        ],
        initializer=[nh.from_array(np.array([1], np.int64), "sq_axes"), nh.from_array(np.array(0, np.int64), "zero_i")],
    )
    g = h.make_graph(
        [
            h.make_node(
                "Constant", [], ["greedy_after"], name="greedy_after", value=h.make_tensor("ga", T.INT64, [], [3])
            ),
            h.make_node("Constant", [], ["cond0"], name="cond0", value=h.make_tensor("c0", T.BOOL, [], [1])),
            h.make_node(
                "Loop",
                ["max_len", "cond0", "start_tok", "h0"],
                ["final_tok", "final_hidden", "tokens", "scores"],
                name="while",
                body=body,
            ),
        ],
        "beam",
        [
            h.make_tensor_value_info("max_len", T.INT64, []),
            h.make_tensor_value_info("start_tok", T.INT64, [b, 1]),
            h.make_tensor_value_info("h0", F, [b, hs]),
        ],
        [
            h.make_tensor_value_info("tokens", T.INT64, [None, b, 1]),
            h.make_tensor_value_info("scores", F, [None, b]),
            h.make_tensor_value_info("final_hidden", F, [b, hs]),
        ],
        initializer=[
            nh.from_array(rng.standard_normal((v, hs)).astype(np.float32), "decoder/embedding"),
            nh.from_array((rng.standard_normal((hs, v)) * 0.1).astype(np.float32), "decoder/proj/kernel"),
            nh.from_array((rng.standard_normal((hs, hs)) * 0.1).astype(np.float32), "decoder/rnn/kernel"),
            nh.from_array(np.array(2, np.int64), "eos_id"),
            nh.from_array(np.array([0.7], np.float32), "temperature"),
        ],
    )
    return checked(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="tf2onnx"))


def counting_loop() -> onnx.ModelProto:
    """No condition given; carried a (+1 each iteration) and b (x2), listed in the body in another
    order than their names suggest; scan output c = a + b each iteration."""
    body = h.make_graph(
        [
            h.make_node("Identity", ["c_in"], ["c_out"]),
            h.make_node("Add", ["a_in", "one"], ["a_out"]),
            h.make_node("Mul", ["b_in", "two"], ["b_out"]),
            h.make_node("Add", ["a_out", "b_out"], ["c"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("c_in", T.BOOL, []),
            h.make_tensor_value_info("a_in", F, [2]),
            h.make_tensor_value_info("b_in", F, [2]),
        ],
        [
            h.make_tensor_value_info("c_out", T.BOOL, []),
            h.make_tensor_value_info("a_out", F, [2]),
            h.make_tensor_value_info("b_out", F, [2]),
            h.make_tensor_value_info("c", F, [2]),
        ],
        [nh.from_array(np.array(1, np.float32), "one"), nh.from_array(np.array(2, np.float32), "two")],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["n", "", "a0", "b0"], ["a_last", "b_last", "cs"], name="count", body=body)],
        "g",
        [
            h.make_tensor_value_info("n", T.INT64, []),
            h.make_tensor_value_info("a0", F, [2]),
            h.make_tensor_value_info("b0", F, [2]),
        ],
        [
            h.make_tensor_value_info("a_last", F, [2]),
            h.make_tensor_value_info("b_last", F, [2]),
            h.make_tensor_value_info("cs", F, [None, 2]),
        ],
    )
    return checked(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))


def scan_model(in_axis: int = 0, in_reverse: int = 0, out_axis: int = 0, out_reverse: int = 0) -> onnx.ModelProto:
    """Scan with state s (s + slice of x each iteration) and scan output y (the slice itself),
    x [3, 4, 2] scanned along `in_axis`, y stacked along `out_axis`."""
    slice_shape = [d for k, d in enumerate([3, 4, 2]) if k != in_axis]
    stacked_shape = [*slice_shape[:out_axis], [3, 4, 2][in_axis], *slice_shape[out_axis:]]
    body = h.make_graph(
        [h.make_node("Add", ["s_in", "x_t"], ["s_out"]), h.make_node("Identity", ["x_t"], ["y_t"])],
        "cell",
        [h.make_tensor_value_info("s_in", F, slice_shape), h.make_tensor_value_info("x_t", F, slice_shape)],
        [h.make_tensor_value_info("s_out", F, slice_shape), h.make_tensor_value_info("y_t", F, slice_shape)],
    )
    g = h.make_graph(
        [
            h.make_node(
                "Scan",
                ["s0", "x"],
                ["s_last", "ys"],
                name="scan",
                body=body,
                num_scan_inputs=1,
                scan_input_axes=[in_axis],
                scan_input_directions=[in_reverse],
                scan_output_axes=[out_axis],
                scan_output_directions=[out_reverse],
            )
        ],
        "g",
        [h.make_tensor_value_info("s0", F, slice_shape), h.make_tensor_value_info("x", F, [3, 4, 2])],
        [h.make_tensor_value_info("s_last", F, slice_shape), h.make_tensor_value_info("ys", F, stacked_shape)],
    )
    return checked(h.make_model(g, opset_imports=[h.make_opsetid("", 16)]))


def if_model() -> onnx.ModelProto:
    then_g = h.make_graph(
        [h.make_node("Neg", ["x"], ["t_out"])], "then_g", [], [h.make_tensor_value_info("t_out", F, [2])]
    )
    else_g = h.make_graph(
        [h.make_node("Abs", ["x"], ["e_out"])], "else_g", [], [h.make_tensor_value_info("e_out", F, [2])]
    )
    g = h.make_graph(
        [h.make_node("If", ["flag"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        "g",
        [h.make_tensor_value_info("flag", T.BOOL, []), h.make_tensor_value_info("x", F, [2])],
        [h.make_tensor_value_info("y", F, [2])],
    )
    return checked(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))


def opened(client, m: onnx.ModelProto) -> tuple[str, dict]:
    r = upload(client, m.SerializeToString())
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    return mid, client.get(f"/api/models/{mid}/graph").get_json()


def body_json(client, mid: str, path: str) -> dict:
    r = client.get(f"/api/models/{mid}/graph", query_string={"path": path})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def holder(graph: dict, op_type: str) -> dict:
    return next(n for n in graph["nodes"] if n["op_type"] == op_type)


def kinds(roles: list) -> list:
    return [r and r["kind"] for r in roles]


def test_a_while_loop_names_trip_count_condition_carried_values_and_scan_outputs(client):
    mid, g = opened(client, beam_loop_if())
    loop = holder(g, "Loop")
    roles = loop["roles"]
    assert kinds(roles["inputs"]) == ["trip_count", "condition", "carried", "carried"]
    assert kinds(roles["outputs"]) == ["carried", "carried", "scan_output", "scan_output"]
    h0, final_hidden, tokens = roles["inputs"][3], roles["outputs"][1], roles["outputs"][2]
    # carried k: the node's input 2+k, the body's input 2+k and output 1+k, the node's output k
    assert (h0["node_input"], h0["body_input"], h0["body_output"], h0["node_output"]) == (3, 3, 2, 1)
    assert h0["tag"] == "carried" and h0["text"].startswith("→ final_hidden")
    assert final_hidden["text"].startswith("← the body's hidden_out")
    assert tokens["tag"] == "scan output" and "stacked per iteration" in tokens["text"] and "tok_scan" in tokens["text"]
    assert "max_len" not in roles["inputs"][0]["text"] and "iter" in roles["inputs"][0]["text"]

    body = body_json(client, mid, loop["subgraphs"][0])
    ins = {v["name"]: v["role"] for v in body["inputs"]}
    outs = {v["name"]: v["role"] for v in body["outputs"]}
    assert [ins[n]["box"] for n in ("iter", "cond_in", "tok_in", "hidden_in")] == [
        "iteration #",
        "condition ↔ cond_out",
        "carried ↔ tok_out",
        "carried ↔ hidden_out",
    ]
    assert ins["hidden_in"]["text"] == (
        "Carried: h0 on entry (the Loop's input 3), hidden_out after each iteration;"
        " the Loop's final_hidden (output 1) after the last."
    )
    assert (
        ins["iter"]["text"].startswith("Iteration number: 0 on the first iteration")
        and "max_len" in ins["iter"]["text"]
    )
    assert ins["cond_in"]["text"].startswith("Condition: cond0 on entry (the Loop's input 1)")
    assert [outs[n]["box"] for n in ("cond_out", "tok_out", "hidden_out", "tok_scan", "score_scan")] == [
        "condition ↔ cond_in",
        "carried ↔ tok_in",
        "carried ↔ hidden_in",
        "scan out → tokens",
        "scan out → scores",
    ]
    assert outs["tok_scan"]["text"] == (
        "Scan output: each iteration's value, stacked along a new axis 0 into the Loop's tokens (output 2)."
    )
    # the If inside: each branch's output stands for the If's output
    if_node = holder(body, "If")
    assert kinds(if_node["roles"]["inputs"]) == ["condition"]
    assert if_node["roles"]["outputs"][0]["text"] == "then_branch's then_tok or else_branch's else_tok, whichever runs"
    then_b = body_json(client, mid, next(p for p in if_node["subgraphs"] if p.endswith("then_branch")))
    branch_out = then_b["outputs"][0]["role"]
    assert branch_out["kind"] == "branch_output" and branch_out["box"] == "If output → while/next_tok"
    assert "(while/use_greedy is true)" in branch_out["text"]
    # the node's own panel JSON says the same
    node = client.get(f"/api/models/{mid}/node", query_string={"id": loop["id"]}).get_json()
    assert node["roles"] == roles


def test_the_loop_pairing_the_json_gives_is_what_onnxruntime_computes(client):
    """Follow each carried role from its initial value to its final one and each scan output to its
    body output: onnxruntime's numbers agree with the pairing (a grows by 1, b doubles)."""
    m = counting_loop()
    mid, g = opened(client, m)
    loop = holder(g, "Loop")
    body = body_json(client, mid, loop["subgraphs"][0])
    n, a0, b0 = 3, np.array([1, 2], np.float32), np.array([5, 7], np.float32)
    got = run(m, {"n": np.array(n, np.int64), "a0": a0, "b0": b0})
    feeds = {"a0": a0, "b0": b0}
    step = {"a_out": lambda v: v + 1, "b_out": lambda v: v * 2}  # what each body output makes of its input
    assert kinds(loop["roles"]["inputs"]) == ["trip_count", "condition", "carried", "carried"]
    assert "not given" in loop["roles"]["inputs"][1]["text"]
    for role in loop["roles"]["inputs"][2:]:
        initial = loop["inputs"][role["node_input"]]
        final = loop["outputs"][role["node_output"]]
        body_in = body["inputs"][role["body_input"]]["name"]
        body_out = body["outputs"][role["body_output"]]["name"]
        assert body_in[0] == body_out[0] == initial[0] == final[0]  # a with a, b with b
        value = feeds[initial]
        for _ in range(n):
            value = step[body_out](value)
        np.testing.assert_array_equal(got[final], value)
    scan = loop["roles"]["outputs"][2]
    assert scan["kind"] == "scan_output" and body["outputs"][scan["body_output"]]["name"] == "c"
    assert got[loop["outputs"][scan["node_output"]]].shape == (n, 2)  # stacked along a new axis 0
    cond = body["inputs"][1]["role"]
    assert cond["text"] == "Condition: true on entry (the Loop gives no condition), c_out after each iteration."


@pytest.mark.parametrize(
    ("in_axis", "in_reverse", "out_axis", "out_reverse"), [(0, 0, 0, 0), (1, 1, 1, 0), (2, 0, 0, 1)]
)
def test_a_scans_axes_and_directions_are_the_ones_onnxruntime_slices_and_stacks(
    client, in_axis, in_reverse, out_axis, out_reverse
):
    m = scan_model(in_axis, in_reverse, out_axis, out_reverse)
    mid, g = opened(client, m)
    scan = holder(g, "Scan")
    state_in, scanned = scan["roles"]["inputs"]
    state_out, stacked = scan["roles"]["outputs"]
    assert (state_in["kind"], scanned["kind"], state_out["kind"], stacked["kind"]) == (
        "state",
        "scanned",
        "state",
        "scan_output",
    )
    assert (state_in["node_input"], state_in["body_input"], state_in["body_output"], state_in["node_output"]) == (
        0,
        0,
        0,
        0,
    )
    x = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    s0 = np.zeros([d for k, d in enumerate(x.shape) if k != in_axis], np.float32)
    got = run(m, {"s0": s0, "x": x})
    # what the roles say: slices of x along `axis`, last first when reversed, stacked along the
    # output's axis, last iteration first when reversed
    slices = [np.take(x, k, axis=scanned["axis"]) for k in range(x.shape[scanned["axis"]])]
    if scanned["reverse"]:
        slices = slices[::-1]
    stack = slices[::-1] if stacked["reverse"] else slices
    np.testing.assert_array_equal(got["ys"], np.stack(stack, axis=stacked["axis"]))
    np.testing.assert_array_equal(got["s_last"], sum(slices))
    assert (scanned["axis"], scanned["reverse"], stacked["axis"], stacked["reverse"]) == (
        in_axis,
        bool(in_reverse),
        out_axis,
        bool(out_reverse),
    )
    body = body_json(client, mid, scan["subgraphs"][0])
    x_t = body["inputs"][1]["role"]
    order = "last to first" if in_reverse else "first to last"
    assert x_t["text"] == (
        f"Scanned input: one slice of x (the Scan's input 1) per iteration, taken along its axis {in_axis}, {order}."
    )
    assert x_t["box"] == "scanned ← x" + (f" · axis {in_axis}" if in_axis else "") + (
        " · reversed" if in_reverse else ""
    )
    assert body["inputs"][0]["role"]["box"] == "state ↔ s_out"
    assert body["outputs"][0]["role"]["text"].startswith("State: the next iteration reads it as s_in;")


def test_scan_8_takes_sequence_lens_first_and_slices_after_the_batch_axis(client):
    body = h.make_graph(
        [h.make_node("Add", ["s_in", "x_t"], ["s_out"]), h.make_node("Identity", ["x_t"], ["y_t"])],
        "cell",
        [h.make_tensor_value_info("s_in", F, [2]), h.make_tensor_value_info("x_t", F, [2])],
        [h.make_tensor_value_info("s_out", F, [2]), h.make_tensor_value_info("y_t", F, [2])],
    )
    g = h.make_graph(
        [h.make_node("Scan", ["", "s0", "x"], ["s_last", "ys"], name="scan8", body=body, num_scan_inputs=1)],
        "g",
        [h.make_tensor_value_info("s0", F, [1, 2]), h.make_tensor_value_info("x", F, [1, 5, 2])],
        [h.make_tensor_value_info("s_last", F, [1, 2]), h.make_tensor_value_info("ys", F, [1, 5, 2])],
    )
    m = checked(h.make_model(g, opset_imports=[h.make_opsetid("", 8)], ir_version=7))
    _, graph = opened(client, m)
    scan = holder(graph, "Scan")
    assert kinds(scan["roles"]["inputs"]) == ["sequence_lens", "state", "scanned"]
    assert scan["roles"]["inputs"][1]["body_input"] == 0 and scan["roles"]["inputs"][2]["axis"] == 1
    assert "not given" in scan["roles"]["inputs"][0]["text"]
    x = np.arange(10, dtype=np.float32).reshape(1, 5, 2)
    got = run(m, {"s0": np.zeros((1, 2), np.float32), "x": x})
    np.testing.assert_array_equal(got["s_last"], x.sum(axis=scan["roles"]["inputs"][2]["axis"]))


def test_if_branch_outputs_pair_with_the_ifs_outputs(client):
    m = if_model()
    mid, g = opened(client, m)
    node = holder(g, "If")
    assert node["roles"]["inputs"][0]["text"] == "true: then_branch runs; false: else_branch"
    assert node["roles"]["outputs"][0]["text"] == "then_branch's t_out or else_branch's e_out, whichever runs"
    x = np.array([-1.5, 2.0], np.float32)
    for attr, flag in (("then_branch", True), ("else_branch", False)):
        branch = body_json(client, mid, next(p for p in node["subgraphs"] if p.endswith(attr)))
        role = branch["outputs"][0]["role"]
        assert role["node_output"] == 0 and role["box"] == "If output → y"
        assert role["text"] == f"If output: the If's y (output 0) when this branch runs (flag is {str(flag).lower()})."
        want = -x if branch["outputs"][0]["name"] == "t_out" else np.abs(x)
        np.testing.assert_array_equal(run(m, {"flag": np.array(flag), "x": x})["y"], want)


def test_other_nodes_and_the_main_graphs_inputs_carry_no_role(client):
    _, g = opened(client, counting_loop())
    assert all("role" not in v for v in g["inputs"] + g["outputs"])
    m = if_model()
    m.graph.node.insert(0, h.make_node("Abs", ["x"], ["ax"], name="abs"))
    _, g2 = opened(client, m)
    assert "roles" not in next(n for n in g2["nodes"] if n["op_type"] == "Abs")
