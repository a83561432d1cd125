"""write_out's bodies as body_rewrites makes them (QA37): exact on data a kernel takes (the
variance of large-mean activations), no nodes for outputs the node doesn't have, and no
CastLike that would hold the model above opset 15."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.case.node import collect_testcases
from testkit import upload

from app.edits.unused import live_nodes

F = TensorProto.FLOAT


def layer_norm(opset: int = 17) -> onnx.ModelProto:
    """x [n, 64] → LayerNormalization over the features → y, as an encoder's residual stream has it."""
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], name="ln", axis=-1, epsilon=1e-5)],
        "g",
        [helper.make_tensor_value_info("x", F, ["n", 64])],
        [helper.make_tensor_value_info("y", F, ["n", 64])],
        [
            numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "g"),
            numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "b"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def written_out(client, model: onnx.ModelProto, ops: list[dict]) -> tuple[bytes, list[str]]:
    mid = upload(client, model.SerializeToString(), "m.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 200, r.get_json()
    data = client.get(f"/api/models/{mid}/download").data
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data, r.get_json()["changes"]


def run(data: bytes, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


@pytest.mark.parametrize("mean", [0.0, 1000.0, 3000.0])
def test_a_layer_norm_written_out_gives_the_kernels_values_at_a_large_mean(client, mean):
    """onnx's body takes the variance as E[x²] − E[x]²: 0.73 off at a mean of 1000 and NaN at
    3000 in float32; as the mean of squared deviations it stays with onnxruntime's kernel."""
    model = layer_norm()
    data, _ = written_out(client, model, [{"op": "write_out", "op_types": ["LayerNormalization"]}])
    x = (np.random.default_rng(1).standard_normal((8, 64)) + mean).astype(np.float32)
    exact = x.astype(np.float64)
    exact = (exact - exact.mean(-1, keepdims=True)) / np.sqrt(exact.var(-1, keepdims=True) + 1e-5)
    g, b = (numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer)
    exact = exact * g + b
    kernel, got = run(model.SerializeToString(), x), run(data, x)
    assert np.isfinite(got).all()
    # within a few times the kernel's own error against float64
    assert np.abs(got - exact).max() <= max(4 * np.abs(kernel - exact).max(), 1e-5), (
        np.abs(got - exact).max(),
        np.abs(kernel - exact).max(),
    )


def test_a_written_out_body_computes_only_the_outputs_the_node_has(client):
    """LayerNormalization's optional Mean and InvStdDev: 3 nodes nothing read per node (#4)."""
    data, changes = written_out(client, layer_norm(), [{"op": "write_out", "nodes": ["ln"]}])
    model = onnx.load_from_string(data)
    live, _ = live_nodes(model, model.graph)
    assert all(live), [n.name for n, ok in zip(model.graph.node, live, strict=True) if not ok]
    assert not {"Reciprocal", "Size", "Concat"} & {n.op_type for n in model.graph.node}
    count = len(model.graph.node)
    assert changes[0].endswith(f"{count} node(s) in their place"), changes


def test_a_layer_norm_asked_for_its_mean_keeps_the_nodes_that_give_it(client):
    model = layer_norm()
    model.graph.node[0].output.extend(["mu"])
    model.graph.output.append(helper.make_tensor_value_info("mu", F, ["n", 1]))
    data, _ = written_out(client, model, [{"op": "write_out", "nodes": ["ln"]}])
    x = np.random.default_rng(2).standard_normal((3, 64)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def gelu() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Gelu", ["x"], ["y"], name="act")],
        "g",
        [helper.make_tensor_value_info("x", F, ["n", 16])],
        [helper.make_tensor_value_info("y", F, ["n", 16])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def test_a_gelu_written_out_converts_down_to_13_in_one_go(client):
    """Its body's CastLike of the constants to X's type (opset 15) is a Cast to FLOAT: no third
    round of write_out before convert_opset 13 goes through (#2)."""
    model = gelu()
    ops = [{"op": "write_out", "op_types": ["Gelu"]}, {"op": "convert_opset", "version": 13}]
    data, _ = written_out(client, model, ops)
    written = onnx.load_from_string(data)
    assert "CastLike" not in {n.op_type for n in written.graph.node}
    assert [(o.domain, o.version) for o in written.opset_import] == [("", 13)]
    x = np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32)
    np.testing.assert_allclose(run(data, x), run(model.SerializeToString(), x), rtol=1e-5, atol=1e-6)


def test_a_group_norm_written_out_holds_at_a_large_mean(client):
    """GroupNormalization-21's body takes its variance as E[x²] − E[x]² too."""
    rng = np.random.default_rng(4)
    graph = helper.make_graph(
        [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="gn", num_groups=2, epsilon=1e-5)],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 4, 16])],
        [helper.make_tensor_value_info("y", F, [2, 4, 16])],
        [
            numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "s"),
            numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    data, _ = written_out(client, model, [{"op": "write_out", "op_types": ["GroupNormalization"]}])
    x = (rng.standard_normal((2, 4, 16)) + 3000).astype(np.float32)
    grouped = x.astype(np.float64).reshape(2, 2, -1)
    exact = (grouped - grouped.mean(-1, keepdims=True)) / np.sqrt(grouped.var(-1, keepdims=True) + 1e-5)
    s, b = (numpy_helper.to_array(t).astype(np.float64)[None, :, None] for t in graph.initializer)
    exact = exact.reshape(2, 4, 16) * s + b
    got = run(data, x)
    assert np.isfinite(got).all() and np.abs(got - exact).max() < 1e-2, np.abs(got - exact).max()


def test_a_mean_variance_normalization_written_out_holds_at_a_large_mean(client):
    """QA38 #2: MeanVarianceNormalization's body squares with Pow(x, 2): E[x²] − E[x]² again,
    1.8e9 off at a mean of 3000 and NaN at 10000."""
    graph = helper.make_graph(
        [helper.make_node("MeanVarianceNormalization", ["x"], ["y"], name="mvn", axes=[2])],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 8, 64])],
        [helper.make_tensor_value_info("y", F, [2, 8, 64])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    data, _ = written_out(client, model, [{"op": "write_out", "op_types": ["MeanVarianceNormalization"]}])
    assert "Pow" not in {n.op_type for n in onnx.load_from_string(data).graph.node}
    for mean in (0.0, 3000.0, 10000.0):
        x = (np.random.default_rng(5).standard_normal((2, 8, 64)) + mean).astype(np.float32)
        exact = x.astype(np.float64)
        exact = (exact - exact.mean(2, keepdims=True)) / (exact.std(2, keepdims=True) + 1e-9)
        got = run(data, x)
        assert np.isfinite(got).all() and np.abs(got - exact).max() < 1e-2, (mean, np.abs(got - exact).max())


def test_a_body_with_constant_value_floats_writes_out_at_an_old_opset(client):
    """QA38 #4: Shrink's body makes its constants with Constant value_float (opset 12 on): written
    out at opset 9 it was refused as invalid; as value tensors it is exact."""
    case = next(c for c in collect_testcases(None) if c.name == "test_shrink_soft")
    data, _ = written_out(client, case.model, [{"op": "write_out", "op_types": ["Shrink"]}])
    written = onnx.load_from_string(data)
    assert "Shrink" not in {n.op_type for n in written.graph.node}
    (x,) = case.data_sets[0][0]
    (want,) = case.data_sets[0][1]
    name = case.model.graph.input[0].name
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {name: x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_conversion_stopped_by_computed_axes_names_the_nodes_and_the_way_out(client):
    """QA38 #7: RMSNormalization written out computes its ReduceMean axes (Shape, Range); converting
    to 13 was refused in the converter's words alone ("No initializer or constant input to node
    found"), naming no node."""
    case = next(c for c in collect_testcases(None) if c.name.startswith("test_rms_normalization"))
    mid = upload(client, case.model.SerializeToString(), "rms.onnx").get_json()["id"]
    ops = [{"op": "write_out", "op_types": ["RMSNormalization"]}, {"op": "convert_opset", "version": 13}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "is computed here, not a constant (nodes '" in message and "ReduceMean" in message, message
    assert message.endswith("give the inputs' dims their sizes (Make static…) and Simplify first, so it folds to one")


def test_a_body_holding_an_operator_with_a_body_says_so(client):
    """QA39 #10: SwiGLU written out left a Swish (opset 24, which onnxruntime lacks), unsaid."""
    case = next(c for c in collect_testcases(None) if c.name == "test_swiglu")
    mid = upload(client, case.model.SerializeToString(), "swiglu.onnx").get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "write_out", "op_types": ["SwiGLU"]}]})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"][0].endswith(
        "; left Swish ×1, which onnx defines by other operators too: write it out as well if the target lacks it"
    )


def test_another_domains_operator_is_written_out_by_its_domain_and_type(client):
    """QA39 #9: FlexAttention (ai.onnx.preview) couldn't be named in op_types."""
    case = next(c for c in collect_testcases(None) if c.name.startswith("test_flexattention"))
    node = case.model.graph.node[0]
    mid = upload(client, case.model.SerializeToString(), "flex.onnx").get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "write_out", "op_types": [node.op_type]}]}
    )
    assert (
        r.status_code == 400
        and f"named with its domain: {node.domain}.{node.op_type}" in r.get_json()["error"]["message"]
    )
    ops = [{"op": "write_out", "op_types": [f"{node.domain}.{node.op_type}"]}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 200, r.get_json()
    assert node.op_type not in {
        n.op_type for n in onnx.load_from_string(client.get(f"/api/models/{mid}/download").data).graph.node
    }


def test_a_kernel_the_cpu_lacks_in_bfloat16_is_said_to_be_the_types(client):
    """QA39 #11: a bfloat16 model's missing kernel came as onnxruntime's bare "Could not find an
    implementation for Div(14)", and Simplify's way out said to convert the opset, which can't help."""
    case = next(c for c in collect_testcases(None) if c.name == "test_celu_bfloat16")
    mid = upload(client, case.model.SerializeToString(), "celu.onnx").get_json()["id"]
    ops = [{"op": "write_out", "op_types": ["Celu"]}, {"op": "simplify"}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert message.endswith(
        "(onnxruntime's CPU provider has no Div(14) kernel for the types given it here: the model computes in"
        " bfloat16, which it runs few operators in)"
    ), message
