"""A model opened without its external data file: the badge and the model panel say which file
is missing, and the file picked there is attached as a new revision."""

from __future__ import annotations

from test_missing_data import saved  # tests/ is on sys.path

from .browser_pages import open_model, upload_bytes


def test_missing_weights_are_said_and_attached_from_the_model_panel(page, server, tmp_path, artifacts):
    model_bytes, _ = saved(tmp_path)
    summary = upload_bytes(page, server, model_bytes, "m.onnx")
    open_model(page, server, summary["id"])
    badge = page.locator("#model-validity")
    assert badge.text_content() == "weights missing"
    assert "w.bin" in badge.get_attribute("title")
    row = page.locator("#validation .missing-data")
    assert "missing for 1 tensor" in row.text_content()
    assert "w.bin — not uploaded with this model: the data of W (16 KiB)" in row.locator("li").text_content()
    assert "loads and runs its graph" in page.locator("#validation .runtime-check").text_content()
    page.screenshot(path=str(artifacts / "missing-data.png"))
    assert page.locator("#downloads .ed-downloads-missing").text_content().startswith("w.bin is not here")

    form = row.locator("form.ed-attach-data")
    form.locator("button[type=submit]").click()  # nothing chosen: said, no request
    assert "Choose w.bin" in form.locator(".field-error").text_content()
    # the file was renamed since the export: one missing, one picked, it is attached all the same
    renamed = tmp_path / "weights-final.bin"
    renamed.write_bytes((tmp_path / "w.bin").read_bytes())
    form.locator("input[type=file]").set_input_files(str(renamed))
    form.locator("button[type=submit]").click()
    page.wait_for_function(
        "() => document.querySelector('#toast').textContent.includes('attached external data file')", timeout=30_000
    )
    assert "Saved as revision 1: attached external data file 'w.bin'" in page.locator("#toast").text_content()
    assert badge.text_content() == "valid"
    assert page.locator("#validation .missing-data").count() == 0
    assert page.locator("#downloads .ed-downloads-missing").count() == 0
    assert page.locator("#model-revision").text_content() == "rev 1"
