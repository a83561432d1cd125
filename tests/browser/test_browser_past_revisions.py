"""Any revision on screen as it was, read-only (History's "View", links with #at=N): its graph,
panels and values, no edit forms, undo and redo off; every call about what is drawn pinned to
the revision on screen, so an edit made elsewhere meanwhile changes nothing shown; back to the
current revision with the selection followed by name."""

from __future__ import annotations

import onnx

from .browser_models import tiny_cnn
from .browser_pages import hash_params, open_model, upload, wait_ready, wait_revision


def edit(page, server: str, model_id: str, base: int, *ops: dict) -> dict:
    response = page.request.post(f"{server}/api/models/{model_id}/edits", data={"base": base, "ops": list(ops)})
    assert response.ok, response.text()
    return response.json()


def toolbar_revision(page) -> str:
    return page.locator("#model-revision").text_content()


def alpha_shown(page) -> str:
    return page.locator("#sidebar [data-attr=alpha] .attr-value").text_content()


def test_history_views_an_earlier_revision_read_only_and_comes_back(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    edit(page, server, mid, 0, {"op": "rename_node", "node": "n1", "name": "act"})
    edit(page, server, mid, 1, {"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.2})
    edit(page, server, mid, 2, {"op": "set_metadata", "key": "stage", "value": "late"})
    open_model(page, server, mid)
    assert toolbar_revision(page) == "rev 3"
    assert page.locator("#past-revision").is_hidden()

    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    panel = page.locator("#sidebar")
    # the revision on screen has nothing to open; the others a View and a Compare
    assert panel.locator("#history-list > li[data-revision='3'] .hist-view").count() == 0
    panel.locator("#history-list > li[data-revision='1'] .hist-view").click()
    page.wait_for_function("() => document.getElementById('model-revision').textContent === 'rev 1 of 3'")
    wait_ready(page)
    assert hash_params(page)["at"] == "1" and "rev" not in hash_params(page)
    banner = page.locator("#past-revision")
    assert banner.is_visible()
    assert "Revision 1" in banner.text_content() and "edits go on from revision 3" in banner.text_content()
    assert page.locator("#btn-undo").is_disabled() and page.locator("#btn-redo").is_disabled()
    # the history says which revision is on screen and which is current
    page.wait_for_selector("#history-list[data-ready=true]")
    assert panel.locator("#history-list > li[data-revision='1'] .hist-viewing").count() == 1
    assert panel.locator("#history-list > li[data-revision='3'] .hist-view").text_content() == "Back to it"
    assert panel.locator("#history-undo").is_disabled()
    page.screenshot(path=str(artifacts / "past-revision-history.png"))

    # the model panel: revision 1's metadata (none yet), read-only, and its downloads
    page.click("#btn-model")
    assert panel.locator("#metadata-add").count() == 0 and panel.locator(".ed-fields-toggle").count() == 0
    assert "stage" not in panel.text_content()
    assert panel.locator("#model-tools").count() == 0
    href = panel.locator("#downloads [data-layout=as_stored] a").get_attribute("href")
    assert "revision=1" in href
    # the node as it was: renamed, alpha not yet changed, and no forms to edit it
    page.locator("#graph g.box[data-node-id='n1']").click()
    panel.locator("[data-attr=alpha]").wait_for()
    assert panel.locator(".panel-title").text_content() == "LeakyRelu" and "act" in panel.text_content()
    assert alpha_shown(page) == "0.1"
    assert panel.locator("form").count() == 0, "an earlier revision offers no edit forms"
    page.screenshot(path=str(artifacts / "past-revision.png"))

    # an edit made elsewhere meanwhile changes nothing on screen: every call names revision 1
    edit(page, server, mid, 3, {"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.3})
    page.click("#btn-model")
    page.locator("#graph g.box[data-node-id='n1']").click()
    panel.locator("[data-attr=alpha]").wait_for()
    assert alpha_shown(page) == "0.1"
    # Ctrl+Z does nothing to the model but say why
    page.locator("#graph").focus()
    page.keyboard.press("Control+z")
    page.wait_for_selector("#toast:not([hidden])")
    assert "read-only" in page.locator("#toast").text_content()
    heads = page.request.get(f"{server}/api/models/{mid}/revisions").json()
    assert heads["head"] == 4

    # back to the current revision: the node still selected (by its name), editable again
    banner.locator("#past-back").click()
    wait_revision(page, 4)
    assert banner.is_hidden()
    assert "at" not in hash_params(page) and hash_params(page)["node"] == "@act"
    panel.locator("[data-attr=alpha] input[name=value]").wait_for()
    assert panel.locator("[data-attr=alpha] input[name=value]").input_value() == "0.3"
    assert not page.locator("#btn-undo").is_disabled()

    # Ctrl+Y with nothing to redo: said so, nothing asked of the server (it answered 409, and the
    # page said the model had been changed elsewhere)
    assert page.locator("#btn-redo").is_disabled()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/redo" in r.url else None)
    page.locator("#graph").focus()
    page.keyboard.press("Control+y")
    page.wait_for_function("() => (document.querySelector('#toast')?.textContent || '').includes('Nothing to redo')")
    assert asked == [] and toolbar_revision(page) == "rev 4"


def test_a_link_to_an_earlier_revision_opens_it_read_only(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    edit(page, server, mid, 0, {"op": "delete_node", "node": "n2", "reconnect": True})  # MaxPool: n3.. move up
    # revision 0's n3 (GlobalAveragePool) is n2 now: the link says revision 0, so it means that one
    open_model(page, server, mid, "#at=0&path=&node=n3")
    assert toolbar_revision(page) == "rev 0 of 1"
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "GlobalAveragePool"
    assert "MaxPool" in page.locator("#graph g.box[data-node-id='n2']").text_content()
    # the Text form and the download are revision 0's
    assert "revision=0" in page.locator("#btn-download").get_attribute("href")
    model = onnx.load_from_string(
        page.request.get(f"{server}{page.locator('#btn-download').get_attribute('href')}").body()
    )
    assert [n.op_type for n in model.graph.node][2] == "MaxPool"

    # a revision the model doesn't have: said, and the current one shown (a fresh page: the same
    # page given another hash only navigates within it)
    page.goto("about:blank")
    open_model(page, server, mid, "#at=7")
    assert toolbar_revision(page) == "rev 1"
    assert "no revision 7" in page.locator("#toast").text_content()
    # a link to the current revision by at= is simply the current revision, editable
    page.goto("about:blank")
    open_model(page, server, mid, "#at=1&path=&node=n1")
    assert toolbar_revision(page) == "rev 1" and page.locator("#past-revision").is_hidden()
    assert page.locator("#sidebar .ed-rename-node").count() == 1
    # and within the page, a hash naming a revision it doesn't have: said, the page stays
    page.evaluate("() => { window.location.hash = '#at=9'; }")
    page.wait_for_function(
        "() => (document.getElementById('toast').textContent || '').includes('Revision 9 could not be shown')"
    )
    assert toolbar_revision(page) == "rev 1" and page.locator("#past-revision").is_hidden()


def test_compare_from_the_history(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    edit(page, server, mid, 0, {"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.2})
    open_model(page, server, mid)
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    page.locator("#history-list > li[data-revision='0'] .hist-compare").click()
    page.wait_for_selector("#btn-compare.active")
    changed = page.locator("#compare-changed li[data-node=n1]")
    changed.wait_for()
    assert "alpha" in changed.text_content()
    assert page.locator("#graph g.box.diff-changed[data-node-id='n1']").count() == 1


def test_restore_an_earlier_revision_from_its_view(page, server):
    model = tiny_cnn()
    summary = upload(page, server, model, "tiny_cnn.onnx")
    mid = summary["id"]
    edit(page, server, mid, 0, {"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.2})
    edit(page, server, mid, 1, {"op": "set_metadata", "key": "stage", "value": "late"})
    open_model(page, server, mid, "#at=0&path=&node=n1")
    page.locator("#past-restore").click()
    wait_revision(page, 3)
    assert page.locator("#past-revision").is_hidden()
    assert "Revision 0 restored as revision 3" in page.locator("#toast").text_content()
    # the node still selected, editable, with revision 0's value
    assert "at" not in hash_params(page) and hash_params(page)["node"] == "@/features/act1/LeakyRelu"
    panel = page.locator("#sidebar")
    assert panel.locator("[data-attr=alpha] input[name=value]").input_value() == "0.1"
    body = page.request.get(f"{server}/api/models/{mid}/download").body()
    assert body == model.SerializeToString()
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    assert "Restore revision 0" in panel.locator("#history-list > li[data-revision='3'] .hist-op").text_content()


def test_restore_from_the_history(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    edit(page, server, mid, 0, {"op": "set_metadata", "key": "stage", "value": "early"})
    edit(page, server, mid, 1, {"op": "set_metadata", "key": "stage", "value": "late"})
    open_model(page, server, mid)
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    panel = page.locator("#sidebar")
    assert panel.locator("#history-list > li[data-revision='2'] .hist-restore").count() == 0  # the current one
    panel.locator("#history-list > li[data-revision='1'] .hist-restore").click()
    wait_revision(page, 3)
    page.wait_for_selector("#history-list[data-ready=true]")
    assert panel.locator("#history-list > li[aria-current=true]").get_attribute("data-revision") == "3"
    meta = page.request.get(f"{server}/api/models/{mid}").json()["metadata_props"]
    assert {p["key"]: p["value"] for p in meta}["stage"] == "early"
