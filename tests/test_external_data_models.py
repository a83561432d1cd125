"""Models with external data (QA40): the embedded download past protobuf's 2 GiB (a 2.1 GiB model
read every weight into memory, 6.2 GB, then failed in ByteSize itself, a 500 after 22 s: now
refused at once as 422 too_large where the weights' lengths say so, the summary telling the
page), and an upload's copies are those with the same data files too."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

from app.onnx_io import save


def _with_external_weight(tmp_path) -> tuple[bytes, bytes]:
    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        [w],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    return (tmp_path / "m.onnx").read_bytes(), (tmp_path / "m.data").read_bytes()


def test_past_the_limit_the_embedded_download_is_refused_before_reading_a_weight(client, tmp_path, monkeypatch):
    graph, data = _with_external_weight(tmp_path)
    mid = upload(client, graph, "m.onnx", extra=[(data, "m.data")]).get_json()["id"]
    assert client.get(f"/api/models/{mid}").get_json()["embeddable"] is True
    assert client.get(f"/api/models/{mid}/download?layout=embedded").status_code == 200
    monkeypatch.setattr(save, "PROTOBUF_LIMIT", 16 << 10)  # the 16 KiB weight past a 16 KiB limit
    monkeypatch.setattr("app.api.routes.PROTOBUF_LIMIT", 16 << 10)
    r = client.get(f"/api/models/{mid}/download?layout=embedded&revision=0")
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "too_large", r.get_json()
    assert client.get(f"/api/models/{mid}").get_json()["embeddable"] is False
    reads = []
    refused = None
    try:
        save.embedded(graph, lambda *a: reads.append(a) or b"")
    except Exception as exc:
        refused = exc
    assert getattr(refused, "code", None) == "too_large" and reads == []  # nothing read first


def test_the_same_onnx_uploaded_with_its_data_is_no_copy_of_one_without(client, tmp_path):
    """QA40 #4: the .onnx uploaded alone, then with its data: "already stored → Open it" opened
    the copy lacking the weights and dropped the data just uploaded."""
    graph, data = _with_external_weight(tmp_path)
    alone = upload(client, graph, "m.onnx").get_json()
    whole = upload(client, graph, "m.onnx", extra=[(data, "m.data")]).get_json()
    assert "duplicates" not in whole
    again = upload(client, graph, "m.onnx", extra=[(data, "m.data")]).get_json()
    assert [d["id"] for d in again["duplicates"]] == [whole["id"]] and alone["id"] != whole["id"]


def _two_weights(tmp_path) -> tuple[bytes, bytes]:
    """Two 16 KiB weights in one data file, one after the other."""
    ws = [numpy_helper.from_array(np.full((64, 64), k, np.float32), f"w{k}") for k in (1, 2)]
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("MatMul", ["h", "w2"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        ws,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    return (tmp_path / "m.onnx").read_bytes(), (tmp_path / "m.data").read_bytes()


def test_a_short_data_file_names_only_the_tensors_past_its_end(client, tmp_path):
    """QA40 #9: a truncated file had every tensor said missing, though half were there."""
    graph, data = _two_weights(tmp_path)
    mid = upload(client, graph, "m.onnx", extra=[(data[: len(data) - 100], "m.data")]).get_json()["id"]
    [missing] = client.get(f"/api/models/{mid}").get_json()["missing_data"]
    assert (missing["tensors"], missing["names"]) == (1, ["w2"])
    assert missing["reason"].endswith("w2 needs bytes 16,384 to 32,768")


def test_a_data_file_uploaded_under_another_name_is_pointed_at(client, tmp_path):
    """QA40 #8: the model's data uploaded as wrongname.data was stored and said nothing of."""
    graph, data = _two_weights(tmp_path)
    mid = upload(client, graph, "m.onnx", extra=[(data, "wrongname.data")]).get_json()["id"]
    [missing] = client.get(f"/api/models/{mid}").get_json()["missing_data"]
    assert missing["reason"] == (
        "not uploaded with this model; 'wrongname.data', uploaded with it and named by no tensor, holds enough"
        " bytes: is it this file under another name?"
    )
