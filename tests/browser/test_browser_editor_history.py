"""The history panel: every revision with its ops in words, the current one marked, undo/redo,
downloading an older revision; and a stale edit (the model changed elsewhere) from a new form."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload, wait_revision


def items(page) -> list[str]:
    return page.locator("#history-list > li").evaluate_all("els => els.map(e => e.dataset.revision)")


def current(page) -> str:
    return page.locator("#history-list > li[aria-current=true]").get_attribute("data-revision")


def test_history_lists_ops_undo_redo_and_downloads(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    panel = page.locator("#sidebar")

    # two edits through the page (an emptied name field's button says it removes the name)
    panel.locator(".ed-rename-node input[name=name]").fill("")
    assert panel.locator(".ed-rename-node button[type=submit]").text_content() == "Remove name"
    panel.locator(".ed-rename-node input[name=name]").fill("act")
    assert panel.locator(".ed-rename-node button[type=submit]").text_content() == "Rename"
    panel.locator(".ed-rename-node button[type=submit]").click()
    wait_revision(page, 1)
    panel.locator("[data-attr=alpha] input[name=value]").fill("0.2")
    panel.locator("[data-attr=alpha] button[type=submit]").click()
    wait_revision(page, 2)

    page.click("#btn-history")
    assert page.locator("#btn-history.active").count() == 1
    page.wait_for_selector("#history-list[data-ready=true]")
    assert items(page) == ["2", "1", "0"]
    assert current(page) == "2"
    rev1 = panel.locator("#history-list > li[data-revision='1']")
    # the op names the node as it was then, by name and op (the server's account lends them)
    assert (
        rev1.locator(".hist-op").first.locator("div").first.text_content()
        == 'Rename node "/features/act1/LeakyRelu" (LeakyRelu) to "act"'
    )
    # the server's account says the same in other words: said once (QA34)
    assert rev1.locator(".hist-change").count() == 0
    rev2 = panel.locator("#history-list > li[data-revision='2']")
    assert rev2.locator(".hist-op div").first.text_content() == 'Set attribute alpha of node "act" (LeakyRelu) to 0.2'
    assert "Opened tiny_cnn.onnx" in panel.locator("#history-list > li[data-revision='0']").text_content()
    page.screenshot(path=str(artifacts / "editor-history-panel.png"))

    # undo from the panel: revision 1 is current, 2 can come back with redo
    panel.locator("#history-undo").click()
    wait_revision(page, 1)
    page.wait_for_selector("#history-list[data-ready=true]")
    assert current(page) == "1"
    assert "redo reaches it" in panel.locator("#history-list > li[data-revision='2'] .hist-tag").text_content()
    # the toast says what was undone, not only where the model is now
    undone = page.locator("#toast", has_text="Undone: ")
    undone.wait_for()
    assert "'alpha'" in undone.text_content() and undone.text_content().endswith("now at revision 1.")
    # the toolbar's redo works too, and the panel follows
    page.click("#btn-redo")
    wait_revision(page, 2)
    assert "'alpha'" in page.locator("#toast", has_text="Redone: ").text_content()
    page.wait_for_selector("#history-list[data-ready=true]")
    assert current(page) == "2"

    # undo twice, then a new edit: revision 2 is left on another branch
    page.click("#btn-undo")
    wait_revision(page, 1)
    page.click("#btn-undo")
    wait_revision(page, 0)
    page.click("#btn-model")
    panel.locator("#metadata-add input[name=key]").fill("branch")
    panel.locator("#metadata-add textarea[name=value]").fill("b")
    panel.locator("#metadata-add button[type=submit]").click()
    wait_revision(page, 3)
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    assert items(page) == ["3", "2", "1", "0"]
    assert current(page) == "3"
    assert "left behind" in panel.locator("#history-list > li[data-revision='2'] .hist-tag").text_content()
    assert "after revision 0" in panel.locator("#history-list > li[data-revision='3']").text_content()
    page.screenshot(path=str(artifacts / "editor-history-branch.png"))

    # an older revision still downloads as it was
    with page.expect_download() as info:
        panel.locator("#history-list > li[data-revision='2'] .hist-download").click()
    model = onnx.load(info.value.path())
    onnx.checker.check_model(model, full_check=True)
    leaky = model.graph.node[1]
    assert leaky.name == "act"
    assert onnx.helper.get_attribute_value(leaky.attribute[0]) == pytest.approx(0.2)
    # and the recipe that led to it: the two edits of its branch, for `onnx-studio apply`
    assert panel.locator("#history-list > li[data-revision='0'] .hist-recipe").count() == 0
    with page.expect_download() as info:
        panel.locator("#history-list > li[data-revision='2'] .hist-recipe").click()
    assert info.value.suggested_filename == "tiny_cnn.r0-r2.recipe.json"
    recipe = json.loads(Path(info.value.path()).read_text())
    assert [b["revision"] for b in recipe["batches"]] == [1, 2]
    assert [op["op"] for op in recipe["ops"]] == ["rename_node", "set_attribute"]
    head = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert head.graph.node[1].name == "/features/act1/LeakyRelu"
    assert {p.key: p.value for p in head.metadata_props}["branch"] == "b"


def test_stale_edit_from_a_new_form_reloads_and_retries(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    other = page.request.post(
        f"{server}/api/models/{summary['id']}/edits",
        data={"base": 0, "ops": [{"op": "set_metadata", "key": "elsewhere", "value": "1"}]},
    )
    assert other.status == 200, other.text()

    panel = page.locator("#sidebar")
    form = panel.locator(".ed-rename-node")
    form.locator("input[name=name]").fill("act")
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "changed elsewhere" in error.text_content() and "revision 1" in error.text_content()
    assert page.locator("#model-revision").text_content() == "rev 1"  # the page caught up
    form.locator("button[type=submit]").click()  # the typed name is still there: try again
    wait_revision(page, 2)
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert model.graph.node[1].name == "act"
    assert {p.key: p.value for p in model.metadata_props}["elsewhere"] == "1"


def test_a_stale_edit_redraws_the_panel_from_the_new_revision_keeping_what_was_typed(page, server, artifacts):
    # QA18 F13: the panel kept the old revision's node name under a drawing of the new one
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-subtitle").text_content() == "/features/act1/LeakyRelu"
    other = page.request.post(
        f"{server}/api/models/{summary['id']}/edits",
        data={"base": 0, "ops": [{"op": "rename_node", "node": "n1", "name": "act_by_alice"}]},
    )
    assert other.status == 200, other.text()

    form = panel.locator(".ed-rename-node")
    form.locator("input[name=name]").fill("act_by_bob")
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "changed elsewhere" in error.text_content() and "revision 1" in error.text_content()
    # the panel shows revision 1's node, the field what Bob typed
    assert panel.locator(".panel-subtitle").text_content() == "act_by_alice"
    assert form.locator("input[name=name]").input_value() == "act_by_bob"
    page.screenshot(path=str(artifacts / "editor-stale-rename.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 2)
    assert panel.locator(".panel-subtitle").text_content() == "act_by_bob"

    # a stale Delete (nothing typed, its form gone with the redraw): said in a toast, the panel
    # showing the node as it now is
    page.request.post(
        f"{server}/api/models/{summary['id']}/edits",
        data={"base": 2, "ops": [{"op": "rename_node", "node": "n1", "name": "act_again"}]},
    )
    panel.locator(".node-actions button", has_text="Delete").click()
    panel.locator(".ed-delete-node button[type=submit]").click()
    page.wait_for_function("() => (document.querySelector('#toast')?.textContent || '').includes('changed elsewhere')")
    assert panel.locator(".panel-subtitle").text_content() == "act_again"
    assert page.locator("#model-revision").text_content() == "rev 3"


def test_a_change_is_said_twice_only_when_the_servers_account_says_more(page, server):
    """QA34: each revision said its change twice in other words ("Set attribute pads of node n0 …"
    / "attribute 'pads' of node n0 … set to [1, 1, 1, 1]"); the account shows only where it adds
    something (how many places a rename touched, what a cleanup removed)."""
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    ops = [
        [{"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.25}],
        [{"op": "rename_tensor", "from": "input", "to": "image"}],
    ]
    changes = []
    for rev, batch in enumerate(ops):
        r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": rev, "ops": batch})
        assert r.status == 200
        changes.append(r.json()["changes"][0])
    open_model(page, server, mid)
    wait_revision(page, 2)
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    listed = page.locator("#history-list")
    assert listed.locator("li[data-revision='1'] .hist-op").text_content().startswith("Set attribute alpha of node")
    assert listed.locator("li[data-revision='1'] .hist-change").count() == 0, changes[0]
    assert listed.locator("li[data-revision='2'] .hist-change").text_content() == changes[1]
