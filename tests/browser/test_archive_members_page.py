"""The start page, given an archive holding several models (an export folder zipped): it offers a
button per model, and the one picked opens as any upload does (QA31 #13)."""

from __future__ import annotations

import re

from test_archive_members import export_folders, zipped  # tests/ is on sys.path

from .browser_pages import wait_ready


def stored(page, server: str) -> list[str]:
    return [m["name"] for m in page.request.get(f"{server}/api/models").json()["models"]]


def test_picking_a_model_of_an_archive_opens_its_page(page, server, tmp_path, artifacts):
    path = tmp_path / "export.zip"
    path.write_bytes(zipped(export_folders()))
    page.goto(server + "/")
    page.set_input_files("#file-input", str(path))

    choices = page.locator("#upload-status .member-choices .open-member")
    choices.first.wait_for()
    assert choices.all_text_contents() == [
        "Open export/encoder/encoder_model.onnx",
        "Open export/decoder/decoder_model.onnx",
    ]
    status = page.locator("#upload-status")
    assert "export.zip holds several models" in status.text_content()
    assert "error" not in (status.get_attribute("class") or "")
    page.screenshot(path=str(artifacts / "archive_members_choices.png"))
    assert stored(page, server) == []  # nothing stored yet

    choices.nth(1).click()
    page.wait_for_url(re.compile(r"/models/[^/#]+"))
    wait_ready(page)
    assert page.locator("#model-name").text_content() == "decoder_model.onnx"
    boxes = page.locator("#graph [data-node-id]")
    assert boxes.count() == 1 and "Add" in boxes.first.text_content()
    assert stored(page, server) == ["decoder_model.onnx"]
