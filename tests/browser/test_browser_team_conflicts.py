"""Two people on one model (QA26): an edit refused because a teammate changed the model first
(a 409) says what they changed, never gives what was typed to another node, and leaves the
typed value marked unsaved beside theirs; a refused Undo says whose change it would undo."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from .browser_pages import downloaded, open_model, upload, wait_revision


def two_leaky_relus() -> onnx.ModelProto:
    """x -> LeakyRelu "lr1" (alpha 0.1) -> LeakyRelu "lr2" (alpha 0.2) -> Relu "out_relu" -> y."""
    nodes = [
        helper.make_node("LeakyRelu", ["x"], ["a"], name="lr1", alpha=0.1),
        helper.make_node("LeakyRelu", ["a"], ["b"], name="lr2", alpha=0.2),
        helper.make_node("Relu", ["b"], ["y"], name="out_relu"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.metadata_props.add(key="dataset", value="mnist-v2")
    return model


def alphas(page, server, mid: str) -> dict[str, float]:
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{mid}/download").body())
    return {n.name: helper.get_attribute_value(n.attribute[0]) for n in model.graph.node if n.attribute}


def elsewhere(page, server, mid: str, base: int, *ops) -> None:
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": base, "ops": list(ops)})
    assert r.status == 200, r.text()


def test_a_node_deleted_elsewhere_gives_what_was_typed_for_it_to_no_other(page, server, artifacts):
    mid = upload(page, server, two_leaky_relus(), "two_lrelu.onnx")["id"]
    open_model(page, server, mid, "#node=@lr1")
    elsewhere(page, server, mid, 0, {"op": "delete_node", "node": "@lr1", "reconnect": True})
    field = page.locator("#sidebar .attr[data-attr=alpha] input[name=value]")
    field.fill("0.5")
    field.press("Enter")
    toast = page.locator("#toast")
    page.wait_for_function(
        "() => (document.getElementById('toast')?.textContent || '').includes('no longer in the model')"
    )
    text = toast.text_content()
    assert 'node “lr1” (LeakyRelu) is no longer in the model — revision 1: deleted node "lr1"' in text, text
    assert "(“0.5”) was given to no other node" in text
    page.screenshot(path=str(artifacts / "team-node-deleted-elsewhere.png"))
    # the page is at revision 1, lr2's panel not opened with 0.5 in it, and nothing was saved
    assert page.locator("#model-revision").text_content() == "rev 1"
    assert page.locator("#sidebar[data-panel=node]").count() == 0
    assert alphas(page, server, mid) == {"lr2": pytest.approx(0.2)}
    revisions = page.request.get(f"{server}/api/models/{mid}/revisions").json()["revisions"]
    assert [r["revision"] for r in revisions] == [0, 1]


def test_the_same_field_changed_elsewhere_says_their_value_and_keeps_yours_unsaved(page, server, artifacts):
    mid = upload(page, server, two_leaky_relus(), "two_lrelu.onnx")["id"]
    open_model(page, server, mid, "#node=@lr2")
    elsewhere(page, server, mid, 0, {"op": "set_attribute", "node": "@lr2", "name": "alpha", "value": 0.25})
    row = page.locator("#sidebar .attr[data-attr=alpha]")
    row.locator("input[name=value]").fill("0.3")
    row.locator("input[name=value]").press("Enter")
    error = row.locator(".field-error")
    error.wait_for(state="visible")
    text = error.text_content()
    assert "changed elsewhere — revision 1: attribute 'alpha' of node \"lr2\" (LeakyRelu) set to 0.25" in text, text
    assert page.locator("#model-revision").text_content() == "rev 1"
    # yours kept and marked unsaved; Discard gives theirs
    assert row.locator("input[name=value]").input_value() == "0.3"
    assert "attr-changed" in row.get_attribute("class").split()
    page.screenshot(path=str(artifacts / "team-same-field-409.png"))
    page.locator("#sidebar button", has_text="Discard").click()
    assert row.locator("input[name=value]").input_value() == "0.25"

    # the metadata list says its refusal too (it said nothing: its error box is beside its rows)
    page.click("#btn-model")
    meta = page.locator("#metadata [data-meta-key=dataset] textarea[name=value]")
    meta.wait_for()
    elsewhere(page, server, mid, 1, {"op": "set_metadata", "key": "dataset", "value": "mnist-v3 (set by ci)"})
    meta.fill("mnist-bob")
    meta.press("Enter")
    box = page.locator("#metadata-error")
    box.wait_for(state="visible")
    assert "metadata 'dataset'" in box.text_content() and "mnist-v3 (set by ci)" in box.text_content(), (
        box.text_content()
    )


def test_a_refused_undo_says_whose_change_undo_would_now_undo(page, server):
    mid = upload(page, server, two_leaky_relus(), "two_lrelu.onnx")["id"]
    elsewhere(page, server, mid, 0, {"op": "rename_node", "node": "@lr1", "name": "first"})
    open_model(page, server, mid, "#node=@out_relu")
    elsewhere(page, server, mid, 1, {"op": "rename_node", "node": "@lr2", "name": "bobs_name"})
    page.click("#btn-undo")
    page.wait_for_function("() => (document.getElementById('toast')?.textContent || '').includes('Not undone')")
    text = page.locator("#toast").text_content()
    assert 'revision 2: node "lr2" (LeakyRelu) renamed to "bobs_name"' in text, text
    assert "Undo now would undo that change, not yours" in text
    wait_revision(page, 2)
    assert "bobs_name" in alphas(page, server, mid)  # nothing undone


def test_a_link_shared_before_a_rename_opens_the_renamed_node(page, server):
    """A teammate's link `#rev=0&node=@lr1`, opened after lr1 was renamed twice (once to a
    torch-style name holding "/"), opens that node: followed by what it is, not its old name."""
    mid = upload(page, server, two_leaky_relus(), "two_lrelu.onnx")["id"]
    elsewhere(page, server, mid, 0, {"op": "rename_node", "node": "@lr1", "name": "/block/first"})
    open_model(page, server, mid, "#rev=0&path=&node=@lr1")
    page.locator("#sidebar[data-panel=node]").wait_for()
    assert page.locator("#sidebar .panel-subtitle").text_content() == "/block/first"
    elsewhere(page, server, mid, 1, {"op": "rename_node", "node": "@%2Fblock%2Ffirst", "name": "act_1"})
    page.goto("about:blank")  # a fresh page: the link opened by someone else
    open_model(page, server, mid, "#rev=1&path=&node=@/block/first")
    page.locator("#sidebar[data-panel=node]").wait_for()
    assert page.locator("#sidebar .panel-subtitle").text_content() == "act_1"


def check_head(page) -> None:
    """The window comes back into view: the page asks the head at once (else every 15 s)."""
    page.evaluate("() => window.dispatchEvent(new Event('focus'))")


def test_an_open_page_learns_of_edits_renames_and_a_delete_made_elsewhere(page, server, artifacts):
    mid = upload(page, server, two_leaky_relus(), "two_lrelu.onnx")["id"]
    open_model(page, server, mid, "#node=@lr2")
    elsewhere(page, server, mid, 0, {"op": "set_metadata", "key": "build", "value": "nightly-1"})
    elsewhere(page, server, mid, 1, {"op": "set_attribute", "node": "@lr2", "name": "alpha", "value": 0.3})
    check_head(page)
    banner = page.locator("#behind-head")
    banner.wait_for()
    text = banner.text_content()
    assert "Changed elsewhere since this page's revision 0 — revisions 1–2: added metadata 'build'" in text, text
    assert page.locator("#model-revision").text_content() == "rev 0"  # nothing redrawn under the person
    page.screenshot(path=str(artifacts / "team-behind-banner.png"))
    page.click("#behind-show")
    wait_revision(page, 2)
    assert banner.is_hidden()
    assert page.locator("#sidebar .attr[data-attr=alpha] input[name=value]").input_value() == "0.3"

    # renamed on the models page by a teammate: the title follows
    assert page.request.patch(f"{server}/api/models/{mid}", data={"name": "relus-v2.onnx"}).ok
    check_head(page)
    page.wait_for_function("() => document.getElementById('model-name').textContent === 'relus-v2.onnx'")

    # deleted: said at once, and nothing offers to save or download any more
    assert page.request.delete(f"{server}/api/models/{mid}").status == 204
    check_head(page)
    page.locator("#model-gone").wait_for()
    assert page.locator("#btn-download").get_attribute("href") is None
    assert page.locator("#sidebar .attr[data-attr=alpha] input[name=value]").count() == 0  # read-only now


def test_a_refused_undo_after_an_undo_elsewhere_says_it_would_step_back_further(page, server):
    """QA36 #7: after a teammate's undo, the page's Undo said it "would undo that change, not
    yours" to someone who had made no change: it would step back further."""
    mid = upload(page, server, two_leaky_relus(), "two_lrelu.onnx")["id"]
    elsewhere(page, server, mid, 0, {"op": "rename_node", "node": "@lr1", "name": "first"})
    elsewhere(page, server, mid, 1, {"op": "rename_node", "node": "@lr2", "name": "second"})
    open_model(page, server, mid, "#node=@out_relu")
    assert page.request.post(f"{server}/api/models/{mid}/undo", data={"base": 2}).status == 200
    page.click("#btn-undo")
    page.wait_for_function("() => (document.getElementById('toast')?.textContent || '').includes('Not undone')")
    text = page.locator("#toast").text_content()
    assert "it was stepped back to revision 1 (an undo)" in text, text
    assert "Undo now would step back further, from revision 1: press it again only if you mean to." in text, text


def test_a_redo_elsewhere_says_who_pressed_it_and_whose_revision_it_brings_back(page, server):
    """QA36 #4: Bob's Redo showed on Alice's page as "revision 1 by alice", as if she had just
    changed the model on another page."""
    mid = upload(page, server, two_leaky_relus(), "two_lrelu.onnx")["id"]
    op = {"op": "rename_node", "node": "@lr1", "name": "first"}
    r = page.request.post(
        f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [op]}, headers={"X-Studio-Author": "alice"}
    )
    assert r.status == 200
    assert page.request.post(f"{server}/api/models/{mid}/undo", data={"base": 1}).status == 200
    open_model(page, server, mid, "#node=@out_relu")
    redo = page.request.post(f"{server}/api/models/{mid}/redo", data={"base": 0}, headers={"X-Studio-Author": "bob"})
    assert redo.status == 200
    check_head(page)
    banner = page.locator("#behind-head")
    banner.wait_for()
    assert "since this page's revision 0 — bob redid revision 1 (made by alice): node" in banner.text_content()
    # and History says it where a person looks afterwards (QA38 #10)
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")
    moved = page.locator("#history-list > li[data-revision='1'] .hist-moved")
    assert moved.text_content().startswith("Redone by bob, ")


def test_what_was_typed_and_not_saved_stays_through_another_fields_save(page, server):
    """QA36 #5: after a 409 the page said "what you typed is kept"; adding another metadata key
    then redrew the panel and dropped the typed value without a word."""
    model = two_leaky_relus()
    model.metadata_props.add(key="source", value="export")
    mid = upload(page, server, model, "two_lrelu.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-model")
    field = page.locator("#metadata [data-meta-key=source] textarea[name=value]")
    field.wait_for()
    field.fill("export-bob")  # typed, not saved
    add = page.locator("#metadata-add")
    add.locator("input[name=key]").fill("reviewed_by")
    add.locator("textarea[name=value]").fill("bob")
    add.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert page.locator("#metadata [data-meta-key=reviewed_by] textarea[name=value]").input_value() == "bob"
    assert field.input_value() == "export-bob"  # still typed, still unsaved
    metadata = {p.key: p.value for p in downloaded(page, server, mid).metadata_props}
    assert (metadata["source"], metadata["reviewed_by"]) == ("export", "bob")
