"""convert_opset on models with model-local functions (what PyTorch's dynamo exporter and
onnxscript write): the bodies are converted too, references to function attributes and nodes'
metadata come through, and the model computes what it did."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from test_edits import edit

NESTED = """
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[N, 4] X) => (float[N, 4] Y) <float[4, 4] W = {1,0,0,0, 0,2,0,0, 0,0,3,0, 0,0,0,4}> {
  H = local.Block <slope: float = 0.2> (X, W)
  Y = local.Norm (H)
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
ScaledAct <alpha, beta: float = 0.5> (X) => (Y) {
  T1 = LeakyRelu <alpha: float = @alpha> (X)
  B = Constant <value_float: float = @beta> ()
  Y = Mul (T1, B)
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
Block <slope, gain: float = 2.0> (X, W) => (Y) {
  M = MatMul (X, W)
  Y = local.ScaledAct <alpha: float = @slope, beta: float = @gain> (M)
}
<domain: "local", opset_import: ["" : 18]>
Norm (X) => (Y) {
  axes = Constant <value: tensor = int64[1] {1}> ()
  mean = ReduceMean <keepdims: int = 1> (X, axes)
  Y = Sub (X, mean)
}
"""


def outputs(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x})[0]


# down to 17 the ReduceMean in a body takes its axes as an attribute again; 18 to 21 changes no node
REWRITTEN = {17: "2 nodes rewritten", 21: "no node needed rewriting, only the opset import"}


@pytest.mark.parametrize("version", [17, 21])
def test_function_bodies_are_converted_with_the_graph(client, version):
    model = onnx.parser.parse_model(NESTED)
    model.functions[0].node[0].metadata_props.add(key="origin", value="exporter")
    onnx.checker.check_model(model, full_check=True)
    edited, answer = edit(client, model.SerializeToString(), [{"op": "convert_opset", "version": version}])
    assert answer["changes"] == [
        f"converted from opset 18 to {version}: {REWRITTEN[version]}; 3 model functions converted too (ScaledAct, Block, Norm)"
    ], answer["changes"]
    onnx.checker.check_model(edited, full_check=True)
    for f in edited.functions:
        assert {o.domain: o.version for o in f.opset_import}[""] == version, f.name
    act = edited.functions[0]
    # the references and the metadata onnx's converter drops are back
    assert [(a.name, a.ref_attr_name) for n in act.node for a in n.attribute] == [
        ("alpha", "alpha"),
        ("value_float", "beta"),
    ]
    assert [(p.key, p.value) for p in act.node[0].metadata_props] == [("origin", "exporter")]
    assert list(act.attribute_proto) == list(model.functions[0].attribute_proto)
    norm = [n.op_type for n in edited.functions[2].node]
    # ReduceMean's axes: an input from 18 on, an attribute before
    assert ("Constant" in norm) is (version >= 18)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(outputs(edited, x), outputs(model, x), rtol=1e-6)


def test_a_reference_the_new_opset_takes_as_an_input_is_refused_by_name(client):
    """ReduceMean's axes from a function attribute: at opset 18 axes is an input, which no
    reference to an attribute can give."""
    model = onnx.parser.parse_model(
        """
        <ir_version: 10, opset_import: ["" : 17, "local" : 1]>
        main (float[2, 4] X) => (float[2, 1] Y) { Y = local.Mean <ax: ints = [1]> (X) }
        <domain: "local", opset_import: ["" : 17]>
        Mean <ax> (X) => (Y) { Y = ReduceMean <axes: ints = @ax> (X) }
        """
    )
    model.functions[0].node[0].name = "mean"
    onnx.checker.check_model(model, full_check=True)
    from testkit import upload

    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "convert_opset", "version": 18}]})
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"] == (
        "op #1 (convert_opset): in function Mean, opset 18 takes as an input what 'mean' (ReduceMean: axes = @ax)"
        " takes from the function's attribute: no reference can give an input (simplify inlines the functions,"
        " each call's value then a constant, and the model converts)"
    )
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0
    # the way out said works
    ops = [{"op": "simplify"}, {"op": "convert_opset", "version": 18}]
    r = client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})
    assert r.status_code == 200, r.get_json()
