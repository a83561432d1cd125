"""insert_node on a value that If/Loop bodies read from around them (a capture), through the real
API: the bodies reading it read the new output too (at any depth, not where a body has its own
value of that name), `consumers` may name the node holding them, and the change says so; extra
inputs it can't read are refused in one line; a tensor nothing reads is said to leave the new
output unused; an `output` name that wouldn't be honoured is refused. Every accepted edit's
download passes onnx.checker (full) and onnxruntime computes what numpy says."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import node_testcases, upload

X = np.array([-1.0, 0.5, 2.0, -3.0], np.float32)
K = np.array([-0.25, 1.0, -2.0, 0.5], np.float32)


def _vec(name: str, n: int = 4) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, T.FLOAT, [n])


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-v))


def _relu(v: np.ndarray) -> np.ndarray:
    return np.maximum(v, 0)


def _branches(read: str) -> dict:
    """then: Neg(read), else: Abs(read) — both read `read` from around them."""
    return {
        "then_branch": h.make_graph(
            [h.make_node("Neg", [read], ["t_out"], name="then_neg")], "then", [], [_vec("t_out")]
        ),
        "else_branch": h.make_graph(
            [h.make_node("Abs", [read], ["e_out"], name="else_abs")], "else", [], [_vec("e_out")]
        ),
    }


def _checked(g: onnx.GraphProto, opset: int = 17) -> onnx.ModelProto:
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m, full_check=True)
    return m


def capture_model(main_reads_x: bool = True) -> onnx.ModelProto:
    """z = Sigmoid(If(cond): Neg(x) | Abs(x)) (+ x where main_reads_x), and k_abs = Abs(k) computed
    last (an independent value, for an extra input computed after its reader)."""
    nodes = [
        h.make_node("If", ["cond"], ["yb"], name="branch", **_branches("x")),
        h.make_node("Sigmoid", ["yb"], ["sg" if main_reads_x else "z"], name="sig"),
    ]
    if main_reads_x:
        nodes.append(h.make_node("Add", ["sg", "x"], ["z"], name="add"))
    nodes.append(h.make_node("Abs", ["k"], ["k_abs"], name="late"))
    g = h.make_graph(
        nodes,
        "captures",
        [_vec("x"), h.make_tensor_value_info("cond", T.BOOL, [])],
        [_vec("z"), _vec("k_abs")],
        [nh.from_array(K, "k")],
    )
    return _checked(g)


def computed_capture_model() -> onnx.ModelProto:
    """hh = x * 2, read by the Add and captured by both branches: z = If(cond)(hh) + hh."""
    g = h.make_graph(
        [
            h.make_node("Mul", ["x", "two"], ["hh"], name="double"),
            h.make_node("If", ["cond"], ["yb"], name="branch", **_branches("hh")),
            h.make_node("Add", ["yb", "hh"], ["z"], name="add"),
        ],
        "computed",
        [_vec("x"), h.make_tensor_value_info("cond", T.BOOL, [])],
        [_vec("z")],
        [nh.from_array(np.array(2.0, np.float32), "two")],
    )
    return _checked(g)


def nested_model() -> onnx.ModelProto:
    """s_final = Loop 2 times: s <- If(flag): s + x | s, the If two bodies deep reading the main
    graph's x; sh_final = Loop 2 times over a body whose own input is named x (shadowing):
    s <- x + x."""
    inner = {
        "then_branch": h.make_graph([h.make_node("Add", ["s_in", "x"], ["it"], name="in_add")], "t", [], [_vec("it")]),
        "else_branch": h.make_graph([h.make_node("Identity", ["s_in"], ["ie"], name="in_id")], "e", [], [_vec("ie")]),
    }
    loop_inputs = [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, [])]
    cond_out = h.make_tensor_value_info("cond_out", T.BOOL, [])
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="pass_cond"),
            h.make_node("If", ["flag"], ["s_out"], name="inner_if", **inner),
        ],
        "body",
        [*loop_inputs, _vec("s_in")],
        [cond_out, _vec("s_out")],
    )
    shadow = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="pass_cond2"),
            h.make_node("Add", ["x", "x"], ["x_twice"], name="twice"),
        ],
        "shadow_body",
        [*loop_inputs, _vec("x")],
        [cond_out, _vec("x_twice")],
    )
    g = h.make_graph(
        [
            h.make_node("Loop", ["trip", "", "s0"], ["s_final"], name="loop", body=body),
            h.make_node("Loop", ["trip", "", "s0"], ["sh_final"], name="shadow", body=shadow),
        ],
        "nested",
        [_vec("x"), _vec("s0"), h.make_tensor_value_info("flag", T.BOOL, [])],
        [_vec("s_final"), _vec("sh_final")],
        [nh.from_array(np.array(2, np.int64), "trip")],
    )
    return _checked(g)


def _upload(client, model: onnx.ModelProto) -> str:
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def _edit(client, model: onnx.ModelProto, *ops) -> tuple[list[str], onnx.ModelProto]:
    """The change lines of an accepted batch and the download, checked in full."""
    mid = _upload(client, model)
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": list(ops)})
    assert r.status_code == 200, r.get_json()
    edited = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(edited, full_check=True)
    return r.get_json()["changes"], edited


def _refused(client, model: onnx.ModelProto, op: dict, status: int) -> str:
    mid = _upload(client, model)
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == status, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "\n" not in message and not r.get_json()["error"].get("details")
    return message


def _run(model: onnx.ModelProto, **feeds) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _z(model: onnx.ModelProto, cond: bool) -> np.ndarray:
    return _run(model, x=X, cond=np.array(cond))[0]


def _branch_of(model: onnx.ModelProto, name: str, attr: str) -> onnx.GraphProto:
    node = next(n for n in model.graph.node if n.name == name)
    return next(a.g for a in node.attribute if a.name == attr)


RELU_X = {"op": "insert_node", "tensor": "x", "op_type": "Relu"}


# ------------------------------------------------------------------ the bodies read the new output


def test_the_bodies_capturing_an_input_read_the_new_node_with_the_main_graph_reader(client):
    changes, model = _edit(client, capture_model(), RELU_X)
    assert changes == ["inserted Relu on 'x' for 1 reader(s) and the bodies of node \"branch\" (If), writing 'x_relu'"]
    r = _relu(X)
    np.testing.assert_allclose(_z(model, True), _sigmoid(-r) + r, rtol=1e-6)
    np.testing.assert_allclose(_z(model, False), _sigmoid(np.abs(r)) + r, rtol=1e-6)
    assert list(_branch_of(model, "branch", "then_branch").node[0].input) == ["x_relu"]


def test_a_value_only_bodies_read_is_not_a_dead_node(client):
    changes, model = _edit(client, capture_model(main_reads_x=False), RELU_X)
    assert changes == ["inserted Relu on 'x' for 0 reader(s) and the bodies of node \"branch\" (If), writing 'x_relu'"]
    np.testing.assert_allclose(_z(model, True), _sigmoid(-_relu(X)), rtol=1e-6)
    np.testing.assert_allclose(_z(model, False), _sigmoid(_relu(X)), rtol=1e-6)


def test_consumers_may_name_the_if_whose_bodies_read_it(client):
    changes, model = _edit(client, capture_model(), {**RELU_X, "consumers": ["@branch"]})
    assert changes == ["inserted Relu on 'x' for 0 reader(s) and the bodies of node \"branch\" (If), writing 'x_relu'"]
    np.testing.assert_allclose(_z(model, True), _sigmoid(-_relu(X)) + X, rtol=1e-6)  # the Add still reads x


def test_a_computed_value_the_bodies_capture_keeps_its_name_for_them(client):
    changes, model = _edit(client, computed_capture_model(), {"op": "insert_node", "tensor": "hh", "op_type": "Relu"})
    assert changes == ["inserted Relu after 'hh' (all readers, and the bodies of node \"branch\" (If))"]
    r = _relu(2 * X)
    np.testing.assert_allclose(_z(model, True), -r + r, rtol=1e-6)
    np.testing.assert_allclose(_z(model, False), np.abs(r) + r, rtol=1e-6)


def test_a_capture_two_bodies_deep_follows_and_a_body_with_its_own_x_keeps_it(client):
    changes, model = _edit(client, nested_model(), RELU_X)
    assert changes == ["inserted Relu on 'x' for 0 reader(s) and the bodies of node \"loop\" (Loop), writing 'x_relu'"]
    s0 = np.array([1.0, -2.0, 3.0, 0.0], np.float32)
    s_final, sh_final = _run(model, x=X, s0=s0, flag=np.array(True))
    np.testing.assert_allclose(s_final, s0 + 2 * _relu(X), rtol=1e-6)
    np.testing.assert_allclose(sh_final, s0 * 4, rtol=1e-6)  # its body doubles its own x, twice
    shadow = _branch_of(model, "shadow", "body")
    assert shadow.input[2].name == "x" and list(shadow.node[1].input) == ["x", "x"]


def _official(name: str):
    case = node_testcases()[name]
    inputs, outputs = case.data_sets[0]
    feeds = dict(zip([i.name for i in case.model.graph.input], inputs, strict=True))
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    return model, feeds, outputs


@pytest.fixture
def loop11_capturing():
    """onnx's test_loop11 with its body's constant x made a main-graph initializer the body
    captures (still computing onnx's expected outputs)."""
    model, feeds, outputs = _official("test_loop11")
    body = model.graph.node[0].attribute[0].g
    const = next(n for n in body.node if n.output[0] == "x")
    values = nh.to_array(const.attribute[0].t)
    body.node.remove(const)
    model.graph.initializer.append(nh.from_array(values, "x"))
    onnx.checker.check_model(model, full_check=True)
    np.testing.assert_allclose(_run(model, **feeds)[0], outputs[0], rtol=1e-6)  # still onnx's test
    return model, feeds, values


def test_official_loop11_capturing_its_x_reads_the_new_node(client, loop11_capturing):
    model, feeds, values = loop11_capturing
    changes, edited = _edit(client, model, {"op": "insert_node", "tensor": "x", "op_type": "Neg"})
    assert changes == ["inserted Neg on 'x' for 0 reader(s) and the bodies of node n1 (Loop), writing 'x_neg'"]
    trip = int(feeds["trip_count"])
    steps = np.cumsum(-values[:trip])
    res_y, res_scan = _run(edited, **feeds)
    np.testing.assert_allclose(res_y, feeds["y"] + steps[-1], rtol=1e-6)
    np.testing.assert_allclose(res_scan, (feeds["y"] + steps).reshape(trip, 1), rtol=1e-6)


def test_official_if_capturing_a_value_reads_the_new_node(client):
    """onnx's test_if with its then_branch giving a main-graph initializer (an Identity of it)."""
    model, _, _ = _official("test_if")
    then = next(a.g for a in model.graph.node[0].attribute if a.name == "then_branch")
    const = then.node[0]
    model.graph.initializer.append(nh.from_array(nh.to_array(const.attribute[0].t), "c"))
    then.node.remove(const)
    then.node.append(h.make_node("Identity", ["c"], [then.output[0].name]))
    onnx.checker.check_model(model, full_check=True)
    changes, edited = _edit(client, model, {"op": "insert_node", "tensor": "c", "op_type": "Neg"})
    assert changes == ["inserted Neg on 'c' for 0 reader(s) and the bodies of node n1 (If), writing 'c_neg'"]
    for cond in (True, False):
        want = -np.arange(1, 6, dtype=np.float32) if cond else np.arange(5, 0, -1, dtype=np.float32)
        np.testing.assert_allclose(_run(edited, cond=np.array(cond))[0], want)


def test_official_loop11_input_read_only_by_the_loop_mentions_no_bodies(client):
    model, feeds, _ = _official("test_loop11")
    changes, edited = _edit(client, model, {"op": "insert_node", "tensor": "y", "op_type": "Relu"})
    assert changes == ["inserted Relu on 'y' for 1 reader(s), writing 'y_relu'"]
    relu_feeds = {**feeds, "y": _relu(feeds["y"])}
    for got, want in zip(_run(edited, **feeds), _run(model, **relu_feeds), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


# ------------------------------------------------------------------ extra inputs


@pytest.mark.parametrize(
    ("graph", "where"), [("", "the main graph"), ("@branch/then_branch", "branch/then_branch or around it")]
)
def test_an_extra_input_that_is_nowhere_is_refused_in_one_line(client, graph, where):
    op = {**RELU_X, "op_type": "Add", "inputs": ["nope"], "graph": graph}
    message = _refused(client, capture_model(), op, 404)
    assert message == f"op #1 (insert_node): no tensor 'nope' in {where}"


@pytest.mark.parametrize("op", [{"tensor": "yb"}, {"tensor": "x", "op_type": "Add", "inputs": ["yb"]}])
def test_a_body_reading_its_own_ifs_output_is_refused_naming_the_if(client, op):
    full = {"op": "insert_node", "op_type": "Relu", "graph": "@branch/then_branch", **op}
    message = _refused(client, capture_model(), full, 400)
    assert message == "op #1 (insert_node): branch/then_branch can't read 'yb': node \"branch\" (If) computes it"


def test_an_extra_input_computed_from_the_new_nodes_readers_is_a_cycle(client):
    op = {**RELU_X, "op_type": "Add", "inputs": ["z"]}
    message = _refused(client, capture_model(), op, 400)
    assert message == "op #1 (insert_node): 'z' is computed from what the new Add feeds: reading it there makes a cycle"


def test_an_extra_input_computed_after_the_if_moves_the_if_after_it(client):
    op = {**RELU_X, "op_type": "Add", "inputs": ["k_abs"], "graph": "@branch/then_branch"}
    changes, model = _edit(client, capture_model(), op)
    assert changes == [
        "inserted Add on 'x' for 1 reader(s) in branch/then_branch, writing 'x_add'; 1 node(s) moved to keep the order"
    ]
    np.testing.assert_allclose(_z(model, True), _sigmoid(-(X + np.abs(K))) + X, rtol=1e-6)
    np.testing.assert_allclose(_z(model, False), _sigmoid(np.abs(X)) + X, rtol=1e-6)


# ------------------------------------------------------------------ unread tensors, output names


def test_a_tensor_nothing_reads_there_is_said_to_leave_the_new_output_unused(client):
    op = {"op": "insert_node", "tensor": "cond", "op_type": "Not", "graph": "@branch/then_branch"}
    changes, model = _edit(client, capture_model(), op)
    assert changes == [
        "inserted Not on 'cond' for 0 reader(s) in branch/then_branch, writing 'cond_not';"
        " nothing reads 'cond' in branch/then_branch, so 'cond_not' goes unused"
    ]
    np.testing.assert_allclose(_z(model, True), _sigmoid(-X) + X, rtol=1e-6)


def test_an_output_name_a_computed_tensor_would_not_take_is_refused(client):
    op = {"op": "insert_node", "tensor": "hh", "op_type": "Relu", "output": "hh_relu"}
    message = _refused(client, computed_capture_model(), op, 400)
    assert message == (
        "op #1 (insert_node): the new node can't write 'hh_relu': for all readers of 'hh', which the main graph"
        " computes, it writes 'hh' itself; leave output out, or list the readers in consumers"
    )
    changes, _ = _edit(client, computed_capture_model(), {**op, "consumers": ["@add"]})
    assert changes == ["inserted Relu on 'hh' for 1 reader(s), writing 'hh_relu'"]


def test_a_replaced_body_output_names_what_it_left_and_cleanup_removes_it(client):
    """then_branch: a = Abs(x), out = Neg(a); its output replaced by a leaves Neg computing
    nothing: the change line says so, and cleanup removes it from the body."""
    then_g = h.make_graph(
        [h.make_node("Abs", ["x"], ["t_abs"], name="t_abs"), h.make_node("Neg", ["t_abs"], ["t_out"], name="t_neg")],
        "then",
        [],
        [h.make_tensor_value_info("t_out", T.FLOAT, [2])],
    )
    else_g = h.make_graph(
        [h.make_node("Relu", ["x"], ["e_out"], name="e_relu")],
        "else",
        [],
        [h.make_tensor_value_info("e_out", T.FLOAT, [2])],
    )
    g = h.make_graph(
        [h.make_node("If", ["c"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    mid = upload(client, model.SerializeToString(), "if.onnx").get_json()["id"]
    op = {"op": "add_output", "graph": "n0/then_branch", "tensor": "t_abs", "replace": "t_out"}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith(
        "; 1 node no output needs any more ('t_neg'): cleanup (Model › Tools › Clean up…) removes them"
    )
    r = client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "cleanup"}]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].startswith("removed 0 dead nodes (and 1 in If/Loop/Scan bodies)")
    back = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(back, full_check=True)
    then_nodes = [n.name for a in back.graph.node[0].attribute if a.name == "then_branch" for n in a.g.node]
    assert then_nodes == ["t_abs"]
    x = np.array([-1.5, 2.0], np.float32)
    sess = ort.InferenceSession(back.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"c": np.array(True), "x": x})[0], np.abs(x))
