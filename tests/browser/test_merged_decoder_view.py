"""QA31: an Optimum merged decoder — a main graph of one If whose branches hold the whole model
and read every weight from the main graph — opens readable: the If in the window with its
branches' sizes, and each branch lists its weights in their readers' boxes."""

from __future__ import annotations

from merged_decoder import merged_decoder  # tests/ is on sys.path

from .browser_pages import open_model, upload, wait_ready


def test_the_first_view_shows_the_if_with_the_size_of_each_branch(page, server, artifacts):
    summary = upload(page, server, merged_decoder(), "decoder_model_merged.onnx")
    open_model(page, server, summary["id"])
    wait_ready(page)
    page.screenshot(path=str(artifacts / "merged-decoder-first-view.png"))
    area = page.locator("#graph").bounding_box()
    box = page.locator("#graph [data-node-id=n0]").bounding_box()
    assert box is not None
    assert area["x"] <= box["x"] and box["x"] + box["width"] <= area["x"] + area["width"], (area, box)
    assert area["y"] <= box["y"] and box["y"] + box["height"] <= area["y"] + area["height"], (area, box)
    assert "⤷ then_branch (44 ops) · else_branch (50 ops)" in page.locator("#graph [data-node-id=n0]").text_content()


def test_a_branch_lists_the_weights_it_reads_from_the_main_graph_in_their_readers(page, server, artifacts):
    summary = upload(page, server, merged_decoder(), "decoder_model_merged.onnx")
    page.goto(f"{server}/models/{summary['id']}#path=n0%2Fthen_branch")
    wait_ready(page)
    page.screenshot(path=str(artifacts / "merged-decoder-then-branch.png"))
    # drawn as boxes: only the values that aren't weights (the inputs the branch reads)
    outer = page.locator("#graph g.box[data-box^='outer:']").evaluate_all("els => els.map(e => e.dataset.name)")
    assert sorted(outer) == sorted(
        [
            "input_ids",
            "past_key_values.0.decoder.key",
            "past_key_values.0.decoder.value",
            "past_key_values.0.encoder.key",
            "past_key_values.0.encoder.value",
        ]
    ), outer
    # a weight is a line of the box reading it (a click there picks the box); picked from the
    # node's panel, the weight's panel shows its values and where it is held
    line = page.locator("#graph [data-init='model.decoder.layers.0.self_attn.k_proj.weight']")
    assert line.count() == 1
    line.click()
    page.wait_for_function("() => document.querySelector('#sidebar .panel-title')?.textContent === 'MatMul'")
    page.locator("#sidebar [data-tensor='model.decoder.layers.0.self_attn.k_proj.weight']").first.click()
    page.wait_for_function(
        "() => document.querySelector('#sidebar .panel-kicker')?.textContent === 'Initializer of an enclosing graph'"
    )
    assert "An initializer of the main graph" in page.locator("#sidebar").text_content()
    values = page.locator("#sidebar .tensor-preview[data-ref='model.decoder.layers.0.self_attn.k_proj.weight']")
    page.wait_for_function(
        "() => !document.querySelector('#sidebar .tensor-preview .tp-status')?.textContent.includes('Loading')"
    )
    page.screenshot(path=str(artifacts / "merged-decoder-outer-weight-panel.png"))
    assert values.locator(".field-error").count() == 0
    assert "32×32" in values.text_content() or "32 × 32" in values.text_content(), values.text_content()


def test_a_weight_read_only_in_the_branches_names_its_readers_there(page, server, artifacts):
    summary = upload(page, server, merged_decoder(), "decoder_model_merged.onnx")
    page.goto(f"{server}/models/{summary['id']}#path=&tensor=model.decoder.layers.0.encoder_attn.k_proj.weight")
    wait_ready(page)
    inside = page.locator("#sidebar .inner-readers a.inner-reader")
    inside.first.wait_for()
    page.screenshot(path=str(artifacts / "merged-decoder-weight-readers.png"))
    # the with-cache branch reads the encoder's keys from the cache: only else_branch projects them
    assert page.locator("#sidebar .inner-readers").text_content() == (
        "MatMul /model/decoder/layers.0/encoder_attn/k_proj/MatMul (else_branch)"
    )
    inside.first.click()
    page.wait_for_function("() => decodeURIComponent(location.hash).includes('else_branch')")
    page.wait_for_function("() => document.querySelector('#sidebar .panel-title')?.textContent === 'MatMul'")


def test_after_float16_the_first_view_still_shows_the_if(page, server, artifacts):
    """QA32 N3: converted to float16 with its inputs kept float32, each input feeds a Cast, and
    the first view opened on the Cast of the first input, the If 975 px out of the window."""
    summary = upload(page, server, merged_decoder(), "decoder_model_merged.onnx")
    r = page.request.post(
        f"{server}/api/models/{summary['id']}/edits",
        data={"base": 0, "ops": [{"op": "convert_float16", "keep_io_types": True}]},
    )
    assert r.ok, r.text()
    open_model(page, server, summary["id"])
    wait_ready(page)
    page.screenshot(path=str(artifacts / "merged-decoder-float16-first-view.png"))
    area = page.locator("#graph").bounding_box()
    box = page.locator("#graph [data-node-id]").filter(has_text="optimum::if").bounding_box()
    assert box is not None
    assert area["x"] <= box["x"] and box["x"] + box["width"] <= area["x"] + area["width"], (area, box)


def test_an_if_whose_branch_sizes_would_be_cut_leaves_out_the_word(page, server):
    """QA32: a Whisper decoder's "⤷ then_branch (163 ops) · else_branch (171 ops)" was cut to
    "else_branch (171 …": past the box's width the counts stand alone."""
    from onnx import TensorProto as T
    from onnx import helper as h

    def chain(n: int, out: str) -> object:
        nodes = [
            h.make_node("Relu", ["x" if k == 0 else f"r{k - 1}"], [f"r{k}" if k < n - 1 else out]) for k in range(n)
        ]
        return h.make_graph(nodes, out, [], [h.make_tensor_value_info(out, T.FLOAT, [2])])

    node = h.make_node("If", ["c"], ["y"], name="optimum::if", then_branch=chain(163, "t"), else_branch=chain(171, "e"))
    graph = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2])],
    )
    summary = upload(page, server, h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]), "sized.onnx")
    open_model(page, server, summary["id"])
    wait_ready(page)
    assert "⤷ then_branch (163) · else_branch (171)" in page.locator("#graph [data-node-id=n0]").text_content()
