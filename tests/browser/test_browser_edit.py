"""Editing through the page: attributes, metadata, undo/redo, download."""

from __future__ import annotations

import onnx
import pytest
from onnx import helper

from .browser_models import custom_op_with_int64, hostile_strings, tiny_cnn
from .browser_pages import hash_params, open_model, upload, wait_ready, wait_revision


def attribute(model: onnx.ModelProto, node_name: str, attr: str):
    node = next(n for n in model.graph.node if n.name == node_name)
    return helper.get_attribute_value(next(a for a in node.attribute if a.name == attr))


def metadata(model: onnx.ModelProto) -> dict:
    return {p.key: p.value for p in model.metadata_props}


def test_edit_attribute_and_metadata_undo_redo_download(page, server, tmp_path):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")

    # click a node: its attributes are in the panel
    page.click("#graph [data-node-id=n1]")
    assert panel.locator(".panel-title").text_content() == "LeakyRelu"
    alpha = panel.locator("[data-attr=alpha] input[name=value]")
    assert alpha.input_value() == "0.1"  # float32 0.1, shown as its shortest decimal
    assert hash_params(page)["node"] == "@/features/act1/LeakyRelu"  # by name, as written
    page.click("#graph [data-node-id=n0]")
    assert panel.locator("[data-attr=kernel_shape] input[name=value]").input_value() == "[3, 3]"
    assert panel.locator("[data-attr=pads] input[name=value]").input_value() == "[1, 1, 1, 1]"

    # change LeakyRelu.alpha through the panel
    page.click("#graph [data-node-id=n1]")
    alpha.fill("0.25")
    panel.locator("[data-attr=alpha] button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator(".panel-title").text_content() == "LeakyRelu"  # still selected
    assert panel.locator("[data-attr=alpha] input[name=value]").input_value() == "0.25"
    assert hash_params(page)["node"] == "@/features/act1/LeakyRelu"  # by name, as written
    assert page.locator("#graph [data-node-id=n1].selected").count() == 1

    # a value the server refuses: its message shows next to the field, nothing changes
    alpha = panel.locator("[data-attr=alpha] input[name=value]")
    alpha.fill("not a number")
    panel.locator("[data-attr=alpha] button[type=submit]").click()
    error = panel.locator("[data-attr=alpha] .field-error")
    error.wait_for(state="visible")
    assert error.text_content().strip()
    assert page.locator("#model-revision").text_content() == "rev 1"

    # the model panel: change a metadata value, add a key
    page.click("#btn-model")
    meta = panel.locator("#metadata")
    assert meta.locator("[data-meta-key=author] textarea[name=value]").input_value() == "tests"
    meta.locator("[data-meta-key=author] textarea[name=value]").fill("studio")
    meta.locator("[data-meta-key=author] button[type=submit]").click()
    wait_revision(page, 2)
    panel.locator("#metadata-add input[name=key]").fill("stage")
    panel.locator("#metadata-add textarea[name=value]").fill("prod")
    panel.locator("#metadata-add button[type=submit]").click()
    wait_revision(page, 3)
    assert panel.locator("#metadata [data-meta-key=stage] textarea[name=value]").input_value() == "prod"
    assert panel.locator("#metadata [data-meta-key=author] textarea[name=value]").input_value() == "studio"

    # undo: the new key is gone; redo: it is back
    assert page.locator("#btn-redo").is_disabled()
    page.click("#btn-undo")
    wait_revision(page, 2)
    assert panel.locator("#metadata [data-meta-key=stage]").count() == 0
    assert page.locator("#btn-redo").is_enabled()
    page.click("#btn-redo")
    wait_revision(page, 3)
    assert panel.locator("#metadata [data-meta-key=stage] textarea[name=value]").input_value() == "prod"
    assert page.locator("#btn-redo").is_disabled()

    # a value of several lines keeps them (an <input> dropped its newlines); Enter saves
    stage = panel.locator("#metadata [data-meta-key=stage] textarea[name=value]")
    stage.fill('{\n  "env": "prod"\n}')
    stage.press("Enter")
    wait_revision(page, 4)
    assert (
        panel.locator("#metadata [data-meta-key=stage] textarea[name=value]").input_value() == '{\n  "env": "prod"\n}'
    )

    # download what the page shows
    with page.expect_download() as info:
        page.click("#btn-download")
    path = tmp_path / "downloaded.onnx"
    info.value.save_as(path)
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    assert attribute(model, "/features/act1/LeakyRelu", "alpha") == pytest.approx(0.25)
    assert metadata(model) == {"author": "studio", "license": "MIT", "stage": '{\n  "env": "prod"\n}'}


def test_delete_metadata_and_edit_ints_attribute(page, server, tmp_path):
    # MaxPool strides 1 makes p1 31×31: the edit gate (full check) would refuse it against p1's
    # declared 16×16, so this copy of the model leaves p1's value_info out
    summary = upload(page, server, tiny_cnn(omit_value_info=("p1",)), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n2")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "MaxPool"  # selected from the URL
    strides = panel.locator("[data-attr=strides] input[name=value]")
    strides.fill("1, 1")
    panel.locator("[data-attr=strides] button[type=submit]").click()
    wait_revision(page, 1)
    assert panel.locator("[data-attr=strides] input[name=value]").input_value() == "[1, 1]"

    page.keyboard.press("Escape")  # back to the model panel
    panel.locator("#metadata [data-meta-key=license] button", has_text="Delete").click()
    wait_revision(page, 2)
    assert panel.locator("#metadata [data-meta-key=license]").count() == 0

    response = page.request.get(f"{server}/api/models/{summary['id']}/download")
    model = onnx.load_from_string(response.body())
    assert attribute(model, "pool1", "strides") == [1, 1]
    assert metadata(model) == {"author": "tests"}


def test_a_long_metadata_value_is_seen_whole(page, server, artifacts):
    """QA27: a one-line value longer than the field (a JSON config) showed its first line only:
    the field is as tall as the value wraps to, a very long one up to 12 lines and then scrolls,
    and it grows as more is typed."""
    model = tiny_cnn()
    config = '{"labels": [' + ", ".join(f'"class_{k}"' for k in range(16)) + '], "mean": [0.485, 0.456, 0.406]}'
    props = {"author": "tests", "config": config, "labels": "x " * 2000, "whisper.model_type": "tiny"}
    onnx.helper.set_model_props(model, props)
    open_model(page, server, upload(page, server, model, "meta.onnx")["id"])
    panel = page.locator("#sidebar")
    sizes = (
        "s => { const f = document.querySelector(`#metadata [data-meta-key=${s}] textarea`);"
        " return [f.clientHeight, f.scrollHeight, parseFloat(getComputedStyle(f).lineHeight)]; }"
    )
    panel.locator("#metadata [data-meta-key=config] textarea").wait_for()
    page.wait_for_function(
        "() => { const f = document.querySelector('#metadata [data-meta-key=config] textarea');"
        " return f.scrollHeight <= f.clientHeight + 1; }"
    )
    client, scroll, line = page.evaluate(sizes, "config")
    assert client >= 4 * line, (client, scroll, line)  # seen whole: several wrapped lines
    client, scroll, line = page.evaluate(sizes, "author")
    assert client < 2 * line + 12  # a short value: one line
    client, scroll, line = page.evaluate(sizes, "labels")
    assert 11 * line <= client <= 13 * line + 12 and scroll > client  # capped, scrolls
    # a key longer than its column wraps, whole (QA45 #8: "whisper.mode…")
    key = panel.locator("#metadata [data-meta-key='whisper.model_type'] .meta-key")
    assert key.text_content() == "whisper.model_type"
    assert page.evaluate("k => k.scrollWidth <= k.clientWidth", key.element_handle())
    panel.locator("#metadata [data-meta-key=config]").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "metadata-long-value.png"))
    author = panel.locator("#metadata [data-meta-key=author] textarea")
    author.press_sequentially(" and a longer note about who made this model and when" * 3)
    client, scroll, line = page.evaluate(sizes, "author")
    assert client >= 2 * line and scroll <= client + 1  # grew as typed


def test_int64_attribute_values_stay_exact(page, server):
    summary = upload(page, server, custom_op_with_int64(), "custom.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")
    field = page.locator("#sidebar [data-attr=bounds] input[name=value]")
    assert field.input_value() == "[-9223372036854775808, 9223372036854775807]"
    field.fill("[-9223372036854775807, 9223372036854775806]")
    page.locator("#sidebar [data-attr=bounds] button[type=submit]").click()
    wait_revision(page, 1)
    assert field.input_value() == "[-9223372036854775807, 9223372036854775806]"
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert attribute(model, "win", "bounds") == [-9223372036854775807, 9223372036854775806]


def test_model_strings_are_shown_as_text(page, server):
    summary = upload(page, server, hostile_strings(), "hostile.onnx")
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    assert "<script>window.__pwned=2</script>" in panel.text_content()
    page.click("#graph [data-node-id=n0]")
    assert 'relu<img src=x onerror="window.__pwned=1">' in panel.text_content()
    page.click("#graph [data-io=input]")
    wait_ready(page)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0
    # no script but the page's own files; the only inline ones are its two JSON data blocks
    assert page.locator("script:not([src]):not([type='application/json'])").count() == 0
    data = page.locator("script[type='application/json']").evaluate_all("els => els.map(e => e.id)")
    assert sorted(data) == ["embedded-graph", "embedded-summary"]


def test_edit_on_a_stale_revision_says_so_and_retry_works(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    # someone else edits the model meanwhile
    other = page.request.post(
        f"{server}/api/models/{summary['id']}/edits",
        data={"base": 0, "ops": [{"op": "set_metadata", "key": "elsewhere", "value": "1"}]},
    )
    assert other.status == 200, other.text()

    panel = page.locator("#sidebar")
    panel.locator("[data-attr=alpha] input[name=value]").fill("0.3")
    panel.locator("[data-attr=alpha] button[type=submit]").click()
    error = panel.locator("[data-attr=alpha] .field-error")
    error.wait_for(state="visible")
    assert error.text_content().strip()
    assert page.locator("#model-revision").text_content() == "rev 1"  # the page caught up

    panel.locator("[data-attr=alpha] button[type=submit]").click()
    wait_revision(page, 2)
    model = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert attribute(model, "/features/act1/LeakyRelu", "alpha") == pytest.approx(0.3)
    assert metadata(model)["elsewhere"] == "1"


def test_enter_then_save_keeps_saying_what_was_saved(page, server):
    """Enter in an attribute field, then a click on Save: the second submit changes nothing, and
    the toast keeps "Saved as revision 1" instead of "Nothing changed"."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n1")
    field = page.locator("#sidebar [data-attr=alpha] input[name=value]")
    field.fill("0.3")
    field.press("Enter")
    wait_revision(page, 1)
    with page.expect_response(lambda r: r.url.endswith("/edits") and r.request.method == "POST") as second:
        page.locator("#sidebar [data-attr=alpha] button[type=submit]").click()
    assert second.value.json().get("unchanged") is True
    page.wait_for_timeout(100)  # the page has read that answer
    assert page.locator("#model-revision").text_content() == "rev 1"
    assert page.locator("#toast").text_content().startswith("Saved as revision 1")


def test_a_float_default_reads_as_the_operator_documents_it(page, server):
    """QA28: Add attribute → alpha on a LeakyRelu said "Default: 0.009999999776482582"."""
    model = tiny_cnn()
    del model.graph.node[1].attribute[:]  # the LeakyRelu at its default alpha
    open_model(page, server, upload(page, server, model, "leaky.onnx")["id"], "#path=&node=n1")
    panel = page.locator("#sidebar")
    panel.locator(".ed-add-attr-toggle").click()
    add = panel.locator("#add-attribute")
    add.locator("select[name=name]").select_option("alpha")
    assert "Default: 0.01." in add.locator(".ed-attr-desc").text_content()
