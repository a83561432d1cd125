"""convert_opset down from 18 (QA: torch dynamo exports): onnx's version converter takes
ReduceMean/ReduceMax to opset 17 with `axes` as an attribute but keeps `noop_with_empty_axes`,
which torch writes (at its default, 0) on every such node and which opset 17's schema doesn't
have. At its default it is dropped and said so; at another value the conversion is refused by
name (leaving it out would change what the node computes)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
from testkit import upload

MODEL = """
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[2, 3, 4] X, bool C) => (float[2, 1, 4] Y, float[2, 3] Z, float[1, 3, 4] W, float[2, 3, 1] V, float[2, 3, 1] U) {
  ax1 = Constant <value: tensor = int64[1] {1}> ()
  Y = ReduceMean <keepdims: int = 1, noop_with_empty_axes: int = 0> (X, ax1)
  ax2 = Constant <value: tensor = int64[1] {2}> ()
  Z = ReduceSum <keepdims: int = 0, noop_with_empty_axes: int = 0> (X, ax2)
  ax0 = Constant <value: tensor = int64[1] {0}> ()
  W = ReduceMax <noop_with_empty_axes: int = 0> (X, ax0)
  V = local.Mean (X)
  U = If (C) <then_branch: graph = then_g () => (float[2, 3, 1] out) {
      ax = Constant <value: tensor = int64[1] {2}> ()
      out = ReduceMean <noop_with_empty_axes: int = 0> (X, ax)
    }, else_branch: graph = else_g () => (float[2, 3, 1] out) {
      ax = Constant <value: tensor = int64[1] {2}> ()
      out = ReduceMax <noop_with_empty_axes: int = 0> (X, ax)
    }>
}
<domain: "local", opset_import: ["" : 18]>
Mean (X) => (Y) {
  ax = Constant <value: tensor = int64[1] {2}> ()
  Y = ReduceMean <keepdims: int = 1, noop_with_empty_axes: int = 0> (X, ax)
}
"""


def convert(client, model: onnx.ModelProto, version: int = 17):
    r = upload(client, model.SerializeToString())
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    ops = [{"op": "convert_opset", "version": version}]
    return mid, client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": ops})


def run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def test_attributes_at_their_default_are_dropped_and_the_model_computes_the_same(client):
    model = onnx.parser.parse_model(MODEL)
    onnx.checker.check_model(model, full_check=True)
    mid, r = convert(client, model)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["changes"] == [
        "converted from opset 18 to 17: 11 nodes rewritten; 1 model function converted too (Mean); dropped what opset 17 doesn't"
        " define, each at its default: noop_with_empty_axes = 0 (3 ReduceMean, 2 ReduceMax)"
    ]
    edited = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(edited, full_check=True)
    assert {o.domain: o.version for o in edited.opset_import}[""] == 17
    branches = [a.g for a in edited.graph.node[-1].attribute]  # the If's
    nodes = [n for g in [edited.graph, *branches, edited.functions[0]] for n in g.node]
    attrs = {(n.op_type, a.name) for n in nodes for a in n.attribute}
    assert ("ReduceMean", "axes") in attrs and ("ReduceMax", "axes") in attrs
    assert ("ReduceMean", "noop_with_empty_axes") not in attrs
    assert ("ReduceMax", "noop_with_empty_axes") not in attrs
    # ReduceSum takes axes as an input since opset 13: its noop_with_empty_axes is opset 17's too
    assert ("ReduceSum", "noop_with_empty_axes") in attrs
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    for c in (True, False):
        feeds = {"X": x, "C": np.array(c)}
        for got, want in zip(run(edited, feeds), run(model, feeds), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_value_other_than_the_default_is_refused_by_name(client):
    text = MODEL.replace(
        "Y = ReduceMean <keepdims: int = 1, noop_with_empty_axes: int = 0> (X, ax1)",
        "Y = ReduceMean <keepdims: int = 1, noop_with_empty_axes: int = 1> (X, ax1)",
    )
    model = onnx.parser.parse_model(text)
    model.graph.node[1].name = "node_mean"
    onnx.checker.check_model(model, full_check=True)
    mid, r = convert(client, model)
    assert r.status_code == 422, r.get_json()
    assert r.get_json()["error"]["message"] == (
        "op #1 (convert_opset): opset 18 -> 17 is not possible: node 'node_mean' (ReduceMean) sets"
        " noop_with_empty_axes = 1, which ReduceMean at opset 17 doesn't have; only its default (0) can be"
        " left out without changing what the node computes"
    )
    assert client.get(f"/api/models/{mid}").get_json()["revision"] == 0


def test_in_a_function_body_the_refusal_names_the_function(client):
    text = MODEL.replace(
        "Y = ReduceMean <keepdims: int = 1, noop_with_empty_axes: int = 0> (X, ax)",
        "Y = ReduceMean <keepdims: int = 1, noop_with_empty_axes: int = 1> (X, ax)",
    )
    _, r = convert(client, onnx.parser.parse_model(text))
    assert r.status_code == 422, r.get_json()
    message = r.get_json()["error"]["message"]
    assert "node writing 'Y' (ReduceMean) in function Mean sets noop_with_empty_axes = 1" in message, message


def test_an_upward_conversion_drops_nothing(client):
    _, r = convert(client, onnx.parser.parse_model(MODEL), 21)
    assert r.status_code == 200, r.get_json()
    assert "dropped" not in r.get_json()["changes"][0]
