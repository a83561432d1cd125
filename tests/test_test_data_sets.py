"""A model uploaded in a .zip with its test data sets (the model zoo's layout, onnx's backend
tests'): each `test_data_set_N/` becomes a reference case — its input_K.pb fed to the K-th input,
its output_K.pb the values the K-th output must give — checked at once; sets that can't be a
case say why, the model is stored all the same, and no test file becomes a data file of it."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from testkit import ONNX_DATA, node_testcase_names, node_testcases, settled_reference, upload

from app.onnx_io import narrow_types
from app.onnx_io.output_compare import CLOSE_TOLERANCE

FOLDERS = sorted(p.parent for p in ONNX_DATA.glob("*/*/model.onnx") if any(p.parent.glob("test_data_set_*")))


def zipped(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def reference_status(client, answer: dict) -> str:
    return settled_reference(client, answer["id"], answer)["status"]


def folder_files(folder) -> dict[str, bytes]:
    """The folder as the zoo packs it: model.onnx and test_data_set_N/*.pb under one folder."""
    return {
        f"{folder.name}/{p.relative_to(folder).as_posix()}": p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def close(got: np.ndarray, want: np.ndarray) -> bool:
    """The verdict's criterion (run.compare_outputs' "close")."""
    if got.shape != want.shape:
        return False
    if want.dtype.kind not in "biuf":
        return bool(np.array_equal(got, want))
    scale = float(np.abs(want[np.isfinite(want)]).max()) if np.isfinite(want).any() else 0.0
    return bool(np.allclose(got, want, rtol=CLOSE_TOLERANCE, atol=CLOSE_TOLERANCE * scale, equal_nan=True))


def ort_passes(model_bytes: bytes, sets: list[tuple[list, list]], inputs: list[str]) -> bool:
    so = ort.SessionOptions()
    so.log_severity_level = 3
    try:
        sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
        return all(
            all(close(g, w) for g, w in zip(sess.run(None, dict(zip(inputs, ins, strict=True))), outs, strict=True))
            for ins, outs in sets
        )
    except Exception:  # onnxruntime can't load or run it: the verdict says so too
        return False


@pytest.mark.models
@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_wheels_models_with_their_test_data_sets(client, folder):
    model_bytes = (folder / "model.onnx").read_bytes()
    model = onnx.load_from_string(model_bytes)
    set_names = sorted(p.name for p in folder.glob("test_data_set_*"))
    r = upload(client, zipped(folder_files(folder)), f"{folder.name}.zip")
    assert r.status_code == 201, r.get_json()
    answer = r.get_json()
    assert answer["external_files"] == []  # no test file is taken for the model's data
    read = lambda p: onnx.numpy_helper.to_array(onnx.load_tensor(str(p)))  # noqa: E731
    assert answer["test_data_sets"] == {"kept": set_names, "skipped": []}

    initialized = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initialized]
    sets = [
        (
            [read(p) for p in sorted((folder / s).glob("input_*.pb"))],
            [read(p) for p in sorted((folder / s).glob("output_*.pb"))],
        )
        for s in set_names
    ]
    verdict = answer["validation"]["reference"]
    assert verdict["status"] == ("passed" if ort_passes(model_bytes, sets, inputs) else "failed"), verdict
    cases = client.get(f"/api/models/{answer['id']}/checks").get_json()["cases"]
    assert [c["name"] for c in cases] == set_names
    assert list(cases[0]["inputs"]) == inputs and list(cases[0]["expected"]) == [o.name for o in model.graph.output]


def _array(a) -> bool:
    # numbers, strings (kept as unicode .npy) and types numpy lacks (kept widened)
    return isinstance(a, np.ndarray) and (a.dtype.kind in "biufOU" or narrow_types.of_numpy(a.dtype) is not None)


def _value(v) -> bool:
    """A value a case can hold: a tensor, a sequence of tensors, an optional (one or none)."""
    return _array(v) or v is None or (isinstance(v, list) and all(_array(x) for x in v))


def _cases_it_can_keep(case) -> bool:
    graph = case.model.graph
    typed = [*graph.input, *graph.output]
    kinds = {"tensor_type", "sequence_type", "optional_type"}
    return (
        bool(case.data_sets)
        and all(v.type.WhichOneof("value") in kinds for v in typed)
        and all(_value(v) for ins, outs in case.data_sets for v in (*ins, *outs))
    )


def _pb(value, info: onnx.ValueInfoProto) -> bytes:
    """A test data set's file of a graph input or output, of the proto its type asks for."""
    kind = info.type.WhichOneof("value")
    if kind == "optional_type":
        return onnx.numpy_helper.from_optional(value, info.name).SerializeToString()
    if kind == "sequence_type":
        return onnx.numpy_helper.from_list(value, info.name).SerializeToString()
    return onnx.numpy_helper.from_array(value).SerializeToString()


@pytest.mark.corpus
def test_node_test_models_zipped_with_their_data_sets(client):
    """The official node tests packed as the zoo packs a model: every one of tensors, sequences and optionals keeps its data
    sets as cases, named and fed by position, and its verdict is what a run of the same inputs
    against the same outputs says (POST .../run with "expected")."""
    checked = passed = 0
    for name in node_testcase_names():
        case = node_testcases()[name]
        if not _cases_it_can_keep(case):
            continue
        files = {"model.onnx": case.model.SerializeToString()}
        graph = case.model.graph
        fed = [i for i in graph.input if i.name not in {t.name for t in graph.initializer}]
        for k, (ins, outs) in enumerate(case.data_sets):
            for side, values, infos in (("input", ins, fed), ("output", outs, graph.output)):
                for j, (v, info) in enumerate(zip(values, infos, strict=False)):
                    files[f"test_data_set_{k}/{side}_{j}.pb"] = _pb(v, info)
        r = upload(client, zipped(files), f"{name}.zip")
        assert r.status_code == 201, (name, r.get_json())
        answer = r.get_json()
        kept = answer["test_data_sets"]
        assert kept["kept"] == [f"test_data_set_{k}" for k in range(len(case.data_sets))], (name, kept)
        verdict = client.get(f"/api/models/{answer['id']}/checks/verdict").get_json()
        cases = client.get(f"/api/models/{answer['id']}/checks").get_json()["cases"]
        body = {
            "inputs": {n: {"npy": a["npy"]} for n, a in cases[0]["inputs"].items()},
            "expected": {n: {"npy": a["npy"]} for n, a in cases[0]["expected"].items()},
        }
        run = client.post(f"/api/models/{answer['id']}/run", json=body)
        first = verdict["cases"][0]
        if run.status_code == 422:  # onnxruntime can't run it: the case is an error naming why
            assert first["status"] == "error" and "onnxruntime can't" in first["message"], (name, first)
        else:
            assert run.status_code == 200, (name, run.get_json())
            outputs = run.get_json()["expected"]["outputs"]
            assert {n: o["close"] for n, o in outputs.items()} == {
                n: o["passed"] for n, o in first["outputs"].items()
            }, name
            passed += first["status"] == "passed"
        checked += 1
    # 1,532 and 1,442 with onnxruntime 1.32 (strings, bfloat16/float8/4-bit ones widened, their
    # scalars kept 0-d, sequences and optionals too)
    assert checked >= 1525 and passed >= 1436, (checked, passed)


def test_sets_that_cant_be_cases_say_why_and_the_model_stands(client):
    folder = ONNX_DATA / "pytorch-converted" / "test_ReLU"
    files = folder_files(folder)
    prefix = f"{folder.name}/"
    good_in = files[f"{prefix}test_data_set_0/input_0.pb"]
    good_out = files[f"{prefix}test_data_set_0/output_0.pb"]
    files.update(
        {
            f"{prefix}test_data_set_1/input_1.pb": good_in,  # no input_0.pb
            f"{prefix}test_data_set_1/output_0.pb": good_out,
            f"{prefix}test_data_set_2/input_0.pb": good_in,  # no outputs
            f"{prefix}test_data_set_3/input_0.pb": b"\xff\xfe not a tensor",
            f"{prefix}test_data_set_3/output_0.pb": good_out,
            f"{prefix}test_data_set_4/input_0.pb": good_in,
            f"{prefix}test_data_set_4/input_1.pb": good_in,  # one input too many
            f"{prefix}test_data_set_4/output_0.pb": good_out,
            f"{prefix}test_data_set_5/notes.txt": b"not a tensor file",
            f"{prefix}test_data_set_6/input_0.pb": bytes(129 << 20),  # 129 MiB of zeros: ~130 KB zipped
            f"{prefix}test_data_set_6/output_0.pb": good_out,
        }
    )
    r = upload(client, zipped(files), "relu.zip")
    assert r.status_code == 201, r.get_json()
    answer = r.get_json()
    assert answer["test_data_sets"]["kept"] == ["test_data_set_0"]
    reasons = {s["name"]: s["reason"] for s in answer["test_data_sets"]["skipped"]}
    assert "lacks input_0.pb" in reasons["test_data_set_1"]
    assert "no output_0.pb" in reasons["test_data_set_2"]
    assert "test_data_set_3/input_0.pb" in reasons["test_data_set_3"] and "TensorProto" in reasons["test_data_set_3"]
    assert "2 input file(s); the model has 1 input(s)" in reasons["test_data_set_4"]
    assert "test_data_set_5" not in reasons  # no tensors at all: not a test data set
    assert "is too big" in reasons["test_data_set_6"]  # read no further than 128 MiB
    assert answer["external_files"] == [] and reference_status(client, answer) == "passed"


def tarred(files: dict[str, bytes], mode: str = "w:gz", links: dict[str, str] | None = None) -> bytes:
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return buf.getvalue()


@pytest.mark.parametrize(("suffix", "mode"), [(".tar.gz", "w:gz"), (".tgz", "w:gz"), (".tar", "w")])
def test_a_zoo_tarball_opens_with_its_test_data_sets(client, suffix, mode):
    folder = ONNX_DATA / "pytorch-converted" / "test_Conv2d"
    r = upload(client, tarred(folder_files(folder), mode), f"conv{suffix}")
    assert r.status_code == 201, r.get_json()
    answer = r.get_json()
    # listed by its folder, as the zoo tells its model.onnx files apart
    assert answer["name"] == "test_Conv2d.onnx" and answer["test_data_sets"] == {
        "kept": ["test_data_set_0"],
        "skipped": [],
    }
    assert answer["external_files"] == [] and reference_status(client, answer) == "passed"
    stored = client.get(f"/api/models/{answer['id']}/download").data
    assert stored == (folder / "model.onnx").read_bytes()


def test_a_tarball_with_external_data_keeps_it(client, tmp_path):
    from onnx import helper, numpy_helper

    w = np.arange(4096, dtype=np.float32).reshape(64, 64)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 64])],
        [numpy_helper.from_array(w, "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    (tmp_path / "weights").mkdir()
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="weights/w.bin", size_threshold=0)
    files = {
        "zoo/m.onnx": (tmp_path / "m.onnx").read_bytes(),
        "zoo/weights/w.bin": (tmp_path / "weights" / "w.bin").read_bytes(),
    }
    r = upload(client, tarred(files), "m.tar.gz")
    assert r.status_code == 201, r.get_json()
    answer = r.get_json()
    assert answer["external_files"] == ["weights/w.bin"] and "test_data_sets" not in answer
    embedded = onnx.load_from_string(client.get(f"/api/models/{answer['id']}/download?layout=embedded").data)
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(embedded.graph.initializer[0]), w)


def test_hostile_tarballs_are_refused_or_defused(client, app):
    model = (ONNX_DATA / "pytorch-converted" / "test_ReLU" / "model.onnx").read_bytes()
    # a link is never made or followed: the model is stored, the link is not one of its files
    r = upload(client, tarred({"m/model.onnx": model}, links={"m/passwd.bin": "/etc/passwd"}), "links.tar.gz")
    assert r.status_code == 201 and r.get_json()["external_files"] == []
    refused = {
        "escape.tar.gz": tarred({"../../model.onnx": model}),  # outside the archive: not unpacked
        "two.tar.gz": tarred({"a.onnx": model, "b.onnx": model}),
        "garbage.tar.gz": b"\x1f\x8b\x08\x00garbage" * 50,
        "truncated.tar.gz": tarred({"m/model.onnx": model})[:60],
        "bomb.tar.gz": tarred({"m/model.onnx": model, "m/zeros.bin": bytes(200 << 20)}),  # ~200 KB unpacking to 200 MB
    }
    codes = {}
    for name, data in refused.items():
        r = upload(client, data, name)
        codes[name] = (r.status_code, r.get_json()["error"]["code"])
        assert name in r.get_json()["error"]["message"]
    assert codes == {
        "escape.tar.gz": (400, "bad_tar"),
        "two.tar.gz": (400, "several_models"),  # which to open is asked for (test_archive_members.py)
        "garbage.tar.gz": (400, "bad_tar"),
        "truncated.tar.gz": (400, "bad_tar"),
        "bomb.tar.gz": (413, "tar_bomb"),
    }
    from app.api.documents import store

    with app.app_context():
        scratch = store().blobs.scratch()
        assert not any(p.name.startswith("tar-") for p in scratch.iterdir())  # every unpacked file gone
    assert [m["name"] for m in client.get("/api/models").get_json()["models"]] == ["m.onnx"]


def test_a_models_cases_download_as_test_data_sets_and_round_trip(client, tmp_path):
    """?tests=1: the model as the zoo packs one, its reference cases as test_data_set_N/ — which
    onnx's own loader reads, an upload keeps as cases again, and onnxruntime agrees with."""
    folder = ONNX_DATA / "pytorch-converted" / "test_Conv2d"
    answer = upload(client, zipped(folder_files(folder)), "conv.zip").get_json()
    mid = answer["id"]
    client.post(f"/api/models/{mid}/checks", json={"name": "random", "inputs": {}})  # recorded from a run
    r = client.get(f"/api/models/{mid}/download?tests=1")
    assert r.status_code == 200 and r.headers["Content-Disposition"].endswith("test_Conv2d.zip")
    with zipfile.ZipFile(io.BytesIO(r.data)) as z:
        names = sorted(z.namelist())
        z.extractall(tmp_path / "out")
    assert names == [
        "test_Conv2d/test_Conv2d.onnx",  # listed by its folder's name (model_names.py)
        "test_Conv2d/test_data_set_0/input_0.pb",
        "test_Conv2d/test_data_set_0/output_0.pb",
        "test_Conv2d/test_data_set_1/input_0.pb",
        "test_Conv2d/test_data_set_1/output_0.pb",
    ]
    out = tmp_path / "out" / "test_Conv2d"
    assert (out / "test_Conv2d.onnx").read_bytes() == (folder / "model.onnx").read_bytes()
    given = onnx.load_tensor(str(folder / "test_data_set_0" / "output_0.pb"))
    got = onnx.load_tensor(str(out / "test_data_set_0" / "output_0.pb"))
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(got), onnx.numpy_helper.to_array(given))
    model = onnx.load(str(out / "test_Conv2d.onnx"))
    assert got.name == model.graph.output[0].name
    x = onnx.numpy_helper.to_array(onnx.load_tensor(str(out / "test_data_set_1" / "input_0.pb")))
    y = onnx.numpy_helper.to_array(onnx.load_tensor(str(out / "test_data_set_1" / "output_0.pb")))
    sess = ort.InferenceSession(str(out / "test_Conv2d.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {model.graph.input[0].name: x})[0], y)
    again = upload(client, r.data, "again.zip").get_json()
    assert again["test_data_sets"]["kept"] == ["test_data_set_0", "test_data_set_1"]
    assert reference_status(client, again) == "passed"


def test_string_models_keep_run_and_hand_back_their_cases(client, tmp_path):
    """STRING tensors in a test data set become unicode .npy (no pickle): the case is kept, the
    model runs on it (onnxruntime's string outputs stored the same way), passes, and downloads
    again as STRING TensorProtos."""
    case = node_testcases()["test_string_concat"]
    files = {"concat/model.onnx": case.model.SerializeToString()}
    ins, outs = case.data_sets[0]
    for side, arrays in (("input", ins), ("output", outs)):
        for j, a in enumerate(arrays):
            files[f"concat/test_data_set_0/{side}_{j}.pb"] = onnx.numpy_helper.from_array(a).SerializeToString()
    answer = upload(client, zipped(files), "concat.zip").get_json()
    assert answer["test_data_sets"] == {"kept": ["test_data_set_0"], "skipped": []}
    assert reference_status(client, answer) == "passed"
    kept = client.get(f"/api/models/{answer['id']}/checks").get_json()["cases"][0]
    run = client.post(
        f"/api/models/{answer['id']}/run", json={"inputs": {n: {"npy": a["npy"]} for n, a in kept["inputs"].items()}}
    )
    assert run.status_code == 200, run.get_json()
    (output,) = run.get_json()["outputs"].values()
    assert output["dtype"] == "STRING" and output["values"] == [
        x.decode() if isinstance(x, bytes) else x for x in outs[0].tolist()
    ]
    with zipfile.ZipFile(io.BytesIO(client.get(f"/api/models/{answer['id']}/download?tests=1").data)) as z:
        back = onnx.TensorProto.FromString(z.read("concat/test_data_set_0/output_0.pb"))
    assert back.data_type == onnx.TensorProto.STRING
    text = lambda xs: [x.decode() if isinstance(x, bytes) else x for x in xs]  # noqa: E731
    assert text(onnx.numpy_helper.to_array(back).tolist()) == text(outs[0].tolist())


def test_cases_of_types_numpy_lacks_download_as_they_came(client, tmp_path):
    """A bfloat16 model's test data set (bfloat16 input, bfloat16 and float outputs): kept as a
    case, passed, and downloaded again as the very TensorProtos it came as."""
    import ml_dtypes

    bf16, f32 = onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Cast", ["x"], ["y"], to=f32), onnx.helper.make_node("Cast", ["y"], ["z"], to=bf16)],
        "g",
        [onnx.helper.make_tensor_value_info("x", bf16, [3])],
        [onnx.helper.make_tensor_value_info("y", f32, [3]), onnx.helper.make_tensor_value_info("z", bf16, [3])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 21)])
    x = np.array([1.5, -3.25, 1e-3], np.float32).astype(ml_dtypes.bfloat16)
    tensors = {
        "input_0.pb": onnx.numpy_helper.from_array(x, "x"),
        "output_0.pb": onnx.numpy_helper.from_array(x.astype(np.float32), "y"),
        "output_1.pb": onnx.numpy_helper.from_array(x, "z"),
    }
    files = {"m/model.onnx": model.SerializeToString()}
    files.update({f"m/test_data_set_0/{k}": t.SerializeToString() for k, t in tensors.items()})
    answer = upload(client, zipped(files), "m.zip").get_json()
    assert answer["test_data_sets"]["kept"] == ["test_data_set_0"], answer["test_data_sets"]
    assert reference_status(client, answer) == "passed"
    r = client.get(f"/api/models/{answer['id']}/download?tests=1")
    with zipfile.ZipFile(io.BytesIO(r.data)) as z:
        for k, t in tensors.items():
            assert z.read(f"m/test_data_set_0/{k}") == t.SerializeToString(), k
