"""unroll_loop (QA37/QA39: a target without control flow had no tool for a Loop): a Loop of
known count replaced by its body once per iteration, giving onnxruntime's outputs of the Loop."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _body(nested_if: bool = False) -> onnx.GraphProto:
    """i, cond, v -> cond, v + x * i (carried), v * 2 (scanned); with `nested_if`, the product
    goes through an If whose branches read the body's values."""
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
        helper.make_node("Cast", ["i"], ["i_f"], name="as_float", to=F),
        helper.make_node("Mul", ["x", "i_f"], ["step"], name="times_i"),
    ]
    if nested_if:
        then = helper.make_graph(
            [helper.make_node("Add", ["step", "v_in"], ["then_v"])],
            "then",
            [],
            [helper.make_tensor_value_info("then_v", F, [3])],
        )
        other = helper.make_graph(
            [helper.make_node("Sub", ["v_in", "step"], ["else_v"])],
            "else",
            [],
            [helper.make_tensor_value_info("else_v", F, [3])],
        )
        nodes += [
            helper.make_node("ReduceSum", ["i_f"], ["i_sum"], name="sum", keepdims=0),
            helper.make_node("Less", ["i_sum", "two"], ["early"], name="early"),
            helper.make_node("If", ["early"], ["v_out"], name="pick", then_branch=then, else_branch=other),
        ]
    else:
        nodes.append(helper.make_node("Add", ["v_in", "step"], ["v_out"], name="accumulate"))
    nodes.append(helper.make_node("Mul", ["v_out", "k"], ["scan"], name="double"))
    return helper.make_graph(
        nodes,
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("cond_in", B, []),
            helper.make_tensor_value_info("v_in", F, [3]),
        ],
        [
            helper.make_tensor_value_info("cond_out", B, []),
            helper.make_tensor_value_info("v_out", F, [3]),
            helper.make_tensor_value_info("scan", F, [3]),
        ],
        [
            numpy_helper.from_array(np.array(2.0, np.float32), "k"),
            numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        ],
    )


def loop_model(count: int = 4, opset: int = 17, nested_if: bool = False, cond: str = "") -> onnx.ModelProto:
    weights = [numpy_helper.from_array(np.array(count, np.int64), "M")]
    if cond:
        weights.append(numpy_helper.from_array(np.array(True), cond))
    g = helper.make_graph(
        [
            helper.make_node("Loop", ["M", cond, "v0"], ["v_final", "scans"], name="loop", body=_body(nested_if)),
            helper.make_node("Relu", ["v_final"], ["y"], name="after"),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [3]), helper.make_tensor_value_info("v0", F, [3])],
        [helper.make_tensor_value_info("y", F, [3]), helper.make_tensor_value_info("scans", F, [count, 3])],
        weights,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model, full_check=True)
    return model


def outputs(data: bytes, feeds: dict) -> list:
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)


def unrolled(client, model: onnx.ModelProto, status: int = 200, node: str = "loop"):
    mid = upload(client, model.SerializeToString(), "loop.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "unroll_loop", "node": node}]})
    assert r.status_code == status, r.get_json()
    if status != 200:
        return r.get_json()["error"]["message"]
    return r.get_json()["changes"][0], client.get(f"/api/models/{mid}/download").data


@pytest.mark.parametrize(
    ("count", "opset", "nested_if", "cond"),
    [(4, 17, False, ""), (1, 11, False, "go"), (5, 13, True, ""), (3, 11, True, "")],
)
def test_an_unrolled_loop_gives_the_loops_outputs(client, count, opset, nested_if, cond):
    model = loop_model(count, opset, nested_if, cond)
    change, data = unrolled(client, model)
    assert change.startswith(f"unrolled Loop n0 'loop' ({count} iteration{'s' if count > 1 else ''} of ")
    result = onnx.load_from_string(data)
    onnx.checker.check_model(result, full_check=True)
    assert "Loop" not in {n.op_type for n in result.graph.node}
    assert [o.name for o in result.graph.output] == ["y", "scans"]
    rng = np.random.default_rng(count)
    feeds = {"x": rng.standard_normal(3).astype(np.float32), "v0": rng.standard_normal(3).astype(np.float32)}
    for got, want in zip(outputs(data, feeds), outputs(model.SerializeToString(), feeds), strict=True):
        np.testing.assert_array_equal(got, want)
    names = [n.name for n in result.graph.node]
    assert "loop/0/times_i" in names and f"loop/{count - 1}/double" in names
    assert not any(n.endswith("keep_going") for n in names)  # the condition's Identity: nothing reads it


def test_a_loop_whose_count_or_end_is_not_known_is_refused_saying_why(client):
    fed = loop_model()
    fed.graph.initializer.pop()
    fed.graph.input.append(helper.make_tensor_value_info("M", I64, []))
    assert "trip count 'M' is an input of the graph: a caller may feed any (Fix input" in unrolled(client, fed, 400)
    # QA42: an initializer that is an input too is a default a caller overrides, not a constant
    default = loop_model()
    default.graph.input.append(helper.make_tensor_value_info("M", I64, []))
    assert "trip count 'M' is an input of the graph" in unrolled(client, default, 400)
    computed = loop_model()
    computed.graph.initializer[0].name = "half"
    computed.graph.node.insert(0, helper.make_node("Add", ["half", "half"], ["M"], name="twice"))
    assert "trip count 'M' is computed, not a constant (Simplify folds it" in unrolled(client, computed, 400)
    stops = loop_model()
    body = stops.graph.node[0].attribute[0].g
    body.node[0].CopyFrom(helper.make_node("Less", ["i", "three"], ["cond_out"], name="keep_going"))
    body.initializer.append(numpy_helper.from_array(np.array(3, np.int64), "three"))
    assert "body computes its condition: it may stop early" in unrolled(client, stops, 400)
    heavy = loop_model(200)  # a 2 MB Constant in the body, copied at each iteration: 400 MB
    big = numpy_helper.from_array(np.zeros(1 << 19, np.float32), "filler")
    heavy.graph.node[0].attribute[0].g.node.append(helper.make_node("Constant", [], ["unused"], value=big))
    message = unrolled(client, heavy, 400)
    assert "body holds 2,097," in message and message.endswith("of nodes and constants: 200 copies would pass 256 MiB")
    nested = loop_model(200, nested_if=True)  # QA42: a branch's 2 MB weight, copied with each iteration
    pick = next(n for n in nested.graph.node[0].attribute[0].g.node if n.op_type == "If")
    pick.attribute[0].g.initializer.append(numpy_helper.from_array(np.zeros(1 << 19, np.float32), "branch_w"))
    assert unrolled(client, nested, 400).endswith("200 copies would pass 256 MiB")
    long = loop_model(2000)
    assert "runs 2000 times over 5 nodes: past 1,024 iterations" in unrolled(client, long, 400)
    relu = loop_model()
    mid = upload(client, relu.SerializeToString(), "r.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "unroll_loop", "node": "after"}]})
    assert r.status_code == 400 and "node n1 is a Relu, not a Loop" in r.get_json()["error"]["message"]


def test_check_a_target_offers_unroll_for_a_loop_and_passes_after_it(client):
    mid = upload(client, loop_model().SerializeToString(), "loop.onnx").get_json()["id"]
    (rule,) = client.get(f"/api/models/{mid}/target?control_flow=0").get_json()["rules"]
    assert not rule["ok"] and rule["fix"].startswith("Unroll (a Loop's panel) replaces a Loop that runs a known number")
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "unroll_loop", "node": "n0"}]})
    assert r.status_code == 200, r.get_json()
    assert client.get(f"/api/models/{mid}/target?control_flow=0").get_json()["ok"]


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["test_loop11", "test_loop13_seq", "test_loop16_seq_none"])
def test_the_official_loop_tests_unrolled_give_their_expected_outputs(client, name):
    """onnx's Loop node tests, their trip count and condition made the constants of their data
    set: a tensor carried and scanned, a sequence grown, an optional sequence carried as a sequence."""
    from onnx.backend.test.case.node import collect_testcases

    case = next(c for c in collect_testcases(None) if c.name == name)
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    (inputs, expected), feeds = case.data_sets[0], {}
    for v, x in zip(list(model.graph.input), inputs, strict=True):
        if v.name in ("trip_count", "cond"):
            model.graph.initializer.append(numpy_helper.from_array(np.asarray(x), v.name))
            model.graph.input.remove(v)
        else:
            feeds[v.name] = x
    change, data = unrolled(client, model, node="n0")
    assert "Loop" not in {n.op_type for n in onnx.load_from_string(data).graph.node}, change
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    for g, want in zip(got, expected, strict=True):
        for a, b in zip(g if isinstance(g, list) else [g], want if isinstance(want, list) else [want], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def _first(model: onnx.ModelProto, op_type: str) -> str:
    return f"n{next(i for i, n in enumerate(model.graph.node) if n.op_type == op_type)}"


def _scan_cases() -> list[str]:
    from onnx.backend.test.case.node import collect_testcases

    return [
        c.name
        for c in collect_testcases(None)
        if c.model.opset_import[0].version >= 9 and any(n.op_type == "Scan" for n in c.model.graph.node)
    ]


@pytest.mark.corpus
@pytest.mark.parametrize("name", _scan_cases())
def test_the_official_scan_tests_unrolled_give_their_expected_outputs(client, name):
    """onnx's Scan node tests and the written-out LinearAttention tests (a Scan over the
    sequence): unrolled, onnx's reference evaluator gives the tests' expected outputs."""
    from onnx.backend.test.case.node import collect_testcases
    from onnx.reference import ReferenceEvaluator

    case = next(c for c in collect_testcases(None) if c.name == name)
    change, data = unrolled(client, case.model, node=_first(case.model, "Scan"))
    result = onnx.load_from_string(data)
    assert change.startswith("unrolled Scan ") and "Scan" not in {n.op_type for n in result.graph.node}
    inputs, expected = case.data_sets[0]
    feeds = dict(zip([v.name for v in result.graph.input], inputs, strict=True))
    for got, want in zip(ReferenceEvaluator(result).run(None, feeds), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-3 if want.dtype == np.float16 else 1e-5, atol=1e-5)


def scan_model() -> onnx.ModelProto:
    """s [2] carried; a [2, 4] scanned along axis 1 backwards, b [4, 2] along axis 0; scan
    outputs: s (stacked along axis 1, backwards) and a·b (along axis 0)."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "a_t"], ["s_out"]),
            helper.make_node("Mul", ["s_out", "b_t"], ["prod"]),
            helper.make_node("Identity", ["s_out"], ["s_seen"]),
        ],
        "body",
        [helper.make_tensor_value_info(n, F, [2]) for n in ("s_in", "a_t", "b_t")],
        [helper.make_tensor_value_info(n, F, [2]) for n in ("s_out", "s_seen", "prod")],
    )
    g = helper.make_graph(
        [
            helper.make_node(
                "Scan", ["s0", "a", "b"], ["s_final", "seen", "prods"], name="scan", body=body, num_scan_inputs=2,
                scan_input_axes=[1, 0], scan_input_directions=[1, 0], scan_output_axes=[1, 0], scan_output_directions=[1, 0],
            )
        ],
        "g",
        [helper.make_tensor_value_info("s0", F, [2]), helper.make_tensor_value_info("a", F, [2, 4]), helper.make_tensor_value_info("b", F, [4, 2])],
        [helper.make_tensor_value_info("s_final", F, [2]), helper.make_tensor_value_info("seen", F, [2, 4]), helper.make_tensor_value_info("prods", F, [4, 2])],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


def test_a_scan_with_axes_and_directions_unrolled_gives_onnxruntimes_outputs(client):
    model = scan_model()
    change, data = unrolled(client, model, node="scan")
    assert change == "unrolled Scan n0 'scan' (4 iterations of 3 node(s)): 30 node(s) in its place", change
    rng = np.random.default_rng(1)
    feeds = {k: rng.standard_normal(s).astype(np.float32) for k, s in (("s0", 2), ("a", (2, 4)), ("b", (4, 2)))}
    for got, want in zip(outputs(data, feeds), outputs(model.SerializeToString(), feeds), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_scan_of_unknown_length_or_opset_8_is_refused_saying_why(client):
    from onnx.backend.test.case.node import collect_testcases

    old = next(c for c in collect_testcases(None) if c.name == "test_scan_sum").model
    assert "is Scan-8 (a batch axis and sequence lengths)" in unrolled(client, old, 400, node="n0")
    open_length = scan_model()
    open_length.graph.input[1].type.tensor_type.shape.dim[1].dim_param = "T"
    assert "sequence length is unknown: 'a' has no known size along axis 1" in unrolled(
        client, open_length, 400, node="scan"
    )
