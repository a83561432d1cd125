"""Hostile model-local functions (QA15): opset versions past what onnx's C++ takes, ... — every
view and edit answers, never a 500."""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h
from testkit import upload


def _calling(f: onnx.FunctionProto) -> onnx.ModelProto:
    g = h.make_graph(
        [h.make_node(f.name, ["X"], ["Y"], domain=f.domain)],
        "g",
        [h.make_tensor_value_info("X", T.FLOAT, [2])],
        [h.make_tensor_value_info("Y", T.FLOAT, [2])],
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid(f.domain, 1)], ir_version=10)
    model.functions.append(f)
    return model


def test_a_function_importing_an_opset_past_a_c_int_is_shown(client):
    """get_schema(op, 2**40) is a TypeError in onnx's bindings (the schema view answered 500)."""
    f = onnx.FunctionProto(name="F", domain="local", input=["x"], output=["y"])
    f.node.append(h.make_node("Relu", ["x"], ["y"]))
    f.opset_import.append(h.make_opsetid("", 2**40))
    mid = upload(client, _calling(f).SerializeToString()).get_json()["id"]
    for route in (
        "schema?node=fn%5B0%5D/n0",
        "graph?path=fn%5B0%5D",
        "types?path=fn%5B0%5D",
        "stats",
        "node?id=fn%5B0%5D/n0",
    ):
        r = client.get(f"/api/models/{mid}/{route}")
        assert r.status_code == 200, (route, r.get_json())
    assert client.get(f"/api/models/{mid}/schema?node=fn%5B0%5D/n0").get_json()["known"] is False
