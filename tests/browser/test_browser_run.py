"""Run on the page (issue 15): run the model with random inputs, an intermediate tensor as an
extra output, and compare with an earlier revision on the same inputs."""

from __future__ import annotations

import io
import re

import numpy as np
import onnx
from onnx import numpy_helper
from testkit import ONNX_DATA

from .browser_models import loop_model, three_convs, tiny_cnn, two_inputs, zipmap_model
from .browser_pages import open_model, upload, wait_revision


def test_a_long_revision_label_keeps_the_run_panel_in_its_width(page, server):
    """A revision described by a long node name: the "Compare with" picker takes the panel's
    width, never more (it once made the panel 752 px wide in a 419 px sidebar)."""
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    long_name = "/features/act1/LeakyRelu_renamed_" + "very_long_" * 8
    for base, op in enumerate(
        [
            {"op": "rename_node", "node": "n1", "name": long_name},
            {"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.5},
        ]
    ):
        assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": base, "ops": [op]}).status == 200
    open_model(page, server, mid)
    wait_revision(page, 2)
    page.click("#btn-run")
    page.locator("#run-compare-to option[value='1']").wait_for(state="attached")
    assert page.locator("#run-compare-to option[value='1']").text_content().startswith("Revision 1: Rename node")
    widths = page.evaluate(
        "() => { const s = document.querySelector('#sidebar'); const p = document.querySelector('#run-compare-to');"
        " return [s.scrollWidth, s.clientWidth, p.getBoundingClientRect().right, s.getBoundingClientRect().right]; }"
    )
    assert widths[0] <= widths[1] and widths[2] <= widths[3], widths


def test_run_with_random_inputs_and_compare(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    edit = [{"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.5}]
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": edit}).status == 200
    open_model(page, server, mid)
    wait_revision(page, 1)
    page.click("#btn-run")
    assert page.locator("#sidebar[data-panel=run]").count() == 1
    assert page.locator(".run-input[data-name=input]").count() == 1
    page.fill("#run-extra", "p1")
    page.locator("#run-compare-to option[value='0']").wait_for(state="attached")
    assert page.locator("#run-locate").is_disabled()  # measuring each node is part of a comparison
    assert page.locator("#run-compare-to option[value='0']").text_content() == "Revision 0: as opened"
    page.select_option("#run-compare-to", "0")
    assert page.locator("#run-locate").is_enabled() and page.locator("#run-locate").is_checked()
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert "Ran revision 1" in page.locator("#run-summary").text_content()
    probs = page.locator("#run-compare tr[data-output=probs]")
    # LeakyRelu's alpha changed what comes out: p1 by far, probs (a saturated softmax) hardly
    assert probs.locator("td").nth(1).text_content() in ("close", "differs")
    assert page.locator("#run-compare tr[data-output=p1] td").nth(1).text_content() == "differs"
    # the input was made up: said, with what real values would measure (QA23 F7)
    assert page.locator("#run-made-up").text_content().startswith("input was made up: normal values around 0.")
    # the softmax's largest values, its top class first; none for the feature map p1
    assert page.locator("#run-results .run-top").count() == 1
    assert page.locator("#run-results .run-top .run-top-item").count() == 5
    sections = page.locator("#run-results .panel-section h3, #run-results h3").all_text_contents()
    assert any("Output p1" in s for s in sections) and any("Output probs" in s for s in sections)
    # the first node whose output differs: the LeakyRelu whose alpha changed, outlined
    assert "/features/act1/LeakyRelu" in page.locator("#run-diverges").text_content()
    page.click("#expand-all")
    page.locator("#graph g.box.diverges").wait_for()
    assert page.locator("#graph g.box.diverges").get_attribute("data-node-id") == "n1"
    # each node's error against revision 0: the LeakyRelu and what follows it off (but the
    # saturated softmax), the Conv before it not
    errors = page.locator("#run-errors")
    assert "8 nodes compared on the same inputs, 5 off beyond rounding" in errors.text_content()
    rows = errors.locator("tbody tr")
    assert sorted(rows.nth(i).get_attribute("data-node") for i in range(rows.count())) == ["n1", "n2", "n3", "n5", "n6"]
    page.click("#run-error-heat")
    legend = page.locator("#heat-legend:not([hidden])")
    legend.wait_for()
    assert "Error per box" in legend.text_content() and "identical" in legend.text_content()
    page.wait_for_function("document.querySelector('#graph g.box[data-node-id=n0]')?.classList.contains('heat-zero')")
    page.locator("#run-results .tensor-preview .tp-values, #run-results .tensor-preview table").first.wait_for()
    # float32 outputs read as float32s (shortest decimal), not as their float64 digits
    cells = page.locator("#run-results .tensor-preview .tp-cell").all_text_contents()
    assert cells and all(len(re.sub(r"[-.]|e.*$", "", c).lstrip("0")) <= 9 for c in cells), cells
    page.screenshot(path=str(artifacts / "run-compare.png"))
    # the outline goes with the results: another panel opened, it is gone
    page.click("#btn-model")
    page.locator("#graph g.box.diverges").wait_for(state="detached")


def test_time_each_node_and_colour_the_drawing_by_it(page, server, artifacts):
    """ "Time each node": the slowest nodes listed with their share, linked; the drawing coloured
    by time with a legend; an edit (a revision the times were not measured on) turns it off."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.check("#run-profile")
    page.click("#run-go")
    times = page.locator("#run-times")
    times.wait_for()
    assert "7 nodes timed" in times.text_content()  # 8 nodes, the Constant an initializer to onnxruntime
    rows = page.locator("#run-times > table tbody tr")
    assert rows.count() == 7
    shares = [float(t.split()[0]) for t in page.locator("#run-times > table tbody td:nth-child(4)").all_text_contents()]
    assert shares == sorted(shares, reverse=True) and 99 <= sum(shares) <= 101
    # by operator: its seven ops (one node each here), the six biggest named, the slowest first
    named = page.locator("#run-by-op code").all_text_contents()
    assert len(named) == 6 and named[0] == rows.first.locator("td:nth-child(2)").text_content()
    assert page.locator("#run-by-op").text_content().endswith("· 1 more")
    # and as onnxruntime runs it by default: the LeakyRelu fused into the Conv, its run's time
    optimized = page.locator("#run-optimized")
    assert "As onnxruntime runs it by default" in optimized.text_content()
    assert " with optimisations off" in optimized.text_content()
    fused = page.locator("#run-by-op-optimized code").all_text_contents()
    assert "Conv" in fused and "LeakyRelu" not in fused, fused
    # that run on the model's nodes: the Conv ran with its LeakyRelu fused into it
    deployed = page.locator("#run-deployed")
    assert "1 fused into one of them" in deployed.text_content()
    conv = deployed.locator("tbody tr[data-node=n0]")
    assert "+1 fused" in conv.locator("td").nth(1).text_content()
    page.click("#run-deployed-heat")
    page.locator("#heat-legend:not([hidden])").wait_for()
    assert "no kernel of its own" in page.locator("#heat-legend").text_content()
    page.click("#expand-all")
    page.wait_for_function("document.querySelector('#graph g.box[data-node-id=n1]')?.classList.contains('heat-zero')")
    page.click("#run-time-heat")
    legend = page.locator("#heat-legend:not([hidden])")
    legend.wait_for()
    assert "Time per box" in legend.text_content()
    slowest = rows.first.get_attribute("data-node")
    page.wait_for_function(
        "(id) => document.querySelector(`#graph g.box[data-node-id=\"${id}\"]`)?.classList.contains('heat-5')",
        arg=slowest,
    )
    page.screenshot(path=str(artifacts / "run-node-times.png"))
    # the node's own panel says its time and share
    rows.first.locator("a").click()
    page.wait_for_selector("#sidebar[data-panel=node]")
    page.wait_for_function("() => / of the run/.test(document.querySelector('#node-costs')?.textContent || '')")
    assert f"{shares[0]:.1f} % of the run" in page.locator("#node-costs").text_content()
    # the times were this revision's: an edit makes another, and the colours go
    page.click('#graph g.box[data-node-id="n1"]')
    page.wait_for_selector("#sidebar[data-panel=node]")
    page.wait_for_function("() => /As deployed/.test(document.querySelector('#node-costs')?.textContent || '')")
    assert "As deployedfused into /features/conv1/Conv" in page.locator("#node-costs").text_content()  # the LeakyRelu
    page.fill("#sidebar .attr[data-attr=alpha] input", "0.3")
    page.press("#sidebar .attr[data-attr=alpha] input", "Enter")
    wait_revision(page, 1)
    page.wait_for_function("() => document.querySelector('#heat-legend').hidden")
    assert page.locator("#graph .box.heat-5").count() == 0


def quantized_and_compared(page, server, model=None, samples=None, name: str = "tiny_cnn.onnx") -> str:
    """A model (tiny_cnn) uploaded and quantized statically (revision 1, on `samples` of its
    first input: 4 random ones), its page's Run panel set to compare with revision 0 and run;
    the model's id."""
    model = tiny_cnn() if model is None else model
    if samples is None:
        samples = np.random.default_rng(0).standard_normal((4, 3, 32, 32)).astype(np.float32)
    mid = upload(page, server, model, name)["id"]
    buf = io.BytesIO()
    np.save(buf, samples)
    blob = page.request.post(
        f"{server}/api/blobs",
        multipart={"file": {"name": "c.npy", "mimeType": "application/octet-stream", "buffer": buf.getvalue()}},
    ).json()["blob"]
    op = {"op": "quantize_static", "calibration": {model.graph.input[0].name: {"npy": blob}}}
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [op]}).status == 200
    run_against_revision_0(page, server, mid)
    return mid


def run_against_revision_0(page, server, mid: str) -> None:
    """Open the model at its revision 1, and in its Run panel run it compared with revision 0."""
    open_model(page, server, mid)
    wait_revision(page, 1)
    page.click("#btn-run")
    page.locator("#run-compare-to option[value='0']").wait_for(state="attached")
    page.select_option("#run-compare-to", "0")
    page.click("#run-go")


def requantized(page, server, mid: str) -> dict:
    """ "Quantize revision 0 again" clicked: revision 2, as the history has it."""
    page.click("#run-requantize-go")
    wait_revision(page, 2)
    revisions = page.request.get(f"{server}/api/models/{mid}/revisions").json()
    return next(r for r in revisions["revisions"] if r["revision"] == 2)


def test_quantize_again_with_the_nodes_that_lose_most_left_in_float(page, server, artifacts):
    """A static quantization compared with its float base: each node's error, the worst
    listed; ticking one and "Quantize revision 0 again" undoes the quantization and makes it
    again with that node in float, then the Run panel comes back set to compare with revision 0."""
    mid = quantized_and_compared(page, server)
    page.locator("#run-results[data-ready=true]").wait_for()
    page.locator("#run-requantize:not([hidden])").wait_for()
    rows = page.locator("#run-errors tbody tr")
    assert rows.count() >= 3
    worst = rows.first.locator("td a").text_content()
    page.locator("#run-requantize").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-errors-requantize.png"))
    page.click("#run-requantize-go")  # nothing ticked: says so
    assert "Tick the nodes" in page.locator("#run-requantize .field-error").text_content()
    rows.first.locator("input[type=checkbox]").check()
    made = requantized(page, server, mid)
    assert made["parent"] == 0 and made["ops"][0]["nodes_to_exclude"] == [worst]
    page.locator("#sidebar[data-panel=run]").wait_for()
    # the revisions to compare with are listed once they load (CI once read the select before)
    page.wait_for_function("() => document.querySelector('#run-compare-to')?.value === '0'")


def test_the_error_table_keeps_in_the_panel_with_long_names(page, server, artifacts):
    """QA27: a node name without separators (a TF export's fused scope) made the per-node error
    table wider than the side panel: it wraps inside the panel's width."""
    model = tiny_cnn()
    model.graph.node[0].name = "StatefulPartitionedCallFusedConv2DWithBiasAndActivation" * 2
    quantized_and_compared(page, server, model=model)
    page.locator("#run-errors tbody tr").first.wait_for()
    page.locator("#run-errors").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-errors-long-names.png"))
    widths = page.evaluate(
        "() => { const s = document.querySelector('#sidebar'); const t = document.querySelector('#run-errors table');"
        " return [s.scrollWidth, s.clientWidth, t.getBoundingClientRect().right, s.getBoundingClientRect().right]; }"
    )
    wide = page.evaluate(
        "() => { const s = document.querySelector('#sidebar').getBoundingClientRect().right;"
        " return [...document.querySelectorAll('#sidebar *')].filter(e => e.getBoundingClientRect().right > s + 1)"
        ".slice(0, 8).map(e => e.tagName + '.' + e.className + '#' + e.id + ' ' + e.parentElement.tagName + '.' + e.parentElement.className + ' ' + e.textContent.slice(0, 60) + ' ' + Math.round(e.getBoundingClientRect().right)); }"
    )
    assert widths[0] <= widths[1] and widths[2] <= widths[3], (widths, wide)


def test_what_each_tensor_costs_alone_picks_the_nodes_to_leave_in_float(page, server, artifacts):
    """A QDQ quantization compared with its float base: "Measure what each quantized tensor costs
    alone" (on its calibration samples) lists the quantization's tensors, the costliest first, each with the nodes to leave
    out to turn it float and a checkbox for them (ticking it ticks those nodes' rows in the error
    table too), the 5 costliest at once; the drawing is coloured by that cost; quantizing again
    leaves the ticked nodes out."""
    mid = quantized_and_compared(page, server)
    page.locator("#run-requantize:not([hidden])").wait_for()
    page.check("#run-sensitivity-samples")  # on the 4 samples it was calibrated on
    page.click("#run-sensitivity-go")
    page.locator("#run-sensitivity[data-ready=true]").wait_for()
    assert "runs on 4 samples" in page.locator("#run-sensitivity").text_content()
    assert "null" not in page.locator("#run-sensitivity").text_content()  # no target asked: no plan shown
    rows = page.locator("#run-sensitivity tbody tr")
    assert rows.count() >= 4 and {"weights", "activation"} <= {
        rows.nth(k).get_attribute("data-kind") for k in range(rows.count())
    }
    costs = [
        float(c.rstrip(" %")) for c in page.locator("#run-sensitivity tbody td.num:nth-child(3)").all_text_contents()
    ]
    assert costs == sorted(costs, reverse=True) and costs[0] > 0
    boxes = page.locator("#run-sensitivity tbody input[type=checkbox]")
    boxes.first.check()
    owners = set(rows.first.locator(".run-owners a").all_text_contents())
    assert owners
    for name in owners:  # the same nodes' rows in the error table follow
        twin = page.locator(f"#run-errors tbody input[aria-label='Leave {name} in float']")
        if twin.count():
            assert twin.is_checked()
    page.click("#run-sensitivity-tick")  # the 5 costliest ticked at once
    assert all(boxes.nth(k).is_checked() for k in range(min(5, boxes.count())))
    for k in range(min(5, rows.count())):
        owners |= set(rows.nth(k).locator(".run-owners a").all_text_contents())
    page.click("#run-sensitivity-heat")
    legend = page.locator("#heat-legend")
    legend.wait_for()
    assert "Cost quantized alone" in legend.text_content()
    page.locator("#run-sensitivity").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-sensitivity.png"))
    made = requantized(page, server, mid)
    assert made["parent"] == 0 and set(made["ops"][0]["nodes_to_exclude"]) == owners


def test_a_target_error_finds_the_nodes_to_leave_out(page, server, artifacts):
    """ "then find the fewest nodes to leave out for an error within 5 %": the sweep says which
    (conv2, whose int8 weights lose all but an outlier) and how far that brings the error, "Tick
    it" ticks them, and quantizing again leaves exactly them out."""
    samples = np.random.default_rng(1).standard_normal((8, 1, 4, 8, 8)).astype(np.float32)
    mid = quantized_and_compared(page, server, three_convs(), samples, "three_convs.onnx")
    page.locator("#run-requantize:not([hidden])").wait_for()
    page.fill("#run-sensitivity-target", "0")
    page.click("#run-sensitivity-go")  # a target of 0 % is refused before anything runs
    assert "above 0" in page.locator("#run-sensitivity .field-error").text_content()
    page.fill("#run-sensitivity-target", "5")
    page.click("#run-sensitivity-go")
    page.locator("#run-sensitivity[data-ready=true]").wait_for()
    plan = page.locator("#run-sensitivity-plan")
    assert plan.get_attribute("data-reached") == "true"
    text = plan.text_content()
    assert re.search(r"Leaving out 1 node — conv2 — brings the error within 5(\.0+)? %: \d+(\.\d+)? % → \d", text), text
    page.click("#run-sensitivity-plan-tick")
    assert page.locator("#run-sensitivity tbody tr").first.locator("input[type=checkbox]").is_checked()
    page.locator("#run-sensitivity-plan").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-sensitivity-plan.png"))
    made = requantized(page, server, mid)
    assert made["parent"] == 0 and made["ops"][0]["nodes_to_exclude"] == ["conv2"]


def test_every_input_from_one_npz_for_a_run_and_for_calibration(page, server, tmp_path):
    """numpy.savez(x=…, y=…): the Run panel feeds both inputs from it; the static quantization
    form takes its samples from one too (3 samples each, along the first axis)."""
    summary = upload(page, server, two_inputs(), "two.onnx")
    open_model(page, server, summary["id"])
    x, y = np.array([[1, 2, 3, 4]], np.float32), np.array([[0.5, 0, -1, 2]], np.float32)
    np.savez(tmp_path / "inputs.npz", x=x, y=y)
    page.click("#btn-run")
    page.set_input_files("#run-npz", str(tmp_path / "inputs.npz"))
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    cells = page.locator("#run-results .tensor-preview .tp-cell").all_text_contents()
    want = (x + y) @ (np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    assert [round(float(c), 4) for c in cells[:3]] == [round(float(v), 4) for v in want.ravel()], cells
    # the quantization form: no .npy per input, the .npz for both
    np.savez(
        tmp_path / "samples.npz",
        x=np.random.default_rng(0).standard_normal((3, 1, 4)).astype(np.float32),
        y=np.random.default_rng(1).standard_normal((3, 1, 4)).astype(np.float32),
    )
    page.click("#btn-model")
    panel = page.locator("#sidebar")
    panel.locator("#model-tools [data-action=int8]").click()
    form = panel.locator("#quantize-dynamic")
    form.locator("select[name=mode]").select_option("static")
    form.locator(".q-npz").set_input_files(str(tmp_path / "samples.npz"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    assert "calibrated on 3 sample(s)" in panel.locator("#model-tools .callout").text_content()


def test_outputs_saved_as_npy_are_what_the_run_is_held_to(page, server, tmp_path):
    """QA19 F5: a framework's outputs are .npy files (np.save(out.numpy())), not a test data set's
    .pb: one named after its output (torch_out.<output>.npy too) checks the run; one off says so."""
    folder = ONNX_DATA / "pytorch-converted" / "test_Conv2d"
    model = onnx.load(folder / "model.onnx")
    x = numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0" / "input_0.pb")))
    y = numpy_helper.to_array(onnx.load_tensor(str(folder / "test_data_set_0" / "output_0.pb")))
    output = model.graph.output[0].name
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / f"torch_out.{output}.npy", y)
    np.save(tmp_path / "off.npy", y + 1)
    summary = upload(page, server, model, "conv.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.locator(".run-npy").first.set_input_files(str(tmp_path / "x.npy"))
    page.set_input_files("#run-expected-files", str(tmp_path / f"torch_out.{output}.npy"))
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-expected-verdict").text_content().startswith("The outputs given: every output")
    page.set_input_files("#run-expected-files", str(tmp_path / "off.npy"))  # one output: any name is its
    page.click("#run-go")
    page.locator("#run-results[data-ready=true] #run-expected-verdict").wait_for()
    assert "1 of 1 output(s) differ from the expected values" in page.locator("#run-expected-verdict").text_content()


def test_a_test_data_set_feeds_the_run_and_checks_its_outputs(page, server, artifacts):
    """The input_0.pb and output_0.pb of an ONNX test data set picked together: the input feeds
    the run, the output is what the model's output should be — said close, in its own table."""
    folder = ONNX_DATA / "pytorch-converted" / "test_Conv2d"
    summary = upload(page, server, onnx.load(folder / "model.onnx"), "conv.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    files = [str(folder / "test_data_set_0" / name) for name in ("input_0.pb", "output_0.pb")]
    page.set_input_files("#run-dataset", files)
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-expected-verdict").text_content().startswith("The test data's outputs: every output")
    rows = page.locator("#run-expected tbody tr")
    assert rows.count() == 1 and rows.first.locator("td").nth(1).text_content() in ("identical", "close")
    page.locator("#run-expected").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-test-data-set.png"))


def test_nodes_inside_a_loop_are_timed_and_open_in_their_subgraph(page, server, artifacts):
    """ "Time each node" on a Loop: its body's nodes listed under "Inside subgraphs" with their
    share of the Loop's time; a link opens the body with the node selected, its time in its panel."""
    summary = upload(page, server, loop_model(), "loop.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.check("#run-profile")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    rows = page.locator("#run-subgraph-times tbody tr")
    assert rows.count() == 2
    double = page.locator("#run-subgraph-times tbody tr[data-node='n0/body/n1']")
    assert double.locator("td").nth(1).text_content() == "loop" and double.locator("td").nth(3).text_content().endswith(
        "%"
    )
    page.locator("#run-subgraph-times").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-subgraph-times.png"))
    double.locator("td a").first.click()
    page.wait_for_selector("#sidebar[data-panel=node]")
    page.wait_for_function("() => / of the run/.test(document.querySelector('#node-costs')?.textContent || '')")
    assert "double" in page.locator("#sidebar").text_content()


def test_a_model_without_inputs_runs_from_the_page(page, server):
    """A graph of constants has nothing to feed, and runs all the same (the panel had no Run)."""
    from .browser_models import official_node_models

    summary = upload(page, server, official_node_models()["test_constant"], "constant.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    assert "no inputs to feed" in page.locator(".run-no-inputs").text_content()
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert "Ran revision 0" in page.locator("#run-summary").text_content()
    assert any("Output values" in s for s in page.locator("#run-results h3").all_text_contents())


def test_a_bfloat16_models_test_data_set_runs_and_checks(page, server, artifacts, tmp_path):
    """A bfloat16 input and output (a bf16 model's KV cache, say): its test data set's .pb files
    feed the run and check it, and the values shown are the bfloat16 ones, named so."""
    import ml_dtypes

    bf16, f32 = onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT
    graph = onnx.helper.make_graph(
        [
            onnx.helper.make_node("Cast", ["past"], ["wide"], to=f32),
            onnx.helper.make_node("Mul", ["wide", "wide"], ["squared"]),
            onnx.helper.make_node("Cast", ["squared"], ["present"], to=bf16),
        ],
        "kv",
        [onnx.helper.make_tensor_value_info("past", bf16, [2, 3])],
        [onnx.helper.make_tensor_value_info("present", bf16, [2, 3])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 21)])
    past = np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.25]], np.float32).astype(ml_dtypes.bfloat16)
    present = (past.astype(np.float32) ** 2).astype(ml_dtypes.bfloat16)
    for name, arr, tensor in (("input_0.pb", past, "past"), ("output_0.pb", present, "present")):
        (tmp_path / name).write_bytes(onnx.numpy_helper.from_array(arr, tensor).SerializeToString())
    summary = upload(page, server, model, "kv.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.set_input_files("#run-dataset", [str(tmp_path / "input_0.pb"), str(tmp_path / "output_0.pb")])
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-expected-verdict").text_content().startswith("The test data's outputs: every output")
    assert page.locator("#run-expected tbody tr").first.locator("td").nth(1).text_content() == "identical"
    heads = " ".join(page.locator("#run-results .muted").all_text_contents())
    assert "BFLOAT16" in heads, heads
    cells = page.locator("#run-results .tensor-preview .tp-cell").all_text_contents()
    assert {"2.25", "4", "0.0625", "9"} <= set(cells), cells
    page.locator("#run-results").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-bfloat16.png"))


def test_a_sequence_input_runs_from_its_pb_and_a_zipmap_shows_its_maps(page, server, tmp_path, artifacts):
    """A sequence input takes a test data set's .pb (no random values for it); the sequence it
    gives back is shown tensor by tensor. A classifier's ZipMap output (a sequence of maps) shows
    each row's class → probability table."""
    from .browser_models import official_node_models

    case = official_node_models()["test_sequence_insert_at_back"]
    summary = upload(page, server, case, "seq.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    row = page.locator(".run-input[data-name=sequence]")
    assert "seq" in row.locator(".muted").first.text_content() and row.locator(".run-seed").count() == 0
    seq = [np.array([1, 2, 3, 4], np.int64), np.array([5, 6], np.int64)]
    (tmp_path / "input_0.pb").write_bytes(onnx.numpy_helper.from_list(seq, "sequence").SerializeToString())
    row.locator("input[type=file]").set_input_files(str(tmp_path / "input_0.pb"))
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    kinds = page.locator("#run-results section .run-value-kind").all_text_contents()  # the outputs'
    assert kinds == ["sequence of 3 items"], kinds  # the tensor input's random zero-d value appended
    # the inputs fed, below: the sequence as given
    fed = page.locator("#run-inputs-fed .run-value-kind").all_text_contents()
    assert fed == ["sequence of 2 items"], fed
    items = page.locator("#run-results section .run-seq-item").all_text_contents()
    assert [t[:12] for t in items] == ["[0]INT64 ⟨4⟩", "[1]INT64 ⟨2⟩", "[2]INT64 ⟨3⟩"], items

    summary = upload(page, server, zipmap_model(), "zipmap.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    tables = page.locator("#run-results section table.run-map")
    assert tables.count() == 2
    assert tables.first.locator("tbody tr td:first-child").all_text_contents() == ["0", "1", "2"]
    assert (
        "map of 3 entries: INT64 → FLOAT" in page.locator("#run-results section .run-value-kind").nth(1).text_content()
    )
    page.locator("#run-results").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-zipmap.png"))


def test_sequence_inputs_of_a_declared_shape_get_random_tensors(page, server):
    """A seq(tensor(float)[N]) input: random, seed × count tensors, its N among the sizes to give;
    the run feeds that many tensors of that shape."""
    from .browser_models import official_node_models

    model = official_node_models()["test_sequence_map_add_2_sequences"]
    summary = upload(page, server, model, "seqmap.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    for vi in model.graph.input:
        row = page.locator(f".run-input[data-name='{vi.name}']")
        assert row.locator(".run-seed").count() == 1 and row.locator(".run-count").input_value() == "2"
        row.locator(".run-count").fill("3")
    page.fill(".run-dim[aria-label=N]", "4")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    kinds = page.locator("#run-results .run-value-kind").all_text_contents()
    assert kinds[0] == "sequence of 3 items", kinds
    items = page.locator("#run-results .run-seq-item").all_text_contents()
    assert all(t.startswith(f"[{i}]FLOAT ⟨4⟩") for i, t in enumerate(items[:3])), items


def test_unnamed_dims_get_a_size_field_each(page, server, artifacts):
    """Inputs whose dims have neither a size nor a name (x [?, 4], y ["?", 3]) get a field per dim,
    named by input and axis; the run takes those sizes."""
    from .browser_models import unnamed_dims_model

    summary = upload(page, server, unnamed_dims_model(), "unnamed.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    fields = page.locator(".run-dims input.run-dim")
    assert [fields.nth(i).get_attribute("aria-label") for i in range(fields.count())] == ["x[0]", "y[0]"]
    assert "Sizes of the dynamic dims" in page.locator(".run-dims").text_content()
    fields.nth(0).fill("5")
    fields.nth(1).fill("5")
    page.screenshot(path=str(artifacts / "run-unnamed-dims.png"))
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert "Output z" in page.locator("#run-results").text_content()
    assert "5×3" in page.locator("#run-results").text_content()


def test_values_typed_in_run_a_classifier_and_a_map_input_runs_random(page, server, artifacts):
    """A scikit-learn classifier's one row typed in as JSON (the field shows what such values
    look like), the class and its probabilities shown; bad JSON said at once. A DictVectorizer's
    map input, which used to take only a .pb, runs on random keys of its vocabulary."""
    from .browser_models import dict_model, iris_classifier

    model = iris_classifier()
    summary = upload(page, server, model, "iris.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    field = page.locator(".run-input[data-name=X] .run-values")
    assert field.get_attribute("placeholder") == "[[1.5, 1.5, 1.5, 1.5]]"
    assert page.locator(".run-dim[aria-label='X[0]']").is_enabled()
    field.fill("[[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]")  # a bracket short
    assert page.locator(".run-dim[aria-label='X[0]']").is_disabled()  # the values give its size
    page.click("#run-go")
    assert "The values of X are not JSON" in page.locator("#run-results .field-error").text_content()
    field.fill("[[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]]")
    page.screenshot(path=str(artifacts / "run-typed-values-form.png"))
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    labels = sess.run(["label"], {"X": np.array([[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]], np.float32)})[0]
    assert labels.tolist() == [0, 2]  # setosa, virginica: the coefficients do classify
    text = page.locator("#run-results").text_content()
    assert "Output label" in text and "2 maps" not in text
    cells = page.locator("#run-results .tensor-preview .tp-cell").all_text_contents()
    assert cells[:2] == ["0", "2"], cells
    assert page.locator("#run-results table.run-map").count() == 2
    page.locator("#run-results").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-typed-values.png"))

    summary = upload(page, server, onnx.load_from_string(dict_model()), "dictvec.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    row = page.locator(".run-input[data-name=feats]")
    assert row.locator(".run-seed").count() == 1
    assert row.locator(".run-values").get_attribute("placeholder") == '{"key": 1.5}'
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert "Output vector" in page.locator("#run-results").text_content()


def test_an_output_in_another_shape_than_declared_is_said_and_fixed(page, server, artifacts):
    """A run at batch 3 of a model declaring its output one row: the output's section says so,
    and one click declares the dim that differs unknown (revision 1), the rest kept."""
    from test_run import _declared_one_row

    summary = upload(page, server, _declared_one_row(), "one_row.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.fill(".run-dim[aria-label=batch]", "3")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    note = page.locator("#run-results .callout-warn", has_text="Not the shape the model declares")
    assert "came back ⟨3×2⟩; the model declares ⟨1×2⟩" in note.text_content()
    page.screenshot(path=str(artifacts / "run-declared-mismatch.png"))
    note.locator("button.run-declare[data-output=y]").click()
    wait_revision(page, 1)
    data = page.request.get(f"{server}/api/models/{summary['id']}/download").body()
    dims = onnx.load_from_string(data).graph.output[0].type.tensor_type.shape.dim
    assert [(d.dim_value, d.dim_param) for d in dims] == [(0, ""), (2, "")]


def reduce_model():
    """x[2, 3] → Relu → ReduceSum(axes=[1], keepdims=1) → y[2, 1]."""
    from onnx import TensorProto, helper

    axes = onnx.numpy_helper.from_array(np.array([1], np.int64), "axes")
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="act"),
            helper.make_node("ReduceSum", ["r", "axes"], ["y"], name="total", keepdims=1),
        ],
        "reduce",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [axes],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_node_whose_output_changed_shape_says_so(page, server):
    """An edit that changes a node's output shape (keepdims 1 → 0): where it diverges and its
    row in the error table say the two shapes, not an unmeasured "?"."""
    mid = upload(page, server, reduce_model(), "reduce.onnx")["id"]
    edit = [{"op": "set_attribute", "node": "total", "name": "keepdims", "value": 0}]
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": edit}).status == 200
    run_against_revision_0(page, server, mid)
    page.locator("#run-results[data-ready=true]").wait_for()
    assert "y: shape ⟨2⟩ ≠ ⟨2×1⟩" in page.locator("#run-diverges").text_content()
    row = page.locator("#run-errors tbody tr[data-node=n1]")
    assert row.locator(".run-shape-differs").text_content() == "shape ⟨2⟩ ≠ ⟨2×1⟩"
    assert "?" not in row.text_content()
    assert page.locator("#run-compare tr[data-output=y] td").nth(1).text_content() == "differs: shape ⟨2⟩ ≠ ⟨2×1⟩"


def test_every_node_off_is_listed_on_a_click(page, server):
    """An edit at the head of a 12-node chain moves every node's output: the 8 furthest off are
    listed first, the other 4 on a click, still the furthest off first."""
    f = onnx.TensorProto.FLOAT
    nodes = [onnx.helper.make_node("Mul", ["x", "scale"], ["t0"], name="scale_it")]
    nodes += [onnx.helper.make_node("Add", [f"t{k}", "one"], [f"t{k + 1}"], name=f"add{k}") for k in range(11)]
    graph = onnx.helper.make_graph(
        nodes,
        "chain",
        [onnx.helper.make_tensor_value_info("x", f, [1, 4])],
        [onnx.helper.make_tensor_value_info("t11", f, [1, 4])],
        [onnx.helper.make_tensor("scale", f, [1], [2.0]), onnx.helper.make_tensor("one", f, [1], [1.0])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    mid = upload(page, server, model, "chain.onnx")["id"]
    edit = {"op": "set_initializer", "name": "scale", "value": {"dtype": "FLOAT", "shape": [1], "values": [3.0]}}
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [edit]}).status == 200
    run_against_revision_0(page, server, mid)
    page.locator("#run-results[data-ready=true]").wait_for()
    rows = page.locator("#run-errors tbody tr")
    assert "12 off beyond rounding" in page.locator("#run-errors").text_content() and rows.count() == 8
    page.click("#run-errors-all")
    assert rows.count() == 12 and page.locator("#run-errors-all").count() == 0
    errors = [float(c.rstrip(" %")) for c in page.locator("#run-errors tbody td.num:nth-child(3)").all_text_contents()]
    assert errors == sorted(errors, reverse=True), errors


def test_a_decoders_mask_length_is_asked_as_the_past_and_new_lengths(page, server, artifacts):
    """optimum's mask [batch, past_sequence + sequence]: three size fields, not a fourth for the
    sum; random inputs then fit together (the mask as long as the cached and new keys)."""
    from .browser_models import masked_decoder

    summary = upload(page, server, masked_decoder(), "decoder.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    fields = page.locator(".run-dims input.run-dim")
    assert [fields.nth(i).get_attribute("aria-label") for i in range(fields.count())] == [
        "batch",
        "sequence",
        "past_sequence",
    ]
    page.fill(".run-dim[aria-label=sequence]", "3")
    page.fill(".run-dim[aria-label=past_sequence]", "5")
    page.screenshot(path=str(artifacts / "run-decoder-dims.png"))
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    text = page.locator("#run-results").text_content()
    assert "Output probs" in text and "1×3×8" in text, text


def test_a_decoders_run_shows_the_inputs_it_made_and_a_table_that_fits(page, server, artifacts):
    """The KV-cache QA: random inputs of a decoder step are a mask of ones, positions after the
    past and a stream per input, listed with the result; the comparison table of long output
    names stays inside the sidebar."""
    from onnx import TensorProto as T
    from onnx import helper as h

    inputs = [
        h.make_tensor_value_info("attention_mask", T.INT64, ["batch", "past_sequence + sequence"]),
        h.make_tensor_value_info("position_ids", T.INT64, ["batch", "sequence"]),
        h.make_tensor_value_info("past_key_values.0.key", T.FLOAT, ["batch", "past_sequence", 4]),
        h.make_tensor_value_info("past_key_values.0.value", T.FLOAT, ["batch", "past_sequence", 4]),
    ]
    long = "present_key_values_of_the_first_decoder_layer_after_this_step."
    nodes = [h.make_node("Identity", [v.name], [f"{long}{k}"], name=f"pass{k}") for k, v in enumerate(inputs)]
    outputs = [h.make_value_info(f"{long}{k}", v.type) for k, v in enumerate(inputs)]
    model = h.make_model(h.make_graph(nodes, "step", inputs, outputs), opset_imports=[h.make_opsetid("", 17)])
    mid = upload(page, server, model, "decoder_step.onnx")["id"]
    op = {"op": "set_metadata", "key": "stage", "value": "checked"}
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [op]}).status == 200
    open_model(page, server, mid)
    wait_revision(page, 1)
    page.click("#btn-run")
    page.fill("input.run-dim[aria-label=past_sequence]", "3")
    page.fill("input.run-dim[aria-label=sequence]", "2")
    page.locator("#run-compare-to option[value='0']").wait_for(state="attached")
    page.select_option("#run-compare-to", "0")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    fed = page.locator("#run-inputs-fed")
    assert fed.locator("summary").text_content() == "Inputs fed (4)"
    fed.locator("summary").click()
    heads = dict(
        zip(
            fed.locator(".run-input-fed").evaluate_all("els => els.map((e) => e.dataset.name)"),
            fed.locator(".run-input-fed-head .muted").all_text_contents(),
            strict=True,
        )
    )
    assert heads["attention_mask"].startswith("made: ones")
    assert heads["position_ids"] == "made: positions 3, 4, 5… (after a past of 3)", heads
    assert heads["past_key_values.0.key"] == heads["past_key_values.0.value"] == "made: random, seed 0"
    answer = page.locator(".run-input-fed[data-name=position_ids]").text_content()
    assert "3" in answer and "4" in answer  # the positions after the 3 cached
    fits = page.evaluate(
        "() => { const t = document.querySelector('#run-compare'), s = document.getElementById('sidebar');"
        " return t.getBoundingClientRect().right <= s.getBoundingClientRect().right + 0.5; }"
    )
    page.locator("#run-compare").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-decoder-compare.png"))
    fed.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-decoder-inputs.png"))
    assert fits, "the comparison table runs past the sidebar"
    # an empty cache typed as no values: past_sequence stays asked (its 0 is the cache's length)
    for name in ("past_key_values.0.key", "past_key_values.0.value"):
        page.fill(f".run-input[data-name='{name}'] input.run-values", "[]")
    past = page.locator("input.run-dim[aria-label=past_sequence]")
    assert past.is_enabled()
    past.fill("0")
    page.select_option("#run-compare-to", "")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true] #run-summary").wait_for()
    shapes = page.locator("#run-results section .muted").all_text_contents()
    assert "FLOAT ⟨1×0×4⟩" in shapes, shapes


def test_detections_in_another_order_are_reordered_not_off(page, server, artifacts):
    """The KV-cache QA: NonMaxSuppression's selected indices, the same rows in another order,
    read "differs" with max |Δ| 46 and led the node table at 55 %; measured row against the row
    it matched, nothing is off."""
    from .browser_models import nms_detector

    mid = upload(page, server, nms_detector(), "detector.onnx")["id"]
    edit = {"op": "set_initializer", "name": "gain", "value": {"dtype": "FLOAT", "shape": [], "values": [-1.0]}}
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [edit]}).status == 200
    run_against_revision_0(page, server, mid)
    page.locator("#run-results[data-ready=true]").wait_for()
    row = page.locator("#run-compare tr[data-output=selected_indices]")
    cells = row.locator("td").all_text_contents()
    assert cells[1] == "reorderedthe same 12 rows in another order", cells
    assert cells[2:] == ["0", "0", "0"], cells
    assert row.locator("td.num").first.get_attribute("title").startswith("measured row by row")
    # the name breaks after its "_", not inside a word
    heights = row.locator("td code").first.evaluate(
        "c => [c.getBoundingClientRect().height, parseFloat(getComputedStyle(c.closest('td')).lineHeight)]"
    )
    page.locator("#run-compare").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-reordered.png"))
    assert heights[0] < 2.5 * heights[1], heights  # "selected_" / "indices": two lines
    # node by node: the NMS matched too, so the Mul whose gain changed leads, the NMS is no error
    errors = page.locator("#run-errors tbody tr")
    assert errors.first.get_attribute("data-node") == "n0", errors.all_text_contents()
    assert (
        "2 nodes compared on the same inputs, 1 off beyond rounding, 1 reordered."
        in page.locator("#run-errors").text_content()
    )
    nms = page.locator("#run-errors tbody tr[data-node=n1] td.num")
    assert nms.text_content() == "reordered" and nms.get_attribute("title") == "the same 12 rows in another order"


def test_a_picked_npy_shows_the_sizes_it_gives(page, server, tmp_path):
    """QA: after a 2×4 .npy was picked for x[batch, 4], the batch field (greyed: taken from the
    values) still said 1 though the run used 2."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "dyn",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 4])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", 4])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    open_model(page, server, upload(page, server, model, "dyn.onnx")["id"])
    np.save(tmp_path / "x.npy", np.ones((2, 4), np.float32))
    page.click("#btn-run")
    field = page.locator(".run-dim[aria-label=batch]")
    assert field.input_value() == "1"
    page.locator(".run-input[data-name=x] input.run-npy").set_input_files(str(tmp_path / "x.npy"))
    page.wait_for_function("() => document.querySelector('.run-dim[aria-label=batch]').value === '2'")
    assert field.is_disabled() and field.get_attribute("title") == "Taken from the values given"
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert "2×4" in page.locator("#run-results").text_content()
    # a file of another rank is said at once (not onnxruntime's "Invalid rank" after the run)
    np.save(tmp_path / "x3.npy", np.ones((2, 4, 1), np.float32))
    page.locator(".run-input[data-name=x] input.run-npy").set_input_files(str(tmp_path / "x3.npy"))
    misfit = page.locator(".run-input[data-name=x] .run-npy-misfit")
    misfit.wait_for()
    assert misfit.text_content() == "x3.npy holds ⟨2×4×1⟩ (rank 3); x takes rank 2 (⟨batch×4⟩)"


def test_a_revision_that_cant_take_the_inputs_is_said_beside_this_runs_outputs(page, server, tmp_path):
    """QA: comparing with a revision fixed at batch 1 refused the whole run of a batch-2 input."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "fixed",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    mid = upload(page, server, model, "fixed.onnx")["id"]
    op = {"op": "set_io_shape", "name": "x", "shape": ["batch", 4], "update_types": True}
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [op]}, headers={"Origin": server})
    assert r.status == 200, r.text()
    open_model(page, server, mid)
    np.save(tmp_path / "x2.npy", np.ones((2, 4), np.float32))
    page.click("#btn-run")
    page.locator(".run-input[data-name=x] input.run-npy").set_input_files(str(tmp_path / "x2.npy"))
    page.select_option("#run-compare-to", "0")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    note = page.locator(".run-compare-refused")
    assert note.text_content().startswith("Not compared: revision 0 can't take this run's inputs: input \"x\" is 2×4")
    assert "2×4" in page.locator("#run-results").text_content()


def test_a_conversion_whose_outputs_stay_close_shows_where_they_move_as_a_note(page, server):
    """float16 moves every node's output a little and no output beyond tolerance (QA14 #11: the
    first node that moves was shown as an error, in red)."""
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [{"op": "convert_float16"}]})
    assert r.status == 200, r.text()
    run_against_revision_0(page, server, mid)
    page.locator("#run-results[data-ready=true]").wait_for()
    verdicts = page.locator("#run-compare tbody tr td:nth-child(2)").all_text_contents()
    assert set(verdicts) <= {"close", "identical"}, verdicts
    note = page.locator("#run-diverges")
    assert "run-within" in note.get_attribute("class")
    assert note.text_content().startswith("Every output is close to revision 0's; the first node whose output moves: ")
    page.click("#expand-all")
    page.locator("#graph g.box.diverges-within").wait_for()
    assert page.locator("#graph g.box.diverges").count() == 0


def test_the_compare_pickers_mark_undone_revisions(page, server):
    """Revision 2 undone: the pickers of Run and Compare say so (QA14 #13: listed among the
    head's ancestors as if still part of it)."""
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    for base, value in enumerate((0.2, 0.3)):
        op = {"op": "set_attribute", "node": "n1", "name": "alpha", "value": value}
        assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": base, "ops": [op]}).status == 200
    assert page.request.post(f"{server}/api/models/{mid}/undo", data={"base": 2}).ok
    open_model(page, server, mid)
    wait_revision(page, 1)
    page.click("#btn-run")
    option = page.locator("#run-compare-to option[value='2']")
    option.wait_for(state="attached")
    assert option.text_content().startswith("Revision 2 (undone): ")
    assert page.locator("#run-compare-to option[value='0']").text_content() == "Revision 0: as opened"
    page.click("#btn-compare")
    option = page.locator("#compare-with option[value='rev:2']")
    option.wait_for(state="attached")
    assert option.text_content().startswith("Revision 2 (undone): ")


def test_run_compared_with_another_model(page, server, artifacts):
    """A model converted elsewhere runs against its float source, uploaded beside it (QA24 #10):
    "Compare with" lists the other models, and the node table measures it against that one."""
    source = upload(page, server, tiny_cnn(), "cnn_source.onnx")["id"]
    converted = upload(page, server, tiny_cnn(), "cnn_converted.onnx")["id"]
    op = {"op": "convert_float16"}
    assert page.request.post(f"{server}/api/models/{converted}/edits", data={"base": 0, "ops": [op]}).status == 200
    open_model(page, server, converted)
    wait_revision(page, 1)
    page.click("#btn-run")
    page.locator(f"#run-compare-to option[value='model:{source}']").wait_for(state="attached")
    page.select_option("#run-compare-to", f"model:{source}")
    assert page.locator("#run-locate").is_enabled()
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert "; cnn_source.onnx (revision 0) in" in page.locator("#run-summary").text_content()
    assert page.locator("#run-compare tr[data-output=probs] td").nth(1).text_content() == "close"
    assert (
        page.locator("#run-diverges")
        .text_content()
        .startswith("Every output is close to cnn_source.onnx (revision 0)'s")
    )
    assert "Error of each node against cnn_source.onnx (revision 0)" in page.locator("#run-results").text_content()
    page.screenshot(path=str(artifacts / "run-other-model.png"))


def test_a_maskless_decoder_step_runs_after_its_cache_and_says_outputs_one_side_lacks(page, server, artifacts):
    """QA29 F5 and #12: an opset-23 decoder step without a mask is fed positions after its cache
    (past_seq 3: 3, 4, 5…); compared with the revision before its present outputs were removed,
    those are said, not compared."""
    from test_run_decoder_cache import rotary_step

    mid = upload(page, server, rotary_step(), "decoder_op23_step.onnx")["id"]
    ops = [{"op": "remove_output", "name": f"present.0.{k}"} for k in ("key", "value")]
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": ops}).status == 200
    open_model(page, server, mid)
    wait_revision(page, 1)
    page.click("#btn-run")
    for name, size in (("batch", "1"), ("seq", "4"), ("past_seq", "3")):
        page.fill(f"input.run-dim[aria-label={name}]", size)
    page.locator("#run-compare-to option[value='0']").wait_for(state="attached")
    page.select_option("#run-compare-to", "0")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    fed = page.locator("#run-inputs-fed")
    fed.locator("summary").click()
    made = fed.locator(".run-input-fed[data-name=position_ids] .run-input-fed-head .muted").text_content()
    assert made == "made: positions 3, 4, 5… (after a past of 3)", made
    said = page.locator("#run-not-compared .run-only-there")
    assert said.text_content() == "present.0.key, present.0.value: only in revision 0, not compared."
    assert page.locator("#run-not-compared .run-only-here").count() == 0
    assert sorted(page.locator("#run-compare tbody tr").evaluate_all("rs => rs.map((r) => r.dataset.output)")) == [
        "positions_fed",
        "rotated",
    ]
    said.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-only-in-one-revision.png"))


def test_an_overflow_in_float16_leads_the_node_errors_and_is_the_hottest(page, server, artifacts):
    """QA30: a float16 sum of squares overflowing to inf was listed last as "0 —", and a 0.04 %
    rounding elsewhere painted deep red. The overflow leads the table in words of its own, is
    the hottest box, and the colours are on one scale (0.001 % to 100 %), not the run's."""
    from test_run_overflow import squares

    summary = upload(page, server, squares(), "squares.onnx")
    mid = summary["id"]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [{"op": "convert_float16"}]})
    assert r.status == 200
    run_against_revision_0(page, server, mid)
    page.locator("#run-results[data-ready=true]").wait_for()
    first = page.locator("#run-errors tbody tr").first
    assert first.get_attribute("data-node") == "n2"  # the ReduceSumSquare
    # which error this is, beside the outputs' (÷ range) and a quantization's simulated ones
    assert "of the node's own output" in page.locator("#run-errors").text_content()
    assert first.locator("td.run-non-finite").text_content() == "∞/NaN here"
    inside = "() => { const c = document.querySelector('#run-errors td.run-non-finite').getBoundingClientRect(); return c.right <= document.querySelector('#sidebar').getBoundingClientRect().right; }"
    assert page.evaluate(inside)  # in the panel, not past its edge
    page.click("#run-error-heat")
    legend = page.locator("#heat-legend:not([hidden])")
    legend.wait_for()
    assert "up to ∞" in legend.text_content() and "0.001 %" in legend.text_content()
    page.wait_for_function("document.querySelector('#graph g.box[data-node-id=n2]')?.classList.contains('heat-5')")
    page.screenshot(path=str(artifacts / "run-overflow.png"))


def test_a_dotted_output_name_keeps_to_two_lines_in_the_comparison(page, server, artifacts):
    """QA32: the comparison's narrow first column broke `present.0.decoder.key` over four lines
    ("present." / "0." / "decoder." / "key") beside four columns of numbers."""
    model = tiny_cnn()
    name = "present.0.decoder.key"
    for node in model.graph.node:
        node.output[:] = [name if o == "probs" else o for o in node.output]
    model.graph.output[0].name = name
    mid = upload(page, server, model, "dotted.onnx")["id"]
    # a slight change: differences of ~1e-6, which read 1.43e-6, not 0.00000143 (QA37 #8)
    edit = [{"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.0101}]
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": edit}).status == 200
    run_against_revision_0(page, server, mid)
    page.locator("#run-results[data-ready=true]").wait_for()
    cell = page.locator(f"#run-compare tr[data-output='{name}'] td").first
    cell.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-compare-dotted-name.png"))
    lines = page.evaluate(
        "(td) => { const code = td.querySelector('code') || td;"
        " return Math.round(code.getBoundingClientRect().height / parseFloat(getComputedStyle(code).lineHeight)); }",
        cell.element_handle(),
    )
    assert lines <= 2, lines
    numbers = page.locator(f"#run-compare tr[data-output='{name}'] td.num").all_text_contents()
    assert all(re.fullmatch(r"0|-?\d\.\d{0,2}e[-+]\d+|[\d.]{1,6}", n) for n in numbers), numbers
    right = page.evaluate(
        "() => [document.querySelector('#run-compare').getBoundingClientRect().right,"
        " document.querySelector('#sidebar').getBoundingClientRect().right]"
    )
    assert right[0] <= right[1], right


def test_a_run_that_waited_long_says_the_whole_time_and_memory_says_the_way_out(page, server):
    """QA40 #6: a 2.1 GiB model's run read "Ran revision 3 in 3435.4 ms" after 56 s of loading;
    out of memory with every node's error, nothing said what needs less."""
    import time

    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-run")

    def slow(route):
        time.sleep(2.5)  # the sessions of a big model loading
        route.continue_()

    page.route("**/run", slow)
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert re.search(
        r"The whole took \d[\d.]* s, loading the model included\.$", page.locator("#run-summary").text_content()
    )
    page.unroute("**/run")
    failure = {
        "error": {
            "code": "onnx_failed",
            "message": "onnxruntime can't run the model: onnxruntime ran out of memory (the check's limit)",
        }
    }
    page.route("**/run", lambda route: route.fulfill(status=422, json=failure))
    page.click("#run-go")
    error = page.locator("#run-failure .field-error")
    error.wait_for()
    assert error.text_content().endswith("(the check's limit). Smaller sizes for its dims need less.")


def test_a_node_moving_within_rounding_before_the_first_difference_is_named(page, server):
    """QA40 #10: an edited epsilon moved its LayerNormalization's output within rounding, and the
    page named only a later MatMul, the first past the threshold: where it moves first is said."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    edit = [{"op": "set_attribute", "node": "n1", "name": "alpha", "value": 0.5}]
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": edit}).status == 200
    open_model(page, server, mid)
    wait_revision(page, 1)

    def nudged(route):  # the Conv before the LeakyRelu edited, as if moved by its last digits
        answer = route.fetch().json()
        nodes = answer["compare"]["nodes"]
        assert answer["compare"]["diverges"]["node"] == "n1" and nodes[0]["node"] == "n0"
        nodes[0]["max_abs"] = 3e-8
        route.fulfill(json=answer)

    page.route("**/run", nudged)
    page.click("#btn-run")
    page.locator("#run-compare-to option[value='0']").wait_for(state="attached")
    page.select_option("#run-compare-to", "0")
    page.click("#run-go")
    said = page.locator("#run-diverges")
    said.wait_for()
    assert said.text_content().endswith("It moves first, within rounding, at /features/conv1/Conv Conv (max |Δ| 3e-8).")


def test_an_output_past_the_answers_values_saves_whole(page, server, artifacts, tmp_path):
    """A run answers an output's first 10,000 values; "Save .npy" gives every value (the server
    kept the run's .npy): a ResNet-50's first Conv output (802,816 values) said "No .npy from
    the page"."""
    import onnxruntime as ort

    path = str(ONNX_DATA / "light" / "light_resnet50.onnx")
    model = onnx.load(path)
    x = np.random.default_rng(0).random((1, 3, 224, 224), np.float32)
    conv = next(n for n in model.graph.node if n.op_type == "Conv").output[0]
    probe = onnx.load(path)
    probe.graph.output.add().name = conv
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run([conv], {model.graph.input[0].name: x})[0]
    np.save(tmp_path / "x.npy", x)

    open_model(page, server, upload(page, server, model, "resnet50.onnx")["id"])
    page.click("#btn-run")
    page.locator(f".run-input[data-name='{model.graph.input[0].name}'] input.run-npy").set_input_files(
        str(tmp_path / "x.npy")
    )
    page.fill("#run-extra", conv)
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    section = (
        page.locator("#run-results section")
        .filter(has=page.locator(".h3-name", has_text=re.compile(f"^{re.escape(conv)}$")))
        .first
    )
    section.locator(".run-save-npy").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-save-whole-npy.png"))
    with page.expect_download() as caught:
        section.locator(".run-save-npy").click()
    assert caught.value.suggested_filename == re.sub(r"[^\w.\-]+", "_", conv) + ".npy"
    saved = np.load(caught.value.path(), allow_pickle=False)
    assert saved.shape == (1, 64, 112, 112) and saved.dtype == np.float32
    np.testing.assert_allclose(saved, expected, rtol=1e-4, atol=1e-5)
