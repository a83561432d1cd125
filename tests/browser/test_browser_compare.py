"""Compare on the page (issue 15): pick a revision or another model, see the added and changed
boxes marked on the drawing, the changed fields before and now, and step through them."""

from __future__ import annotations

import itertools
import re

import numpy as np
from onnx import numpy_helper

from .browser_models import position_slice_model, sparse_training_model, tiny_cnn
from .browser_pages import compared_with_revision, hash_params, open_model, upload, wait_revision


def test_the_summary_says_an_opset_conversion(page, server):
    """QA27: a revision converted 17 -> 19 said "0 nodes changed…" and the conversion only in
    the Model lines at the panel's end: the summary line says it."""
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    r = page.request.post(
        f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [{"op": "convert_opset", "version": 19}]}
    )
    assert r.status == 200, r.text()
    summary = compared_with_revision(page, server, mid, 1)
    assert re.search(r"\d+ added, \d+ removed, opset 17 → 19[,( ]", summary), summary


def test_compare_with_a_revision_and_with_another_model(page, server, artifacts):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    mid = summary["id"]
    edits = [
        {"op": "set_attribute", "node": "n6", "name": "alpha", "value": 0.5},
        {"op": "insert_node", "tensor": "p1", "op_type": "Relu", "name": "extra_relu"},
    ]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": edits})
    assert r.status == 200, r.text()
    open_model(page, server, mid)
    wait_revision(page, 1)

    page.click("#btn-compare")
    assert page.locator("#sidebar[data-panel=compare]").count() == 1
    page.locator("#compare-with option[value='rev:0']").wait_for(state="attached")
    # each revision is named by what made it, as History does
    assert page.locator("#compare-with option[value='rev:0']").text_content() == "Revision 0: as opened"
    page.select_option("#compare-with", "rev:0")
    page.locator("#compare-body[data-ready=true]").wait_for()
    assert (
        "From revision 0 to revision 1: 2 nodes changed, 1 added, 0 removed"
        in page.locator("#compare-summary").text_content()
    )
    gemm = page.locator("#compare-changed li[data-node=n7]")  # the Gemm moved one place down
    assert gemm.locator(".compare-before").first.text_content() == "(none)"
    assert gemm.locator(".compare-now").first.text_content() == "0.5"
    page.click("#expand-all")
    page.locator("#graph g.box.diff-added").first.wait_for()
    assert page.locator("#graph g.box.diff-added").count() == 1
    assert page.locator("#graph g.box.diff-changed").count() == 2
    # what each costs: the inserted Relu adds its 2,048 FLOPs (1×8×16×16) and no parameter
    before, now = (page.request.get(f"{server}/api/models/{mid}/stats?revision={r}").json() for r in (0, 1))
    assert now["totals"]["flops"] - before["totals"]["flops"] == 2048
    costs = page.locator("#compare-costs table")
    costs.wait_for()
    assert costs.locator("tr[data-cost=params] td").last.text_content() == "same"
    flops = costs.locator("tr[data-cost=flops] td").all_text_contents()
    assert flops[3].startswith("+2.05 K (+")
    assert "cost-moved" in (costs.locator("tr[data-cost=flops]").get_attribute("class") or "")
    page.click("#compare-next")
    assert page.locator("#graph g.box.diff-focus").count() == 1
    assert page.locator("#sidebar .compare-current").count() == 1
    page.screenshot(path=str(artifacts / "compare-revision.png"))
    costs.screenshot(path=str(artifacts / "compare-costs.png"))
    # under another panel (no legend for them there) the marks go; back in Compare, they return
    page.click("#btn-model")
    page.locator("#graph g.box.diff-changed").first.wait_for(state="detached")
    # a heat map turned on there waits under Compare's amber outlines, and comes back after
    page.locator("#costs[data-ready=true]").wait_for()
    page.click("#costs .cost-heat button[data-metric=flops]")
    page.locator("#heat-legend:not([hidden])").wait_for()
    assert page.locator("#graph g.box.heat-5").count() >= 1
    page.click("#btn-compare")
    page.locator("#graph g.box.diff-changed").nth(1).wait_for()
    assert page.locator("#graph g.box.diff-changed").count() == 2
    assert page.locator("#graph g.box.heat-5").count() == 0 and page.locator("#heat-legend").is_hidden()
    page.click("#btn-model")
    page.locator("#heat-legend:not([hidden])").wait_for()
    assert page.locator("#graph g.box.heat-5").count() >= 1
    page.click("#heat-legend .heat-off")
    page.click("#btn-compare")
    page.locator("#graph g.box.diff-changed").nth(1).wait_for()

    # another model: the same graph with other weights
    other = tiny_cnn()
    other.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "conv1.weight"))
    other_id = upload(page, server, other, "retrained.onnx")["id"]
    page.reload()
    wait_revision(page, 1)
    page.click("#btn-compare")
    page.locator(f"#compare-with option[value='model:{other_id}']").wait_for(state="attached")
    page.select_option("#compare-with", f"model:{other_id}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    text = page.locator("#compare-body").text_content()
    assert "From retrained.onnx (revision 0) to revision 1" in text and "conv1.weight: values changed" in text
    page.click("#compare-stop")
    assert page.locator("#graph g.box.diff-changed").count() == 0


def compared_with_revision_0(page, server, mid: str):
    """The model's page at revision 1, compared with revision 0: the costs table, once drawn."""
    open_model(page, server, mid)
    wait_revision(page, 1)
    page.click("#btn-compare")
    page.locator("#compare-with option[value='rev:0']").wait_for(state="attached")
    page.select_option("#compare-with", "rev:0")
    costs = page.locator("#compare-costs table")
    costs.wait_for()
    return costs


def batch_matmul():
    """x[batch, 4] · W[4, 8] → Relu: costs known only as formulas in `batch`."""
    from onnx import TensorProto, helper

    w = numpy_helper.from_array(np.ones((4, 8), np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm"), helper.make_node("Relu", ["y"], ["z"], name="act")],
        "batch_matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 8])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_compare_costs_of_a_model_with_symbolic_dims(page, server, artifacts):
    """Costs that depend on an unsized input dim are formulas on both sides and in the change,
    never a count of 0; the table stays inside the sidebar."""
    summary = upload(page, server, batch_matmul(), "batch_matmul.onnx")
    mid = summary["id"]
    r = page.request.post(
        f"{server}/api/models/{mid}/edits",
        data={"base": 0, "ops": [{"op": "insert_node", "tensor": "y", "op_type": "Relu", "name": "extra"}]},
    )
    assert r.status == 200, r.text()
    costs = compared_with_revision_0(page, server, mid)
    # MatMul 2·4·8 + Relu 8 per row of the batch; the inserted Relu adds 8 more: formulas one
    # under the other (side by side, long ones printed over each other: the KV-cache QA)
    sides = costs.locator("tr[data-cost=flops] .cost-side")
    assert sides.all_text_contents() == ["before", "now", "change"]
    assert costs.locator("tr[data-cost=flops] .cost-side-value").all_text_contents() == [
        "72·batch",
        "80·batch",
        "+8·batch",
    ]
    # outputs of 8 floats per row: 2 of them before, 3 now
    assert costs.locator("tr[data-cost=activation_bytes] .cost-side-value").all_text_contents() == [
        "64 B·batch",
        "96 B·batch",
        "+32 B·batch",
    ]
    assert costs.locator("tr[data-cost=params] td").all_text_contents()[1:] == ["32", "32", "same"]
    # the weights' bytes too: what a float16 or int8 conversion changes, parameters staying the same
    assert costs.locator("tr[data-cost=param_bytes] td").all_text_contents()[1:] == ["128 B", "128 B", "same"]
    # the largest moment has no formula: said once, in words, not "? ? ?"
    peak = costs.locator("tr[data-cost=peak_activation_bytes] td").all_text_contents()[1:]
    assert peak == [
        "unknown until the input sizes are given (Costs, in the model panel): a largest moment has no formula"
    ], peak
    fits = page.evaluate(
        "() => { const t = document.querySelector('#compare-costs table'), s = document.getElementById('sidebar');"
        " return t.getBoundingClientRect().right <= s.getBoundingClientRect().right + 0.5; }"
    )
    assert fits, "the costs table runs past the sidebar"
    page.locator("#compare-costs").screenshot(path=str(artifacts / "compare-costs-symbolic.png"))

    # the model panel says the same: a formula, and activations not "0 B"
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    text = page.locator("#costs").text_content()
    assert "80·batch" in text and "96 B·batch" in text and "0 B" not in text


def test_compare_counts_both_sides_at_the_same_input_shapes(page, server, artifacts):
    """A batch made dynamic since is counted at the batch the older revision fixes (1), not at
    the size given in Costs (4): making a dim dynamic changes no cost, and the note says why."""
    model = batch_matmul()
    for v in (*model.graph.input, *model.graph.output):
        v.type.tensor_type.shape.dim[0].dim_value = 1  # revision 0: batch fixed to 1
    mid = upload(page, server, model, "fixed_batch.onnx")["id"]
    r = page.request.post(
        f"{server}/api/models/{mid}/edits",
        data={"base": 0, "ops": [{"op": "set_io_shape", "name": "x", "shape": ["batch", 4], "update_types": True}]},
    )
    assert r.status == 200, r.text()
    r = page.request.post(
        f"{server}/api/models/{mid}/edits",
        data={"base": 1, "ops": [{"op": "set_metadata", "key": "stage", "value": "dynamic"}]},
    )
    assert r.status == 200, r.text()
    open_model(page, server, mid)
    wait_revision(page, 2)
    page.click("#btn-model")
    page.locator("#costs .cost-dims input[name=batch]").wait_for()
    page.fill("#costs .cost-dims input[name=batch]", "4")
    page.click("#costs .cost-dims button[type=submit]")
    page.locator("#cost-table").wait_for()
    page.click("#btn-compare")
    page.locator("#compare-with option[value='rev:0']").wait_for(state="attached")
    assert page.locator("#compare-with option[value='rev:1']").text_content() == 'Revision 1: Set "x" to [batch, 4]'
    page.select_option("#compare-with", "rev:0")
    costs = page.locator("#compare-costs table")
    costs.wait_for()
    assert costs.locator("tr[data-cost=flops] td").all_text_contents()[1:] == ["72", "72", "same"]
    note = page.locator("#compare-sizes").text_content()
    assert "batch = 1 (revision 0 fixes it; not the 4 given in Costs)" in note, note
    page.locator("#compare-costs").screenshot(path=str(artifacts / "compare-costs-same-shapes.png"))


def test_a_dim_fixed_since_is_compared_at_its_size_and_long_names_wrap(page, server):
    """batch fixed to 1 while seq stays symbolic: both sides' costs are formulas in seq alone
    (revision 0's counted at batch = 1), so the change is "same", not −32·batch·seq + 32·seq; a
    long node name in the changed list wraps inside the panel."""
    mid = upload(page, server, position_slice_model(), "position_slice.onnx")["id"]
    long_name = "/model/embeddings/position_embeddings/" + "renamed_to_something_long_" * 3 + "MatMul"
    ops = [
        {"op": "set_io_shape", "name": "x", "shape": [1, "seq", 32], "update_types": True},
        {"op": "rename_node", "node": "@mm", "name": long_name},
    ]
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": ops})
    assert r.status == 200, r.text()
    costs = compared_with_revision_0(page, server, mid)
    flops = costs.locator("tr[data-cost=flops] .cost-side-value").all_text_contents()
    assert flops == ["1.06 K·seq", "1.06 K·seq", "same"], flops
    assert "batch = 1 (revision 1 fixes it)" in page.locator("#compare-costs").text_content()
    page.locator("#compare-changed .compare-node").first.wait_for()
    widths = page.evaluate(
        "() => { const s = document.getElementById('sidebar'); return [s.scrollWidth, s.clientWidth]; }"
    )
    assert widths[0] <= widths[1], widths


def test_a_dim_fixed_at_one_input_is_that_size_at_the_others_naming_it(page, server):
    """A decoder's input_ids batch fixed to 1 while its mask still says batch (the KV-cache QA):
    revision 1's mask is counted at batch 1 too, so the costs are "same", not 48·batch − 48."""
    from onnx import TensorProto, helper

    w = numpy_helper.from_array(np.ones((4, 8), np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["ids", "w"], ["z"], name="mm"),
            helper.make_node("Add", ["z", "mask"], ["y"], name="add"),
        ],
        "g",
        [
            helper.make_tensor_value_info("ids", TensorProto.FLOAT, ["batch", 4]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 8]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(page, server, model, "two_inputs.onnx")["id"]
    op = {"op": "set_io_shape", "name": "ids", "shape": [1, 4]}
    r = page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [op]})
    assert r.status == 200, r.text()
    costs = compared_with_revision_0(page, server, mid)
    flops = costs.locator("tr[data-cost=flops] td").all_text_contents()[1:]
    assert flops == ["72", "72", "same"], flops
    activations = costs.locator("tr[data-cost=activation_bytes] td").all_text_contents()[1:]
    assert activations[2] == "same", activations
    assert "batch = 1 (revision 1 fixes it)" in page.locator("#compare-sizes").text_content()


def decoder_like():
    """Three MatMuls over inputs of a decoder's dims (batch_size, past_sequence_length,
    sequence_length): formulas of a long product of long names, then shorter terms."""
    from onnx import TensorProto, helper

    dims = {
        "a": ["batch_size", "past_sequence_length", "sequence_length", 4],
        "b": ["sequence_length", 4],
        "c": ["past_sequence_length", 4],
    }
    graph = helper.make_graph(
        [helper.make_node("MatMul", [x, "W"], [f"y{x}"], name=f"mm_{x}") for x in dims],
        "decoder_like",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, d) for x, d in dims.items()],
        [helper.make_tensor_value_info(f"y{x}", TensorProto.FLOAT, [*d[:-1], 8]) for x, d in dims.items()],
        [numpy_helper.from_array(np.ones((4, 8), np.float32), "W")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# How the wrapping of the formula in `root` went wrong: a name or a number with its unit cut over
# two lines ("past_sequence_lengt|h", "21.4 | K"), or a term that fits on a line spread over two
# (the line broken inside it, the end of the term before on its first line: "·seq+ 299 | ·seq²").
WRAP_FAULTS = """root => {
  const nodes = [];
  let text = "";
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) { nodes.push([n, text.length]); text += n.data; }
  const lines = (from, to) => { // the lines the text from..to is on (text boxes only, no element's)
    const bottoms = [];
    for (const [n, start] of nodes) {
      const a = Math.max(from, start) - start, b = Math.min(to, start + n.data.length) - start;
      if (a >= b) continue;
      const r = document.createRange();
      r.setStart(n, a);
      r.setEnd(n, b);
      for (const x of r.getClientRects()) if (!bottoms.some((y) => Math.abs(y - x.bottom) < 3)) bottoms.push(x.bottom);
    }
    return bottoms.length;
  };
  const cs = getComputedStyle(root);
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
  const room = root.getBoundingClientRect().width;
  const faults = [];
  for (const m of text.matchAll(/[\\w.]+(?: (?:[KMGTP]i?B|[KMGTP]|B)(?![\\w]))?/g)) {
    if (lines(m.index, m.index + m[0].length) > 1) faults.push(`cut: ${m[0]}`);
  }
  const starts = [0, ...[...text.matchAll(/ (?=[+−] )/g)].map((m) => m.index + 1)];
  starts.forEach((from, k) => {
    const to = k + 1 < starts.length ? starts[k + 1] - 1 : text.length;
    const term = text.slice(from, to);
    if (ctx.measureText(term).width < room - 2 && lines(from, to) > 1) faults.push(`spread: ${term}`);
  });
  return faults;
}"""


def test_long_cost_formulas_wrap_between_terms_without_overlapping(page, server, artifacts):
    """The KV-cache QA: "299·batch_size·past_sequence_length·…" before and now printed over each
    other in a third of the sidebar each, ran out of the model panel, were cut in the node table.
    Each formula wraps between its terms, inside a term before a "·", never inside a name."""
    mid = upload(page, server, decoder_like(), "decoder_like.onnx")["id"]
    r = page.request.post(
        f"{server}/api/models/{mid}/edits",
        data={"base": 0, "ops": [{"op": "insert_node", "tensor": "ya", "op_type": "Relu", "name": "extra"}]},
    )
    assert r.status == 200, r.text()
    costs = compared_with_revision_0(page, server, mid)
    sides = costs.locator("tr[data-cost=flops] .cost-side-value")
    assert sides.first.text_content() == (
        "64·batch_size·past_sequence_length·sequence_length + 64·past_sequence_length + 64·sequence_length"
    )
    boxes = sides.evaluate_all(
        "els => els.map((e) => { const r = e.getBoundingClientRect(), t = e.closest('table').getBoundingClientRect();"
        " return [r.top, r.bottom, r.right, t.right]; })"
    )
    costs.screenshot(path=str(artifacts / "compare-costs-long.png"))
    assert len(boxes) == 3, boxes
    for (_, bottom, _, _), (top, *_) in itertools.pairwise(boxes):
        assert bottom <= top + 0.5, boxes  # one under the other, never over
    assert all(right <= table_right + 0.5 for *_, right, table_right in boxes), boxes
    for row in ("flops", "activation_bytes"):
        for side in costs.locator(f"tr[data-cost={row}] .cost-side-value").all():
            assert side.evaluate(WRAP_FAULTS) == [], side.text_content()

    # the model panel's formulas: inside the sidebar, wrapped as well
    page.click("#btn-model")
    page.locator("#costs[data-ready=true]").wait_for()
    formulas = page.locator("#costs .cost-formula")
    assert formulas.count() == 2
    page.locator("#costs").screenshot(path=str(artifacts / "model-costs-long.png"))
    sidebar_right = page.locator("#sidebar").evaluate("e => e.getBoundingClientRect().right")
    for formula in formulas.all():
        assert formula.evaluate(WRAP_FAULTS) == [], formula.text_content()
        assert formula.evaluate("e => e.getBoundingClientRect().right") <= sidebar_right
    # the node table's narrow columns: a formula wraps (inside a name if it must), never cut
    cells = page.locator("#cost-table td.num:has(.formula-term)")
    assert cells.count() >= 6
    assert cells.evaluate_all("tds => tds.filter((td) => td.scrollWidth > td.clientWidth).length") == 0
    # and the node panel's
    page.locator("#cost-table a.cost-node", has_text="mm_a").click()
    formula = page.locator("#node-costs .cost-formula").first
    formula.wait_for()
    assert formula.evaluate(WRAP_FAULTS) == [], formula.text_content()


def test_a_total_unknown_on_one_side_says_so_in_words(page, server):
    """A model of known sizes against one of symbolic sizes (no input of theirs alike, nothing to
    pin): the largest moment of the second has no formula. Said "unknown" (why in its title) and
    no change told, not "?" "?"."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["q", "W"], ["z"], name="mm")],
        "known_sizes",
        [helper.make_tensor_value_info("q", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 8])],
        [numpy_helper.from_array(np.ones((4, 8), np.float32), "W")],
    )
    known = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mid = upload(page, server, decoder_like(), "decoder_like.onnx")["id"]
    other = upload(page, server, known, "known_sizes.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-compare")
    page.locator(f"#compare-with option[value='model:{other}']").wait_for(state="attached")
    page.select_option("#compare-with", f"model:{other}")
    peak = page.locator("#compare-costs tr[data-cost=peak_activation_bytes] td")
    peak.first.wait_for()
    texts = peak.all_text_contents()
    assert texts[1].endswith(" B") and texts[2:] == ["unknown", "—"], texts
    assert "until the input sizes are given" in (peak.nth(2).locator("[title]").get_attribute("title") or "")


def test_a_model_stored_in_other_fields_is_said_to_hold_the_same(page, server, artifacts):
    """The same weights in float_data instead of raw_data: not "10 tensors with other values"."""
    model = tiny_cnn()
    other = tiny_cnn()
    for t in other.graph.initializer:
        values = numpy_helper.to_array(t)
        if values.dtype == np.float32:
            t.ClearField("raw_data")
            t.float_data.extend(values.reshape(-1).tolist())
    mid = upload(page, server, model, "tiny_cnn.onnx")["id"]
    other_id = upload(page, server, other, "tiny_cnn_typed.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-compare")
    page.locator(f"#compare-with option[value='model:{other_id}']").wait_for(state="attached")
    page.select_option("#compare-with", f"model:{other_id}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    assert (
        page.locator("#compare-summary")
        .text_content()
        .startswith("The two hold the same model: only how its tensors are stored differs")
    )
    assert page.locator("#sidebar .compare-legend").count() == 0  # nothing marked on the drawing
    page.screenshot(path=str(artifacts / "compare-same-content.png"))


def test_the_summary_counts_tensors_added_and_removed(page, server):
    """A re-export's weights renamed and given other values are added and removed tensors: the
    summary line left them out (QA16 #4)."""
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    op = {"op": "add_initializer", "name": "spare", "value": {"dtype": "FLOAT", "shape": [2], "values": [1, 2]}}
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [op]}).status == 200
    assert "0 nodes changed, 0 added, 0 removed, 1 tensor added (" in compared_with_revision(page, server, mid, 1)


def test_training_and_sparse_changes_are_lines_of_their_own(page, server, artifacts):
    """A training algorithm's node edited and a sparse initializer renamed: the Model section
    says where in training it changed (it read "training_info changed") and Tensors lists the
    rename (it showed only as the Add's inputs changing, QA22 p5)."""
    old = sparse_training_model()
    new = sparse_training_model()
    new.training_info[0].algorithm.node[1].op_type = "Add"
    new.graph.sparse_initializer[0].values.name = "S_renamed"
    new.graph.node[0].input[1] = "S_renamed"
    mid = upload(page, server, new, "trained.onnx")["id"]
    other_id = upload(page, server, old, "trained_before.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-compare")
    page.locator(f"#compare-with option[value='model:{other_id}']").wait_for(state="attached")
    page.select_option("#compare-with", f"model:{other_id}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    body = page.locator("#compare-body").text_content()
    assert "training 0 algorithm: 1 node changed" in body
    assert "S renamed to S_renamed" in body
    assert page.locator("#compare-changed li").count() == 1  # the algorithm's node, not the Add
    page.screenshot(path=str(artifacts / "compare-training-sparse.png"))


def test_a_rewired_input_reads_as_the_place_that_changed(page, server, artifacts):
    """QA28: an inputs change showed both whole lists in two narrow columns, every name again,
    breaking mid-name: a row for each place that differs ("input 0: p1 → r1")."""
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    op = {"op": "set_node_input", "node": "@gap", "index": 0, "tensor": "r1"}
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": [op]}).ok
    compared_with_revision(page, server, mid, 1)
    row = page.locator("#compare-changed li[data-node=n3] .compare-fields tbody tr")
    assert row.count() == 1
    assert [c.strip() for c in row.first.locator("td").all_text_contents()] == ["input 0", "p1", "r1"]


def test_a_comparison_and_the_node_stepped_to_are_in_the_link(page, server):
    """QA32 #12: Compare's Next put the graph in the URL, not the comparison nor the node; a
    reload (or the link sent) opened the plain graph."""
    mid = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")["id"]
    ops = [{"op": "set_attribute", "node": "n6", "name": "alpha", "value": 0.5}]
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": ops}).status == 200
    compared_with_revision(page, server, mid, 1)
    assert hash_params(page)["compare"] == "rev:0"
    page.click("#compare-next")
    page.locator("#graph g.box.diff-focus").wait_for()
    params = hash_params(page)
    assert (
        params["compare"] == "rev:0"
        and params["focus"] == "@" + page.request.get(f"{server}/api/models/{mid}/node?id=n6").json()["name"]
    )
    assert params["at"] == "1"  # the revision pinned: the link compares these two, whatever comes after
    link = page.url
    page.reload()
    page.locator("#compare-body[data-ready=true]").wait_for()
    page.locator("#graph g.box.diff-focus").wait_for()
    assert page.locator("#graph g.box.diff-focus").get_attribute("data-node-id") == "n6"
    assert page.locator("#sidebar .compare-current").get_attribute("data-node") == "n6"
    # closed, the link is the graph's again
    page.click("#compare-stop")
    page.wait_for_function("() => !location.hash.includes('compare=')")
    # the model edited since (QA35 #1): the link still opens revision 1 against 0, at its node
    ops = [{"op": "rename_node", "node": "n0", "name": "first_conv"}]
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 1, "ops": ops}).status == 200
    page.goto("about:blank")
    page.goto(link)
    page.locator("#compare-body[data-ready=true]").wait_for()
    assert "From revision 0 to revision 1" in page.locator("#compare-summary").text_content()
    page.locator("#graph g.box.diff-focus").wait_for()
    assert page.locator("#graph g.box.diff-focus").get_attribute("data-node-id") == "n6"
    # while viewing an older revision too
    page.goto(link.replace("compare=rev%3A0", "compare=rev%3A2"))
    page.locator("#compare-body[data-ready=true]").wait_for()
    assert "revision 2" in page.locator("#compare-summary").text_content()


def test_an_if_changed_only_in_its_branch_is_counted_apart(page, server):
    """QA35 #10: one node renamed in a branch read "2 nodes changed": the If holding it too."""
    from test_addresses import chain_model  # tests/ is on sys.path

    mid = upload(page, server, chain_model(), "chain.onnx")["id"]
    ops = [{"op": "rename_node", "node": "@branch/then_branch/@then_add", "name": "plus_one"}]
    assert page.request.post(f"{server}/api/models/{mid}/edits", data={"base": 0, "ops": ops}).status == 200
    summary = compared_with_revision(page, server, mid, 1)
    assert "From revision 0 to revision 1: 1 node changed (and the one holding them), 0 added, 0 removed" in summary
