"""A node of a domain the model doesn't import yet (onnxruntime's com.microsoft ops, onnx-ml,
a custom domain) comes with its opset import, so the edit is one step and the model stays valid."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from testkit import ONNX_DATA, upload


def head(client, mid: str) -> int:
    return client.get(f"/api/models/{mid}").get_json()["revision"]


def edit(client, mid: str, ops: list) -> dict:
    r = client.post(f"/api/models/{mid}/edits", json={"base": head(client, mid), "ops": ops})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def downloaded(client, mid: str) -> onnx.ModelProto:
    model = onnx.load_from_string(client.get(f"/api/models/{mid}/download").data)
    onnx.checker.check_model(model, full_check=True)
    return model


def test_an_onnxruntime_contrib_op_inserted_imports_its_domain_and_runs(client):
    data = (ONNX_DATA / "pytorch-converted" / "test_ReLU" / "model.onnx").read_bytes()
    base = onnx.load_from_string(data)
    mid = upload(client, data, "relu.onnx").get_json()["id"]
    out = base.graph.output[0].name
    answer = edit(client, mid, [{"op": "insert_node", "tensor": out, "op_type": "FastGelu", "domain": "com.microsoft"}])
    assert answer["changes"] == [f"inserted FastGelu after {out!r} (all readers); imported opset com.microsoft v1"]
    assert answer["validation"]["runtime"]["status"] == "ok"
    model = downloaded(client, mid)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 6), ("com.microsoft", 1)]
    assert model.ir_version == base.ir_version  # v1 of a domain needs nothing newer
    x = np.linspace(-3, 3, int(np.prod([d.dim_value for d in base.graph.input[0].type.tensor_type.shape.dim])))
    x = x.astype(np.float32).reshape([d.dim_value for d in base.graph.input[0].type.tensor_type.shape.dim])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {base.graph.input[0].name: x})[0]
    relu = np.maximum(x, 0)
    gelu = 0.5 * relu * (1 + np.tanh(0.7978845608 * (relu + 0.044715 * relu**3)))
    np.testing.assert_allclose(got, gelu, atol=1e-3)
    # a second node of the same domain imports nothing more
    again = edit(client, mid, [{"op": "insert_node", "tensor": out, "op_type": "FastGelu", "domain": "com.microsoft"}])
    assert "imported" not in again["changes"][0]
    assert len(downloaded(client, mid).opset_import) == 2


def _ml_model(ir_version: int) -> onnx.ModelProto:
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 4])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=ir_version)


def test_an_onnx_ml_node_imports_the_version_of_its_schema_and_types_its_attributes(client):
    mid = upload(client, _ml_model(7).SerializeToString(), "ml.onnx").get_json()["id"]
    answer = edit(
        client,
        mid,
        [
            {
                "op": "add_node",
                "op_type": "Binarizer",
                "domain": "ai.onnx.ml",
                "inputs": ["y"],
                "outputs": ["b"],
                "attributes": {"threshold": 0.5},  # typed FLOAT from ai.onnx.ml's schema
            },
            {"op": "add_output", "tensor": "b"},
        ],
    )
    assert answer["changes"][0].endswith("imported opset ai.onnx.ml v1")
    model = downloaded(client, mid)
    assert ("ai.onnx.ml", 1) in [(o.domain, o.version) for o in model.opset_import] and model.ir_version == 7
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([[-1, 0.2, 0.7, 3]], dtype=np.float32)
    np.testing.assert_array_equal(sess.run(["b"], {"x": x})[0], [[0, 0, 1, 1]])


def test_an_import_that_needs_a_newer_ir_raises_it_and_says_so(client):
    mid = upload(client, _ml_model(7).SerializeToString(), "ml.onnx").get_json()["id"]
    answer = edit(
        client,
        mid,
        [
            {
                "op": "add_node",
                "op_type": "LabelEncoder",
                "domain": "ai.onnx.ml",
                "inputs": ["x"],
                "attributes": {"keys_floats": [1.0], "values_floats": [2.0]},
            }
        ],
    )
    model = downloaded(client, mid)
    version = dict((o.domain, o.version) for o in model.opset_import)["ai.onnx.ml"]
    need = h.find_min_ir_version_for([h.make_opsetid("ai.onnx.ml", version)], True)
    assert version >= 4 and need > 7 and model.ir_version == need
    assert answer["changes"][0].endswith(f"imported opset ai.onnx.ml v{version} (ir_version 7 → {need})")


def test_a_node_added_in_a_function_imports_its_domain_there_and_in_the_model(client):
    from browser.browser_models import function_model

    base = function_model()
    mid = upload(client, base.SerializeToString(), "fn.onnx").get_json()["id"]
    edit(
        client,
        mid,
        [{"op": "add_node", "op_type": "Binarizer", "domain": "ai.onnx.ml", "inputs": ["Y"], "graph": "fn[0]"}],
    )
    model = downloaded(client, mid)
    assert ("ai.onnx.ml", 1) in [(o.domain, o.version) for o in model.functions[0].opset_import]
    assert ("ai.onnx.ml", 1) in [(o.domain, o.version) for o in model.opset_import]
