"""Property: random sequences of valid and invalid edit batches on real models never leave a
stored revision failing a check the original passed, and refused batches change nothing."""

from __future__ import annotations

import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_corpus import _passes_checker
from testkit import ONNX_DATA, node_testcases, upload

MODELS = [
    ONNX_DATA / "pytorch-converted" / n / "model.onnx"
    for n in ("test_Conv2d", "test_BatchNorm2d_eval", "test_Linear", "test_PReLU_3d_multiparam")
]
NODE_CASES = [
    "test_if",
    "test_loop11",
    "test_scan9_sum",
    "test_layer_normalization_4d_axis0",
    "test_gemm_default_single_elem_vector_bias",
]

json_scalars = st.one_of(
    st.integers(-5, 5),
    st.floats(-3, 3, allow_nan=False),
    st.text(max_size=4),
    st.none(),
    st.booleans(),
    st.sampled_from(["NaN", "Infinity"]),
)
json_values = st.one_of(
    json_scalars, st.lists(st.one_of(st.integers(-4, 4), st.floats(-2, 2, allow_nan=False)), max_size=4)
)


def model_bytes(key: str) -> bytes:
    if key.startswith("test_") and key in node_testcases():
        return node_testcases()[key].model.SerializeToString()
    return next(p for p in MODELS if p.parent.name == key).read_bytes()


@st.composite
def op_for(draw, model: onnx.ModelProto):
    g = model.graph
    nodes = [f"n{i}" for i in range(len(g.node))] + ["n999", "ghost"]
    tensors = sorted({x for n in g.node for x in list(n.input) + list(n.output) if x} | {"nope"})
    attrs = sorted({a.name for n in g.node for a in n.attribute} | {"alpha", "bogus"})
    ios = [v.name for v in list(g.input) + list(g.output)] + ["nope"]
    kind = draw(
        st.sampled_from(
            [
                "set_metadata",
                "set_attribute",
                "delete_attribute",
                "rename_tensor",
                "rename_node",
                "delete_node",
                "set_io_shape",
                "add_output",
                "remove_output",
                "cleanup",
                "infer_shapes",
                "set_model_field",
                "insert_node",
                "set_node_input",
                "add_node",
                "garbage",
            ]
        )
    )
    if kind == "set_metadata":
        return {
            "op": kind,
            "key": draw(st.sampled_from(["a", "b", ""])),
            "value": draw(st.one_of(st.none(), st.text(max_size=3))),
        }
    if kind == "set_attribute":
        return {
            "op": kind,
            "node": draw(st.sampled_from(nodes)),
            "name": draw(st.sampled_from(attrs)),
            "value": draw(json_values),
        }
    if kind == "delete_attribute":
        return {"op": kind, "node": draw(st.sampled_from(nodes)), "name": draw(st.sampled_from(attrs))}
    if kind == "rename_tensor":
        return {
            "op": kind,
            "from": draw(st.sampled_from(tensors)),
            "to": draw(st.sampled_from([*tensors, "fresh_name", ""])),
        }
    if kind == "rename_node":
        return {"op": kind, "node": draw(st.sampled_from(nodes)), "name": draw(st.text(max_size=3))}
    if kind == "delete_node":
        return {"op": kind, "node": draw(st.sampled_from(nodes)), "reconnect": draw(st.booleans())}
    if kind == "set_io_shape":
        return {
            "op": kind,
            "name": draw(st.sampled_from(ios)),
            "shape": draw(st.lists(st.one_of(st.integers(-1, 4), st.just("N"), st.none()), max_size=5)),
        }
    if kind == "add_output":
        return {"op": kind, "tensor": draw(st.sampled_from(tensors))}
    if kind == "remove_output":
        return {"op": kind, "name": draw(st.sampled_from(ios))}
    if kind in ("cleanup", "infer_shapes"):
        return {"op": kind}
    if kind == "set_model_field":
        return {
            "op": kind,
            "field": draw(st.sampled_from(["doc_string", "model_version", "ir_version"])),
            "value": draw(json_scalars),
        }
    if kind == "insert_node":
        return {
            "op": kind,
            "tensor": draw(st.sampled_from(tensors)),
            "op_type": draw(st.sampled_from(["Relu", "Identity", "Conv", "Zork"])),
        }
    if kind == "set_node_input":
        return {
            "op": kind,
            "node": draw(st.sampled_from(nodes)),
            "index": draw(st.integers(0, 3)),
            "tensor": draw(st.sampled_from([*tensors, ""])),
        }
    if kind == "add_node":
        return {
            "op": kind,
            "op_type": draw(st.sampled_from(["Relu", "Add", "Split", "Zork"])),
            "inputs": draw(st.lists(st.sampled_from([*tensors, ""]), max_size=3)),
        }
    return {"op": draw(st.sampled_from(["explode", 3, None]))}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@pytest.mark.fuzz
@given(data=st.data(), key=st.sampled_from([p.parent.name for p in MODELS] + NODE_CASES))
def test_random_edit_batches_never_break_a_passing_model(client, data, key):
    original_bytes = model_bytes(key)
    original = onnx.load_from_string(original_bytes)
    basic_ok, full_ok = _passes_checker(original), _passes_checker(original, full=True)
    mid = upload(client, original_bytes, f"{key}.onnx").get_json()["id"]
    rev, current = 0, original_bytes
    for _ in range(data.draw(st.integers(1, 4))):
        model = onnx.load_from_string(current)
        ops = data.draw(st.lists(op_for(model), min_size=1, max_size=3))
        r = client.post(f"/api/models/{mid}/edits", json={"base": rev, "ops": ops})
        assert r.status_code in (200, 400, 404, 409, 422), (ops, r.status_code, r.get_json())
        after = client.get(f"/api/models/{mid}/download").data
        if r.status_code == 200:
            rev, current = r.get_json()["revision"], after
            edited = onnx.load_from_string(after)
            assert not basic_ok or _passes_checker(edited), ops
            assert not full_ok or _passes_checker(edited, full=True), ops
        else:
            body = r.get_json()["error"]
            assert body["code"] and body["message"]
            assert after == current and client.get(f"/api/models/{mid}").get_json()["revision"] == rev
