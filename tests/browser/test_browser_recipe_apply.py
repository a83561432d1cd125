"""History → Apply recipe…: a .recipe.json downloaded from one export of a model, picked on the
next export's page, replays there as a revision per batch; a refusal stays in the panel."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import numpy_helper

from .browser_models import tiny_cnn
from .browser_pages import downloaded, open_model, upload, wait_revision

RENAME = [{"op": "rename_node", "node": "@pool1", "name": "pool"}]
METADATA = [{"op": "set_metadata", "key": "exported_by", "value": "studio"}]


def recipe_file(page, server: str) -> dict:
    """Model A edited in two batches through the API; its recipe as Download recipe saves it."""
    mid = upload(page, server, tiny_cnn(), "first_export.onnx")["id"]
    for base, ops in enumerate([RENAME, METADATA]):
        r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": base, "ops": ops})
        assert r.ok, r.text()
    r = page.request.get(f"{server}/api/models/{mid}/recipe?from=0&to=2&download=1")
    assert r.ok, r.text()
    return {"name": "first_export.r0-r2.recipe.json", "mimeType": "application/json", "buffer": r.body()}


def next_export() -> onnx.ModelProto:
    """The same structure with other weights."""
    model = tiny_cnn()
    w = model.graph.initializer[0]
    w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w) * 2, w.name))
    return model


def apply_picked(page, recipe: dict) -> None:
    panel = page.locator("#sidebar")
    if panel.locator(".hist-apply-recipe").count() == 0:
        panel.locator(".hist-apply-toggle").click()
    panel.locator(".hist-apply-recipe input[type=file]").set_input_files(recipe)
    panel.locator(".hist-apply-recipe button[type=submit]").click()


def test_history_applies_a_recipe_file_batch_by_batch(page, server, artifacts):
    recipe = recipe_file(page, server)
    model = next_export()
    mid = upload(page, server, model, "next_export.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-history")
    page.wait_for_selector("#history-list[data-ready=true]")

    apply_picked(page, recipe)

    wait_revision(page, 2)  # the page goes on at the new head, editable
    page.wait_for_selector("#history-list[data-ready=true]")
    panel = page.locator("#sidebar")
    assert panel.locator("#history-list > li").evaluate_all("els => els.map(e => e.dataset.revision)") == [
        "2",
        "1",
        "0",
    ]
    assert panel.locator("#history-list > li[aria-current=true]").get_attribute("data-revision") == "2"
    # an earlier revision on the line is the usual case: no tag (QA28: "undo reaches it" everywhere)
    assert panel.locator("#history-list > li[data-revision='1'] .hist-tag").count() == 0
    assert "Rename node" in panel.locator("#history-list > li[data-revision='1'] .hist-op").text_content()
    assert "exported_by" in panel.locator("#history-list > li[data-revision='2'] .hist-op").text_content()
    toast = page.locator("#toast", has_text="Recipe applied")
    assert toast.text_content() == (
        "Recipe applied: 2 batches as revisions 1–2; History's “Undo the recipe” takes them all back at once,"
        " Undo one batch at a time."
    )
    # each revision says which recipe's batch it is (QA27)
    tags = panel.locator("#history-list .hist-recipe-tag").all_text_contents()
    assert tags == [f"Recipe first_export.r0-r2.recipe.json · batch {k} of 2" for k in (2, 1)]
    assert page.locator("#history-undo").is_enabled() and page.locator("#past-revision").is_hidden()
    page.screenshot(path=str(artifacts / "history-recipe-applied.png"))

    edited = downloaded(page, server, mid)
    assert {p.key: p.value for p in edited.metadata_props}["exported_by"] == "studio"
    assert "pool" in [n.name for n in edited.graph.node]
    assert np.array_equal(
        numpy_helper.to_array(edited.graph.initializer[0]), numpy_helper.to_array(model.graph.initializer[0])
    )

    # the same recipe again: its node pool1, now named pool, found by what it reads (its marks):
    # every batch already holds, nothing stored
    apply_picked(page, recipe)
    status = panel.locator(".hist-apply-status", has_text="Nothing changed")
    status.wait_for()
    assert "the model already holds every batch of the recipe" in status.text_content()
    assert page.locator("#model-revision").text_content() == "rev 2"

    # a recipe naming a node the model doesn't have: said in the panel, in one line, nothing stored
    hand_written = {"ops": [{"op": "rename_node", "node": "@pool1", "name": "pool_again"}]}
    apply_picked(
        page, {"name": "hand.recipe.json", "mimeType": "application/json", "buffer": json.dumps(hand_written).encode()}
    )
    error = panel.locator(".hist-apply-recipe .field-error")
    error.wait_for(state="visible")
    assert error.text_content() == "Not applied: batch 1: op #1 (rename_node): no node '@pool1' in this model"
    assert page.locator("#model-revision").text_content() == "rev 2"
    page.screenshot(path=str(artifacts / "history-recipe-refused.png"))

    # the whole recipe undone in one step, back to the revision before it
    whole = panel.locator("#history-undo-recipe")
    assert whole.text_content() == "Undo the recipe (2 revisions)"
    whole.click()
    wait_revision(page, 0)
    assert (
        "Undone the recipe first_export.r0-r2.recipe.json (2 revisions) — now at revision 0."
        in page.locator("#toast").text_content()
    )
    page.wait_for_selector("#history-list[data-ready=true]")
    assert panel.locator("#history-undo-recipe").count() == 0  # the head is no recipe's last batch now
