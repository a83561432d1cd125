"""Models with external data: upload with data files or as one .zip, link in place from the CLI,
previews memory-mapped, nothing read from outside the model's own files."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from test_bad_input import small_model
from testkit import upload

from app import create_app
from app.cli import external_files
from app.onnx_io.external import normalize_location


def model_with_external(tmp_path, location="weights/w.bin"):
    m = small_model()
    big = np.arange(100_000, dtype=np.float32).reshape(100, 1000)
    m.graph.initializer.append(numpy_helper.from_array(big, "E"))
    m.graph.initializer.append(numpy_helper.from_array(np.arange(300, dtype=np.int64), "I"))
    (tmp_path / "weights").mkdir(exist_ok=True)
    onnx.save(m, tmp_path / "m.onnx", save_as_external_data=True, location=location, size_threshold=1024)
    return tmp_path / "m.onnx", big


@pytest.mark.parametrize(
    "loc, ok",
    [
        ("w.bin", "w.bin"),
        ("a/./b.bin", "a/b.bin"),
        ("../x", None),
        ("/etc/passwd", None),
        ("a/../../x", None),
        ("C:/x", None),
        ("a\\b", None),
        ("", None),
    ],
)
def test_normalize_location(loc, ok):
    assert normalize_location(loc) == ok


def test_zip_upload_previews_and_downloads(client, tmp_path):
    path, big = model_with_external(tmp_path)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.write(path, "pkg/m.onnx")
        z.write(tmp_path / "weights" / "w.bin", "pkg/weights/w.bin")
        z.writestr("evil/../../outside.bin", b"x" * 10)
    r = upload(client, buf.getvalue(), "bundle.zip")
    assert r.status_code == 201, r.get_json()
    s = r.get_json()
    assert s["name"] == "m.onnx" and s["external_files"] == ["weights/w.bin"]
    p = client.get(f"/api/models/{s['id']}/tensors/E?offset=54321&count=4").get_json()
    assert p["values"] == [54321.0, 54322.0, 54323.0, 54324.0]
    assert p["stats"]["max"] == 99999.0 and abs(p["stats"]["mean"] - big.mean()) < 1e-6 * big.mean()
    assert abs(p["stats"]["std"] - big.std()) < 1e-4 * big.std()
    assert client.get(f"/api/models/{s['id']}/tensors/I?offset=299").get_json()["values"] == [299]
    z = zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{s['id']}/download").data))
    assert sorted(z.namelist()) == ["m.onnx", "weights/w.bin"]


def test_zip_without_one_model_is_refused(client):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a.txt", "x")
    r = upload(client, buf.getvalue(), "bundle.zip")
    assert r.status_code == 400 and "exactly one .onnx" in r.get_json()["error"]["message"]
    r = upload(client, b"PK\x03\x04garbage", "bundle.zip")
    assert r.status_code == 400 and "not a readable zip" in r.get_json()["error"]["message"]
    # a model at a path leaving the archive is none of its files, as in a tar (QA33 #5)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../../evil.onnx", small_model().SerializeToString())
    r = upload(client, buf.getvalue(), "trav.zip")
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["message"] == "trav.zip must hold exactly one .onnx file (it holds 0)"


def test_cli_links_external_data_in_place(tmp_path):
    path, big = model_with_external(tmp_path)
    model = onnx.load(path, load_external_data=False)
    linked = external_files(path, model)
    assert linked == {"weights/w.bin": (tmp_path / "weights" / "w.bin").resolve()}
    app = create_app({"DATA_DIR": str(tmp_path / "data")})
    record = app.extensions["store"].create_model("m.onnx", path.read_bytes(), linked)
    blobs = list((tmp_path / "data" / "blobs").rglob("*"))
    assert sum(f.stat().st_size for f in blobs if f.is_file()) < big.nbytes  # weights not copied
    c = app.test_client()
    assert c.get(f"/api/models/{record.id}/tensors/E?offset=7&count=1").get_json()["values"] == [7.0]
    # edits keep the link; an edited download zips the linked file
    r = c.post(
        f"/api/models/{record.id}/edits", json={"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    )
    assert r.status_code == 200
    z = zipfile.ZipFile(io.BytesIO(c.get(f"/api/models/{record.id}/download").data))
    out = tmp_path / "out"
    z.extractall(out)
    loaded = onnx.load(out / "m.r1.onnx")
    assert np.array_equal(numpy_helper.to_array(loaded.graph.initializer[1]), big)


def test_cli_refuses_external_paths_outside_the_folder(tmp_path, capsys):
    path, _ = model_with_external(tmp_path)
    m = onnx.load(path, load_external_data=False)
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../../etc/passwd"
    assert external_files(path, m) == {}
    assert "not a file inside" in capsys.readouterr().err


def test_external_data_models_validate_and_keep_the_edit_gate(client, tmp_path):
    """onnx.checker looks for external files relative to the working directory; ours live in the
    store, so the checks must not fail on that, and the edit gate must still guard the model."""
    path, _ = model_with_external(tmp_path)
    weights = (tmp_path / "weights" / "w.bin").read_bytes()
    for sent_as in ("weights/w.bin", "w.bin"):  # with its folder, or bare as browsers send it
        s = upload(client, path.read_bytes(), "m.onnx", extra=[(weights, sent_as)]).get_json()
        assert client.get(f"/api/models/{s['id']}/tensors/E?offset=5&count=1").get_json()["values"] == [5.0]
    assert upload(client, path.read_bytes(), "m.onnx", extra=[(weights, "../w.bin")]).status_code == 400
    assert s["validation"]["ok"] and s["validation"]["full"]["ok"], s["validation"]
    r = client.post(f"/api/models/{s['id']}/edits", json={"base": 0, "ops": [{"op": "delete_node", "node": "mm"}]})
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "invalid_result"


def test_the_cli_opens_a_file_opened_before_as_its_unedited_entry(tmp_path, capsys):
    """`onnx-studio model.onnx` run again on the same file opens the entry it made, while that
    entry is still the file (never edited): no list of identical entries. Once it has edits, a
    new entry holds the file as it is and the edited one is named."""
    import argparse

    from app.cli import _open

    path, _ = model_with_external(tmp_path)
    args = argparse.Namespace(model=path, data_dir=tmp_path / "data")
    first, app = _open(args)
    again, app = _open(args)
    assert again.id == first.id and "stored already, unedited" in capsys.readouterr().out
    assert [m.id for m in app.extensions["store"].list_models()] == [first.id]
    c = app.test_client()
    r = c.post(
        f"/api/models/{first.id}/edits", json={"base": 0, "ops": [{"op": "set_metadata", "key": "k", "value": "v"}]}
    )
    assert r.status_code == 200
    fresh, app = _open(args)
    assert (
        fresh.id != first.id and f"also stored with edits: /models/{first.id} (revision 1)" in capsys.readouterr().out
    )
    assert c.get(f"/api/models/{fresh.id}/tensors/E?offset=7&count=1").get_json()["values"] == [7.0]


def test_a_second_model_in_one_upload_is_refused_not_kept_as_data(client):
    """Two .onnx files picked together: the second is no data file of the first (it would be
    downloaded in the first's .zip ever after); refused naming it, nothing stored."""
    model = small_model().SerializeToString()
    r = client.post(
        "/api/models",
        data={"file": [(io.BytesIO(model), "a.onnx"), (io.BytesIO(model), "b.onnx")]},
        content_type="multipart/form-data",
    )
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["code"] == "several_models"
    assert "'b.onnx' is a model too" in r.get_json()["error"]["message"]
    assert client.get("/api/models").get_json()["models"] == []


def test_a_weight_is_said_to_be_in_a_data_file_only_when_the_model_has_one(client, tmp_path):
    """The store keeps every big tensor as a blob of its own (its graph says "studio:tensor/…"):
    an embedded model's weight is still inline as the person has it, and is not called external."""
    path, big = model_with_external(tmp_path)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.write(path, "m.onnx")
        z.write(tmp_path / "weights" / "w.bin", "weights/w.bin")
    zipped = upload(client, buf.getvalue(), "bundle.zip").get_json()["id"]
    embedded = small_model()
    embedded.graph.initializer.append(numpy_helper.from_array(big, "E"))
    inline = upload(client, embedded.SerializeToString(), "inline.onnx").get_json()["id"]

    def external(mid: str) -> bool:
        graph = client.get(f"/api/models/{mid}/graph").get_json()
        return next(t for t in graph["initializers"] if t["name"] == "E")["external"]

    assert external(zipped) is True
    assert external(inline) is False


def test_members_an_archive_leaves_out_are_named_in_the_answer(client, tmp_path):
    """QA34 #10: a tar's ../, absolute and linked members were skipped without a word."""
    import tarfile

    model = small_model().SerializeToString()
    path = tmp_path / "hostile.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name in ("../../evil.onnx", "model.onnx", "/tmp/abs.onnx"):
            info = tarfile.TarInfo(name)
            info.size = len(model)
            tar.addfile(info, io.BytesIO(model))
        link = tarfile.TarInfo("link.onnx")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    r = upload(client, path.read_bytes(), "hostile.tar.gz")
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["left_out"] == [
        {"name": "../../evil.onnx", "why": "a path leaving the archive"},
        {"name": "/tmp/abs.onnx", "why": "a path leaving the archive"},
        {"name": "link.onnx", "why": "a link"},
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("m.onnx", model)
        z.writestr("../outside.bin", b"x")
    r = upload(client, buf.getvalue(), "bundle.zip")
    assert r.status_code == 201 and r.get_json()["left_out"] == [
        {"name": "../outside.bin", "why": "a path leaving the archive"}
    ]
    plain = upload(client, model, "plain.onnx").get_json()
    assert "left_out" not in plain
