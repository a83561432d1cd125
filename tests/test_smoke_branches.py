"""The smoke run runs both values of a boolean input an If's condition comes from (QA31 F1):
made-up booleans are False, so an Optimum merged decoder (an If on `use_cache_branch`) ran only
else_branch, and an edit that broke then_branch — the step with the cache, run for every token
but the first — was stored as "onnxruntime loads and runs it"."""

from __future__ import annotations

import time

import onnx
import onnxruntime as ort
from merged_decoder import D, decoder_feeds, merged_decoder
from testkit import upload

from app.onnx_io import ort_worker
from app.onnx_io.branch_flags import branch_cases


def _upload(client, model: onnx.ModelProto) -> str:
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def _constant(client, mid: str, branch: str, name: str) -> str:
    """The id of the Constant node `name` in `branch` of the merged decoder's If."""
    graph = client.get(f"/api/models/{mid}/graph?path=n0/{branch}").get_json()
    for node in graph["nodes"]:
        if node["name"] == f"/model/decoder/layers.0/self_attn/{name}":
            return node["id"]
    raise AssertionError([n["name"] for n in graph["nodes"]])


MERGE_HEADS = "Constant_3"  # [0, -1, D]: the attended heads merged back, before out_proj
Q_HEADS = "Constant"  # [0, -1, HEADS, HEAD_DIM]: the queries split into heads


def _set_constant(client, mid: str, branch: str, name: str, values: list[int], **extra):
    node = _constant(client, mid, branch, name)
    value = {"dtype": "INT64", "shape": [len(values)], "values": values}
    ops = [{"op": "set_attribute", "node": node, "name": "value", "value": value}]
    return client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops, **extra})


def test_the_flags_an_ifs_condition_comes_from_are_found():
    m = merged_decoder()
    names = [i.name for i in m.graph.input]
    assert branch_cases(m.graph, names) == [
        {"branch": "else_branch", "values": {"use_cache_branch": False}},
        {"branch": "then_branch", "values": {"use_cache_branch": True}},
    ]
    # through a Squeeze and a Not (true skips then_branch); a bool of many values and a float are no flags
    m = onnx.parser.parse_model(
        """
        <ir_version: 8, opset_import: ["" : 17]>
        g (bool[1] skip, bool[4] mask, float[1] x) => (float[1] y) {
            axes = Constant <value = int64[1] {0}> ()
            flat = Squeeze (skip, axes)
            go = Not (flat)
            y = If (go) <
                then_branch = t () => (float[1] a) { a = Identity (x) },
                else_branch = e () => (float[1] b) { b = Neg (x) }
            >
        }
        """
    )
    cases = branch_cases(m.graph, ["skip", "mask", "x"])
    assert cases == [
        {"branch": "else_branch", "values": {"skip": True}},
        {"branch": "then_branch", "values": {"skip": False}},
    ]
    assert branch_cases(merged_decoder().graph, ["input_ids"]) == []  # the flag isn't fed: no case


def test_the_merged_decoder_runs_with_and_without_the_cache(client):
    m = merged_decoder()
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for use_cache in (False, True):  # the model itself runs both ways
        sess.run(None, decoder_feeds(use_cache))
    mid = _upload(client, m)
    verdict = client.get(f"/api/models/{mid}").get_json()["validation"]["runtime"]
    assert verdict["status"] == "ok", verdict
    assert verdict["flags"] == {"use_cache_branch": [False, True]}, verdict
    assert verdict["other_size"]["status"] == "ok", verdict["other_size"]
    # the page's line says it: "loads and runs it (use_cache_branch true and false)"


def test_an_edit_breaking_the_with_cache_branch_is_refused_naming_the_flags_value(client):
    mid = _upload(client, merged_decoder())
    # QA31's edit: the merge-heads target [0, -1, D] made [0, 3, D] (3 tokens where 1 runs)
    r = _set_constant(client, mid, "then_branch", MERGE_HEADS, [0, 3, D])
    assert r.status_code == 422, r.get_json()
    error = r.get_json()["error"]
    message = error["message"]
    assert message.startswith("onnxruntime can't run the edited model: with use_cache_branch = true: "), message
    assert '"/model/decoder/layers.0/self_attn/Reshape_3" (Reshape) in optimum::if/then_branch' in message, message
    assert error["node"].startswith("n0/then_branch/"), error  # "Show the node" goes to the one in the branch that ran
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0  # nothing stored
    # stored past the gate, the revision's verdict says the same
    r = _set_constant(client, mid, "then_branch", MERGE_HEADS, [0, 3, D], allow_invalid=True)
    assert r.status_code == 200, r.get_json()
    runtime = r.get_json()["validation"]["runtime"]
    assert runtime["status"] == "fails" and runtime["message"].startswith("with use_cache_branch = true: "), runtime


def test_an_edit_breaking_the_branch_without_the_cache_is_still_refused(client):
    mid = _upload(client, merged_decoder())
    # the queries split as if 3 tokens came: fails at every size the smoke run tries, and soon (a
    # later node's failure is first run at 512 tokens, whose attention takes seconds)
    r = _set_constant(client, mid, "else_branch", Q_HEADS, [0, 3, 2, 16])
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "with use_cache_branch = false: " in message and "in optimum::if/else_branch" in message, message


def test_a_harmless_edit_in_a_branch_is_accepted(client):
    mid = _upload(client, merged_decoder())
    r = _set_constant(client, mid, "then_branch", MERGE_HEADS, [0, 0, D])  # the same sizes, kept rather than inferred
    assert r.status_code == 200, r.get_json()
    runtime = r.get_json()["validation"]["runtime"]
    assert runtime["status"] == "ok" and runtime["flags"] == {"use_cache_branch": [False, True]}, runtime


ELSE = {"branch": "else_branch", "values": {"flag": False}}
THEN = {"branch": "then_branch", "values": {"flag": True}}


def test_the_cases_answers_are_one_verdict():
    ok = {"status": "ok", "symbolic": [], "shapes": {}}
    fails = {"status": "fails", "stage": "run", "message": "boom"}
    # the first failure is the answer, with the case it is from
    answer = ort_worker._of_cases([(ELSE, ok), (THEN, fails)])
    assert answer["status"] == "fails" and answer["case"] == THEN
    assert answer["flags"] == {"flag": [False, True]}
    # a case that could not be judged after one that ran: the first stands, the flag at one value
    answer = ort_worker._of_cases([(ELSE, ok), (THEN, {"status": "limit", "message": "out of memory"})])
    assert answer["status"] == "ok" and answer["flags"] == {"flag": [False]}
    # a failure at size 2 in the second case only: the first's verdict with that failure
    at_two = {"status": "fails", "message": "boom at 2", "size": 2, "dims": ["n"]}
    answer = ort_worker._of_cases(
        [(ELSE, {**ok, "other_size": {"status": "ok"}}), (THEN, {**ok, "other_size": at_two})]
    )
    assert answer["status"] == "ok" and answer["other_size"]["case"] == THEN


def test_a_second_case_is_not_started_when_it_could_not_end_in_time(monkeypatch):
    calls = []

    def slow_case(ort, np, path, hint, first, hints, sessions):
        calls.append(hints["loops"])
        time.sleep(0.4)  # a second as long would end past CASES_SHARE of the 1 s limit
        return {"status": "ok", "symbolic": []}

    monkeypatch.setattr(ort_worker, "_checked", slow_case)
    answer = ort_worker.check({"path": "", "cpu": 60, "wall": 1.0, "cases": [ELSE, THEN]})
    assert calls == [{"flag": False}], calls
    assert answer["status"] == "ok" and answer["flags"] == {"flag": [False]}, answer


def _nested_flags() -> onnx.ModelProto:
    """y = If(outer)[then: If(inner)[then: Relu(x), else: Reshape(x, [0, -1, 4])], else: Neg(x)]:
    the Reshape runs only at outer = true, inner = false."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper

    out = lambda n: [h.make_tensor_value_info(n, T.FLOAT, None)]  # noqa: E731
    shape = numpy_helper.from_array(np.array([0, -1, 4], dtype=np.int64), "v")
    slow = h.make_graph(
        [h.make_node("Constant", [], ["s"], name="slow/Constant", value=shape),
         h.make_node("Reshape", ["x", "s"], ["r"], name="slow/Reshape")], "slow", [], out("r"),
    )  # fmt: skip
    fast = h.make_graph([h.make_node("Relu", ["x"], ["f"], name="fast/Relu")], "fast", [], out("f"))
    inner = h.make_graph(
        [h.make_node("If", ["inner"], ["i"], name="inner_if", then_branch=fast, else_branch=slow)],
        "inner",
        [],
        out("i"),
    )
    plain = h.make_graph([h.make_node("Neg", ["x"], ["n"], name="plain/Neg")], "plain", [], out("n"))
    graph = h.make_graph(
        [h.make_node("If", ["outer"], ["y"], name="outer_if", then_branch=inner, else_branch=plain)],
        "nested",
        [
            h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 4]),
            h.make_tensor_value_info("outer", T.BOOL, [1]),
            h.make_tensor_value_info("inner", T.BOOL, [1]),
        ],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_two_flags_run_at_every_combination(client):
    """QA32 N1: with two flags only all-false and all-true ran; a Reshape broken on the path
    (outer true, inner false) was badged valid."""
    model = _nested_flags()
    assert [c["values"] for c in branch_cases(model.graph, ["x", "outer", "inner"])] == [
        {"outer": False, "inner": False},
        {"outer": True, "inner": True},
        {"outer": True, "inner": False},
        {"outer": False, "inner": True},
    ]
    mid = _upload(client, model)
    runtime = client.get(f"/api/models/{mid}/validation?revision=0").get_json()["runtime"]
    assert runtime["status"] == "ok" and runtime["flags"] == {
        "outer": [False, True, True, False],
        "inner": [False, True, False, True],
    }, runtime
    graph = client.get(f"/api/models/{mid}/graph?path=n0/then_branch/n0/else_branch").get_json()
    const = next(n["id"] for n in graph["nodes"] if n["op_type"] == "Constant")
    value = {"dtype": "INT64", "shape": [3], "values": [0, 3, 4]}  # 3 rows where seq 1 gives 1
    ops = [{"op": "set_attribute", "node": const, "name": "value", "value": value}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"].startswith(
        "onnxruntime can't run the edited model: with outer = true, inner = false: "
    ), r.get_json()["error"]["message"]
