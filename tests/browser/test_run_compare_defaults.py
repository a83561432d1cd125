"""The Run panel's "Compare with revision N" defaults (QA17 F4, QA19 F13): measuring each node's
output (locate) is ticked by default for a model up to 32 MiB, or when a tool's "Compare its
outputs with revision N…" opened the panel, and off otherwise, its label saying what it costs;
a note says what runs meanwhile; and on a left-padded batch the padded positions are left out
of the comparison (and of the expected outputs') and said apart."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from test_run_mask_compare import PAD, attention_block, left_padded

from .browser_pages import open_model, upload, wait_revision

# every POST .../run held back 2.5 s, for the note said meanwhile to be read
SLOW_RUNS = """(() => {
  const fetch0 = window.fetch.bind(window);
  window.fetch = async (url, ...rest) => {
    if (String(url).endsWith("/run")) await new Promise((r) => setTimeout(r, 2500));
    return fetch0(url, ...rest);
  };
})();"""


def big_lookup() -> onnx.ModelProto:
    """A 38 MB model (an int64 lookup table, which a float16 conversion keeps as it is) that runs
    in no time."""
    table = np.arange(300_000 * 16, dtype=np.int64).reshape(300_000, 16) % 1000
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "ids"], ["rows"], name="lookup"),
            helper.make_node("Cast", ["rows"], ["rows_f"], name="to_float", to=TensorProto.FLOAT),
            helper.make_node("Mul", ["rows_f", "w"], ["out"], name="scale"),
        ],
        "lookup",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "seq", 16])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.full(16, 0.5, np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_a_small_model_measures_each_node_and_leaves_padded_positions_out(page, server, tmp_path, artifacts):
    summary = upload(page, server, attention_block(), "attention.onnx")
    mid = summary["id"]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [{"op": "convert_float16"}]})
    assert r.status == 200, r.text()
    page.add_init_script(SLOW_RUNS)
    open_model(page, server, mid)
    wait_revision(page, 1)
    page.click("#btn-run")
    ids, mask = left_padded()
    for name, value in (("input_ids", ids), ("attention_mask", mask)):
        np.save(tmp_path / f"{name}.npy", value)
        page.locator(f".run-input[data-name={name}] input.run-npy").set_input_files(str(tmp_path / f"{name}.npy"))
    # the float model's logits as the expected outputs: left out at the padding too
    import onnxruntime as ort

    session = ort.InferenceSession(attention_block().SerializeToString(), providers=["CPUExecutionProvider"])
    np.save(tmp_path / "logits.npy", session.run(["logits"], {"input_ids": ids, "attention_mask": mask})[0])
    page.locator("#run-expected-files").set_input_files(str(tmp_path / "logits.npy"))
    page.locator("#run-compare-to option[value='0']").wait_for(state="attached")
    assert not page.locator("#run-locate").is_checked() or page.locator("#run-locate").is_disabled()
    page.select_option("#run-compare-to", "0")
    locate = page.locator("#run-locate")
    assert locate.is_enabled() and locate.is_checked()  # 6 KB: measured by default
    cost = page.locator("#run-locate-cost").text_content()
    assert cost == "(slower: runs both revisions again keeping every node's output)"
    page.click("#run-go")
    # what runs, said while it does, with the seconds it has taken
    progress = page.locator("#run-progress")
    assert "then both again keeping every node's output" in progress.text_content()
    page.wait_for_function("() => /\\d+ s$/.test(document.querySelector('#run-progress')?.textContent || '')")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-progress").count() == 0

    note = page.locator("#run-padding").text_content()
    assert note.startswith(f"{PAD} padded positions (attention_mask = 0) left out: their values differ by up to ")
    assert "they are masked in the model" in note
    # the real tokens' logits are close: float16 rounding, not the padding's noise
    assert page.locator("#run-compare tr[data-output=logits] .run-verdict").text_content() == "close"
    expected = page.locator("#run-expected-padding").text_content()
    assert expected.startswith(f"{PAD} padded positions (attention_mask = 0) left out: ")
    assert page.locator("#run-expected tr[data-output=logits] .run-verdict").text_content() == "close"
    nodes = page.locator("#run-padding-nodes").text_content()
    assert nodes.startswith(f"{PAD} padded positions (attention_mask = 0) left out of each node's error too")
    page.locator("#run-compare").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-compare-padded.png"))


def test_a_big_model_compares_without_measuring_each_node_unless_asked(page, server, artifacts):
    summary = upload(page, server, big_lookup(), "lookup.onnx")
    assert summary["size"] > 32 * 1024 * 1024
    open_model(page, server, summary["id"])
    panel = page.locator("#sidebar")
    # a tool's "Compare its outputs with revision 0…": the node table is what it opens the panel for
    panel.locator("#model-tools [data-action=float16]").click()
    panel.locator("#convert-float16 button[type=submit]").click()
    wait_revision(page, 1)
    panel.locator("#model-tools .ed-report-run").click()
    page.wait_for_function("() => document.querySelector('#run-compare-to')?.value === '0'")
    locate = page.locator("#run-locate")
    assert locate.is_checked()
    # picked by hand: off, the label says what it would cost
    page.select_option("#run-compare-to", "")
    page.select_option("#run-compare-to", "0")
    assert locate.is_enabled() and not locate.is_checked()
    assert page.locator("#run-locate-cost").text_content() == (
        "(slower: runs both revisions again keeping every node's output; off by default past 32 MiB)"
    )
    page.fill(".run-input[data-name=ids] input.run-values", "[[1, 2, 3]]")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-compare tr[data-output=out]").count() == 1
    assert page.locator("#run-errors").count() == 0  # no node measured
    page.locator("#run-locate").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-compare-big-default.png"))
    # a tick of the person's own stays through another pick
    locate.check()
    page.select_option("#run-compare-to", "")
    page.select_option("#run-compare-to", "0")
    assert locate.is_checked()
    page.click("#run-go")
    page.locator("#run-results[data-ready=true] #run-errors").wait_for()


def test_two_shapes_that_differ_wrap_in_the_panel(page, server):
    """QA43: "differs: shape ⟨1×25200×85⟩ ≠ ⟨100×4⟩" ran past the side panel's right edge."""
    shape = numpy_helper.from_array(np.array([1, 2, 3, 4, 5, 6, 7], np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5040])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [shape],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    summary = upload(page, server, model, "reshape.onnx")
    value = {"dtype": "INT64", "shape": [2], "values": [1008, 5]}
    answer = page.request.post(
        f"{server}/api/models/{summary['id']}/edits",
        data={
            "base": 0,
            "ops": [{"op": "set_initializer", "name": "shape", "value": value, "allow_type_change": True}],
        },
    )
    assert answer.ok, answer.text()
    open_model(page, server, summary["id"])
    page.click("#btn-run")
    page.locator("#run-compare-to option[value='0']").wait_for(state="attached")
    page.select_option("#run-compare-to", "0")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    verdict = page.locator("#run-compare tr[data-output=y] .run-verdict")
    assert verdict.text_content() == "differs: shape ⟨1008×5⟩ ≠ ⟨1×2×3×4×5×6×7⟩"
    # the verdict within the panel, not cut at its edge
    right = "(s) => document.querySelector(s).getBoundingClientRect().right"
    assert page.evaluate(right, "#run-compare tr[data-output=y] .run-verdict") <= page.evaluate(right, "#sidebar")
