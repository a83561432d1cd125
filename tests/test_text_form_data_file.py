"""The text form names the .data file the download it links holds (QA item 9): at every
revision, the .onnxtxt's weight references and Download › external layout's .data file fit
together — uploaded together they are the revision again, and onnxruntime runs it to the same
outputs."""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

RNG = np.random.default_rng(0)
WEIGHTS = {  # two over 1 KiB (references into the .data file), one under (printed in the text)
    "a": RNG.standard_normal(512).astype(np.float32),
    "b": RNG.standard_normal(2048).astype(np.float32),
    "c": RNG.standard_normal(64).astype(np.float32),
}


def mixed_sizes() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Add", ["x", "a"], ["t1"], name="add_a"),
        helper.make_node("Pad", ["t1", "pads"], ["t2"], name="pad"),
        helper.make_node("Add", ["t2", "b"], ["t3"], name="add_b"),
        helper.make_node("Slice", ["t3", "starts", "ends"], ["t4"], name="head"),
        helper.make_node("Mul", ["t4", "c"], ["y"], name="mul_c"),
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in WEIGHTS.items()] + [
        numpy_helper.from_array(np.array([0, 1536], np.int64), "pads"),
        numpy_helper.from_array(np.array([0], np.int64), "starts"),
        numpy_helper.from_array(np.array([64], np.int64), "ends"),
    ]
    graph = helper.make_graph(
        nodes,
        "mixed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [512])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def outputs(model_bytes: bytes, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def attachment_name(response) -> str:
    return re.search(r'filename="?([^";]+)', response.headers["Content-Disposition"]).group(1)


@pytest.mark.parametrize("edits", [0, 1, 2])
def test_the_text_and_the_external_download_upload_together_and_run_the_same(client, edits):
    mid = upload(client, mixed_sizes().SerializeToString(), "mixed.onnx").get_json()["id"]
    for k in range(edits):
        op = {"op": "set_metadata", "key": f"k{k}", "value": "v"}
        assert client.post(f"/api/models/{mid}/edits", json={"base": k, "ops": [op]}).status_code == 200
    rev = edits

    text_download = client.get(f"/api/models/{mid}/text?revision={rev}&download=1")
    text = text_download.get_data(as_text=True)
    assert text == client.get(f"/api/models/{mid}/text?revision={rev}").get_data(as_text=True)
    stem = "mixed" if rev == 0 else f"mixed.r{rev}"
    assert attachment_name(text_download) == f"mixed.r{rev}.onnxtxt"

    external = client.get(f"/api/models/{mid}/download?revision={rev}&layout=external")
    z = zipfile.ZipFile(io.BytesIO(external.data))
    assert sorted(z.namelist()) == [f"{stem}.data", f"{stem}.onnx"]
    # the text names that very file, at the places the download's .onnx names
    refs = dict(re.findall(r'(\w+) = \["location": "([^"]+)", "offset"', text))
    assert refs == {"a": f"{stem}.data", "b": f"{stem}.data"}
    from_zip = onnx.ModelProto.FromString(z.read(f"{stem}.onnx"))
    from_text = onnx.parser.parse_model(text)
    zip_refs = {t.name: list(t.external_data) for t in from_zip.graph.initializer if t.external_data}
    assert {t.name: list(t.external_data) for t in from_text.graph.initializer if t.external_data} == zip_refs

    # uploaded together: no weight missing, and onnxruntime runs it as it runs the revision
    again = upload(client, text.encode(), attachment_name(text_download), [(z.read(f"{stem}.data"), f"{stem}.data")])
    assert again.status_code == 201, again.get_json()
    assert again.get_json()["missing_data"] == []
    x = RNG.standard_normal(512).astype(np.float32)
    revision_bytes = client.get(f"/api/models/{mid}/download?revision={rev}&layout=embedded").data
    reuploaded = client.get(f"/api/models/{again.get_json()['id']}/download?layout=embedded").data
    got, want = outputs(reuploaded, x), outputs(revision_bytes, x)
    assert np.array_equal(got, want)
    expect = (np.pad(x + WEIGHTS["a"], (0, 1536)) + WEIGHTS["b"])[:64] * WEIGHTS["c"]
    assert np.allclose(got, expect, rtol=1e-6, atol=1e-6)
    # and Compare finds the same weights (read from the .data file) in both
    d = client.get(f"/api/models/{again.get_json()['id']}/diff?other={mid}&other_revision={rev}").get_json()
    assert d["tensors"] == {"added": [], "removed": [], "changed": [], "renamed": [], "renamed_count": 0}
    assert d["counts"]["changed"] == 0


def test_a_text_upload_names_its_data_file_as_its_download_does(client):
    """A model uploaded in text form (its name an .onnxtxt) downloads as <name>.onnx in the
    external layout: its text form names that download's .data file too, after an edit (one
    giving it a weight over 1 KiB in raw_data: the parsed text's are in float_data, kept inside)."""
    m = mixed_sizes()
    mid = upload(client, onnx.printer.to_text(m).encode(), "mixed.onnxtxt").get_json()["id"]
    value = {"dtype": "FLOAT", "shape": [2048], "values": np.arange(2048).tolist()}
    op = {"op": "set_initializer", "name": "b", "value": value}
    assert client.post(f"/api/models/{mid}/edits", json={"base": 0, "ops": [op]}).status_code == 200
    z = zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{mid}/download?layout=external").data))
    (data_name,) = [n for n in z.namelist() if n.endswith(".data")]
    text = client.get(f"/api/models/{mid}/text").get_data(as_text=True)
    assert data_name == "mixed.r1.data"  # the download is mixed.r1.onnx (QA20 F3)
    assert set(re.findall(r'"location": "([^"]+)"', text)) == {data_name}
