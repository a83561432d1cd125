"""The models page: what each model and the whole store take on disk, and an upload of a file
the store already holds (open the stored one, or keep a separate copy)."""

from __future__ import annotations

import re
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from .browser_models import tiny_cnn
from .browser_pages import upload


def human(n: int) -> str:
    """Bytes as the page writes them (lib/format.js formatBytes): 1024 steps, one decimal
    under 10, none above, ties rounded up as JavaScript's toFixed does."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    value, i = Decimal(n), 0
    while value >= 1024 and i < len(units) - 1:
        value /= 1024
        i += 1
    if i == 0:
        return f"{n} B"
    places = Decimal("0.1") if value < 10 else Decimal("1")
    return f"{value.quantize(places, rounding=ROUND_HALF_UP)} {units[i]}"


def weighted(producer: str) -> onnx.ModelProto:
    """Y = X·W with an 8 KiB W: big enough to be a blob of its own in the store, so models with
    the same W share it."""
    w = nh.from_array(np.arange(64 * 32, dtype=np.float32).reshape(64, 32), "W")
    graph = h.make_graph(
        [h.make_node("MatMul", ["X", "W"], ["Y"], name="mm")],
        "weighted",
        [h.make_tensor_value_info("X", T.FLOAT, [1, 64])],
        [h.make_tensor_value_info("Y", T.FLOAT, [1, 32])],
        [w],
    )
    return h.make_model(graph, producer_name=producer, opset_imports=[h.make_opsetid("", 17)])


def listed(page, server: str) -> dict:
    response = page.request.get(f"{server}/api/models")
    assert response.ok, response.text()
    return response.json()


def column(page, header: str) -> int:
    """The index of the models table's column headed `header`."""
    headers = [t.strip() for t in page.locator("#models-table thead th").all_text_contents()]
    assert header in headers, headers
    return headers.index(header)


def test_the_table_shows_what_each_model_and_the_store_take_on_disk(page, server, artifacts):
    first = upload(page, server, weighted("one exporter"), "first.onnx")
    second = upload(page, server, weighted("another exporter"), "second.onnx")  # the same weights
    edit = page.request.post(
        f"{server}/api/models/{second['id']}/edits",
        data={"base": 0, "ops": [{"op": "set_metadata", "key": "note", "value": "edited"}]},
    )
    assert edit.status == 200, edit.text()

    api = listed(page, server)
    by_id = {m["id"]: m for m in api["models"]}
    assert set(by_id) == {first["id"], second["id"]}
    # what makes the column and the total worth showing: the weights are stored once (the
    # total is less than the sum), and two revisions take more than the model's size
    assert api["disk_bytes"] < sum(m["disk_bytes"] for m in api["models"])
    assert human(by_id[second["id"]]["disk_bytes"]) != human(by_id[second["id"]]["size"])

    page.goto(server + "/")
    page.wait_for_selector("#models-table:not([hidden]) tbody tr")
    disk, size = column(page, "Stored"), column(page, "Size")
    for model_id, m in by_id.items():
        cells = page.locator(f"#models-table tr[data-model-id='{model_id}'] td").all_text_contents()
        assert cells[disk] == human(m["disk_bytes"]), (m, cells)
        assert cells[size] == human(m["size"]), (m, cells)
        card = page.locator(f"#models-table tr[data-model-id='{model_id}'] .model-card").text_content()
        assert card == f"{m['card']['producer']} · opset 17 · 1 node", card  # who made it, under its name
    page.screenshot(path=str(artifacts / "models-page-cards.png"))
    total = page.locator("#models-total")
    assert total.is_visible()
    assert total.text_content() == f"2 models · {human(api['disk_bytes'])} stored"
    assert "stored once" in total.get_attribute("title")

    # a model deleted: its files are held by no model until the store collects them
    assert page.request.delete(f"{server}/api/models/{second['id']}").status == 204
    page.click("#refresh-models")
    page.wait_for_function("() => document.querySelector('#models-total').textContent.includes('held by no model')")
    assert "deleted models" in total.get_attribute("title")

    # no models: no total line, the page says there are none
    for model_id in [first["id"]]:
        assert page.request.delete(f"{server}/api/models/{model_id}").status == 204
    page.click("#refresh-models")
    page.wait_for_selector("#models-table", state="hidden")
    assert total.is_hidden()
    assert page.locator("#models-status").text_content() == "No models yet — open one above."


def upload_twice(page, server: str, tmp_path, edit_first: bool = False) -> tuple[dict, dict, object]:
    """Upload one file through the page's file picker (`edit_first`: then edit it), then the
    same bytes under another name: (the first model, the second's entry as the API lists it,
    the dialog the page shows)."""
    data = tiny_cnn().SerializeToString()
    (tmp_path / "first.onnx").write_bytes(data)
    (tmp_path / "second.onnx").write_bytes(data)

    page.goto(server + "/")
    page.set_input_files("#file-input", str(tmp_path / "first.onnx"))
    page.wait_for_url(re.compile(r"/models/[^/#]+"))
    [first] = listed(page, server)["models"]
    assert first["name"] == "first.onnx"
    if edit_first:
        op = {"op": "set_metadata", "key": "note", "value": "edited"}
        assert page.request.post(f"{server}/api/models/{first['id']}/edits", data={"base": 0, "ops": [op]}).ok

    page.goto(server + "/")
    page.wait_for_selector("#models-table:not([hidden]) tbody tr")
    page.set_input_files("#file-input", str(tmp_path / "second.onnx"))
    dialog = page.locator("dialog#duplicate-upload[open]")
    dialog.wait_for()
    assert page.url.rstrip("/") == server  # asked first: the page stays
    models = listed(page, server)["models"]
    assert len(models) == 2
    [second] = [m for m in models if m["id"] != first["id"]]
    assert second["name"] == "second.onnx"

    body = dialog.locator(".modal-body").text_content()
    assert body.startswith("This file is already stored as first.onnx (uploaded ")
    assert str(datetime.fromtimestamp(first["created"]).year) in body
    assert "second.onnx" not in body
    assert ("It has been edited since: it opens at revision 1" in body) == edit_first
    assert dialog.locator("button.open-existing").text_content() == (
        "Open it (revision 1)" if edit_first else "Open it"
    )
    assert dialog.locator("button.keep-copy").text_content() == "Keep a separate copy"
    return first, second, dialog


def test_an_edited_copy_is_offered_saying_it_was_edited(page, server, tmp_path, artifacts):
    """The stored model holding these bytes was edited since: the dialog says it opens at its
    latest revision, this file being its revision 0, and opening it shows revision 1."""
    first, _, dialog = upload_twice(page, server, tmp_path, edit_first=True)
    dialog.screenshot(path=str(artifacts / "duplicate-edited.png"))
    dialog.locator("button.open-existing").click()
    page.wait_for_url(re.compile(rf"/models/{re.escape(first['id'])}(#.*)?$"))
    page.wait_for_function("document.getElementById('model-revision').textContent === 'rev 1'")


def test_a_copy_still_as_uploaded_is_offered_before_an_edited_one(page, server, tmp_path):
    """QA26: the oldest copy was edited, a later one kept as uploaded: a third upload of the file
    offers the unedited copy (this very file), not the edited one at its revision 1."""
    _, second, dialog = upload_twice(page, server, tmp_path, edit_first=True)
    dialog.locator("button.keep-copy").click()
    page.wait_for_url(re.compile(rf"/models/{re.escape(second['id'])}(#.*)?$"))
    page.goto(server + "/")
    page.wait_for_selector("#models-table:not([hidden]) tbody tr")
    page.set_input_files("#file-input", str(tmp_path / "first.onnx"))
    dialog = page.locator("dialog#duplicate-upload[open]")
    dialog.wait_for()
    body = dialog.locator(".modal-body").text_content()
    assert body.startswith("This file is already stored as second.onnx (uploaded ") and "1 more copy" in body
    assert "edited since" not in body
    assert dialog.locator("button.open-existing").text_content() == "Open it"
    dialog.locator("button.open-existing").click()
    page.wait_for_url(re.compile(rf"/models/{re.escape(second['id'])}(#.*)?$"))


def test_open_it_removes_the_new_entry_and_opens_the_stored_model(page, server, tmp_path):
    first, second, dialog = upload_twice(page, server, tmp_path)
    dialog.locator("button.open-existing").click()
    page.wait_for_url(re.compile(rf"/models/{re.escape(first['id'])}(#.*)?$"))
    page.wait_for_selector("#model-name")
    assert page.locator("#model-name").text_content() == "first.onnx"
    assert [m["id"] for m in listed(page, server)["models"]] == [first["id"]]
    assert page.request.get(f"{server}/api/models/{second['id']}").status == 404


def test_keep_a_separate_copy_opens_the_new_model_and_keeps_both(page, server, tmp_path):
    first, second, dialog = upload_twice(page, server, tmp_path)
    dialog.locator("button.keep-copy").click()
    page.wait_for_url(re.compile(rf"/models/{re.escape(second['id'])}(#.*)?$"))
    page.wait_for_function("document.getElementById('model-name').textContent === 'second.onnx'")
    assert {m["id"] for m in listed(page, server)["models"]} == {first["id"], second["id"]}


def test_closing_the_dialog_backs_out_of_the_upload(page, server, tmp_path):
    """Close (or Escape) is "never mind": the new entry goes, the stored one stays, the page
    stays on the list."""
    first, second, dialog = upload_twice(page, server, tmp_path)
    dialog.press("Escape")
    page.wait_for_selector("dialog#duplicate-upload", state="detached")
    page.wait_for_selector(
        "#upload-status:has-text('Not stored again')"
    )  # (a polled string predicate breaks the page's CSP)
    assert page.url.rstrip("/") == server
    assert page.locator("#upload-status").text_content() == (
        "Not stored again: second.onnx is the same file as first.onnx."
    )
    page.wait_for_selector(f"#models-table tr[data-model-id='{second['id']}']", state="detached")
    assert page.locator("#models-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.modelId)") == [first["id"]]
    assert [m["id"] for m in listed(page, server)["models"]] == [first["id"]]
    assert page.request.get(f"{server}/api/models/{second['id']}").status == 404


def test_models_of_one_name_are_told_apart_and_the_date_says_what_it_is(page, server):
    """The KV-cache QA: three "llama_tiny.onnx" rows told apart by node count alone, under a
    column "Opened" that showed when each was uploaded."""
    ids = [upload(page, server, weighted(f"exporter {k}"), "same.onnx")["id"] for k in range(2)]
    other = upload(page, server, tiny_cnn(), "other.onnx")["id"]
    page.goto(server + "/")
    page.wait_for_selector("#models-table:not([hidden]) tbody tr")
    column(page, "Uploaded")
    for mid in ids:
        assert page.locator(f"#models-table tr[data-model-id='{mid}'] .model-twin").text_content().strip() == mid
    assert page.locator(f"#models-table tr[data-model-id='{other}'] .model-twin").count() == 0


def test_leaving_the_page_with_the_question_open_backs_out_of_the_upload(page, server, tmp_path):
    """QA: a reload with the dialog open kept the new copy, though it says "Close: this upload is
    not kept"."""
    first, second, _ = upload_twice(page, server, tmp_path)
    page.goto(server + "/")
    page.wait_for_selector("#models-table:not([hidden]) tbody tr")
    for _ in range(50):  # the keepalive DELETE lands as the page goes
        if [m["id"] for m in listed(page, server)["models"]] == [first["id"]]:
            break
        page.wait_for_timeout(100)
    assert [m["id"] for m in listed(page, server)["models"]] == [first["id"]]
    assert page.request.get(f"{server}/api/models/{second['id']}").status == 404


def matmul_model(k: int, metadata: dict) -> onnx.ModelProto:
    g = h.make_graph(
        [h.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        f"mm{k}",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 2])],
        [nh.from_array(np.full((4, 2), k, np.float32), "w")],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    h.set_model_props(m, metadata)
    return m


def test_the_filter_finds_models_by_operator_and_metadata(page, server, artifacts):
    """QA26: with a dozen exports listed, finding "the ones with MatMul" or "the imagenet ones"
    meant opening each: the filter reads the operators and metadata each model holds."""
    cnns = [upload(page, server, tiny_cnn(), f"cnn{k}.onnx")["id"] for k in range(4)]
    mms = [
        upload(page, server, matmul_model(k, {"dataset": "imagenet" if k < 2 else "coco"}), f"mm{k}.onnx")["id"]
        for k in range(4)
    ]
    page.goto(server + "/")
    page.wait_for_selector("#models-table:not([hidden]) tbody tr")
    shown = lambda: {  # noqa: E731
        r.get_attribute("data-model-id") for r in page.locator("#models-table tbody tr:not([hidden])").all()
    }
    page.fill("#models-filter", "matmul")
    assert shown() == set(mms)
    page.fill("#models-filter", "LeakyRelu")
    assert shown() == set(cnns)
    page.fill("#models-filter", "dataset=imagenet")
    assert shown() == set(mms[:2])
    page.fill("#models-filter", "matmul coco")
    assert shown() == set(mms[2:])
    assert page.locator("#models-total").text_content().startswith("2 of 8 models")
    page.screenshot(path=str(artifacts / "models-filter-metadata.png"))
