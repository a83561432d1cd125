"""Reference checks on the page: a run kept as a reference case, an edit that changes the
outputs said at once (toast, badge, model panel, history), undo back to outputs as kept, and
cases added and dropped in the model panel."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper as nh

from .browser_pages import open_model, upload, wait_revision


def leaky_linear() -> onnx.ModelProto:
    """y = LeakyRelu(x·W + b): alpha moves every negative output (no softmax to saturate)."""
    rng = np.random.default_rng(0)
    inits = [
        nh.from_array(rng.standard_normal((4, 6)).astype(np.float32), "W"),
        nh.from_array(np.zeros(6, np.float32), "b"),
    ]
    nodes = [
        h.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
        h.make_node("Add", ["xw", "b"], ["z"], name="add"),
        h.make_node("LeakyRelu", ["z"], ["y"], name="act", alpha=0.1),
    ]
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 4])
    y = h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 6])
    graph = h.make_graph(nodes, "leaky_linear", [x], [y], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_a_kept_run_flags_the_edit_that_changes_the_outputs(page, server, artifacts):
    mid = upload(page, server, leaky_linear(), "leaky.onnx")["id"]
    open_model(page, server, mid)
    badge = page.locator("#model-reference")
    assert badge.is_hidden()  # no cases: nothing to say

    page.click("#btn-run")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    page.click("#run-keep-reference")
    assert "Kept as “case 1”" in page.locator("#run-kept").text_content()
    assert badge.text_content() == "outputs as kept"

    page.click("#graph [data-node-id=n2]")
    panel = page.locator("#sidebar")
    panel.locator("[data-attr=alpha] input[name=value]").fill("0.5")
    panel.locator("[data-attr=alpha] button[type=submit]").click()
    wait_revision(page, 1)
    toast = page.locator("#toast.error")
    toast.wait_for()
    assert "Revision 1 no longer gives the outputs kept for the model" in toast.text_content()
    assert (
        "case “case 1”: y is" in toast.text_content() and "of its range off (tolerance 0.1 %)" in toast.text_content()
    )
    assert badge.text_content() == "outputs differ" and "badge-warn" in badge.get_attribute("class")

    page.click("#btn-model")
    row = page.locator(".reference-check[data-status=failed]")
    row.wait_for()
    assert "its case differs" in row.text_content()
    row.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "reference-failed.png"))

    # from the verdict to where the outputs part: both revisions run on the same inputs, at once
    page.click(".ref-locate")
    page.locator("#sidebar[data-panel=run]").wait_for()
    page.locator("#run-results[data-ready=true]").wait_for()  # no Run to press: the link finds it
    assert page.locator("#run-compare-to").input_value() == "0"
    assert "On the inputs of reference case “case 1”" in page.locator("#run-case").text_content()
    assert "act" in page.locator("#run-diverges").text_content()
    # on the case's very inputs: y against its kept values, and against revision 0's, differs
    assert page.locator("#run-expected tr[data-output=y] td").nth(1).text_content() == "differs"
    assert page.locator("#run-compare tr[data-output=y] td").nth(1).text_content() == "differs"
    assert page.locator("#run-keep-reference").count() == 0  # it is a case already

    page.click("#btn-history")
    page.locator("#history-list[data-ready=true]").wait_for()
    assert page.locator(".hist-item[data-revision='1'] .hist-reference").text_content() == "outputs differ"
    assert page.locator(".hist-item[data-revision='0'] .hist-reference").text_content() == "outputs as kept"

    page.click("#history-undo")
    wait_revision(page, 0)
    page.locator("#model-reference.badge-ok").wait_for()
    assert badge.text_content() == "outputs as kept"


def test_cases_are_kept_and_dropped_in_the_model_panel(page, server):
    mid = upload(page, server, leaky_linear(), "leaky.onnx")["id"]
    open_model(page, server, mid)
    page.locator(".reference-check[data-status=none]").wait_for()
    page.click(".ref-toggle")
    page.locator(".ref-case-list").wait_for()
    page.click("#ref-keep-random")
    page.locator(".ref-case[data-name='case 1']").wait_for()
    page.click("#ref-keep-random")
    page.locator(".ref-case[data-name='case 2']").wait_for()
    assert "x float32 (2×4)" in page.locator(".ref-case[data-name='case 2']").text_content().replace("⟨", "(").replace(
        "⟩", ")"
    )
    page.locator(".reference-check[data-status=passed]").wait_for()
    assert "all 2 cases give their outputs, bit for bit" in page.locator(".reference-check").text_content()
    assert page.locator(".ref-case[data-name='case 2'] .ref-case-verdict").text_content() == "gives its outputs"
    # two seeds: two different inputs
    cases = page.request.get(f"{server}/api/models/{mid}/checks").json()["cases"]
    assert cases[0]["inputs"]["x"]["npy"] != cases[1]["inputs"]["x"]["npy"]
    # a case runs in the Run panel on its kept inputs, held to its kept outputs
    page.click(".ref-case[data-name='case 2'] .ref-run")
    page.locator("#run-case").wait_for()
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-expected tr[data-output=y] td").nth(1).text_content() == "identical"
    page.click("#btn-model")
    page.click(".ref-toggle")
    page.locator(".ref-case[data-name='case 1']").wait_for()
    page.click(".ref-case[data-name='case 1'] .ref-drop")
    page.locator(".ref-case[data-name='case 1']").wait_for(state="detached")
    assert [c["name"] for c in page.request.get(f"{server}/api/models/{mid}/checks").json()["cases"]] == ["case 2"]
    page.fill(".ref-tolerance", "5")
    page.click(".ref-cases button:text('Set')")
    page.locator(".ref-cases:not(.pending)").wait_for()
    assert page.locator(".ref-tolerance").input_value() == "5"
    assert page.request.get(f"{server}/api/models/{mid}/checks").json()["tolerance"] == 0.05


def test_a_zoo_archive_opens_with_its_test_data_sets_as_cases(page, server, tmp_path, artifacts):
    """A .zip as the model zoo packs a model (the folder, model.onnx, test_data_set_N/) dropped on
    the models page: the model page opens saying which sets it kept and which not, and why."""
    import io
    import zipfile

    from testkit import ONNX_DATA

    folder = ONNX_DATA / "pytorch-converted" / "test_ReLU"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for p in folder.rglob("*.pb"):
            z.write(p, f"relu/{p.relative_to(folder).as_posix()}")
            z.write(p, f"relu/test_data_set_9/{p.name.replace('input_0', 'input_1')}")  # numbered with a gap
        z.write(folder / "model.onnx", "relu/model.onnx")
    (tmp_path / "relu.zip").write_bytes(buf.getvalue())
    page.goto(server + "/")
    page.set_input_files("#file-input", str(tmp_path / "relu.zip"))
    toast = page.locator("#toast.error")
    toast.wait_for()
    text = toast.text_content()
    assert "Kept test_data_set_0 as reference case: every revision is held to their outputs." in text
    assert "test_data_set_9 not kept: it lacks input_0.pb" in text
    page.locator("#model-reference.badge-ok").wait_for()
    page.screenshot(path=str(artifacts / "zoo-archive.png"))
    # handed on as it came: the model with its test data, from the Download section
    link = page.locator("#download-with-tests")
    assert "tests=1" in link.get_attribute("href")
    with page.expect_download() as got:
        link.click()
    assert got.value.suggested_filename == "relu.zip"  # relu/model.onnx is listed by its folder
    # the models page says it too, for every model whose head was checked
    page.goto(server + "/")
    assert page.locator("#models-table tbody tr .badge-reference").text_content() == "outputs as kept"


def test_a_gate_refuses_the_edit_in_its_form(page, server, artifacts):
    mid = upload(page, server, leaky_linear(), "leaky.onnx")["id"]
    open_model(page, server, mid)
    page.click(".ref-toggle")
    page.locator(".ref-case-list").wait_for()
    page.click("#ref-keep-random")
    page.locator(".ref-case[data-name='case 1']").wait_for()
    page.check("#ref-gate")
    page.locator(".ref-cases:not(.pending)").wait_for()
    assert page.request.get(f"{server}/api/models/{mid}/checks").json()["gate"] is True

    page.click("#graph [data-node-id=n2]")
    panel = page.locator("#sidebar")
    panel.locator("[data-attr=alpha] input[name=value]").fill("0.5")
    panel.locator("[data-attr=alpha] button[type=submit]").click()
    error = panel.locator("[data-attr=alpha] .field-error:not([hidden])")
    error.wait_for()
    assert "the edit changes what the model computes: case 'case 1': y is" in error.text_content()
    assert page.locator("#model-revision").text_content() == "rev 0"
    page.screenshot(path=str(artifacts / "reference-gate.png"))


def test_the_next_export_copies_the_cases_of_the_last(page, server):
    first = upload(page, server, leaky_linear(), "v1.onnx")["id"]
    body = {"inputs": {"x": {"random": {"seed": 4}}}}
    assert page.request.post(f"{server}/api/models/{first}/checks", data=body).status == 201
    nxt = leaky_linear()
    nxt.graph.node[2].attribute[0].f = 0.3  # the next export computes a little differently
    second = upload(page, server, nxt, "v2.onnx")["id"]
    open_model(page, server, second)
    page.click(".ref-toggle")
    page.locator(f"#ref-copy-from option[value='{first}']").wait_for(state="attached")
    page.select_option("#ref-copy-from", first)
    page.click("#ref-copy")
    page.locator(".ref-case[data-name='case 1']").wait_for()
    assert "outputs of v1.onnx's case “case 1”" in page.locator(".ref-case[data-name='case 1']").text_content()
    page.locator(".reference-check[data-status=failed]").wait_for()
    assert page.locator(".ref-case[data-name='case 1'] .ref-case-verdict").text_content() == "differs"
    assert page.locator("#toast").text_content() == "Copied case 1."


def test_a_case_runs_under_its_inputs_and_outputs_new_names(page, server):
    """Kept, then the input and the output renamed: the case still passes, and "Run it" feeds
    the renamed input and holds the renamed output to the kept values."""
    mid = upload(page, server, leaky_linear(), "leaky.onnx")["id"]
    api = f"{server}/api/models/{mid}"
    assert page.request.post(f"{api}/checks", data={"inputs": {"x": {"random": {"seed": 1}}}}).status == 201
    ops = [{"op": "rename_tensor", "from": "x", "to": "features"}, {"op": "rename_tensor", "from": "y", "to": "scores"}]
    assert page.request.post(f"{api}/edits", data={"base": 0, "ops": ops}).status == 200
    open_model(page, server, mid)
    page.locator(".reference-check[data-status=passed]").wait_for()
    page.click(".ref-toggle")
    page.locator(".ref-case[data-name='case 1'] .ref-case-verdict").wait_for()
    assert page.locator(".ref-case[data-name='case 1'] .ref-case-verdict").text_content() == "gives its outputs"
    page.click(".ref-case[data-name='case 1'] .ref-run")
    page.locator("#run-case").wait_for()
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    assert page.locator("#run-expected tr[data-output=scores] td").nth(1).text_content() == "identical"
