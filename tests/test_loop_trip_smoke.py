"""A Loop whose trip count (or condition) is a graph input runs in the edit gate's smoke run and
in Run's random inputs (QA20 F1): made-up integers are 0, which ran a while-loop 0 times, so a
body edit that fails on the first iteration was stored as "onnxruntime loads and runs it", and a
default Run gave ⟨0×0⟩ outputs and a false "exported size" warning."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload

from app.onnx_io import runtime_check
from app.onnx_io.declared_shapes import declared_mismatches, loop_counted
from app.onnx_io.loop_counts import LOOP_TRIPS, loop_counts

B, H, V = 1, 16, 32


def beam_loop_if(trips: str = "max_len") -> onnx.ModelProto:
    """tf2onnx's while-loop (QA20's beam_loop_if.onnx): trip count `max_len` a graph input, the
    token carried, an If in the body (greedy ArgMax after iteration 3, else TopK), two scan
    outputs; the body's Gather "while/embedding_lookup" indexes a 32-row table by the token."""
    rng = np.random.default_rng(0)
    then_b = h.make_graph(
        [h.make_node("ArgMax", ["while/logits"], ["then_tok"], name="while/cond/greedy/ArgMax", axis=-1, keepdims=1)],
        "then",
        [],
        [h.make_tensor_value_info("then_tok", T.INT64, [B, 1])],
    )
    else_b = h.make_graph(
        [
            h.make_node("Constant", [], ["k1"], name="while/cond/k", value=h.make_tensor("k1v", T.INT64, [1], [1])),
            h.make_node("TopK", ["while/logits", "k1"], ["else_val", "else_tok"], name="while/cond/topk/TopK", axis=-1),
        ],
        "else",
        [],
        [h.make_tensor_value_info("else_tok", T.INT64, [B, 1])],
    )
    body = h.make_graph(
        [
            h.make_node("Gather", ["embedding", "tok_in"], ["while/emb"], name="while/embedding_lookup", axis=0),
            h.make_node("Squeeze", ["while/emb", "sq_axes"], ["while/emb2"], name="while/Squeeze"),
            h.make_node("MatMul", ["hidden_in", "rnn_kernel"], ["while/hh"], name="while/rnn/MatMul"),
            h.make_node("Add", ["while/hh", "while/emb2"], ["while/pre"], name="while/rnn/add"),
            h.make_node("Tanh", ["while/pre"], ["hidden_out"], name="while/rnn/Tanh"),
            h.make_node("MatMul", ["hidden_out", "proj_kernel"], ["while/logits"], name="while/proj/MatMul"),
            h.make_node("Greater", ["iter", "greedy_after"], ["while/use_greedy"], name="while/Greater"),
            h.make_node(
                "If",
                ["while/use_greedy"],
                ["while/next_tok"],
                name="while/cond",
                then_branch=then_b,
                else_branch=else_b,
            ),
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="while/keep_going"),
            h.make_node("Identity", ["while/next_tok"], ["tok_out"], name="while/Identity_tok"),
            h.make_node("Identity", ["while/next_tok"], ["tok_scan"], name="while/Identity_scan"),
            h.make_node("ReduceMax", ["while/logits"], ["score_scan"], name="while/score", keepdims=0, axes=[1]),
        ],
        "while/body",
        [
            h.make_tensor_value_info("iter", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("tok_in", T.INT64, [B, 1]),
            h.make_tensor_value_info("hidden_in", T.FLOAT, [B, H]),
        ],
        [
            h.make_tensor_value_info("cond_out", T.BOOL, []),
            h.make_tensor_value_info("tok_out", T.INT64, [B, 1]),
            h.make_tensor_value_info("hidden_out", T.FLOAT, [B, H]),
            h.make_tensor_value_info("tok_scan", T.INT64, [B, 1]),
            h.make_tensor_value_info("score_scan", T.FLOAT, [B]),
        ],
        [nh.from_array(np.array([1], np.int64), "sq_axes")],
    )
    nodes = [
        h.make_node("Constant", [], ["greedy_after"], name="greedy_after", value=h.make_tensor("ga", T.INT64, [], [3])),
        h.make_node("Constant", [], ["cond0"], name="cond0", value=h.make_tensor("c0", T.BOOL, [], [1])),
        h.make_node(
            "Loop",
            [trips, "cond0", "start_tok", "h0"],
            ["final_tok", "final_hidden", "tokens", "scores"],
            name="while",
            body=body,
        ),
        h.make_node("Squeeze", ["tokens", "sq3"], ["generated"], name="squeeze_out"),
    ]
    inputs = [
        h.make_tensor_value_info("start_tok", T.INT64, [B, 1]),
        h.make_tensor_value_info("h0", T.FLOAT, [B, H]),
    ]
    if trips == "max_len":
        inputs.insert(0, h.make_tensor_value_info("max_len", T.INT64, []))
    g = h.make_graph(
        nodes,
        "beam_search_tf2onnx",
        inputs,
        [
            # as the QA's set_io_shape ... update_types left them: onnx's invented name for the count
            h.make_tensor_value_info("generated", T.INT64, ["Loop_2_o0__d0", B]),
            h.make_tensor_value_info("scores", T.FLOAT, [None, B]),
            h.make_tensor_value_info("final_hidden", T.FLOAT, [B, H]),
        ],
        [
            nh.from_array(rng.standard_normal((V, H)).astype(np.float32), "embedding"),
            nh.from_array((rng.standard_normal((H, V)) * 0.1).astype(np.float32), "proj_kernel"),
            nh.from_array((rng.standard_normal((H, H)) * 0.1).astype(np.float32), "rnn_kernel"),
            nh.from_array(np.array([2], np.int64), "sq3"),
        ],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="tf2onnx")
    onnx.checker.check_model(m, full_check=True)
    return m


def fixed_loop(trips_input: bool) -> onnx.ModelProto:
    """QA20's fixed_loop.onnx: a for-loop of 8 trips whose scan output ys is declared [8, 1, 8];
    `trips_input`: the trip count made a graph input (as add_input + set_node_input did)."""
    m = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["" : 17]>
        fixed_loop (float[1, 8] x) => (float[1, 8] y, float[8, 1, 8] ys) {
            M = Constant <value = int64 {8}> ()
            y, ys = Loop (M, , x) <body = step (int64 i, bool c, float[1, 8] hh) => (bool co, float[1, 8] ho, float[1, 8] hs) {
                co = Identity (c)
                m = MatMul (hh, W)
                ho = Tanh (m)
                hs = Identity (ho)
            }>
        }
        """
    )
    m.graph.initializer.append(
        nh.from_array((np.random.default_rng(0).standard_normal((8, 8)) * 0.3).astype(np.float32), "W")
    )
    if trips_input:
        del m.graph.node[0]
        m.graph.input.append(h.make_tensor_value_info("trip", T.INT64, []))
        m.graph.node[0].input[0] = "trip"
    onnx.checker.check_model(m, full_check=True)
    return m


def _upload(client, model: onnx.ModelProto) -> str:
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


BAD_OFFSET = [  # the QA's edit: the token pushed past the embedding table's 32 rows
    {
        "op": "add_initializer",
        "name": "off",
        "graph": "n2/body",
        "value": {"dtype": "INT64", "shape": [1], "values": [100]},
    },
    {
        "op": "insert_node",
        "graph": "n2/body",
        "tensor": "tok_in",
        "op_type": "Add",
        "inputs": ["off"],
        "name": "while/bad_offset",
    },
]


def test_the_inputs_a_loops_count_or_condition_come_from_are_found():
    assert loop_counts(beam_loop_if().graph, ["max_len", "start_tok", "h0"]) == {"max_len": LOOP_TRIPS}
    assert loop_counts(fixed_loop(True).graph, ["x", "trip"]) == {"trip": LOOP_TRIPS}
    assert loop_counts(fixed_loop(False).graph, ["x"]) == {}
    # through a Cast, a Sub of a constant and a Min; a condition through Less(0, n) and a bool flag
    m = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["" : 17]>
        g (int32 n, int64 cap, int64 limit, bool go, float[2] x) => (float[2] y) {
            one = Constant <value = int64 {1}> ()
            zero = Constant <value = int64 {0}> ()
            n64 = Cast <to = 7> (n)
            less = Sub (n64, one)
            trips = Min (less, cap)
            started = Less (zero, limit)
            keep = And (started, go)
            y = Loop (trips, keep, x) <body = b (int64 i, bool c, float[2] v) => (bool co, float[2] vo) {
                co = Identity (c)
                vo = Identity (v)
            }>
        }
        """
    )
    found = loop_counts(m.graph, ["n", "cap", "limit", "go", "x"])
    assert found == {"n": LOOP_TRIPS + 1, "cap": LOOP_TRIPS, "limit": LOOP_TRIPS, "go": True}
    # no huge count (a Mul by 1e-9 would want 3e9), no tensor of many values (an image wired to a Loop)
    m = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["" : 17]>
        g (int64 n, int64[4] many, float[2] x) => (float[2] y, float[2] z) {
            tiny = Constant <value = int64 {0}> ()
            trips = Mul (n, tiny)
            y = Loop (trips, , x) <body = b (int64 i, bool c, float[2] v) => (bool co, float[2] vo) {
                co = Identity (c)
                vo = Identity (v)
            }>
            z = Loop (many, , x) <body = b2 (int64 i2, bool c2, float[2] v2) => (bool co2, float[2] vo2) {
                co2 = Identity (c2)
                vo2 = Identity (v2)
            }>
        }
        """
    )
    m.graph.node[0].attribute[0].t.CopyFrom(nh.from_array(np.array(1e-9, np.float64)))
    assert loop_counts(m.graph, ["n", "many", "x"]) == {}


def test_the_smoke_run_runs_the_loop_body_and_the_gate_refuses_a_body_edit_failing_in_it(client):
    mid = _upload(client, beam_loop_if())
    verdict = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert verdict["status"] == "ok", verdict
    assert "declared_mismatches" not in verdict, verdict  # no ⟨0×0⟩ "exported size" note
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": BAD_OFFSET})
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "onnxruntime can't run the edited model" in message and "while/embedding_lookup" in message, message
    assert "(Gather)" in message, message


def test_a_harmless_body_edit_is_still_accepted(client):
    mid = _upload(client, beam_loop_if())
    ops = [{"op": "set_attribute", "node": "while/cond/topk/TopK", "name": "largest", "value": 0}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["validation"]["runtime"]["status"] == "ok"


def test_a_run_on_random_inputs_runs_the_loop(client):
    mid = _upload(client, beam_loop_if())
    r = client.post(f"/api/models/{mid}/run", json={})
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    assert answer["outputs"]["generated"]["shape"] == [LOOP_TRIPS, 1], answer["outputs"]["generated"]
    assert answer["outputs"]["scores"]["shape"] == [LOOP_TRIPS, 1]
    assert "declared_mismatches" not in answer, answer["declared_mismatches"]
    fed = answer["inputs"]["max_len"]
    assert fed["values"] == [LOOP_TRIPS] and fed["random"]["role"] == "loop", fed
    # the outputs are onnxruntime's own on those inputs
    sess = ort.InferenceSession(beam_loop_if().SerializeToString(), providers=["CPUExecutionProvider"])
    h0 = np.array(answer["inputs"]["h0"]["values"], np.float32).reshape(B, H)
    start = np.array(answer["inputs"]["start_tok"]["values"], np.int64).reshape(B, 1)
    want = sess.run(["generated"], {"max_len": np.array(LOOP_TRIPS, np.int64), "start_tok": start, "h0": h0})[0]
    assert answer["outputs"]["generated"]["values"] == want.reshape(-1).tolist()
    # a count typed in is the count run
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"max_len": {"values": 5}}})
    assert r.get_json()["outputs"]["generated"]["shape"] == [5, 1]


def test_a_trip_count_made_an_input_runs_and_its_scan_outputs_count_is_not_an_exported_size(client):
    mid = _upload(client, fixed_loop(True))
    verdict = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert verdict["status"] == "ok" and "declared_mismatches" not in verdict, verdict
    answer = client.post(f"/api/models/{mid}/run", json={}).get_json()
    assert answer["outputs"]["ys"]["shape"] == [LOOP_TRIPS, 1, 8]
    assert "declared_mismatches" not in answer, answer["declared_mismatches"]


def test_a_loops_scan_outputs_first_axis_is_never_held_to_the_declared_size():
    model = beam_loop_if()
    assert loop_counted(model.graph) == {"generated", "scores"}  # through the Squeeze of axis 2
    shapes = {"generated": [0, 1], "scores": [5, 1], "final_hidden": [1, H]}
    assert declared_mismatches(model, shapes, {"Loop_2_o0__d0": 1}) == []
    # run 0 times, onnxruntime may not know the per-iteration shape either (QA20: ⟨0×0⟩)
    assert declared_mismatches(model, {"generated": [0, 0], "scores": [0]}) == []
    # other axes still are
    assert declared_mismatches(model, {"scores": [5, 2]}) == [
        {"output": "scores", "declared": [None, 1], "shape": [5, 2]}
    ]
    assert loop_counted(fixed_loop(False).graph) == {"ys"}
    assert declared_mismatches(fixed_loop(False), {"ys": [3, 1, 8], "y": [1, 8]}) == []


def test_the_smoke_job_feeds_the_count_in_every_fill(monkeypatch):
    """The smoke run's fills (zeros, counting, ones) all feed max_len its count: with the
    zeros fill alone a body edit's failure went unseen."""
    sent = {}
    real = runtime_check._run

    def spy(job, wall, timing=None):
        sent.update(job)
        return real(job, wall, timing)

    monkeypatch.setattr(runtime_check, "_run", spy)
    verdict = runtime_check.check_model(beam_loop_if())
    assert verdict["status"] == "ok", verdict
    assert sent["loops"] == {"max_len": LOOP_TRIPS}


def test_asking_a_run_for_a_value_of_a_loop_body_says_how_to_get_it(client):
    """QA20 F8: "the main graph has no tensor 'while/logits_t'", nothing on Collect each iteration."""
    model = beam_loop_if()
    body = next(a.g for n in model.graph.node if n.op_type == "Loop" for a in n.attribute if a.name == "body")
    inner = next(o for n in body.node if n.op_type != "If" for o in n.output if o)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {}, "dims": {}, "outputs": [inner]})
    assert r.status_code == 400, r.get_json()
    message = r.get_json()["error"]["message"]
    assert message.startswith(f"the main graph has no tensor '{inner}'; it is a value of while/body, computed once per")
    assert "Collect each iteration" in message
