"""A model told apart by name: an upload named as another listed model (every exporter's
"model.onnx", QA34 #2) is told so and where to rename it, the model page's title renames it, and
an archive's members left out are said (QA34 #10)."""

from __future__ import annotations

import io
import re
import tarfile

from onnx import TensorProto, helper

from .browser_pages import wait_ready


def _model(op: str) -> bytes:
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _leaving_tar(folder):
    """A .tar.gz holding model.onnx and a model at a path leaving the archive."""
    data = _model("Relu")
    path = folder / "hostile.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name in ("../../evil.onnx", "model.onnx"):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _pick(page, server: str, path) -> None:
    page.goto(server + "/")
    page.wait_for_function("() => document.getElementById('models-status').textContent !== 'Loading…'")
    page.set_input_files("#file-input", str(path))
    page.wait_for_url(re.compile(r"/models/[^/#]+"))
    wait_ready(page)


def test_a_second_model_onnx_is_told_where_to_rename_and_its_title_renames_it(page, server, tmp_path, artifacts):
    for op in ("Relu", "Sigmoid"):
        folder = tmp_path / op
        folder.mkdir()
        (folder / "model.onnx").write_bytes(_model(op))
    _pick(page, server, tmp_path / "Relu" / "model.onnx")
    assert page.locator(".toast", has_text="Listed as").count() == 0  # the first of its name: nothing to say
    _pick(page, server, tmp_path / "Sigmoid" / "model.onnx")
    note = page.locator(".toast", has_text="Listed as model.onnx, as another model is")
    note.wait_for()
    assert "click its name at the top to give it one of its own" in note.text_content()
    page.locator("#model-name").click()
    field = page.locator("#rename-model-name")
    field.fill("sigmoid test")
    page.locator("#rename-model .confirm-rename").click()
    page.wait_for_function("() => document.querySelector('#model-name').textContent === 'sigmoid test'")
    assert page.title() == "sigmoid test · ONNX Studio"
    page.locator("h2.panel-title", has_text="sigmoid test").wait_for()  # the model panel's heading
    page.screenshot(path=str(artifacts / "model-title-renamed.png"))
    names = sorted(m["name"] for m in page.request.get(f"{server}/api/models").json()["models"])
    assert names == ["model.onnx", "sigmoid test"]


def test_an_archives_members_left_out_are_said_on_the_model_page(page, server, tmp_path):
    path = _leaving_tar(tmp_path)
    _pick(page, server, path)
    note = page.locator(".toast", has_text="Left out of the archive")
    note.wait_for()
    assert "../../evil.onnx (a path leaving the archive)" in note.text_content()


def test_a_copy_kept_of_a_stored_file_says_what_else_its_upload_did(page, server, tmp_path):
    """QA35 #9: an archive's members left out were said after a plain upload, not after "Keep a
    separate copy" of one already stored."""
    path = _leaving_tar(tmp_path)
    _pick(page, server, path)
    page.goto(server + "/")
    page.wait_for_function("() => document.getElementById('models-status').textContent !== 'Loading…'")
    page.set_input_files("#file-input", str(path))
    page.locator("#duplicate-upload .keep-copy").click()
    page.wait_for_url(re.compile(r"/models/[^/#]+"))
    note = page.locator(".toast", has_text="Left out of the archive")
    note.wait_for()
    assert "../../evil.onnx (a path leaving the archive)" in note.text_content()
