"""A model uploaded without its external data files: said in the summary and the run's refusal,
attached later as a new revision (edits made meanwhile kept); files no tensor names any more
are left out of an edit's revision."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import onnx
from onnx import helper, numpy_helper
from testkit import upload

from app.onnx_io.external import ExternalFiles, files_in_use, missing_data

W = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096


def saved(tmp_path, location="w.bin"):
    """(the .onnx's bytes, the data file's bytes) of a MatMul whose weights are external."""
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 64])],
        [numpy_helper.from_array(W, "W")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    (tmp_path / location).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, tmp_path / "m.onnx", save_as_external_data=True, location=location, size_threshold=0)
    return (tmp_path / "m.onnx").read_bytes(), (tmp_path / location).read_bytes()


def attach(client, mid, base, *files):
    data = {"base": str(base), "file": [(io.BytesIO(b), n) for b, n in files]}
    return client.post(f"/api/models/{mid}/data-files", data=data, content_type="multipart/form-data")


def run(client, mid):
    return client.post(f"/api/models/{mid}/run", json={"inputs": {"x": {"values": [[1.0] * 64]}}})


def test_missing_file_is_said_refused_by_run_and_attached(client, tmp_path):
    model_bytes, data = saved(tmp_path)
    s = upload(client, model_bytes, "m.onnx").get_json()
    mid = s["id"]
    assert s["missing_data"] == [
        {
            "location": "w.bin",
            "tensors": 1,
            "names": ["W"],
            "bytes": W.nbytes,
            "file_bytes": W.nbytes,
            "reason": "not uploaded with this model",
        }
    ]
    r = run(client, mid)
    assert r.status_code == 422
    err = r.get_json()["error"]
    assert err["code"] == "external_data_missing" and "'w.bin'" in err["message"] and "W" in err["message"]
    assert "run-" not in err["message"]  # no scratch path of the server's

    # an edit meanwhile: kept by the attachment
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "rename_node", "node": "n0", "name": "proj"}]}
    )
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["summary"]["missing_data"][0]["location"] == "w.bin"

    wrong = attach(client, mid, 1, (data, "other.bin"))
    assert wrong.status_code == 422 and wrong.get_json()["error"]["code"] == "unknown_data_file"
    assert "'w.bin'" in wrong.get_json()["error"]["message"]
    short = attach(client, mid, 1, (data[:100], "w.bin"))
    assert short.status_code == 422 and short.get_json()["error"]["code"] == "external_data_short"
    assert attach(client, mid, 0, (data, "w.bin")).status_code == 409  # not the head
    assert client.get(f"/api/models/{mid}").get_json()["head"] == 1  # nothing stored

    r = attach(client, mid, 1, (data, "w.bin"))
    assert r.status_code == 201, r.get_json()
    out = r.get_json()
    assert out["revision"] == 2 and out["summary"]["missing_data"] == []
    assert out["summary"]["external_files"] == ["w.bin"]
    assert "attached external data file 'w.bin'" in out["changes"][0]
    assert attach(client, mid, 2, (data, "w.bin")).get_json()["error"]["code"] == "already_attached"

    r = run(client, mid)
    assert r.status_code == 200, r.get_json()
    got = np.array(r.get_json()["outputs"]["y"]["values"], np.float32)
    np.testing.assert_allclose(got, (np.ones((1, 64), np.float32) @ W).ravel(), rtol=1e-5)
    z = zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{mid}/download").data))
    assert sorted(z.namelist()) == ["m.r2.onnx", "w.bin"]
    assert z.read("w.bin") == data
    back = onnx.load_from_string(z.read("m.r2.onnx"))
    assert back.graph.node[0].name == "proj"  # the edit made before the file came
    revisions = client.get(f"/api/models/{mid}/revisions").get_json()["revisions"]
    assert revisions[-1]["ops"] == [] and revisions[-1]["parent"] == 1

    # undo takes the file away again
    undone = client.post(f"/api/models/{mid}/undo", json={"base": 2}).get_json()
    assert undone["missing_data"][0]["location"] == "w.bin"


def test_revision_zero_attached_downloads_the_upload_byte_for_byte(client, tmp_path):
    model_bytes, data = saved(tmp_path)
    mid = upload(client, model_bytes, "m.onnx").get_json()["id"]
    assert attach(client, mid, 0, (data, "w.bin")).status_code == 201
    z = zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{mid}/download").data))
    assert z.read("m.r1.onnx") == model_bytes


def test_a_folder_location_takes_a_bare_name_and_a_short_file_is_said(client, tmp_path):
    model_bytes, data = saved(tmp_path, "weights/w.bin")
    short = upload(client, model_bytes, "m.onnx", [(data[:10], "w.bin")]).get_json()
    assert short["missing_data"][0]["reason"] == "holds 10 B; W needs bytes 0 to 16,384"
    mid = upload(client, model_bytes, "m.onnx").get_json()["id"]
    r = attach(client, mid, 0, (data, "w.bin"))  # what a browser sends: the bare name
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["summary"]["external_files"] == ["weights/w.bin"]
    assert run(client, mid).status_code == 200


def test_an_edit_leaves_out_a_file_no_tensor_names(client, tmp_path):
    model_bytes, data = saved(tmp_path)
    mid = upload(client, model_bytes, "m.onnx", [(data, "w.bin")]).get_json()["id"]
    value = {"dtype": "FLOAT", "shape": [64, 64], "values": [0.5] * 4096}
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "set_initializer", "name": "W", "value": value}]}
    )
    assert r.status_code == 200, r.get_json()
    out = r.get_json()
    assert out["changes"][-1] == (
        "external data file 'w.bin' holds no tensor any more: left out (the weights are stored with the model;"
        " Download → External data writes them to a file again)"
    )
    assert out["summary"]["external_files"] == []
    d = client.get(f"/api/models/{mid}/download")
    assert d.headers["Content-Type"] == "application/octet-stream"  # one .onnx, no zip
    m = onnx.load_from_string(d.data)
    onnx.checker.check_model(m)
    assert numpy_helper.to_array(m.graph.initializer[0]).max() == 0.5
    # an edit that keeps the tensor keeps its file
    mid = upload(client, model_bytes, "m.onnx", [(data, "w.bin")]).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits", json={"base": 0, "ops": [{"op": "rename_node", "node": "n0", "name": "p"}]}
    )
    assert r.get_json()["summary"]["external_files"] == ["w.bin"]


def _external(t: onnx.TensorProto, location: str) -> onnx.TensorProto:
    t.data_location = onnx.TensorProto.EXTERNAL
    t.ClearField("raw_data")
    for k, v in (("location", location), ("offset", "0"), ("length", "16")):
        t.external_data.add(key=k, value=v)
    return t


def test_files_in_use_looks_inside_subgraphs_when_the_main_graph_names_too_few():
    inner = _external(numpy_helper.from_array(np.zeros(4, np.float32), "c"), "sub.bin")
    branch = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["o"])], "b", [], [helper.make_tensor_value_info("o", 1, [4])], [inner]
    )
    node = helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=branch)
    main = _external(numpy_helper.from_array(np.zeros(4, np.float32), "m"), "main.bin")
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("cond", 9, [])],
        [helper.make_tensor_value_info("y", 1, [4])],
        [main],
    )
    model = helper.make_model(g)
    entries = {"main.bin": "d1", "sub.bin": "d2", "stray.bin": "d3", "studio:tensor/abc": "abc"}
    files = ExternalFiles(entries, lambda e: None, lambda e: {"d1": 16, "d2": 8}.get(e, 99))
    assert files_in_use(model, files) == {"main.bin", "sub.bin"}
    [short] = missing_data(model, files)
    assert short["location"] == "sub.bin" and short["reason"] == "holds 8 B; its tensors need 16 B"


def test_hostile_attachments_are_refused_and_nothing_is_stored(client, tmp_path):
    model_bytes, data = saved(tmp_path)
    mid = upload(client, model_bytes, "m.onnx").get_json()["id"]
    for name in ("../w.bin", "/etc/passwd", "a\\..\\..\\w.bin", "studio:tensor/abc", "w.bin\r\nX: y"):
        r = attach(client, mid, 0, (data, name))
        assert r.status_code in (400, 422), (name, r.status_code)
        assert r.get_json()["error"]["code"] in ("bad_filename", "unknown_data_file", "missing_file"), name
    r = client.post(f"/api/models/{mid}/data-files", data={"file": [(io.BytesIO(data), "w.bin")]})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "missing_base"
    r = client.post(f"/api/models/{mid}/data-files", data={"base": "0"})
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "missing_file"
    assert attach(client, mid, 0, (data, "w.bin"), (data, "w.bin")).get_json()["error"]["code"] == "duplicate_file"
    assert client.get(f"/api/models/{mid}").get_json()["head"] == 0


def test_a_location_outside_the_models_folder_is_said_and_never_attached(client, tmp_path):
    model_bytes, data = saved(tmp_path)
    m = onnx.ModelProto.FromString(model_bytes)
    next(e for e in m.graph.initializer[0].external_data if e.key == "location").value = "../w.bin"
    mid = upload(client, m.SerializeToString(), "m.onnx").get_json()["id"]
    [missing] = client.get(f"/api/models/{mid}").get_json()["missing_data"]
    assert missing["location"] == "../w.bin"
    assert missing["reason"] == "a place outside the model's folder, where no file is read"
    r = attach(client, mid, 0, (data, "w.bin"))
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "outside_folder"
    assert "'../w.bin', outside the model's folder" in r.get_json()["error"]["message"]
    assert client.get(f"/api/models/{mid}").get_json()["head"] == 0


def test_a_renamed_file_is_attached_to_the_location_named_for_it(client, tmp_path):
    model_bytes, data = saved(tmp_path)
    mid = upload(client, model_bytes, "m.onnx").get_json()["id"]
    form = {"base": "0", "location": "w.bin", "file": [(io.BytesIO(data), "weights-v2.bin")]}
    r = client.post(f"/api/models/{mid}/data-files", data=form, content_type="multipart/form-data")
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["summary"]["external_files"] == ["w.bin"] and r.get_json()["summary"]["missing_data"] == []
    assert run(client, mid).status_code == 200
    form = {"base": "1", "location": "w.bin", "file": [(io.BytesIO(data), "a.bin"), (io.BytesIO(data), "b.bin")]}
    r = client.post(f"/api/models/{mid}/data-files", data=form, content_type="multipart/form-data")
    assert r.status_code == 400 and "send one file with it" in r.get_json()["error"]["message"]


def test_the_models_list_says_weights_missing_once_known(client, tmp_path):
    model, data = saved(tmp_path)
    mid = upload(client, model).get_json()["id"]
    listed = lambda: next(m for m in client.get("/api/models").get_json()["models"] if m["id"] == mid)  # noqa: E731
    assert listed()["missing_data"] == 1  # the upload's summary looked (and kept what it found)
    assert attach(client, mid, 0, (data, "w.bin")).status_code == 201
    client.get(f"/api/models/{mid}")
    assert listed()["missing_data"] == 0
