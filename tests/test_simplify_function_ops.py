"""simplify keeps the standard operators onnxruntime has no kernel for and would write out as
their function bodies (QA: a torch-dynamo UNet at opset 21, its 13 GroupNormalization nodes
each written out as ~28 unnamed primitive nodes, 149 -> 513 nodes, "fewer GroupNormalization
×13"). Through the real API: the operators stay with their names and metadata, the rest is
simplified as before, the outputs are the original's, and the change line says what was kept."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload

from app.onnx_io.function_ops_kept import REPORT_KEY

SCOPE = "pkg.torch.onnx.name_scopes"


def run(data: bytes, feeds: dict) -> list[np.ndarray]:
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)


def _weights(rng, name: str, *shape: int) -> onnx.TensorProto:
    return nh.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


def unet_block() -> onnx.ModelProto:
    """x[1,4,16,16] -> Conv -> GroupNorm -> SiLU -> Conv -> GroupNorm -> SiLU, + a 1x1 Conv of x,
    -> GroupNorm (its scale a Constant node) -> × (a + b, two initializers) -> Reshape to
    [N, 8, -1], the shape computed from Shape(x) (static: folded). Opset 21, the nodes named and
    scoped as a torch export's."""
    rng = np.random.default_rng(0)
    inits = [
        _weights(rng, "w1", 8, 4, 3, 3),
        _weights(rng, "b1", 8),
        _weights(rng, "w2", 8, 8, 3, 3),
        _weights(rng, "b2", 8),
        _weights(rng, "wskip", 8, 4, 1, 1),
        nh.from_array(np.linspace(0.5, 1.5, 8).astype(np.float32), "gn1.scale"),
        nh.from_array(np.linspace(-0.1, 0.1, 8).astype(np.float32), "gn1.bias"),
        nh.from_array(np.linspace(1.5, 0.5, 8).astype(np.float32), "gn2.scale"),
        nh.from_array(np.zeros(8, np.float32), "gn2.bias"),
        nh.from_array(np.full(8, 0.05, np.float32), "gn3.bias"),
        nh.from_array(np.array([1.25], np.float32), "a"),
        nh.from_array(np.array([0.5], np.float32), "b"),
        nh.from_array(np.array(0, np.int64), "zero"),
        nh.from_array(np.array([8, -1], np.int64), "rest"),
    ]
    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        h.make_node("GroupNormalization", ["c1", "gn1.scale", "gn1.bias"], ["g1"], name="norm1", num_groups=2),
        h.make_node("Sigmoid", ["g1"], ["s1"], name="silu1.sigmoid"),
        h.make_node("Mul", ["g1", "s1"], ["a1"], name="silu1.mul"),
        h.make_node("Conv", ["a1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        h.make_node("GroupNormalization", ["c2", "gn2.scale", "gn2.bias"], ["g2"], name="norm2", num_groups=4),
        h.make_node("Sigmoid", ["g2"], ["s2"], name="silu2.sigmoid"),
        h.make_node("Mul", ["g2", "s2"], ["a2"], name="silu2.mul"),
        h.make_node("Conv", ["x", "wskip"], ["skip"], name="skip"),
        h.make_node("Add", ["a2", "skip"], ["res"], name="residual"),
        h.make_node(
            "Constant",
            [],
            ["gn3.scale"],
            name="gn3.scale",
            value=nh.from_array(np.linspace(1, 2, 8).astype(np.float32)),
        ),
        h.make_node(
            "GroupNormalization", ["res", "gn3.scale", "gn3.bias"], ["g3"], name="norm_out", num_groups=2, epsilon=1e-5
        ),
        h.make_node("Add", ["a", "b"], ["ab"], name="fold.add"),
        h.make_node("Mul", ["g3", "ab"], ["m"], name="scale"),
        h.make_node("Shape", ["x"], ["xs"], name="fold.shape"),
        h.make_node("Gather", ["xs", "zero"], ["n"], name="fold.gather", axis=0),
        h.make_node("Unsqueeze", ["n", "zero"], ["n1"], name="fold.unsqueeze"),
        h.make_node("Concat", ["n1", "rest"], ["shape"], name="fold.concat", axis=0),
        h.make_node("Reshape", ["m", "shape"], ["y"], name="flatten"),
    ]
    for n in nodes:
        n.metadata_props.add(key=SCOPE, value=f"['', '{n.name.split('.')[0]}']")
    g = h.make_graph(
        nodes,
        "unet_block",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 16, 16])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 256])],
        inits,
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)], producer_name="pytorch")
    onnx.checker.check_model(m, full_check=True)
    return m


def simplify(client, model: onnx.ModelProto) -> tuple[str, onnx.ModelProto]:
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "simplify"}]})
    assert r.status_code == 200, r.get_json()
    [change] = r.get_json()["changes"]
    return change, onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)


def test_simplify_keeps_group_normalization_and_folds_the_rest(client):
    model = unet_block()
    change, simple = simplify(client, model)
    assert change == (
        "simplified with onnxruntime's basic optimizations: 19 -> 13 nodes (fewer Add ×1, Constant ×1, Shape ×1,"
        " Gather ×1, Unsqueeze ×1); kept GroupNormalization ×3 as they are: onnxruntime would write out their"
        " function bodies"
    )
    onnx.checker.check_model(simple, full_check=True)
    norms = [n for n in simple.graph.node if n.op_type == "GroupNormalization"]
    assert [(n.name, list(n.input), list(n.output)) for n in norms] == [
        ("norm1", ["c1", "gn1.scale", "gn1.bias"], ["g1"]),
        ("norm2", ["c2", "gn2.scale", "gn2.bias"], ["g2"]),
        ("norm_out", ["res", "gn3.scale", "gn3.bias"], ["g3"]),
    ]
    assert [{p.key: p.value for p in n.metadata_props} for n in norms] == [
        {SCOPE: "['', 'norm1']"},
        {SCOPE: "['', 'norm2']"},
        {SCOPE: "['', 'norm_out']"},
    ]
    assert {a.name: h.get_attribute_value(a) for a in norms[2].attribute} == {
        "num_groups": 2,
        "epsilon": np.float32(1e-5),
    }
    # every node named (none of onnxruntime's unnamed primitives), the folded part folded
    ops = [n.op_type for n in simple.graph.node]
    assert ops.count("GroupNormalization") == 3 and all(n.name for n in simple.graph.node)
    assert not {"Shape", "Gather", "Concat", "Unsqueeze", "Constant", "ReduceMean"} & set(ops)
    assert len(simple.graph.node) < len(model.graph.node)
    weights = {t.name for t in simple.graph.initializer}
    assert {"gn1.scale", "gn2.bias", "gn3.scale", "gn3.bias"} <= weights and not {"a", "b", "zero"} & weights
    # no temporary input or output left, nor the helper's report
    assert [v.name for v in simple.graph.input] == ["x"] and [v.name for v in simple.graph.output] == ["y"]
    assert REPORT_KEY not in {p.key for p in simple.metadata_props} and simple.producer_name == "pytorch"
    # each node after what it reads
    seen = {v.name for v in simple.graph.input} | weights
    for n in simple.graph.node:
        assert set(n.input) - {""} <= seen, n.name
        seen.update(n.output)
    rng = np.random.default_rng(7)
    for _ in range(3):
        x = rng.standard_normal((1, 4, 16, 16)).astype(np.float32)
        np.testing.assert_allclose(
            run(simple.SerializeToString(), {"x": x})[0],
            run(model.SerializeToString(), {"x": x})[0],
            rtol=1e-4,
            atol=1e-5,
        )


def test_group_normalization_inside_a_branch_is_left_to_onnxruntime_and_said(client):
    """A GroupNormalization inside an If branch is left to onnxruntime, which writes it out: the
    change line says so, and why the node count grew; the main graph's is kept."""
    rng = np.random.default_rng(1)
    scale, bias = (nh.from_array(rng.standard_normal(4).astype(np.float32), n) for n in ("s", "t"))
    branch = h.make_graph(
        [h.make_node("GroupNormalization", ["g", "s", "t"], ["z"], name="inner_norm", num_groups=2)],
        "then",
        [],
        [h.make_tensor_value_info("z", T.FLOAT, [1, 4, 8, 8])],
    )
    other = h.make_graph(
        [h.make_node("Identity", ["g"], ["z2"], name="same")],
        "else",
        [],
        [h.make_tensor_value_info("z2", T.FLOAT, None)],
    )
    g = h.make_graph(
        [
            h.make_node("GroupNormalization", ["x", "s", "t"], ["g"], name="outer_norm", num_groups=2),
            h.make_node("If", ["flag"], ["y"], name="choose", then_branch=branch, else_branch=other),
        ],
        "branchy",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 8, 8]), h.make_tensor_value_info("flag", T.BOOL, [])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 8, 8])],
        [scale, bias],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    onnx.checker.check_model(model, full_check=True)
    change, simple = simplify(client, model)
    # the one written out said on its own (not among "fewer"), and why the count grew
    assert change == (
        "simplified with onnxruntime's basic optimizations: 4 -> 17 nodes; kept GroupNormalization ×1 as they are:"
        " onnxruntime would write out their function bodies; onnxruntime wrote out GroupNormalization ×1 as their"
        " function bodies: those inside If/Loop bodies, which simplify leaves to it; 13 nodes more than before:"
        " operators written out as their function bodies"
    )
    onnx.checker.check_model(simple, full_check=True)
    assert [(n.op_type, n.name) for n in simple.graph.node] == [("GroupNormalization", "outer_norm"), ("If", "choose")]
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    for flag in (True, False):
        feeds = {"x": x, "flag": np.array(flag)}
        np.testing.assert_allclose(
            run(simple.SerializeToString(), feeds)[0], run(model.SerializeToString(), feeds)[0], rtol=1e-4, atol=1e-5
        )


def test_a_model_without_such_operators_simplifies_as_before(client):
    """LayerNormalization has a function body too, but onnxruntime has a kernel for it: left to
    it, no note; the change line is the one simplify always wrote."""
    rng = np.random.default_rng(2)
    g = h.make_graph(
        [
            h.make_node("Add", ["a", "b"], ["ab"], name="fold_me"),
            h.make_node("Identity", ["x"], ["xi"], name="pass"),
            h.make_node("LayerNormalization", ["xi", "s"], ["ln"], name="ln", axis=-1),
            h.make_node("Add", ["ln", "ab"], ["y"], name="out"),
        ],
        "plain",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 8])],
        [
            nh.from_array(rng.standard_normal(8).astype(np.float32), "a"),
            nh.from_array(rng.standard_normal(8).astype(np.float32), "b"),
            nh.from_array(np.ones(8, np.float32), "s"),
        ],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    change, simple = simplify(client, model)
    assert change == "simplified with onnxruntime's basic optimizations: 4 -> 2 nodes (fewer Add ×1, Identity ×1)"
    assert [(n.op_type, n.name) for n in simple.graph.node] == [("LayerNormalization", "ln"), ("Add", "out")]
    x = rng.standard_normal((2, 8)).astype(np.float32)
    np.testing.assert_allclose(
        run(simple.SerializeToString(), {"x": x})[0], run(model.SerializeToString(), {"x": x})[0], rtol=1e-5
    )


def test_only_group_normalization_leaves_nothing_to_simplify_and_says_what_was_kept(client):
    g = h.make_graph(
        [h.make_node("GroupNormalization", ["x", "s", "t"], ["y"], name="norm", num_groups=2)],
        "alone",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 4, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 4, 4])],
        [nh.from_array(np.ones(2, np.float32), "s"), nh.from_array(np.zeros(2, np.float32), "t")],
    )
    data = h.make_model(g, opset_imports=[h.make_opsetid("", 18)]).SerializeToString()
    mid = upload(client, data).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "simplify"}]})
    assert r.status_code == 200 and r.get_json()["unchanged"] is True, r.get_json()
    # no revision, but what simplify found is said (the page's toast)
    assert r.get_json()["notes"] == [
        "simplify: onnxruntime's basic optimizations find nothing to simplify here; kept GroupNormalization ×1 as"
        " they are: onnxruntime would write out their function bodies"
    ]
    from app.edits.simplify import simplify as simplify_op

    model = onnx.load_from_string(data)
    assert simplify_op(model, {"op": "simplify"}) == (
        "simplify: onnxruntime's basic optimizations find nothing to simplify here; kept GroupNormalization ×1 as"
        " they are: onnxruntime would write out their function bodies"
    )
    assert model.SerializeToString() == data


def test_a_model_local_function_holding_one_is_inlined_and_written_out_and_the_result_still_loads(client):
    """A GroupNormalization in a model-local function: onnxruntime inlines the call and writes
    the body out, naming its constants _inlfunc_GroupNormalization_…, the names it gives the
    kept node's at the next load (which it then refuses): the result still runs."""
    s, t = nh.from_array(np.ones(4, np.float32), "s"), nh.from_array(np.linspace(0, 1, 4).astype(np.float32), "t")
    block = h.make_function(
        "local",
        "Block",
        ["a", "sc", "bi"],
        ["b"],
        [h.make_node("GroupNormalization", ["a", "sc", "bi"], ["n"], num_groups=2), h.make_node("Relu", ["n"], ["b"])],
        [h.make_opsetid("", 21)],
    )
    g = h.make_graph(
        [
            h.make_node("GroupNormalization", ["x", "s", "t"], ["g1"], name="outer_norm", num_groups=2),
            h.make_node("Block", ["g1", "s", "t"], ["y"], name="block", domain="local"),
        ],
        "calls",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 6, 6])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 6, 6])],
        [s, t],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 21), h.make_opsetid("local", 1)], functions=[block])
    change, simple = simplify(client, model)
    assert change == (
        "simplified with onnxruntime's basic optimizations: 4 -> 16 nodes (a function's body counted once before,"
        " at each of its calls after) (fewer Block ×1); kept GroupNormalization ×1 as they are: onnxruntime would"
        " write out their function bodies; onnxruntime wrote out GroupNormalization ×1 as their function bodies:"
        " those inside"
        " model-local functions, which simplify leaves to it; 12 nodes more than before: model-local functions"
        " inlined at each call and operators written out as their function bodies; model-local function(s)"
        " inlined: Block"
    )
    assert not any(x.startswith("_inlfunc_") for t in simple.graph.initializer for x in [t.name])
    assert [n.name for n in simple.graph.node if n.op_type == "GroupNormalization"] == ["outer_norm"]
    x = np.random.default_rng(3).standard_normal((1, 4, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(
        run(simple.SerializeToString(), {"x": x})[0], run(model.SerializeToString(), {"x": x})[0], rtol=1e-4, atol=1e-5
    )


def test_chained_normalizations_an_identity_before_one_and_other_function_ops(client):
    """GroupNormalization on a graph input, on another's output (itself a graph output), after an
    Identity (removed, as onnxruntime removes the others), then Mish and HardSwish, which
    onnxruntime 1.32 writes out as much: all kept, nothing left over."""
    s, t = nh.from_array(np.ones(4, np.float32), "s"), nh.from_array(np.zeros(4, np.float32), "t")
    vi = [h.make_tensor_value_info(n, T.FLOAT, [1, 4, 6, 6]) for n in ("x", "g1", "w", "g3")]
    g = h.make_graph(
        [
            h.make_node("GroupNormalization", ["x", "s", "t"], ["g1"], name="gn1", num_groups=2),
            h.make_node("GroupNormalization", ["g1", "s", "t"], ["g2"], name="gn2", num_groups=2),
            h.make_node("Identity", ["g2"], ["i"], name="id"),
            h.make_node("GroupNormalization", ["i", "s", "t"], ["g3"], name="gn3", num_groups=4),
            h.make_node("Relu", ["g3"], ["y"], name="relu"),
            h.make_node("Mish", ["y"], ["z"], name="mish"),
            h.make_node("HardSwish", ["z"], ["w"], name="hswish"),
        ],
        "chained",
        vi[:1],
        vi[1:],
        [s, t],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    change, simple = simplify(client, model)
    assert change == (  # onnxruntime 1.32 has no CPU kernel for Mish-18 nor HardSwish-14 either
        "simplified with onnxruntime's basic optimizations: 7 -> 6 nodes (fewer Identity ×1); kept"
        " GroupNormalization ×3, HardSwish ×1, Mish ×1 as they are: onnxruntime would write out their function bodies"
    )
    assert [n.name for n in simple.graph.node] == ["gn1", "gn2", "gn3", "relu", "mish", "hswish"]
    assert [list(n.input) for n in simple.graph.node][2] == ["g2", "s", "t"]
    assert [v.name for v in simple.graph.input] == ["x"] and [v.name for v in simple.graph.output] == ["g1", "w", "g3"]
    onnx.checker.check_model(simple, full_check=True)
    x = np.random.default_rng(4).standard_normal((1, 4, 6, 6)).astype(np.float32)
    for a, b in zip(run(simple.SerializeToString(), {"x": x}), run(model.SerializeToString(), {"x": x}), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
