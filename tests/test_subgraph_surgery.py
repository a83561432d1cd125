"""Surgery inside If/Loop/Scan bodies and at graph outputs, through the real API: insert_node,
rename_tensor and add_output/remove_output take a `graph`; a graph output a new node now writes
takes that node's type; what would break an If's or Loop's contract with its bodies is refused
in one line naming it; and refusals of edits inside bodies name the inner node and its body,
element types by name. Every accepted edit's download passes onnx.checker (full) and computes in
onnxruntime what the edit says; models are built with onnx.helper or are onnx's own node tests."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import node_testcases, upload

X_THEN = np.array([[-3.0, 1.0, 2.0], [0.5, 0.5, 0.5]], np.float32)  # sums above 0: then_branch
X_ELSE = -X_THEN  # else_branch


def if_model() -> onnx.ModelProto:
    """y = If(sum(x) > 0): then LeakyRelu(x + 1.5) ("then_add", "then_lrelu" writing then_out),
    else Transpose(Transpose(x * -2)) ("else_mul", "else_transpose", "else_transpose_back")."""
    f = lambda name: h.make_tensor_value_info(name, T.FLOAT, [2, 3])  # noqa: E731
    then_g = h.make_graph(
        [
            h.make_node("Add", ["x", "c_then"], ["then_add"], name="then_add"),
            h.make_node("LeakyRelu", ["then_add"], ["then_out"], name="then_lrelu", alpha=0.1),
        ],
        "then_body",
        [],
        [f("then_out")],
        [nh.from_array(np.full((2, 3), 1.5, np.float32), "c_then")],
    )
    else_g = h.make_graph(
        [
            h.make_node("Mul", ["x", "c_else"], ["else_mul"], name="else_mul"),
            h.make_node("Transpose", ["else_mul"], ["else_t"], name="else_transpose", perm=[1, 0]),
            h.make_node("Transpose", ["else_t"], ["else_out"], name="else_transpose_back", perm=[1, 0]),
        ],
        "else_body",
        [],
        [f("else_out")],
        [nh.from_array(np.full((2, 3), -2.0, np.float32), "c_else")],
    )
    g = h.make_graph(
        [
            h.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
            h.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
            h.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
        ],
        "if_graph",
        [f("x")],
        [f("y")],
        [nh.from_array(np.array(0.0, np.float32), "zero")],
    )
    return _checked(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))


def loop_model() -> onnx.ModelProto:
    """acc_final = Loop(trip 3, acc0 = 0): acc <- (acc + x) * Cast(iter) ("body_add", "cast_i",
    "body_mul" inside the body)."""
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="pass_cond"),
            h.make_node("Cast", ["iter"], ["iter_f"], name="cast_i", to=T.FLOAT),
            h.make_node("Add", ["acc_in", "x"], ["acc_sum"], name="body_add"),
            h.make_node("Mul", ["acc_sum", "iter_f"], ["acc_out"], name="body_mul"),
        ],
        "loop_body",
        [
            h.make_tensor_value_info("iter", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("acc_in", T.FLOAT, [4]),
        ],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [4])],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["trip", "", "acc0"], ["acc_final"], name="loop", body=body)],
        "loop_graph",
        [h.make_tensor_value_info("x", T.FLOAT, [4])],
        [h.make_tensor_value_info("acc_final", T.FLOAT, [4])],
        [nh.from_array(np.array(3, np.int64), "trip"), nh.from_array(np.zeros(4, np.float32), "acc0")],
    )
    return _checked(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))


def classifier(batch="batch") -> onnx.ModelProto:
    """probs[batch, 5] = Softmax(x[batch, 4] @ w) ("fc", "softmax"): a model ending in a softmax."""
    w = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    g = h.make_graph(
        [
            h.make_node("MatMul", ["x", "w"], ["logits"], name="fc"),
            h.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
        ],
        "clf",
        [h.make_tensor_value_info("x", T.FLOAT, [batch, 4])],
        [h.make_tensor_value_info("probs", T.FLOAT, [batch, 5])],
        [nh.from_array(w, "w")],
    )
    return _checked(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))


def _checked(m: onnx.ModelProto) -> onnx.ModelProto:
    onnx.checker.check_model(m, full_check=True)
    return m


def _upload(client, model: onnx.ModelProto) -> str:
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def _edit(client, mid: str, *ops, base: int = 0) -> dict:
    r = client.post(f"/api/models/{mid}/edits", json={"base": base, "ops": list(ops)})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def _refused(client, model: onnx.ModelProto, *ops, status: int) -> str:
    """The one-line message of a refused batch (the model left at revision 0)."""
    mid = _upload(client, model)
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": list(ops)})
    assert r.status_code == status, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "\n" not in message and client.get(f"/api/models/{mid}/revisions").get_json()["head"] == 0
    return message


def _download(client, mid: str) -> onnx.ModelProto:
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(model, full_check=True)
    return model


def _run(model: onnx.ModelProto, **feeds) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _branch(model: onnx.ModelProto, node: int, attr: str) -> onnx.GraphProto:
    return next(a.g for a in model.graph.node[node].attribute if a.name == attr)


def _leaky(v: np.ndarray) -> np.ndarray:
    return np.where(v > 0, v, 0.1 * v)


# ------------------------------------------------------------------ refusals inside bodies


def test_a_bad_attribute_in_a_branch_is_said_of_the_inner_node_not_the_if(client):
    message = _refused(
        client,
        if_model(),
        {"op": "set_attribute", "node": "@branch/else_branch/@else_transpose", "name": "perm", "value": [0, 0]},
        status=422,
    )
    assert message.startswith(
        'the edit would break shape/type inference: node "else_transpose" (Transpose) in branch/else_branch:'
        " Attribute perm for Transpose has repeated value: 0"
    ), message
    assert "Inference error(s)" not in message and '"branch" (If)' not in message


def test_a_type_clash_in_a_loop_body_names_the_body_node_it_reaches(client):
    """Cast "cast_i" made DOUBLE: the Mul reading it is the first node inference stops at."""
    message = _refused(
        client,
        loop_model(),
        {"op": "set_attribute", "node": "@loop/body/@cast_i", "name": "to", "value": 11},
        status=422,
    )
    assert 'node "body_mul" (Mul) in loop/body: ' in message and "double" in message, message
    assert '"loop" (Loop)' not in message


def test_a_missing_attribute_in_a_loop_body_is_said_of_its_node(client):
    """The checker's own words name only the Loop ("Bad node spec for node. Name: loop")."""
    message = _refused(
        client, loop_model(), {"op": "delete_attribute", "node": "@loop/body/@cast_i", "name": "to"}, status=422
    )
    assert (
        message
        == "the edit would make the model invalid: node \"cast_i\" (Cast) in loop/body: Required attribute 'to' is missing."
    ), message


@pytest.mark.parametrize(
    ("op", "node"),
    [
        ({"op": "set_attribute", "node": "@loop/body/@cast_i", "name": "to", "value": 11}, "n0/body/n3"),  # body_mul
        ({"op": "delete_attribute", "node": "@loop/body/@cast_i", "name": "to"}, "n0/body/n1"),  # cast_i
        # a node the batch inserts first moves cast_i: the error names it where the model on screen has it
        (
            [
                {"op": "insert_node", "graph": "n0/body", "tensor": "iter", "op_type": "Identity"},
                {"op": "delete_attribute", "node": "@loop/body/@cast_i", "name": "to"},
            ],
            "n0/body/n1",
        ),
    ],
)
def test_a_refusal_gives_the_id_of_the_body_node_it_names_in_the_revision_on_screen(client, op, node):
    mid = _upload(client, loop_model())
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": op if isinstance(op, list) else [op]})
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["node"] == node, r.get_json()


def test_an_unnamed_node_is_named_by_its_operator_and_output_and_types_by_name():
    """onnx says "(op_type:Cast): ... (10) vs (1)" of a nameless Cast writing a FLOAT output."""
    from app.onnx_io.causes import causes_of

    model = classifier(1)
    model.graph.node[1].output[0] = "soft"
    model.graph.node.append(h.make_node("Cast", ["soft"], ["probs"], to=T.FLOAT16))
    with pytest.raises(onnx.shape_inference.InferenceError) as err:
        onnx.checker.check_model(model, full_check=True)
    assert "(10) vs (1)" in str(err.value) or "(FLOAT16) vs (FLOAT)" in str(err.value)
    causes = causes_of(str(err.value), model)
    assert (
        causes.first
        == "the Cast node writing 'probs' in the main graph: its output 'probs' is inferred FLOAT16 but declared FLOAT"
    )


def test_a_branch_output_from_the_enclosing_graph_is_said_of_that_branch():
    from app.onnx_io.causes import causes_of

    model = if_model()
    then_g = _branch(model, 2, "then_branch")
    del then_g.node[:]
    then_g.output[0].name = "x"
    with pytest.raises(onnx.checker.ValidationError) as err:
        onnx.checker.check_model(model)
    assert causes_of(str(err.value), model).first.startswith("graph branch/then_branch: Graph output 'x' is not")


def test_a_fault_two_bodies_deep_is_said_of_its_node_and_the_path_to_it():
    """onnx nests "(op_type:If, node name: outer): Inference error(s): (op_type:If, node name:
    inner): Inference error(s): (op_type:Transpose, node name: ): ..."."""
    from app.onnx_io.causes import causes_of

    model = nested_model()
    inner = _branch(model, 0, "then_branch").node[1]
    bad = next(a.g for a in inner.attribute if a.name == "else_branch").node[0]
    bad.op_type, bad.name = "Transpose", ""
    bad.attribute.append(h.make_attribute("perm", [1]))
    with pytest.raises(onnx.shape_inference.InferenceError) as err:
        onnx.checker.check_model(model, full_check=True)
    causes = causes_of(str(err.value), model)
    assert causes.first == (
        "the Transpose node writing 'i_else' in outer/then_branch/inner/else_branch:"
        " Invalid attribute perm {1}, input shape = {2}"
    )
    assert causes.more == []


# ------------------------------------------------------------------ insert_node at a graph output


@pytest.mark.parametrize(
    ("op_type", "attributes", "declared", "expect"),
    [
        ("ArgMax", {"axis": 1, "keepdims": 0}, "INT64 ⟨batch⟩", lambda p: p.argmax(axis=1)),
        ("Cast", {"to": "FLOAT16"}, "FLOAT16 ⟨batch×5⟩", lambda p: p.astype(np.float16)),
        ("Flatten", {"axis": 0}, "FLOAT ⟨1×?⟩", lambda p: p.reshape(1, -1)),
    ],
)
def test_a_node_inserted_after_a_graph_output_retypes_it(client, op_type, attributes, declared, expect):
    mid = _upload(client, classifier())
    op = {"op": "insert_node", "tensor": "probs", "op_type": op_type, "attributes": attributes}
    said = _edit(client, mid, op)["changes"][0]
    assert said.endswith(f"graph output 'probs' is now {declared} (was FLOAT ⟨batch×5⟩)"), said
    model = _download(client, mid)
    assert [o.name for o in model.graph.output] == ["probs"]
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    logits = x @ np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    (got,) = _run(model, x=x)
    want = expect(probs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3)


def test_unsqueeze_after_an_output_and_deleting_it_gives_the_old_output_back(client):
    mid = _upload(client, classifier(1))
    axes = {"op": "add_initializer", "name": "axes", "value": {"dtype": "INT64", "shape": [1], "values": [0]}}
    said = _edit(
        client, mid, axes, {"op": "insert_node", "tensor": "probs", "op_type": "Unsqueeze", "inputs": ["axes"]}
    )
    assert said["changes"][1].endswith("graph output 'probs' is now FLOAT ⟨1×1×5⟩ (was FLOAT ⟨1×5⟩)")
    (got,) = _run(_download(client, mid), x=np.ones((1, 4), np.float32))
    assert got.shape == (1, 1, 5)
    said = _edit(client, mid, {"op": "delete_node", "node": "n2", "reconnect": True}, base=1)["changes"][0]
    assert "graph output 'probs' is now FLOAT ⟨1×5⟩ (was FLOAT ⟨1×1×5⟩)" in said and "'axes'" in said
    assert _download(client, mid).graph == classifier(1).graph


def test_a_type_keeping_node_after_an_output_leaves_its_declaration(client):
    mid = _upload(client, classifier())
    assert _edit(client, mid, {"op": "insert_node", "tensor": "probs", "op_type": "Relu"})["changes"] == [
        "inserted Relu after 'probs' (all readers)"
    ]
    assert _download(client, mid).graph.output[0] == classifier().graph.output[0]


# ------------------------------------------------------------------ insert_node in bodies


def test_inserting_at_the_end_of_a_branch_makes_the_new_node_the_branch_output(client):
    mid = _upload(client, if_model())
    said = _edit(
        client, mid, {"op": "insert_node", "graph": "@branch/then_branch", "tensor": "then_out", "op_type": "Abs"}
    )
    assert said["changes"] == ["inserted Abs after 'then_out' (all readers) in branch/then_branch"]
    model = _download(client, mid)
    then_g = _branch(model, 2, "then_branch")
    assert [n.op_type for n in then_g.node] == ["Add", "LeakyRelu", "Abs"] and then_g.output[0].name == "then_out"
    np.testing.assert_allclose(_run(model, x=X_THEN)[0], np.abs(_leaky(X_THEN + 1.5)), rtol=1e-6)
    np.testing.assert_allclose(_run(model, x=X_ELSE)[0], X_ELSE * -2, rtol=1e-6)


def test_a_node_onnx_cant_type_at_a_branch_output_leaves_its_shape_unknown(client):
    """onnxruntime's FastGelu has no onnx inference: the branch output keeps FLOAT, of no shape."""
    mid = _upload(client, if_model())
    op = {
        "op": "insert_node",
        "graph": "n2/then_branch",
        "tensor": "then_out",
        "op_type": "FastGelu",
        "domain": "com.microsoft",
    }
    said = _edit(client, mid, op)["changes"][0]
    assert said == (
        "inserted FastGelu after 'then_out' (all readers) in branch/then_branch; graph output 'then_out' now has an"
        " unknown shape (was FLOAT ⟨2×3⟩): its new shape couldn't be inferred; imported opset com.microsoft v1"
    )
    model = _download(client, mid)
    out = _branch(model, 2, "then_branch").output[0].type.tensor_type
    assert out.elem_type == T.FLOAT and not out.HasField("shape")
    v = _leaky(X_THEN + 1.5)
    gelu = 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v**3)))
    np.testing.assert_allclose(_run(model, x=X_THEN)[0], gelu, atol=1e-3)


def test_inserting_on_a_value_a_branch_reads_from_outside_rewires_that_branch_only(client):
    """x is the main graph's input: the Neg goes in else_branch, its Mul reads it, then_branch and
    the main graph's ReduceSum still read x."""
    mid = _upload(client, if_model())
    said = _edit(
        client,
        mid,
        {"op": "insert_node", "graph": "n2/else_branch", "tensor": "x", "op_type": "Neg", "output": "x_neg"},
    )
    assert said["changes"] == ["inserted Neg on 'x' for 1 reader(s) in branch/else_branch, writing 'x_neg'"]
    model = _download(client, mid)
    np.testing.assert_allclose(_run(model, x=X_ELSE)[0], X_ELSE * 2, rtol=1e-6)
    np.testing.assert_allclose(_run(model, x=X_THEN)[0], _leaky(X_THEN + 1.5), rtol=1e-6)


def test_inserting_before_one_reader_in_a_body(client):
    mid = _upload(client, if_model())
    op = {
        "op": "insert_node",
        "graph": "n2/then_branch",
        "tensor": "then_add",
        "op_type": "Relu",
        "consumers": ["@branch/then_branch/@then_lrelu"],
    }
    _edit(client, mid, op)
    np.testing.assert_allclose(_run(_download(client, mid), x=X_THEN)[0], np.maximum(X_THEN + 1.5, 0), rtol=1e-6)


def test_a_branch_output_can_not_change_its_type_alone(client):
    message = _refused(
        client,
        if_model(),
        {
            "op": "insert_node",
            "graph": "n2/then_branch",
            "tensor": "then_out",
            "op_type": "Cast",
            "attributes": {"to": "FLOAT16"},
        },
        status=400,
    )
    assert message == (
        "op #1 (insert_node): 'then_out', output 0 of node \"branch\" (If), would be FLOAT16,"
        " but the other branch's output 'else_out' is FLOAT"
    )


def test_unknown_tensors_and_readers_of_other_graphs_are_refused_naming_the_body(client):
    message = _refused(
        client,
        if_model(),
        {"op": "insert_node", "graph": "n2/then_branch", "tensor": "else_t", "op_type": "Abs"},
        status=404,
    )
    assert message == "op #1 (insert_node): no tensor 'else_t' in branch/then_branch or around it"
    op = {"op": "insert_node", "graph": "n2/then_branch", "tensor": "x", "op_type": "Abs", "consumers": ["n0"]}
    message = _refused(client, if_model(), op, status=400)
    assert message == "op #1 (insert_node): node \"sum\" (ReduceSum) does not read 'x' in branch/then_branch"


def _node_case(name: str):
    """onnx's node test `name`: its model, its first data set's feeds by input name, its outputs."""
    case = node_testcases()[name]
    (inputs, outputs) = case.data_sets[0]
    feeds = dict(zip([i.name for i in case.model.graph.input], inputs, strict=True))
    return case.model, feeds, outputs


def _loop11():
    return _node_case("test_loop11")


def test_a_node_on_a_loop_carried_value_changes_every_iteration(client):
    """onnx's test_loop11: y <- y + x[i] for 5 iterations, the running y also a scan output;
    a Neg after y_out makes it y <- -(y + x[i])."""
    model, feeds, _ = _loop11()
    mid = _upload(client, model)
    _edit(client, mid, {"op": "insert_node", "graph": "n0/body", "tensor": "y_out", "op_type": "Neg"})
    y, scan = _run(_download(client, mid), **feeds)
    want, ys = feeds["y"].copy(), []
    for i in range(int(feeds["trip_count"])):
        want = -(want + np.float32(i + 1))
        ys.append(want.copy())
    np.testing.assert_allclose(y, want)
    np.testing.assert_allclose(scan, np.stack(ys))


def test_a_loop_carried_value_keeps_its_element_type(client):
    model, _, _ = _loop11()
    op = {"op": "insert_node", "graph": "n0/body", "tensor": "y_out", "op_type": "Cast", "attributes": {"to": "DOUBLE"}}
    message = _refused(client, model, op, status=400)
    assert message == (
        "op #1 (insert_node): 'y_out', a value node n0 (Loop) carries to its next iteration, would be DOUBLE,"
        " but the next iteration reads it as 'y_in', which is FLOAT"
    )


# ------------------------------------------------------------------ rename_tensor in bodies


def nested_model() -> onnx.ModelProto:
    """out = If "outer"(c): then t = x + 1, then If "inner"(c) reading t from outside (then t,
    else -t); else its own t = x * 3 (a value of the same name in a sibling graph)."""
    f = lambda name: h.make_tensor_value_info(name, T.FLOAT, [2])  # noqa: E731
    inner = h.make_node(
        "If",
        ["c"],
        ["u"],
        name="inner",
        then_branch=h.make_graph([h.make_node("Identity", ["t"], ["i_then"])], "i_then_g", [], [f("i_then")]),
        else_branch=h.make_graph([h.make_node("Neg", ["t"], ["i_else"])], "i_else_g", [], [f("i_else")]),
    )
    then_g = h.make_graph(
        [h.make_node("Add", ["x", "one"], ["t"], name="plus"), inner],
        "o_then",
        [],
        [f("u")],
        [nh.from_array(np.ones(2, np.float32), "one")],
    )
    else_g = h.make_graph(
        [h.make_node("Mul", ["x", "three"], ["t"], name="times")],
        "o_else",
        [],
        [f("t")],
        [nh.from_array(np.full(2, 3, np.float32), "three")],
    )
    g = h.make_graph(
        [h.make_node("If", ["c"], ["out"], name="outer", then_branch=then_g, else_branch=else_g)],
        "nested",
        [h.make_tensor_value_info("c", T.BOOL, []), f("x")],
        [f("out")],
    )
    return _checked(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))


def test_renaming_in_a_body_follows_its_nested_readers_and_leaves_other_graphs(client):
    mid = _upload(client, nested_model())
    said = _edit(client, mid, {"op": "rename_tensor", "graph": "@outer/then_branch", "from": "t", "to": "t_plus"})
    assert said["changes"] == ["tensor 't' renamed to 't_plus' in outer/then_branch (3 places)"]
    model = _download(client, mid)
    then_g, else_g = _branch(model, 0, "then_branch"), _branch(model, 0, "else_branch")
    assert then_g.node[0].output[0] == "t_plus"
    inner = then_g.node[1]
    assert [a.g.node[0].input[0] for a in inner.attribute] == ["t_plus", "t_plus"]
    assert else_g.node[0].output[0] == "t" and else_g.output[0].name == "t"
    x = np.array([1.0, -2.0], np.float32)
    np.testing.assert_allclose(_run(model, c=np.array(True), x=x)[0], x + 1)
    np.testing.assert_allclose(_run(model, c=np.array(False), x=x)[0], x * 3)


def test_a_loop_body_input_renamed_keeps_the_loop_computing_the_same(client):
    model, feeds, outputs = _loop11()
    mid = _upload(client, model)
    said = _edit(client, mid, {"op": "rename_tensor", "graph": "n0/body", "from": "y_in", "to": "y_prev"})
    assert said["changes"] == ["tensor 'y_in' renamed to 'y_prev' in n0/body (2 places)"]
    got = _run(_download(client, mid), **feeds)
    for a, b in zip(got, outputs, strict=True):
        np.testing.assert_allclose(a, b)


def test_a_value_of_an_enclosing_graph_is_renamed_there(client):
    message = _refused(
        client, nested_model(), {"op": "rename_tensor", "graph": "n0/then_branch", "from": "x", "to": "xx"}, status=400
    )
    assert (
        message
        == "op #1 (rename_tensor): 'x' is a value of the main graph, which outer/then_branch reads; rename it there (graph: \"\")"
    )
    message = _refused(
        client, nested_model(), {"op": "rename_tensor", "graph": "n0/else_branch", "from": "t", "to": "one"}, status=400
    )
    assert message == (
        "op #1 (rename_tensor): a tensor named 'one' already exists in outer/then_branch (names are unique in the model)"
    )
    message = _refused(
        client,
        nested_model(),
        {"op": "rename_tensor", "graph": "n0/else_branch", "from": "nope", "to": "n"},
        status=404,
    )
    assert message == "op #1 (rename_tensor): outer/else_branch has no tensor 'nope'"


# ------------------------------------------------------------------ a body's outputs


def test_a_new_node_becomes_a_branch_output_in_place_of_the_old_one(client):
    """onnx's test_if: res = If(cond) of two Constants; a Neg added in else_branch replaces its output."""
    case = node_testcases()["test_if"]
    mid = _upload(client, case.model)
    said = _edit(
        client,
        mid,
        {
            "op": "add_node",
            "graph": "n0/else_branch",
            "op_type": "Neg",
            "inputs": ["else_out"],
            "outputs": ["else_neg"],
        },
        {"op": "add_output", "graph": "n0/else_branch", "tensor": "else_neg", "replace": "else_out"},
    )
    assert (
        said["changes"][1]
        == "'else_neg' is now an output of n0/else_branch in place of 'else_out' (output 0 of node n0 (If))"
    )
    model = _download(client, mid)
    assert [v.name for v in _branch(model, 0, "else_branch").output] == ["else_neg"]
    np.testing.assert_allclose(_run(model, cond=np.array(False))[0], -np.array([5, 4, 3, 2, 1], np.float32))
    np.testing.assert_allclose(_run(model, cond=np.array(True))[0], np.array([1, 2, 3, 4, 5], np.float32))


def test_a_scan_state_output_is_replaced_by_a_value_of_its_type(client):
    """onnx's test_scan9_sum: sum_out is the state; a Relu of it in its place clips each step."""
    case = node_testcases()["test_scan9_sum"]
    (inputs, _) = case.data_sets[0]
    mid = _upload(client, case.model)
    add = {"op": "add_node", "graph": "n0/body", "op_type": "Relu", "inputs": ["sum_out"], "outputs": ["sum_pos"]}
    _edit(client, mid, add, {"op": "add_output", "graph": "n0/body", "tensor": "sum_pos", "replace": "sum_out"})
    initial, xs = inputs
    state = initial.copy()
    for row in xs:
        state = np.maximum(state + row, 0)
    y, _ = _run(_download(client, mid), initial=initial, x=xs)
    np.testing.assert_allclose(y, state)


def test_what_would_break_a_body_contract_is_refused_in_one_line(client):
    case = node_testcases()["test_if"]
    message = _refused(
        client, case.model, {"op": "add_output", "graph": "n0/then_branch", "tensor": "then_out"}, status=400
    )
    assert message == "op #1 (add_output): 'then_out' is already an output of n0/then_branch"
    add = {
        "op": "add_node",
        "graph": "n0/then_branch",
        "op_type": "Neg",
        "inputs": ["then_out"],
        "outputs": ["then_neg"],
    }
    message = _refused(
        client, case.model, add, {"op": "add_output", "graph": "n0/then_branch", "tensor": "then_neg"}, status=400
    )
    assert message == (
        'op #2 (add_output): each branch of node n0 (If) gives 1 output, one per output of the If; give "replace"'
        " to make 'then_neg' one of them in place of another"
    )
    message = _refused(
        client, case.model, {"op": "remove_output", "graph": "n0/then_branch", "name": "then_out"}, status=400
    )
    assert (
        message.startswith("op #1 (remove_output): each branch of node n0 (If) gives 1 output")
        and "can't go alone" in message
    )
    cast = {
        "op": "add_node",
        "graph": "n0/then_branch",
        "op_type": "Cast",
        "inputs": ["then_out"],
        "outputs": ["t16"],
        "attributes": {"to": "FLOAT16"},
    }
    message = _refused(
        client,
        case.model,
        cast,
        {"op": "add_output", "graph": "n0/then_branch", "tensor": "t16", "replace": "then_out"},
        status=400,
    )
    assert (
        message
        == "op #2 (add_output): 't16', output 0 of node n0 (If), would be FLOAT16, but the other branch's output 'else_out' is FLOAT"
    )
    model, _, _ = _loop11()
    message = _refused(
        client,
        model,
        {"op": "add_output", "graph": "n0/body", "tensor": "iter_count", "replace": "cond_out"},
        status=400,
    )
    assert (
        message
        == "op #1 (add_output): 'iter_count', the condition of node n0 (Loop), would be INT64, but a Loop's condition is BOOL"
    )


def test_a_body_gives_only_its_own_values(client):
    message = _refused(
        client,
        if_model(),
        {"op": "add_output", "graph": "n2/then_branch", "tensor": "x", "replace": "then_out"},
        status=400,
    )
    assert message == (
        "op #1 (add_output): 'x' is a value of a graph around branch/then_branch; a body gives only its own values"
        " (an Identity in it can pass this one)"
    )


def test_deleting_the_only_node_of_a_branch_reading_from_outside_is_refused_plainly(client):
    model = if_model()
    then_g = _branch(model, 2, "then_branch")
    del then_g.node[0]
    then_g.node[0].input[0] = "x"  # then_out = LeakyRelu(x): reads the main graph's x
    _checked(model)
    message = _refused(
        client, model, {"op": "delete_node", "node": "@branch/then_branch/@then_lrelu", "reconnect": True}, status=400
    )
    assert message == (
        "op #1 (delete_node): 'then_out', an output of branch/then_branch, would become 'x' of the enclosing graph,"
        " which a body can't give as its output; change the node's operator to Identity instead"
    )


def test_main_graph_outputs_can_be_replaced_in_place(client):
    mid = _upload(client, classifier())
    said = _edit(client, mid, {"op": "add_output", "tensor": "logits", "replace": "probs"})
    assert said["changes"] == [
        "'logits' is now an output of the main graph in place of 'probs'; 1 node no output needs any more"
        " ('softmax'): cleanup (Model › Tools › Clean up…) removes them"
    ]
    model = _download(client, mid)
    assert [o.name for o in model.graph.output] == ["logits"]


# ------------------------------------------------------------------ scan outputs re-declared around the body


def test_a_loop_scan_output_given_a_new_shape_re_declares_the_loop_output(client):
    """test_loop11's scan_out [1] stacked into res_scan [5,1]: an Unsqueeze after scan_out in the
    body makes it [1,1], and res_scan, a main-graph output, is re-declared [?,1,1] (the trip count
    is an input), the change saying so; the download runs to the stacked values."""
    model, feeds, (_, scan) = _loop11()
    mid = _upload(client, model)
    op = {"op": "insert_node", "graph": "n0/body", "tensor": "scan_out", "op_type": "Unsqueeze"}
    said = _edit(client, mid, {**op, "name": "unsq", "attributes": {"axes": [0]}})["changes"][0]
    assert "graph output 'res_scan' is now FLOAT ⟨?×1×1⟩ (was FLOAT ⟨5×1⟩)" in said, said
    edited = _download(client, mid)
    dims = [d.dim_value if d.HasField("dim_value") else None for d in edited.graph.output[1].type.tensor_type.shape.dim]
    assert dims == [None, 1, 1]
    _, got = _run(edited, **feeds)
    np.testing.assert_allclose(got, scan.reshape(5, 1, 1))
    # deleting it again (reconnecting) gives res_scan its rank back
    said = _edit(client, mid, {"op": "delete_node", "node": "n0/body/@unsq", "reconnect": True}, base=1)["changes"][0]
    assert "graph output 'res_scan' is now FLOAT ⟨?×1⟩ (was FLOAT ⟨?×1×1⟩)" in said, said
    _, got = _run(_download(client, mid), **feeds)
    np.testing.assert_allclose(got, scan)


def test_a_scan_output_given_a_new_shape_re_declares_the_scan_output(client):
    """test_scan9_sum's scan_out [2] stacked into z [3,2]: a ReduceSum (keepdims) after it makes
    it [1] and z [3,1]."""
    model, feeds, (_, z) = _node_case("test_scan9_sum")
    mid = _upload(client, model)
    op = {"op": "insert_node", "graph": "n0/body", "tensor": "scan_out", "op_type": "ReduceSum"}
    said = _edit(client, mid, op)["changes"][0]
    assert "graph output 'z' is now FLOAT ⟨3×1⟩ (was FLOAT ⟨3×2⟩)" in said, said
    _, got = _run(_download(client, mid), **feeds)
    np.testing.assert_allclose(got, z.sum(axis=1, keepdims=True), rtol=1e-6)


# ------------------------------------------------------------------ a new node's input count, by its schema


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (  # onnx's checker would name the Loop around it: "Node with schema(::Unsqueeze:11) has input size 2"
            {"op": "insert_node", "graph": "n0/body", "tensor": "scan_out", "op_type": "Unsqueeze", "inputs": ["y_in"]},
            "op #1 (insert_node): Unsqueeze at opset 11 takes 1 input; it would read 2: 'scan_out', 'y_in';"
            " at this opset 'axes' is an attribute",
        ),
        (
            {"op": "add_node", "graph": "n0/body", "op_type": "Add", "inputs": ["y_in"]},
            "op #1 (add_node): Add at opset 11 takes 2 inputs; it would read 1: 'y_in'",
        ),
        (
            {"op": "add_node", "op_type": "Clip", "inputs": ["y", "y", "y", "y"]},
            "op #1 (add_node): Clip at opset 11 takes 1 to 3 inputs; it would read 4: 'y', 'y', 'y', 'y'",
        ),
    ],
)
def test_a_new_node_reading_more_or_fewer_inputs_than_its_schema_takes_is_refused(client, op, message):
    model, _, _ = _loop11()
    assert _refused(client, model, op, status=400) == message


# ------------------------------------------------------------------ a body value collected per iteration


def test_a_loop_body_value_becomes_a_scan_output_of_the_loop(client):
    """test_loop11's slice_out (each iteration's x[i]) collected: a new last output of the Loop
    stacking it, which the download computes ([5, 1]: 1..5), then made a graph output."""
    model, feeds, (y, _) = _loop11()
    mid = _upload(client, model)
    said = _edit(client, mid, {"op": "add_output", "graph": "n0/body", "tensor": "slice_out"})["changes"][0]
    assert said == (
        "'slice_out' is now a scan output of node n0 (Loop): each iteration's FLOAT ⟨?⟩ stacked into"
        " 'slice_out_all', a new output of the node"
    )
    _edit(client, mid, {"op": "add_output", "tensor": "slice_out_all"}, base=1)
    edited = _download(client, mid)
    assert list(edited.graph.node[0].output) == ["res_y", "res_scan", "slice_out_all"]
    # declared without inference's made-up names (unk__0): the trip count is an input
    assert [d.dim_param for d in edited.graph.output[-1].type.tensor_type.shape.dim] == ["", ""]
    got_y, _, got_slices = _run(edited, **feeds)
    np.testing.assert_allclose(got_y, y)
    np.testing.assert_allclose(got_slices, np.arange(1, 6, dtype=np.float32).reshape(5, 1))


def test_a_scan_body_value_becomes_a_scan_output_along_its_lists(client):
    """test_scan9_sum given scan_output_axes [0]: the new output's axis is listed too. Its body's
    input `next` given back goes through an Identity (onnxruntime stacks zeros for it else)."""
    model, feeds, (_, z) = _node_case("test_scan9_sum")
    model.graph.node[0].attribute.append(h.make_attribute("scan_output_axes", [0]))
    mid = _upload(client, model)
    _edit(client, mid, {"op": "add_output", "graph": "n0/body", "tensor": "next"})
    _edit(client, mid, {"op": "add_output", "tensor": "next_all"}, base=1)
    edited = _download(client, mid)
    assert h.get_attribute_value(edited.graph.node[0].attribute[-1]) == [0, 0]
    got = _run(edited, **feeds)
    np.testing.assert_allclose(got[1], z)
    np.testing.assert_allclose(got[2], feeds["x"])  # each step's input, stacked again


def test_an_if_branch_still_takes_no_output_of_its_own(client):
    message = _refused(
        client, if_model(), {"op": "add_output", "graph": "n2/then_branch", "tensor": "then_add"}, status=400
    )
    assert message.startswith('op #1 (add_output): each branch of node "branch" (If) gives 1 output'), message


def test_deleting_a_constant_a_branch_reads_is_said_of_the_branch_node_and_the_name(client):
    # QA20 F17: the checker's "Nodes in a graph must be topologically sorted, however input 'k1'
    # of node: name: then_add OpType: Add is not output of any previous nodes."
    m = if_model()
    k = h.make_node("Constant", [], ["k1"], name="k1_const", value=nh.from_array(np.ones((2, 3), np.float32)))
    m.graph.node.insert(0, k)
    _branch(m, 3, "then_branch").node[0].input[1] = "k1"
    _checked(m)
    message = _refused(client, m, {"op": "delete_node", "node": "k1_const"}, status=422)
    assert message == (
        "the edit would make the model invalid: node \"then_add\" (Add) in branch/then_branch: it reads 'k1', "
        "which nothing before it writes (no node, input or initializer of its graph or of a graph around it)"
    )


def test_a_refusal_in_one_of_two_alike_branches_names_its_branch(client):
    """QA31: a merged decoder's branches repeat every node name; a Softmax axis put out of range
    in then_branch is refused naming then_branch (onnx's message names the node only), and the
    nodes downstream, which both branches have, are said to be in one branch or the other."""
    from merged_decoder import merged_decoder

    model = merged_decoder()
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph?path=n0/then_branch").get_json()
    softmax = next(n["id"] for n in graph["nodes"] if n["op_type"] == "Softmax")
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": softmax, "name": "axis", "value": 7}]},
    )
    assert r.status_code == 422, r.get_json()
    error = r.get_json()["error"]
    assert (
        'node "/model/decoder/layers.0/self_attn/Softmax" (Softmax) in optimum::if/then_branch: '
        "'axis' must be in [-4 , 3]. Its actual value is: 7"
    ) in error["message"].splitlines()[0], error["message"]
    # the consequences downstream are in the cause's branch too (QA32 N7: "in A or B")
    assert error.get("details"), error
    assert all(" or optimum::if" not in d for d in error["details"]), error["details"]
    assert any("in optimum::if/then_branch" in d for d in error["details"]), error["details"]
    assert client.get(f"/api/models/{mid}").get_json()["head"] == 0


def test_a_change_to_a_node_two_branches_name_alike_says_its_branch(client):
    """QA32 N7: the change line (and so the History) of an edit in then_branch read `attribute
    'axis' of node "…/Softmax" (Softmax) set to 3`: both branches have that node."""
    from merged_decoder import merged_decoder

    mid = upload(client, merged_decoder().SerializeToString()).get_json()["id"]
    graph = client.get(f"/api/models/{mid}/graph?path=n0/then_branch").get_json()
    softmax = next(n["id"] for n in graph["nodes"] if n["op_type"] == "Softmax")
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": softmax, "name": "axis", "value": 3}]},
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == [
        "attribute 'axis' of node \"/model/decoder/layers.0/self_attn/Softmax\" (Softmax) in optimum::if/then_branch set to 3"
    ]
    # a name only one node bears needs no graph
    gather = next(n for n in graph["nodes"] if n["op_type"] == "Gather")
    assert gather["name"]  # (both branches have one: renamed first, it is the only one)
    ops = [{"op": "rename_node", "node": gather["id"], "name": "embed_with_past"}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": ops})
    assert r.status_code == 200, r.get_json()
    ops = [{"op": "set_attribute", "node": gather["id"], "name": "axis", "value": 0}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 2, "ops": ops})
    assert r.status_code == 200, r.get_json()
    assert " in " not in r.get_json()["changes"][0], r.get_json()["changes"]
