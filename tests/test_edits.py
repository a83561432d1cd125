"""Each edit op on real models: the exact change, nothing else changed, and where onnxruntime can
run the model, behaviour-preserving edits keep the outputs on the official test data."""

from __future__ import annotations

import copy

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from browser.browser_models import flag_model
from onnx import TensorProto, helper, numpy_helper
from test_bad_input import small_model
from testkit import ONNX_DATA, upload

CONVERTED = sorted(
    p for p in (ONNX_DATA / "pytorch-converted").glob("*/model.onnx") if (p.parent / "test_data_set_0").is_dir()
)


def load_case(path):
    model = onnx.load(path)
    ds = path.parent / "test_data_set_0"
    init_names = {t.name for t in model.graph.initializer}
    real_inputs = [i.name for i in model.graph.input if i.name not in init_names]
    feeds = {}
    for k, name in enumerate(real_inputs):
        t = onnx.TensorProto()
        t.ParseFromString((ds / f"input_{k}.pb").read_bytes())
        feeds[name] = numpy_helper.to_array(t)
    return model, feeds


RUNNABLE_OPSET = 13  # old converted models' ops (opset 1-6 kernels) onnxruntime no longer has


def _runnable(model: onnx.ModelProto, feeds: dict) -> onnx.ModelProto:
    """The model at RUNNABLE_OPSET; its inputs' dims as the feeds' (the converter's broadcast
    checks refuse a symbolic dim such as an edit's "batch")."""
    fixed = copy.deepcopy(model)
    for arg in fixed.graph.input:
        if arg.name in feeds and arg.type.HasField("tensor_type"):
            shape = arg.type.tensor_type.shape
            shape.ClearField("dim")
            for d in np.shape(feeds[arg.name]):
                shape.dim.add().dim_value = d
    del fixed.graph.value_info[:]
    return onnx.version_converter.convert_version(fixed, RUNNABLE_OPSET)


def run(model: onnx.ModelProto, feeds: dict) -> dict:
    """The model's outputs by onnxruntime; a model of an opset it has no kernels for runs as onnx's
    version converter brings it to RUNNABLE_OPSET (an original and its edit alike)."""
    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as exc:
        if "NOT_IMPLEMENTED" not in str(exc):
            raise
        sess = ort.InferenceSession(_runnable(model, feeds).SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds), strict=True))


def edit(client, data: bytes, ops: list) -> tuple[onnx.ModelProto, dict]:
    mid = upload(client, data).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 200, r.get_json()
    return onnx.load_from_string(client.get(f"/api/models/{mid}/download").data), r.get_json()


def assert_same_outputs(a: dict, b: dict):
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-6, atol=1e-6)


@pytest.mark.models
@pytest.mark.parametrize("path", CONVERTED, ids=lambda p: p.parent.name)
def test_rename_tensors_and_dynamic_batch_keep_outputs(client, path):
    model, feeds = load_case(path)
    try:
        before = run(model, feeds)
    except Exception as exc:  # a few converted models use ops this onnxruntime refuses
        pytest.skip(f"onnxruntime can't run the original: {exc}")
    first_input = next(iter(feeds))
    ops = [{"op": "rename_tensor", "from": first_input, "to": "studio_input"}]
    inner = next((o for n in model.graph.node for o in n.output if o not in {v.name for v in model.graph.output}), None)
    if inner:
        ops.append({"op": "rename_tensor", "from": inner, "to": "studio_inner"})
    ops.append(
        {
            "op": "set_io_shape",
            "name": "studio_input",
            "shape": ["batch", *feeds[first_input].shape[1:]] if feeds[first_input].ndim else [],
        }
    )
    edited, _ = edit(client, model.SerializeToString(), ops)
    onnx.checker.check_model(edited)
    feeds["studio_input"] = feeds.pop(first_input)
    feeds = {i.name: feeds[i.name] for i in edited.graph.input if i.name in feeds}
    assert_same_outputs(before, run(edited, feeds))
    assert edited.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch" or feeds["studio_input"].ndim == 0
    # nothing but names and that shape changed
    assert [n.op_type for n in edited.graph.node] == [n.op_type for n in model.graph.node]
    assert [t.raw_data for t in edited.graph.initializer] == [t.raw_data for t in model.graph.initializer]


def _with_identity_after_first_node(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with an Identity spliced after node 0, as exporters leave them."""
    m = copy.deepcopy(model)
    out = m.graph.node[0].output[0]
    m.graph.node[0].output[0] = out + "_pre"
    m.graph.node.insert(1, helper.make_node("Identity", [out + "_pre"], [out], name="spliced_identity"))
    return m


@pytest.mark.models
@pytest.mark.parametrize("path", CONVERTED[:40], ids=lambda p: p.parent.name)
def test_delete_identity_with_reconnect_keeps_outputs(client, path):
    model, feeds = load_case(path)
    try:
        before = run(model, feeds)
    except Exception as exc:
        pytest.skip(f"onnxruntime can't run the original: {exc}")
    spliced = _with_identity_after_first_node(model)
    edited, resp = edit(
        client, spliced.SerializeToString(), [{"op": "delete_node", "node": "spliced_identity", "reconnect": True}]
    )
    onnx.checker.check_model(edited)
    assert "Identity" not in [n.op_type for n in edited.graph.node][:2]
    assert len(edited.graph.node) == len(model.graph.node)
    assert [o.name for o in edited.graph.output] == [o.name for o in model.graph.output]
    assert_same_outputs(before, run(edited, feeds))
    assert resp["changes"][0].startswith('deleted node "spliced_identity" (Identity)')


def test_delete_identity_feeding_graph_output_keeps_output_name(client):
    m = small_model()  # MatMul -> LeakyRelu -> Identity -> z (graph output)
    feeds = {"x": np.array([[1.0, -2.0]], np.float32)}
    before = run(m, feeds)
    edited, _ = edit(client, m.SerializeToString(), [{"op": "delete_node", "node": "id", "reconnect": True}])
    assert [n.op_type for n in edited.graph.node] == ["MatMul", "LeakyRelu"]
    assert edited.graph.node[1].output[0] == "z"
    assert_same_outputs(before, run(edited, feeds))


def _classifier(label_dims: list) -> onnx.ModelProto:
    """A linear classifier's probabilities through a ZipMap, as skl2onnx writes them by default."""
    nodes = [
        helper.make_node(
            "LinearClassifier",
            ["X"],
            ["label", "probabilities"],
            domain="ai.onnx.ml",
            classlabels_ints=[0, 1, 2],
            coefficients=[0.5, -1.0, 1.0, 0.2, -0.3, 0.8],
            intercepts=[0.1, 0.0, -0.1],
            post_transform="SOFTMAX",
        ),
        helper.make_node(
            "ZipMap", ["probabilities"], ["output_probability"], domain="ai.onnx.ml", classlabels_int64s=[0, 1, 2]
        ),
    ]
    probs = helper.make_value_info(
        "output_probability",
        helper.make_sequence_type_proto(
            helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, []))
        ),
    )
    g = helper.make_graph(
        nodes,
        "classifier",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 2])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, label_dims), probs],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])


def test_deleting_a_zipmap_leaves_the_probabilities_as_a_tensor_output(client):
    """skl2onnx's ZipMap turns probabilities into a sequence of maps, which many runtimes can't
    return: deleting it makes the graph output the tensor it read, retyped to that tensor's type."""
    m = _classifier(["batch"])
    x = np.array([[1.0, 2.0], [-1.0, 0.5]], np.float32)
    edited, resp = edit(client, m.SerializeToString(), [{"op": "delete_node", "node": "n1", "reconnect": True}])
    out = edited.graph.output[1]
    assert out.name == "output_probability" and out.type.tensor_type.elem_type == TensorProto.FLOAT
    assert [d.dim_value or d.dim_param for d in out.type.tensor_type.shape.dim][1] == 3
    assert "graph output 'output_probability' is now FLOAT" in resp["changes"][0]
    onnx.checker.check_model(edited, full_check=True)
    sess = ort.InferenceSession(edited.SerializeToString(), providers=["CPUExecutionProvider"])
    probs = sess.run(["output_probability"], {"X": x})[0]
    assert probs.shape == (2, 3) and np.allclose(probs.sum(axis=1), 1)


def test_deleting_a_pass_through_keeps_what_its_output_declares(client):
    """An Identity in front of a graph output: same kind and element type, so the output keeps
    its declared dims ("batch") rather than what inference says of the tensor before it."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Identity", ["r"], ["y"], name="id")], "g", [x], [y]
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    edited, _ = edit(client, m.SerializeToString(), [{"op": "delete_node", "node": "id", "reconnect": True}])
    assert edited.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"


def test_add_and_remove_output(client):
    m = small_model()
    feeds = {"x": np.array([[1.0, -2.0]], np.float32)}
    edited, _ = edit(client, m.SerializeToString(), [{"op": "add_output", "tensor": "h"}])
    assert [o.name for o in edited.graph.output] == ["z", "h"]
    assert edited.graph.output[1].type.tensor_type.elem_type == TensorProto.FLOAT  # from shape inference
    out = run(edited, feeds)
    np.testing.assert_allclose(out["h"], feeds["x"] @ np.ones((2, 2), np.float32))
    expected = copy.deepcopy(edited)
    del expected.graph.output[0]
    mid = upload(client, edited.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "remove_output", "name": "z"}]})
    assert r.status_code == 200
    assert onnx.load_from_string(client.get(f"/api/models/{mid}/download").data) == expected


def test_set_and_delete_attribute_exactly(client):
    m = small_model()
    expected = copy.deepcopy(m)
    expected.graph.node[1].attribute[0].f = 0.3
    edited, _ = edit(
        client, m.SerializeToString(), [{"op": "set_attribute", "node": "act", "name": "alpha", "value": 0.3}]
    )
    assert edited == expected
    del expected.graph.node[1].attribute[0]
    edited, _ = edit(client, m.SerializeToString(), [{"op": "delete_attribute", "node": "n1", "name": "alpha"}])
    assert edited == expected
    out = run(edited, {"x": np.array([[-1.0, 1.0]], np.float32)})  # default alpha 0.01 applies
    np.testing.assert_allclose(out["z"], [[0.0, 0.0]], atol=1e-6)


def test_add_attribute_typed_from_schema(client):
    m = small_model()
    m.graph.node[1].ClearField("attribute")
    edited, _ = edit(
        client, m.SerializeToString(), [{"op": "set_attribute", "node": "act", "name": "alpha", "value": 1}]
    )
    attr = edited.graph.node[1].attribute[0]
    assert attr.type == onnx.AttributeProto.FLOAT and attr.f == 1.0


def test_set_tensor_attribute_from_json(client):
    g = helper.make_graph(
        [
            helper.make_node(
                "Constant", [], ["c"], name="k", value=numpy_helper.from_array(np.zeros(2, np.float32), "v")
            )
        ],
        "g",
        [],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 2])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    edited, _ = edit(
        client,
        m.SerializeToString(),
        [
            {
                "op": "set_attribute",
                "node": "k",
                "name": "value",
                "value": {"dtype": "FLOAT", "shape": [2, 2], "values": [1, 2, 3, "NaN"]},
            }
        ],
    )
    arr = numpy_helper.to_array(edited.graph.node[0].attribute[0].t)
    assert arr.shape == (2, 2) and arr[0, 1] == 2 and np.isnan(arr[1, 1])
    assert edited.graph.node[0].attribute[0].t.name == "v"


def test_rename_node_and_model_fields_exactly(client):
    m = small_model()
    expected = copy.deepcopy(m)
    expected.graph.node[0].name = "matmul_renamed"
    expected.producer_name = "me"
    expected.model_version = 7
    edited, resp = edit(
        client,
        m.SerializeToString(),
        [
            {"op": "rename_node", "node": "mm", "name": "matmul_renamed"},
            {"op": "set_model_field", "field": "producer_name", "value": "me"},
            {"op": "set_model_field", "field": "model_version", "value": 7},
        ],
    )
    assert edited == expected and len(resp["changes"]) == 3


def test_metadata_on_graph_and_node(client):
    m = small_model()
    m.ir_version = 10
    expected = copy.deepcopy(m)
    expected.graph.metadata_props.add(key="g", value="1")
    expected.graph.node[2].metadata_props.add(key="n", value="2")
    edited, _ = edit(
        client,
        m.SerializeToString(),
        [
            {"op": "set_metadata", "target": "", "key": "g", "value": "1"},
            {"op": "set_metadata", "target": "n2", "key": "n", "value": "2"},
        ],
    )
    assert edited == expected


def _if_model(shadow: bool) -> onnx.ModelProto:
    out = helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])
    then_nodes = [helper.make_node("Neg", ["x"], ["o"])]
    if shadow:  # the branch defines its own x, which must not be renamed
        then_nodes.insert(
            0, helper.make_node("Constant", [], ["x"], value=numpy_helper.from_array(np.ones(2, np.float32)))
        )
    then = helper.make_graph(then_nodes, "then", [], [out])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])], "else", [], [out])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["o"], then_branch=then, else_branch=other)],
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [out],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("shadow", [False, True])
def test_rename_tensor_reaches_captured_uses_in_subgraphs(client, shadow):
    m = _if_model(shadow)
    feeds = {"c": np.array(True), "x": np.array([1.0, 2.0], np.float32)}
    before = None if shadow else run(m, feeds)  # onnxruntime refuses shadowed names (SSA)
    edited, _ = edit(client, m.SerializeToString(), [{"op": "rename_tensor", "from": "x", "to": "x2"}])
    branches = {a.name: a.g for a in edited.graph.node[0].attribute}
    then, other = branches["then_branch"], branches["else_branch"]
    assert other.node[0].input[0] == "x2"
    assert then.node[-1].input[0] == ("x" if shadow else "x2")
    if before is not None:
        assert_same_outputs(before, run(edited, {"c": feeds["c"], "x2": feeds["x"]}))


def test_set_io_shape_unknown_dims_and_refused_dtype(client):
    m = small_model()
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_io_shape", "name": "z", "shape": [None, "n"], "dtype": "FLOAT16"}]},
    )
    # the graph computes FLOAT: said of the node writing z, the types by name
    assert (
        r.status_code == 422
        and "its output 'z' is inferred FLOAT but declared FLOAT16" in r.get_json()["error"]["message"]
    )
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_io_shape", "name": "z", "shape": [None, "n"], "dtype": "FLOAT"}]},
    )
    assert r.get_json()["changes"][0].startswith("'z' is now FLOAT ⟨?×n⟩"), r.get_json()  # as the page writes shapes
    edited, _ = edit(
        client, m.SerializeToString(), [{"op": "set_io_shape", "name": "z", "shape": [None, "n"], "dtype": "FLOAT"}]
    )
    tt = edited.graph.output[0].type.tensor_type
    assert tt.elem_type == TensorProto.FLOAT
    assert not tt.shape.dim[0].HasField("dim_value") and not tt.shape.dim[0].HasField("dim_param")
    assert tt.shape.dim[1].dim_param == "n"
    expected = copy.deepcopy(m)
    expected.graph.output[0].type.CopyFrom(edited.graph.output[0].type)
    assert edited == expected


def test_edit_keeps_unknown_fields(client):
    m = small_model()
    data = m.SerializeToString() + bytes([0xF8, 0xFF, 0x03, 0x2A])  # field 65535, varint 42: unknown to onnx
    edited_bytes_model, _ = edit(client, data, [{"op": "set_metadata", "key": "a", "value": "b"}])
    assert bytes([0xF8, 0xFF, 0x03, 0x2A]) in edited_bytes_model.SerializeToString()


def test_metadata_on_a_function(client):
    fn = helper.make_function(
        "local", "Twice", ["X"], ["Y"], [helper.make_node("Add", ["X", "X"], ["Y"])], [helper.make_opsetid("", 17)]
    )
    g = helper.make_graph(
        [helper.make_node("Twice", ["x"], ["y"], domain="local")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    m = helper.make_model(
        g, functions=[fn], opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    )
    m.ir_version = 10
    expected = copy.deepcopy(m)
    expected.functions[0].metadata_props.add(key="owner", value="me")
    edited, resp = edit(
        client, m.SerializeToString(), [{"op": "set_metadata", "target": "fn[0]", "key": "owner", "value": "me"}]
    )
    assert edited == expected and "function Twice" in resp["changes"][0]
    np.testing.assert_allclose(run(edited, {"x": np.array([1.0, 2.0], np.float32)})["y"], [2.0, 4.0])


def test_freeze_input_makes_a_constant_the_runtime_and_simplify_fold(client):
    """A flag input fixed to false: the model keeps running as if it were fed false, the input is
    gone and the value is an initializer of that name; Simplify then folds the If away. A mask
    with a symbolic batch takes a value of any batch size, once x's batch is that size too."""
    data = flag_model().SerializeToString()
    mid = upload(client, data).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={
            "base": 0,
            "ops": [
                {"op": "freeze_input", "name": "use_cache", "value": {"dtype": "BOOL", "shape": [], "values": [False]}}
            ],
        },
    )
    assert r.status_code == 200, r.get_json()
    frozen = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(frozen, full_check=True)
    assert [i.name for i in frozen.graph.input] == ["x", "mask"]
    assert numpy_helper.to_array(next(t for t in frozen.graph.initializer if t.name == "use_cache")).item() is False
    x, mask = np.arange(8, dtype=np.float32).reshape(2, 4), np.full((2, 4), 0.5, np.float32)
    assert_same_outputs(
        run(frozen, {"x": x, "mask": mask}),
        run(onnx.load_from_string(data), {"x": x, "mask": mask, "use_cache": np.array(False)}),
    )

    r = client.post(f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "simplify"}]})
    assert r.status_code == 200, r.get_json()
    simple = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert "If" not in {n.op_type for n in simple.graph.node}, [n.op_type for n in simple.graph.node]
    assert_same_outputs(run(simple, {"x": x, "mask": mask}), run(frozen, {"x": x, "mask": mask}))

    r = client.post(
        f"/api/models/{mid}/edits",
        json={
            "base": 2,
            "ops": [
                {"op": "freeze_input", "name": "mask", "value": {"dtype": "FLOAT", "shape": [3, 4], "values": [1] * 12}}
            ],
        },
    )
    # batch is symbolic: 3 rows fit the declaration, but x's batch of 2 would no longer run
    assert r.status_code == 422 and "no longer at 2" in r.get_json()["error"]["message"], r.get_json()
    freeze = {"op": "freeze_input", "name": "mask", "value": {"dtype": "FLOAT", "shape": [3, 4], "values": [1] * 12}}
    ops = [freeze, {"op": "set_io_shape", "name": "x", "shape": [3, 4]}]  # the batch the mask implies
    r = client.post(f"/api/models/{mid}/edits", json={"base": 2, "ops": ops})
    assert r.status_code == 200, r.get_json()


@pytest.mark.parametrize(
    ("op", "status", "words"),
    [
        (
            {"name": "use_cache", "value": {"dtype": "INT64", "shape": [], "values": [0]}},
            400,
            "is BOOL; the value is INT64",
        ),
        (
            {"name": "mask", "value": {"dtype": "FLOAT", "shape": [2, 5], "values": [0] * 10}},
            400,
            "declared [batch, 4]",
        ),
        ({"name": "mask", "value": {"dtype": "FLOAT", "shape": [4], "values": [0] * 4}}, 400, "declared [batch, 4]"),
        ({"name": "y", "value": {"dtype": "FLOAT", "shape": [1, 4], "values": [0] * 4}}, 404, "no input named 'y'"),
    ],
)
def test_freeze_input_refuses_a_value_the_input_rules_out(client, op, status, words):
    mid = upload(client, flag_model().SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "freeze_input", **op}]})
    assert r.status_code == status, r.get_json()
    assert words in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def test_a_real_model_frozen_on_its_test_input_computes_its_expected_output(client):
    """A torch-converted model with its input fixed to its test data set's input (uploaded as an
    .npy of float64: cast to the input's FLOAT) runs with no inputs fed and gives the test data's
    output. At its IR version 3 every initializer is also an input, so the input stays (as a
    default) and the answer says so."""
    from testkit import npy_blob

    path = next(p for p in CONVERTED if p.parent.name == "test_Conv2d")
    model, feeds = load_case(path)
    name, value = "0", feeds["0"]  # its data input; "1" and "2" are weights listed as inputs too
    mid = upload(client, path.read_bytes()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={
            "base": 0,
            "ops": [{"op": "freeze_input", "name": name, "value": {"npy": npy_blob(client, value.astype(np.float64))}}],
        },
    )
    assert r.status_code == 200, r.get_json()
    assert "it stays an input" in r.get_json()["changes"][0], r.get_json()
    frozen = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    assert model.ir_version == 3 and name in {i.name for i in frozen.graph.input}
    expected = onnx.TensorProto()
    expected.ParseFromString((path.parent / "test_data_set_0" / "output_0.pb").read_bytes())
    (got,) = run(frozen, {}).values()
    np.testing.assert_allclose(got, numpy_helper.to_array(expected), rtol=1e-4, atol=1e-5)


def test_a_new_io_dtype_with_a_cast_keeps_what_the_graph_computes(client):
    """A real CNN takes uint8 images and gives float16 out: Casts after the input and before the
    output keep the graph in float, so it computes what it did on the same pixels (to float16's
    precision); without `cast` the same dtype change is refused, naming the Conv that can't read uint8."""
    path = next(p for p in CONVERTED if p.parent.name == "test_Conv2d")
    model, feeds = load_case(path)
    out = model.graph.output[0].name
    pixels = np.random.default_rng(0).integers(0, 255, feeds["0"].shape).astype(np.uint8)
    ops = [
        {"op": "set_io_shape", "name": "0", "shape": dims_of(model.graph.input[0]), "dtype": "UINT8", "cast": True},
        {"op": "set_io_shape", "name": out, "shape": dims_of(model.graph.output[0]), "dtype": "FLOAT16", "cast": True},
    ]
    edited, answer = edit(client, path.read_bytes(), ops)
    assert "a Cast after it keeps the graph in FLOAT ('0_float')" in answer["changes"][0], answer
    onnx.checker.check_model(edited, full_check=True)
    casts = [n for n in edited.graph.node if n.op_type == "Cast"]
    assert [(n.input[0], n.output[0]) for n in casts] == [("0", "0_float"), (f"{out}_float", out)]
    got = run(edited, {"0": pixels})[out]
    want = run(model, {"0": pixels.astype(np.float32)})[out]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())

    mid = upload(client, path.read_bytes()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{**ops[0], "cast": False}]})
    assert r.status_code == 422 and "unsupported type: tensor(uint8)" in r.get_json()["error"]["message"]


def test_a_cast_needs_an_inside(client):
    """An input passed straight out as an output, or an output no node computes, has no inside to
    keep: refused, nothing stored."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "pass",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
        ],
    )
    mid = upload(client, helper.make_model(g).SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_io_shape", "name": "x", "shape": [2], "dtype": "FLOAT16", "cast": True}]},
    )
    assert r.status_code == 400 and "both an input and an output" in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def dims_of(v: onnx.ValueInfoProto) -> list:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in v.type.tensor_type.shape.dim]


def _forest_like() -> onnx.ModelProto:
    """A node with FLOATS, INTS and STRINGS lists and a FLOAT: what set_attribute_items works on."""
    from test_ml_types import _ml, _model, _tree

    node = _ml("TreeEnsembleRegressor", ["y"], n_targets=1, target_treeids=[0, 0], target_nodeids=[1, 2],
               target_ids=[0, 0], target_weights=[1.0, 2.0], **_tree())  # fmt: skip
    node.name = "forest"
    node.attribute.append(helper.make_attribute("post_transform", "NONE"))
    return _model([node])


def test_set_attribute_items_sets_those_items_only(client):
    """One threshold of a tree and one leaf weight set by position: the rest of each list as it
    was, and onnxruntime follows the new threshold."""
    m = _forest_like()
    ops = [
        {"op": "set_attribute_items", "node": "forest", "name": "nodes_values", "items": [{"index": 0, "value": 2.0}]},
        {
            "op": "set_attribute_items",
            "node": "forest",
            "name": "target_weights",
            "items": [{"index": 1, "value": "NaN"}],
        },
        {
            "op": "set_attribute_items",
            "node": "forest",
            "name": "nodes_modes",
            "items": [{"index": 0, "value": "BRANCH_LT"}],
        },
    ]
    edited, resp = edit(client, m.SerializeToString(), ops)
    attrs = {a.name: helper.get_attribute_value(a) for a in edited.graph.node[0].attribute}
    assert attrs["nodes_values"] == [2.0, 0.0, 0.0] and attrs["nodes_modes"] == [b"BRANCH_LT", b"LEAF", b"LEAF"]
    assert attrs["target_weights"][0] == 1.0 and np.isnan(attrs["target_weights"][1])
    assert "'nodes_values'" in resp["changes"][0] and "[0] = 2.0" in resp["changes"][0]
    sess = ort.InferenceSession(edited.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([[1.0, 0, 0, 0], [3.0, 0, 0, 0]], np.float32)  # 1 < 2: the true leaf (1.0); 3: the other
    y = sess.run(None, {"X": x})[0]
    assert y[0, 0] == 1.0 and np.isnan(y[1, 0])


@pytest.mark.parametrize(
    ("item", "name", "words"),
    [
        ({"index": 3, "value": 1.0}, "nodes_values", "has 3 items: there is no item 3"),
        ({"index": 0, "value": "x"}, "nodes_values", "must be a number"),
        ({"index": 0, "value": 1.5}, "nodes_treeids", "must be an integer"),
        ({"index": 0, "value": 1}, "post_transform", "of type STRING: only FLOATS, INTS and STRINGS"),
        ({"index": 0, "value": 1}, "nope", "has no attribute 'nope'"),
        ({"index": -1, "value": 1}, "nodes_values", "non-negative integer"),
    ],
)
def test_set_attribute_items_refuses_what_it_cant_set(client, item, name, words):
    mid = upload(client, _forest_like().SerializeToString()).get_json()["id"]
    op = {"op": "set_attribute_items", "node": "forest", "name": name, "items": [item]}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 400 and words in r.get_json()["error"]["message"], r.get_json()
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


@pytest.mark.parametrize(
    ("dtype", "values", "words"),
    [
        ("INT64", [1, 1.7], "INT64 holds whole numbers: 1.7 is not one"),
        ("FLOAT16", [1e6], "1e+06 is beyond the largest FLOAT16 (65504)"),
        ("BOOL", [1, 2], "booleans are typed true or false (or 0 and 1)"),
        ("INT4", [8], "a value is outside INT4's range -8…7"),
        ("FLOAT8E4M3FN", [1000.0], "1000 is beyond the largest FLOAT8E4M3FN (448)"),
        ("UINT8", [-1], "a value is outside UINT8's range 0…255"),
        ("INT32", ["NaN"], "INT32 holds whole numbers: NaN and infinity are not"),
        ("FLOAT", ["x"], "FLOAT holds numbers"),
        # types without infinity or NaN saturate instead (QA22 M3): refused all the same
        ("FLOAT4E2M1", ["NaN", 1.0], "FLOAT4E2M1 holds no NaN or infinity: nan would be -0"),
        ("FLOAT4E2M1", ["-Infinity"], "FLOAT4E2M1 holds no NaN or infinity: -inf would be -6"),
        ("FLOAT4E2M1", [1000.5, 1.0], "1000.5 is beyond the largest FLOAT4E2M1 (6)"),
        ("FLOAT4E2M1", [7.0], "7 is beyond the largest FLOAT4E2M1 (6)"),
        ("FLOAT4E2M1", [7], "7 is beyond the largest FLOAT4E2M1 (6)"),
        ("FLOAT8E8M0", [0.0], "0 is no value a FLOAT8E8M0 holds"),
        ("FLOAT8E4M3FN", [464.0], "464 is beyond the largest FLOAT8E4M3FN (448)"),
    ],
)
def test_typed_values_that_a_cast_would_change_are_refused(client, dtype, values, words):
    """add_initializer casts nothing silently: a value the element type can't hold (1.7 as an
    integer, 1e6 as float16, 2 as a boolean) is refused naming it; nothing is stored."""
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    op = {"op": "add_initializer", "name": "c", "value": {"dtype": dtype, "shape": [len(values)], "values": values}}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 400 and words in r.get_json()["error"]["message"], r.get_json()
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def test_typed_values_that_fit_are_stored_as_typed(client):
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    ops = [
        {"op": "add_initializer", "name": n, "value": {"dtype": d, "shape": [len(v)], "values": v}}
        for n, d, v in [
            ("k_i", "INT64", [2.0, -3]),
            ("k_b", "BOOL", [0, 1, True]),
            ("k_h", "FLOAT16", [65504, 0.1]),
            ("k_f4", "FLOAT4E2M1", [6.5, -6, 0.5]),  # 6.5 rounds to 6: a float's rounding, not past its largest
        ]
    ]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 200, r.get_json()
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    got = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    assert got["k_i"].tolist() == [2, -3] and got["k_b"].tolist() == [False, True, True]
    assert got["k_h"].dtype == np.float16 and got["k_h"][0] == 65504
    assert got["k_f4"].astype(np.float32).tolist() == [6.0, -6.0, 0.5]


LIGHT_AND_TORCH = [
    ONNX_DATA / "light" / "light_resnet50.onnx",
    ONNX_DATA / "pytorch-converted" / "test_ConvTranspose2d" / "model.onnx",
    ONNX_DATA / "pytorch-converted" / "test_PReLU_1d" / "model.onnx",
]


@pytest.mark.parametrize("path", LIGHT_AND_TORCH, ids=lambda p: p.parent.name if p.name == "model.onnx" else p.stem)
def test_deleting_an_inserted_node_with_reconnect_gives_back_the_graph(client, path):
    """insert_node (all readers) renames the producer's output to <tensor>_pre; deleting the new
    node with reconnect names it back: the graph is the one before the insert, byte for byte."""
    model = onnx.load(path)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    node = next(n for n in model.graph.node if n.op_type not in ("Constant", "ConstantOfShape") and n.output)
    tensor = node.output[0]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "insert_node", "tensor": tensor, "op_type": "Identity", "name": "added"}]},
    )
    assert r.status_code == 200, r.get_json()
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 1, "ops": [{"op": "delete_node", "node": "added", "reconnect": True}]}
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == [
        f'deleted node "added" (Identity); {tensor + "_pre"!r} is now written as {tensor!r}'
    ]
    before, after = (onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision={k}").data) for k in (0, 2))
    assert after.graph.SerializeToString(deterministic=True) == before.graph.SerializeToString(deterministic=True)


def test_deleting_an_exporters_dropout_keeps_the_upstream_tensors_name(client):
    """A torch export's Dropout between a LayerNorm's Add and the next layer: deleted with
    reconnect, the Add keeps writing its own tensor and the readers read it; no tensor is left
    named after the node that is gone."""
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["x", "b"], ["/ln/Add_1_output_0"], name="/ln/Add_1"),
            helper.make_node("Dropout", ["/ln/Add_1_output_0"], ["/dropout/Dropout_output_0"], name="/dropout/Dropout"),
            helper.make_node("Relu", ["/dropout/Dropout_output_0"], ["y"], name="/next/Relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", f, [1, 4])],
        [helper.make_tensor_value_info("y", f, [1, 4])],
        [helper.make_tensor("b", f, [4], [0.0, 1.0, 2.0, 3.0])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    edited, resp = edit(client, model.SerializeToString(), [{"op": "delete_node", "node": "n1", "reconnect": True}])
    assert resp["changes"] == [
        "deleted node \"/dropout/Dropout\" (Dropout); readers of '/dropout/Dropout_output_0' now read '/ln/Add_1_output_0'"
    ]
    assert [(n.name, list(n.input), list(n.output)) for n in edited.graph.node] == [
        ("/ln/Add_1", ["x", "b"], ["/ln/Add_1_output_0"]),
        ("/next/Relu", ["/ln/Add_1_output_0"], ["y"]),
    ]
    onnx.checker.check_model(edited, full_check=True)


@pytest.mark.parametrize("path", LIGHT_AND_TORCH, ids=lambda p: p.parent.name if p.name == "model.onnx" else p.stem)
def test_deleting_an_inserted_mul_takes_its_constant_along(client, path):
    """What the page's "=2" does (a new initializer, then insert_node reading it), undone by
    Delete with Reconnect: the constant goes too (and its graph input below IR 4), so the graph is
    the one before, byte for byte."""
    model = onnx.load(path)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    node = next(n for n in model.graph.node if n.op_type not in ("Constant", "ConstantOfShape") and n.output)
    ops = [
        {"op": "add_initializer", "name": "scale2_b", "value": {"dtype": "FLOAT", "shape": [], "values": 2}},
        {"op": "insert_node", "tensor": node.output[0], "op_type": "Mul", "inputs": ["scale2_b"], "name": "scale2"},
    ]
    # onnxruntime has no Mul of the converted models' opset 6: its gate is not what is tested here
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops, "allow_invalid": True})
    assert r.status_code == 200, r.get_json()
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 1, "ops": [{"op": "delete_node", "node": "scale2", "reconnect": True}]},
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith("; and its initializer 'scale2_b' (nothing else read it)")
    before, after = (onnx.load_from_string(client.get(f"/api/models/{mid}/download?revision={k}").data) for k in (0, 2))
    assert after.graph.SerializeToString(deterministic=True) == before.graph.SerializeToString(deterministic=True)


def test_an_initializer_added_below_ir_4_is_a_graph_input_too(client):
    """Below IR version 4 every initializer must also be a graph input (the onnx wheel's light
    and pytorch-converted models are IR 3): add_initializer adds the input in the main graph, so a
    typed constant (=2) works there; in a subgraph, which can't take one, the model goes to IR 4."""
    data = (ONNX_DATA / "light" / "light_resnet50.onnx").read_bytes()
    assert onnx.load_from_string(data).ir_version == 3
    mid = upload(client, data).get_json()["id"]
    ops = [
        {"op": "add_initializer", "name": "two", "value": {"dtype": "FLOAT", "shape": [], "values": 2}},
        {"op": "insert_node", "tensor": "r5", "op_type": "Mul", "inputs": ["two"], "name": "scale2"},
    ]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 200, r.get_json()
    assert "and its graph input (below IR version 4 every initializer is one)" in r.get_json()["changes"][0]
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 3 and model.graph.input[-1].name == "two"
    assert onnx.helper.printable_type(model.graph.input[-1].type) == "FLOAT, scalar"

    branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "then",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["y2"])],
        "else",
        [],
        [helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1])],
    )
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["out"], then_branch=branch, else_branch=other)],
        "ir3_if",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])],
    )
    old = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)], ir_version=3)
    onnx.checker.check_model(old)
    mid = upload(client, old.SerializeToString()).get_json()["id"]
    op = {"op": "add_initializer", "graph": "n0/then_branch", "name": "k", "value": {"dtype": "FLOAT", "values": [1.0]}}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith(
        "; ir_version 3 -> 4 (below 4 every initializer must be a graph input, which a subgraph's can't be)"
    )
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 4 and [
        t.name for a in model.graph.node[0].attribute if a.name == "then_branch" for t in a.g.initializer
    ] == ["k"]


def test_set_node_op_says_how_many_inputs_the_operator_takes(client):
    """The refusal reads "Relu takes 1 input and 1 output", not "1-1 inputs"."""
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    two_inputs = next(i for i, n in enumerate(model.graph.node) if len([x for x in n.input if x]) >= 2)
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_node_op", "node": f"n{two_inputs}", "op_type": "Relu"}]},
    )
    assert r.status_code == 400 and "Relu takes 1 input and 1 output;" in r.get_json()["error"]["message"], r.get_json()


def test_a_node_added_without_a_name_has_no_name_field(client):
    """A node inserted or added without a name leaves the field unset (proto2 keeps "" set, and
    onnx's text form then prints it named [""])."""
    mid = upload(client, small_model().SerializeToString()).get_json()["id"]
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    tensor = model.graph.node[0].output[0]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "insert_node", "tensor": tensor, "op_type": "Relu"}]},
    )
    assert r.status_code == 200, r.get_json()
    edited = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    added = next(n for n in edited.graph.node if n.op_type == "Relu" and n.output[0] == tensor)
    assert not added.HasField("name") and not added.HasField("domain")
    assert '[""]' not in onnx.printer.to_text(edited.graph)


def test_set_io_shape_of_a_weight_listed_as_an_input_says_it_is_a_weight(client):
    """An IR 3 model lists its weights among its inputs (the wheel's light squeezenet: 52 of
    its 53): a 4-D shape on a bias was refused by shape inference's "differ in rank: (1) vs (4)"."""
    w = numpy_helper.from_array(np.ones(4, np.float32), "bias")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "bias"], ["y"], name="add")],
        "ir3",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("bias", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [w],
    )
    model = helper.make_model(graph, ir_version=3, opset_imports=[helper.make_opsetid("", 9)])
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    for shape in (["batch", 3, 224, 224], [5]):
        op = {"op": "set_io_shape", "name": "bias", "shape": shape, "update_types": True}
        r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
        assert r.status_code == 400, r.get_json()
        assert r.get_json()["error"]["message"] == (
            "op #1 (set_io_shape): 'bias' is a weight (an initializer listed among the inputs) of shape FLOAT ⟨4⟩:"
            " its shape is its initializer's (set_initializer changes it)"
        )
    # the data input takes a batch as before
    op = {"op": "set_io_shape", "name": "x", "shape": ["batch", 4], "update_types": True}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200


def test_an_npy_cast_to_the_initializers_type_never_changes_a_value_silently(client):
    """A float64 .npy is cast to a FLOAT weight's type (the usual case): 1e40 became inf, and an
    .npy of 2.5 an INT64 2, without a word."""
    from testkit import npy_blob

    m = small_model()
    m.graph.initializer.extend(
        [numpy_helper.from_array(np.ones(4, np.float32), "w"), numpy_helper.from_array(np.ones(2, np.int64), "k")]
    )
    mid = upload(client, m.SerializeToString()).get_json()["id"]

    def set_to(name: str, arr: np.ndarray):
        op = {"op": "set_initializer", "name": name, "value": {"npy": npy_blob(client, arr)}}
        return client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})

    r = set_to("w", np.array([1.0, 2.0, 1e40, 4.0]))
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"] == (
        "op #1 (set_initializer): initializer 'w': the .npy's float64 values can't be FLOAT:"
        " 1e+40 is beyond the largest FLOAT (3.40282e+38)"
    )
    r = set_to("k", np.array([2.5, 3.0]))
    assert r.status_code == 400 and "INT64 holds whole numbers: 2.5 is not one" in r.get_json()["error"]["message"]
    # a whole number a FLOAT can't hold exactly is a changed value too (an id, a count)
    r = set_to("w", np.array([1, 2, 16777217, 4], np.int64))
    assert r.status_code == 400 and r.get_json()["error"]["message"].endswith(
        "16777217 is not a FLOAT exactly (it would be 16777216)"
    )
    # values the type holds are cast as before: float64 weights, whole floats as integers
    assert set_to("w", np.array([0.5, 2.0, -3.0, 4.0])).status_code == 200
    edited = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    np.testing.assert_array_equal(
        numpy_helper.to_array(next(t for t in edited.graph.initializer if t.name == "w")), [0.5, 2, -3, 4]
    )


def test_one_value_fills_the_shape_given(client):
    m = small_model()
    m.graph.initializer.append(numpy_helper.from_array(np.ones(8, np.float32), "w8"))
    mid = upload(client, m.SerializeToString()).get_json()["id"]
    op = {"op": "set_initializer", "name": "w8", "value": {"dtype": "FLOAT", "shape": [8], "values": 0.25}}
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]})
    assert r.status_code == 200, r.get_json()
    edited = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    np.testing.assert_array_equal(
        numpy_helper.to_array(next(t for t in edited.graph.initializer if t.name == "w8")), [0.25] * 8
    )


@pytest.mark.parametrize("scale", ["initializer", "constant"])
def test_reconnect_passes_on_the_data_not_the_weight(client, scale):
    """QA19 F8: torch writes RMSNorm's scale as Mul(weight, x): deleting that Mul with reconnect
    wired its readers to the ⟨256⟩ weight, and the refusal then spoke of batch sizes."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    weight = numpy_helper.from_array(np.full(4, 2.0, np.float32), "weight")
    nodes = [
        helper.make_node("Mul", ["weight", "x"], ["scaled"], name="scale"),
        helper.make_node("Relu", ["scaled"], ["y"]),
    ]
    inits = [weight]
    if scale == "constant":
        nodes.insert(0, helper.make_node("Constant", [], ["weight"], name="w", value=weight))
        inits = []
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 18)]
    )

    edited, resp = edit(client, model.SerializeToString(), [{"op": "delete_node", "node": "scale", "reconnect": True}])

    relu = next(n for n in edited.graph.node if n.op_type == "Relu")
    assert list(relu.input) == ["x"], resp["changes"]
    feeds = {"x": np.array([[-1, 2, -3, 4]], np.float32)}
    assert np.array_equal(run(edited, feeds)["y"], np.maximum(feeds["x"], 0))


def test_setting_an_attribute_to_the_value_it_has_says_so(client):
    """QA35 #8: pads set to the [1, 1, 1, 1] they were read "set to [1, 1, 1, 1]" in History."""
    from browser.browser_models import tiny_cnn

    model = tiny_cnn()
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    pads = list(next(a for a in conv.attribute if a.name == "pads").ints)
    ops = [
        {"op": "set_attribute", "node": conv.name, "name": "pads", "value": pads},
        {"op": "set_metadata", "key": "k", "value": "v"},
    ]
    _, answer = edit(client, model.SerializeToString(), ops)
    assert answer["changes"][0] == f"attribute 'pads' of node \"{conv.name}\" (Conv) is already {pads!r}: unchanged"
