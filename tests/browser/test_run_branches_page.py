"""Run on the page with an Optimum merged decoder (QA31 #8, #9, #13): a test data set picked in
Run sizes the dims from its tensors (greyed, as a .npy's do) so the run goes through; the run
says which branch of the If ran; and each output saves as an .npy equal to it."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from merged_decoder import decoder_feeds, merged_decoder
from onnx import numpy_helper

from .browser_pages import open_model, upload, wait_revision


def test_a_test_data_set_sizes_the_run_which_says_its_branch_and_saves_its_outputs(page, server, tmp_path, artifacts):
    model = merged_decoder()
    feeds = decoder_feeds(True, seq=3, past=4, encoder=6)  # no size is the fields' default 1
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = [o.name for o in model.graph.output]
    expected = dict(zip(outputs, session.run(outputs, feeds), strict=True))
    folder = tmp_path / "test_data_set_0"
    folder.mkdir()
    files = []
    for kind, values in (("input", feeds), ("output", expected)):
        for k, (name, value) in enumerate(values.items()):
            path = folder / f"{kind}_{k}.pb"
            path.write_bytes(numpy_helper.from_array(value, name).SerializeToString())
            files.append(str(path))

    open_model(page, server, upload(page, server, model, "decoder_model_merged.onnx")["id"])
    page.click("#btn-run")
    page.set_input_files("#run-dataset", files)
    # the sizes come from the set's tensors, greyed as a .npy's are
    page.wait_for_function("() => document.querySelector('.run-dim[aria-label=encoder_sequence_length]').value === '6'")
    for dim, size in (
        ("encoder_sequence_length", "6"),
        ("decoder_sequence_length", "3"),
        ("past_decoder_sequence_length", "4"),
    ):
        field = page.locator(f".run-dim[aria-label={dim}]")
        assert field.input_value() == size and field.is_disabled(), dim
        assert field.get_attribute("title") == "Taken from the values given"
    assert "encoder_hidden_states ⟨1×6×32⟩" in page.locator("#run-dataset-note").text_content()
    page.locator(".run-dims").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-dataset-dims.png"))
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-failure").count() == 0
    assert page.locator("#run-expected-verdict").text_content().startswith("The test data's outputs: every output")
    # which branch ran, said once
    assert page.locator("#run-branches").text_content() == "optimum::if ran then_branch (use_cache_branch = true)"
    page.locator("#run-branches").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-branches.png"))

    # each output saves as an .npy numpy loads, equal to it
    for name in ("logits", "present.0.decoder.key"):
        section = page.locator("#run-results section").filter(has=page.locator(".h3-name", has_text=name)).first
        section.locator(".run-save-npy").scroll_into_view_if_needed()
        if name == "logits":
            page.screenshot(path=str(artifacts / "run-save-npy.png"))
        with page.expect_download() as caught:
            section.locator(".run-save-npy").click()
        download = caught.value
        assert download.suggested_filename == f"{name}.npy"
        saved = np.load(download.path(), allow_pickle=False)
        assert saved.dtype == np.float32 and np.array_equal(saved, expected[name]), name


def test_one_npz_sizes_the_run_as_its_arrays_do(page, server, tmp_path, artifacts):
    """QA45 #1: every input of a merged decoder in one .npz — the dims' fields kept 1 and the run
    was refused ("its dim encoder_sequence_length is 6, but dims gives 1"); its arrays' sizes
    fill them (greyed, as a .npy's do) as soon as it is picked."""
    model = merged_decoder()
    feeds = decoder_feeds(True, seq=3, past=4, encoder=6)
    np.savez(tmp_path / "step.npz", **feeds)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    logits = session.run(["logits"], feeds)[0]

    open_model(page, server, upload(page, server, model, "decoder_model_merged.onnx")["id"])
    page.click("#btn-run")
    page.set_input_files("#run-npz", str(tmp_path / "step.npz"))
    page.wait_for_function("() => document.querySelector('.run-dim[aria-label=encoder_sequence_length]').value === '6'")
    for dim, size in (("decoder_sequence_length", "3"), ("past_decoder_sequence_length", "4")):
        field = page.locator(f".run-dim[aria-label={dim}]")
        assert field.input_value() == size and field.is_disabled(), dim
    assert "step.npz feeds" in page.locator("#run-npz-note").text_content()
    assert "encoder_hidden_states ⟨1×6×32⟩" in page.locator("#run-npz-note").text_content()
    page.locator("#run-npz-note").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-npz-dims.png"))
    with page.expect_response(lambda r: r.url.endswith("/run") and r.request.method == "POST") as answer:
        page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-failure").count() == 0
    got = answer.value.json()["outputs"]["logits"]
    assert got["shape"] == list(logits.shape)
    np.testing.assert_allclose(np.array(got["values"], np.float32).reshape(logits.shape), logits, atol=1e-5)


def test_each_node_of_the_branch_that_ran_is_measured_and_its_if_outlined(page, server, artifacts):
    """QA45 #3: a merged decoder's int8 revision compared node by node with its float one listed
    one node, the If: the branch that ran is measured node by node, the If is outlined in the
    main graph, and a row's link opens the branch on that node."""
    mid = upload(page, server, merged_decoder(), "decoder_model_merged.onnx")["id"]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [{"op": "quantize_dynamic"}]})
    assert r.status == 200, r.text()
    open_model(page, server, mid)
    wait_revision(page, 1)
    page.click("#btn-run")
    page.locator(".run-input[data-name=use_cache_branch] .run-values").fill("[true]")
    page.locator("#run-compare-to option[value='0']").wait_for(state="attached")
    page.select_option("#run-compare-to", "0")
    if not page.locator("#run-locate").is_checked():
        page.locator("#run-locate").check()
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-failure").count() == 0
    note = page.locator("#run-errors p").first.text_content()
    count = int(note.split(" node")[0])
    assert count >= 10, note
    rows = page.locator("#run-errors tbody tr")
    assert rows.count() >= 2
    assert all("/then_branch/" in rows.nth(i).get_attribute("data-node") for i in range(rows.count()))
    # a node the quantization rewrote (a MatMul, its output now written by a Mul) can be left in
    # float; a Reshape or Transpose it left as it was has no box (QA45 re-test)
    page.locator("#run-requantize:not([hidden])").wait_for()
    boxes = [rows.nth(i).locator("input[type=checkbox]").count() for i in range(rows.count())]
    rewritten = [rows.nth(i).locator(".run-of").count() for i in range(rows.count())]
    assert boxes == rewritten and 0 < sum(boxes) < len(boxes), (boxes, rewritten)
    # the If that holds the first node to part is outlined in the main graph's drawing
    page.locator("#graph g.box.diverges").wait_for()
    assert page.locator("#graph g.box.diverges").get_attribute("data-node-id") == "n1"
    page.locator("#run-errors").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-errors-in-branch.png"))
    first = rows.nth(0)
    target = first.get_attribute("data-node")
    first.locator("a.cost-node").click()
    page.wait_for_function(
        "(id) => document.querySelector(`#graph g.box.selected[data-node-id='${id}']`) !== null", arg=target
    )
