"""An archive holding several models (Hugging Face Optimum exports a folder with encoder_model.onnx,
decoder_model.onnx, decoder_model_merged.onnx ...): the upload names one as `member` and it opens
with the data files of its own folder; without `member` the answer lists the models (QA31 #13)."""

from __future__ import annotations

import io
import tarfile
import zipfile

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

ENCODER_W = np.arange(64, dtype=np.float32).reshape(8, 8)
DECOY_W = -ENCODER_W  # a data file of the same name in another folder: never the encoder's
DECODER_B = np.full(8, 0.5, dtype=np.float32)


def _model(graph_name: str, op: str, weight: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node(op, ["x", "w"], ["y"])],
        graph_name,
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [8, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [8, 8])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def encoder() -> tuple[bytes, bytes]:
    """The encoder's .onnx and its data file, "encoder_model.onnx_data" beside it."""
    model = _model("encoder", "MatMul", ENCODER_W)
    w = model.graph.initializer[0]
    data = w.raw_data
    w.ClearField("raw_data")
    w.data_location = onnx.TensorProto.EXTERNAL
    for key, value in {"location": "encoder_model.onnx_data", "offset": "0", "length": str(len(data))}.items():
        w.external_data.append(onnx.StringStringEntryProto(key=key, value=value))
    return model.SerializeToString(), data


def decoder() -> bytes:
    return _model("decoder", "Add", DECODER_B).SerializeToString()


def export_folders() -> dict[str, bytes]:
    """Two models in folders of their own, each folder with a file named as the encoder's data."""
    enc, enc_data = encoder()
    return {
        "export/config.json": b"{}",
        "export/encoder/encoder_model.onnx": enc,
        "export/encoder/encoder_model.onnx_data": enc_data,
        "export/decoder/decoder_model.onnx": decoder(),
        "export/decoder/encoder_model.onnx_data": DECOY_W.tobytes(),
    }


def zipped(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def tarred(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


PACK = {"zip": (zipped, "export.zip"), "tar.gz": (tarred, "export.tar.gz")}


def upload(client, files: dict[str, bytes], kind: str, member: str | None = None):
    pack, name = PACK[kind]
    form: dict = {"file": (io.BytesIO(pack(files)), name)}
    if member is not None:
        form["member"] = member
    return client.post("/api/models", data=form, content_type="multipart/form-data")


def stored_models(client) -> list[str]:
    return [m["name"] for m in client.get("/api/models").get_json()["models"]]


def embedded(client, model_id: str) -> onnx.ModelProto:
    r = client.get(f"/api/models/{model_id}/download?layout=embedded")
    assert r.status_code == 200
    return onnx.load_from_string(r.data)


@pytest.mark.parametrize("kind", PACK)
def test_without_member_the_answer_lists_the_models(client, kind):
    r = upload(client, export_folders(), kind)
    assert r.status_code == 400, r.get_json()
    error = r.get_json()["error"]
    assert error["code"] == "several_models"
    assert error["models"] == ["export/encoder/encoder_model.onnx", "export/decoder/decoder_model.onnx"]
    assert error["message"] == (
        f"{PACK[kind][1]} holds 2 models: 'export/encoder/encoder_model.onnx', "
        "'export/decoder/decoder_model.onnx'; name one to open (member)"
    )
    assert stored_models(client) == []


@pytest.mark.parametrize("kind", PACK)
def test_the_member_named_opens_with_the_data_of_its_own_folder(client, kind):
    r = upload(client, export_folders(), kind, member="export/encoder/encoder_model.onnx")
    assert r.status_code == 201, r.get_json()
    enc = r.get_json()
    assert enc["name"] == "encoder_model.onnx"
    assert enc["external_files"] == ["encoder_model.onnx_data"] and enc["missing_data"] == []
    model = embedded(client, enc["id"])
    assert model.graph.name == "encoder" and [n.op_type for n in model.graph.node] == ["MatMul"]
    # its own folder's data file, not the other folder's file of the same name
    np.testing.assert_array_equal(numpy_helper.to_array(model.graph.initializer[0]), ENCODER_W)

    r = upload(client, export_folders(), kind, member="export/decoder/decoder_model.onnx")
    assert r.status_code == 201, r.get_json()
    dec = r.get_json()
    # the decoy beside it is read by none of its tensors: no file of its
    assert dec["name"] == "decoder_model.onnx" and dec["external_files"] == []
    model = embedded(client, dec["id"])
    assert model.graph.name == "decoder" and [n.op_type for n in model.graph.node] == ["Add"]
    np.testing.assert_array_equal(numpy_helper.to_array(model.graph.initializer[0]), DECODER_B)


@pytest.mark.parametrize("kind", PACK)
def test_a_model_keeps_only_its_own_files_of_a_shared_export_folder(client, kind):
    """Optimum's layout: every model in one folder. The one opened keeps its data file, not the
    other models (nor their data): they would ship in its download ever after."""
    enc, enc_data = encoder()
    files = {
        "encoder_model.onnx": enc,
        "encoder_model.onnx_data": enc_data,
        "decoder_model.onnx": decoder(),
        "decoder_model_merged.onnx": decoder(),
        "decoder_model_merged.onnx_data": bytes(64),
        "config.json": b"{}",
    }
    r = upload(client, files, kind)
    assert r.status_code == 400 and r.get_json()["error"]["models"] == [
        "encoder_model.onnx",
        "decoder_model.onnx",
        "decoder_model_merged.onnx",
    ]
    r = upload(client, files, kind, member="encoder_model.onnx")
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["external_files"] == ["encoder_model.onnx_data"]
    r = upload(client, files, kind, member="decoder_model_merged.onnx")
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["name"] == "decoder_model_merged.onnx" and r.get_json()["external_files"] == []
    # an archive of one model, named by no member, keeps every file of its folder as before
    alone = {"m/encoder_model.onnx": enc, "m/encoder_model.onnx_data": enc_data, "m/notes.txt": b"kept"}
    r = upload(client, alone, kind)
    assert r.status_code == 201 and r.get_json()["external_files"] == ["encoder_model.onnx_data", "notes.txt"]


@pytest.mark.parametrize("kind", PACK)
def test_a_bare_file_name_names_the_one_model_of_that_name(client, kind):
    r = upload(client, export_folders(), kind, member="decoder_model.onnx")
    assert r.status_code == 201, r.get_json()
    assert embedded(client, r.get_json()["id"]).graph.name == "decoder"


@pytest.mark.parametrize("kind", PACK)
def test_a_member_that_is_none_of_its_models_is_refused_naming_it(client, kind):
    for member in ("export/encoder/nope.onnx", "export/config.json", "export/encoder/encoder_model.onnx_data"):
        r = upload(client, export_folders(), kind, member=member)
        assert r.status_code == 400, r.get_json()
        error = r.get_json()["error"]
        assert error["code"] == "unknown_member" and repr(member) in error["message"]
        assert len(error["models"]) == 2
    assert stored_models(client) == []


@pytest.mark.parametrize("kind", PACK)
@pytest.mark.parametrize("member", ["../x.onnx", "/export/encoder/encoder_model.onnx", "export/../../x.onnx", " "])
def test_a_member_path_leaving_the_archive_is_refused(client, kind, member):
    r = upload(client, export_folders(), kind, member=member)
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["error"]["code"] in ("unknown_member", "bad_value")
    assert stored_models(client) == []


def test_a_model_stored_at_a_path_leaving_the_zip_is_neither_listed_nor_opened(client):
    """A zip may name a member "../x.onnx": it is no model to pick (nothing outside the
    archive's root is read), and the listing leaves it out."""
    files = {**export_folders(), "../x.onnx": decoder()}
    r = upload(client, files, "zip")
    assert r.status_code == 400
    assert r.get_json()["error"]["models"] == ["export/encoder/encoder_model.onnx", "export/decoder/decoder_model.onnx"]
    r = upload(client, files, "zip", member="../x.onnx")
    assert r.status_code == 400 and r.get_json()["error"]["code"] == "unknown_member"
    assert stored_models(client) == []


def test_member_is_refused_for_a_single_model_file(client):
    r = client.post(
        "/api/models",
        data={"file": (io.BytesIO(decoder()), "decoder_model.onnx"), "member": "decoder_model.onnx"},
        content_type="multipart/form-data",
    )
    assert r.status_code == 400 and "member" in r.get_json()["error"]["message"]
    assert stored_models(client) == []
