"""A big upload is never held in memory whole (issue 12): it is parsed from the memory map of
the file werkzeug spooled it to, and streamed into the store."""

from __future__ import annotations

import io
import json
import tracemalloc

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from werkzeug.test import EnvironBuilder

from app import create_app


def _big_model(mib: int) -> bytes:
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal(mib << 18).astype(np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [mib << 18])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [mib << 18])],
        [w],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _call(app, environ):
    status = {}

    def start_response(s, headers):
        status["code"] = int(s.split()[0])

    body = b"".join(app.wsgi_app(environ, start_response))
    return status["code"], body


def test_a_big_upload_is_parsed_and_stored_from_its_spooled_file(tmp_path):
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "UPLOAD_IN_MEMORY_BYTES": 1 << 20})
    data = _big_model(24)  # 24 MiB of weights
    environ = EnvironBuilder(
        path="/api/models", method="POST", data={"file": (io.BytesIO(data), "big.onnx")}
    ).get_environ()
    tracemalloc.start()
    try:
        status, body = _call(app, environ)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 201, body[:300]
    assert peak < len(data) // 2, f"Python held {peak:,} bytes for a {len(data):,}-byte upload"
    mid = json.loads(body)["id"]
    stored = app.test_client().get(f"/api/models/{mid}/download").data
    assert stored == data  # byte-identical
    assert onnx.load_from_string(stored).graph.node[0].name == "add"


def test_a_big_upload_that_is_not_a_model_is_refused(tmp_path):
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "UPLOAD_IN_MEMORY_BYTES": 1 << 20})
    files = {"file": (io.BytesIO(bytes(3 << 20)), "zeros.onnx")}
    r = app.test_client().post("/api/models", data=files, content_type="multipart/form-data")
    assert r.status_code == 400 and r.get_json()["error"]["message"]
    assert app.test_client().get("/api/models").get_json()["models"] == []
