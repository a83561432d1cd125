"""An optional input's empty value typed into Run as null (QA20 F16: `{"values": null}` was
refused, "values are numbers, strings, booleans, lists and maps"; only an uploaded empty
OptionalProto .pb could feed it)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from testkit import upload


def optional_model() -> onnx.ModelProto:
    """y = opt_in's value when it holds one, else zeros (OptionalHasElement driving an If), plus
    x + 1 from a plain tensor input; opt_out wraps y as an optional again."""
    then = h.make_graph(
        [h.make_node("OptionalGetElement", ["opt_in"], ["got"], name="get")],
        "then",
        [],
        [h.make_tensor_value_info("got", T.FLOAT, [1, 4])],
    )
    other = h.make_graph(
        [h.make_node("Constant", [], ["zeros"], name="default", value=nh.from_array(np.zeros((1, 4), np.float32)))],
        "else",
        [],
        [h.make_tensor_value_info("zeros", T.FLOAT, [1, 4])],
    )
    g = h.make_graph(
        [
            h.make_node("OptionalHasElement", ["opt_in"], ["has"], name="has"),
            h.make_node("If", ["has"], ["y"], name="pick", then_branch=then, else_branch=other),
            h.make_node("Add", ["x", "one"], ["x1"], name="add"),
            h.make_node("Optional", ["y"], ["opt_out"], name="wrap"),
        ],
        "opt",
        [
            h.make_tensor_value_info("x", T.FLOAT, [1, 4]),
            h.make_value_info("opt_in", h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, [1, 4]))),
        ],
        [
            h.make_tensor_value_info("y", T.FLOAT, [1, 4]),
            h.make_tensor_value_info("x1", T.FLOAT, [1, 4]),
            h.make_value_info("opt_out", h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, [1, 4]))),
        ],
        [nh.from_array(np.array(1.0, np.float32), "one")],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    onnx.checker.check_model(m, full_check=True)
    return m


def _mid(client) -> str:
    r = upload(client, optional_model().SerializeToString())
    assert r.status_code == 201, r.get_json()
    return r.get_json()["id"]


def test_null_feeds_an_optional_input_empty(client):
    mid = _mid(client)
    body = {"inputs": {"x": {"values": [[1, 2, 3, 4]]}, "opt_in": {"values": None}}}
    r = client.post(f"/api/models/{mid}/run", json=body)
    assert r.status_code == 200, r.get_json()
    answer = r.get_json()
    assert answer["outputs"]["y"]["values"] == [0.0, 0.0, 0.0, 0.0]  # the else branch: no value
    assert answer["inputs"]["opt_in"]["kind"] == "optional"  # fed as given: an empty optional
    assert "random" not in answer["inputs"]["opt_in"]
    # values typed in are the optional's value
    body["inputs"]["opt_in"] = {"values": [[5, 6, 7, 8]]}
    answer = client.post(f"/api/models/{mid}/run", json=body).get_json()
    assert answer["outputs"]["y"]["values"] == [5.0, 6.0, 7.0, 8.0]


def test_null_for_a_tensor_input_is_refused_in_words(client):
    mid = _mid(client)
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"x": {"values": None}}})
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"] == (
        "input 'x': null is an empty optional, and 'x' is no optional input; type its values"
    )
    # null inside a tensor's values is still no number
    r = client.post(f"/api/models/{mid}/run", json={"inputs": {"opt_in": {"values": [[1, None, 3, 4]]}}})
    assert r.status_code == 400, r.get_json()
