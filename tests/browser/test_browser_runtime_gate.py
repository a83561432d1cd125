"""The model panel shows onnxruntime's verdict next to the checker's, and why a revision that
was stored past a gate is invalid."""

from __future__ import annotations

import onnxruntime as ort
from test_runtime_gate import RUNTIME_ONLY, classifier, flattener  # tests/ is on sys.path, as for test_edits.py

from .browser_models import reflect_padded, reshaped_to
from .browser_pages import open_model, upload


def test_runtime_verdict_and_invalid_marks_in_the_model_panel(page, server, artifacts):
    summary = upload(page, server, classifier(), "classifier.onnx")
    open_model(page, server, summary["id"])
    row = page.locator("#validation .runtime-check")
    assert row.get_attribute("data-status") == "ok"
    assert f"onnxruntime {ort.__version__}" in row.text_content() and "loads and runs it" in row.text_content()
    assert page.locator("#model-validity").text_content() == "valid"

    # stored past the gate through the API: the page shows the failure, its node and why
    op = RUNTIME_ONLY
    r = page.request.post(
        f"{server}/api/models/{summary['id']}/edits", data={"base": 0, "ops": [op], "allow_invalid": True}
    )
    assert r.ok, r.text()
    open_model(page, server, summary["id"])
    row = page.locator("#validation .runtime-check[data-status=fails]")
    assert "Input channels C is not equal to kernel channels * group" in row.text_content()
    assert row.locator("a.inference-link").text_content() == "Conv conv1 ›"
    marks = page.locator("#validation .invalid-marks")
    assert "onnxruntime can't run the edited model" in marks.text_content()
    assert page.locator("#model-validity").text_content() == "onnxruntime fails"
    page.screenshot(path=str(artifacts / "runtime-gate-invalid.png"))

    # the history marks the revision stored past the gate
    page.click("#btn-history")
    mark = page.locator("#history-list > li[data-revision='1'] .hist-invalid")
    mark.wait_for()
    assert mark.text_content() == "stored invalid"
    assert "kernel channels * group" in mark.get_attribute("title")
    assert page.locator("#history-list > li[data-revision='0'] .hist-invalid").count() == 0


def test_an_edit_whose_background_smoke_run_fails_says_so_at_once(page, server, monkeypatch, artifacts):
    """A big model's edit is stored before onnxruntime's smoke run ends (the gate can't wait):
    when that run then fails where the base ran, the page says so in a toast naming the cause,
    and the badge never calls the model valid."""
    monkeypatch.setattr("app.api.runtime.SYNC_BYTES", 0)  # every model checked in the background
    monkeypatch.setattr("app.api.runtime.GATE_WAITS_SECONDS", -1.0)
    summary = upload(page, server, classifier(), "classifier.onnx")
    open_model(page, server, summary["id"])
    page.wait_for_function("() => document.querySelector('#model-validity').textContent === 'valid'", timeout=30_000)
    open_model(page, server, summary["id"], "#node=@softmax")
    page.fill(".attr[data-attr=axis] input[name=value]", "7")  # onnx's checks pass it; onnxruntime can't run it
    page.click(".attr[data-attr=axis] button[type=submit]")
    toast = page.locator("#toast.error")
    toast.wait_for(timeout=30_000)
    assert "onnxruntime can't run revision 1, which your edit made" in toast.text_content()
    assert 'node "softmax" (Softmax)' in toast.text_content()
    assert page.locator("#model-validity").text_content() == "onnxruntime fails"
    page.wait_for_timeout(1000)  # the edit's own "Saved as revision 1" must not replace it
    assert "your edit made" in page.locator("#toast.error:not([hidden])").text_content()
    page.screenshot(path=str(artifacts / "runtime-gate-background-failure.png"))


def test_an_edit_stored_before_onnxruntime_ran_says_it_is_still_checked(page, server, monkeypatch):
    """QA17 F12: past the gate's wait, an edit is stored first and onnxruntime's verdict comes
    later: the save's words say so, not only a badge that changes seconds later."""
    monkeypatch.setattr("app.api.runtime.SYNC_BYTES", 0)
    monkeypatch.setattr("app.api.runtime.GATE_WAITS_SECONDS", -1.0)
    summary = upload(page, server, classifier(), "classifier.onnx")
    open_model(page, server, summary["id"], "#node=@softmax")
    page.fill(".attr[data-attr=axis] input[name=value]", "1")
    page.click(".attr[data-attr=axis] button[type=submit]")
    toast = page.locator("#toast.info", has_text="Saved as revision 1")
    toast.wait_for(timeout=30_000)
    assert toast.text_content().endswith("onnxruntime is still checking it: the badge says when it is done.")


def test_a_failure_on_made_up_sizes_is_not_called_broken(page, server, artifacts):
    """A model that fails the smoke run only on sizes the run made up (a reflect pad longer than
    any size tried) is badged "smoke run fails", and its panel says the inputs were made up; a
    Run at sizes it takes makes those its verdict's (QA23 F1): badged valid, the sizes said."""
    summary = upload(page, server, reflect_padded(2000, fixed=False), "padded.onnx")
    open_model(page, server, summary["id"])
    page.wait_for_function(
        "() => document.querySelector('#model-validity').textContent === 'smoke run fails'", timeout=30_000
    )
    row = page.locator("#validation .runtime-check[data-status=fails]")
    assert "loads it, fails on made-up inputs" in row.text_content()
    assert "Run it on real inputs" in row.locator(".runtime-note").text_content()
    page.screenshot(path=str(artifacts / "runtime-made-up-inputs.png"))
    page.click("#btn-run")
    page.fill(".run-dim[aria-label=sequence]", "2500")
    page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    # the check again at those sizes runs in the background: the page as it is once it is kept
    for _ in range(60):
        page.reload()
        page.locator("#model-validity").wait_for()
        if page.locator("#model-validity").text_content() == "valid":
            break
        page.wait_for_timeout(500)
    page.click("#btn-model")
    row = page.locator("#validation .runtime-check[data-status=ok]")
    assert "loads and runs it at batch 1, sequence 2500 (a run's sizes)" in row.text_content()
    # the Run panel starts from them
    page.click("#btn-run")
    assert page.locator(".run-dim[aria-label=sequence]").input_value() == "2500"


def test_a_model_that_runs_only_at_batch_one_is_badged_so(page, server, artifacts):
    """Declared with a dynamic batch, a Reshape to [1, 6] inside: onnxruntime runs it at 1 and
    not at 2. The badge says "runs at size 1 only" (not plain "valid"), the panel says where it
    fails with the node linked."""
    summary = upload(page, server, flattener([1, 6]), "batch1.onnx")
    open_model(page, server, summary["id"])
    badge = page.locator("#model-validity")
    assert badge.text_content() == "valid · runs at size 1 only"
    assert "badge-warn" in (badge.get_attribute("class") or "")
    assert "batch at 1, but not at 2" in (badge.get_attribute("title") or "")
    row = page.locator("#validation .runtime-check.warn")
    assert "runs it, but only at size 1" in row.text_content()
    assert 'With batch at 2: node "flatten" (Reshape)' in row.text_content()
    assert row.locator("a.inference-link").text_content() == "Reshape flatten ›"
    row.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "runtime-size-one-only.png"))
    row.locator("a.inference-link").click()
    page.wait_for_function("() => location.hash.includes('flatten') || location.hash.includes('n0')")


def test_a_model_fixing_one_of_two_dims_names_it(page, server):
    """x [batch, sequence] reshaped to [0, 1]: with both at 2 it fails; the panel and the badge
    say sequence alone fails and batch alone runs."""
    model = reshaped_to(["batch", "sequence"], [0, 1], ["batch", 1])
    open_model(page, server, upload(page, server, model, "fold.onnx")["id"])
    badge = page.locator("#model-validity")
    assert badge.text_content() == "valid · runs at size 1 only"
    assert "(sequence alone fails)" in (badge.get_attribute("title") or "")
    note = page.locator("#validation .runtime-check.warn .runtime-alone")
    assert note.text_content() == "Each alone at 2, the others at 1: sequence fails; batch runs."
    said = page.locator("#validation .runtime-check.warn .runtime-note").text_content()
    assert said.startswith("The model declares sequence dynamic, yet fails when it is not 1")


def test_an_output_declared_in_another_shape_is_said_with_its_fix(page, server, artifacts):
    """y declared [1, 3] on a batch-dynamic input comes back [2, 3] from the smoke run at batch 2:
    the Validation section says so with a "Declare it" button, which makes a revision whose
    verdict no longer names it."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
    )
    summary = upload(page, server, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "y13.onnx")
    open_model(page, server, summary["id"])
    note = page.locator("#validation .callout-warn")
    note.wait_for()
    assert "Output y came back ⟨2×3⟩ with batch at 2; the model declares ⟨1×3⟩" in note.text_content()
    assert page.locator("#model-validity").text_content() == "valid"
    note.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "runtime-declared-shape.png"))
    fix = note.locator("button.run-declare")
    assert fix.text_content() == "Declare it ⟨batch×3⟩"  # the batch it follows, not an unknown dim
    fix.click()
    page.wait_for_function("() => document.querySelector('#model-revision').textContent === 'rev 1'")
    page.wait_for_function("() => !document.querySelector('#validation .callout-warn')", timeout=15_000)
    graph = page.request.get(f"{server}/api/models/{summary['id']}/graph").json()
    assert graph["outputs"][0]["shape"] == ["batch", 3], graph["outputs"]


def test_a_named_dim_coming_back_at_another_size_is_said_without_a_declare_button(page, server, artifacts):
    """y declared [batch, seq, 16] comes back [1, 4, 16] at 2: the model folds its batch; no
    declaration fixes that (QA16 #1)."""
    model = reshaped_to(["batch", "seq", 16], [1, -1, 16], ["batch", "seq", 16])
    open_model(page, server, upload(page, server, model, "fold.onnx")["id"])
    page.click("#btn-model")
    callout = page.locator("#sidebar .callout", has_text="A named dim comes back at another size")
    callout.wait_for()
    assert "batch, seq are not the sizes fed" in callout.text_content()
    assert callout.locator(".run-declare").count() == 0
    callout.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "runtime-folded-batch.png"))


def test_a_named_dim_folded_at_the_first_size_is_said_without_a_declare_button(page, server):
    """QA17 F2: ResNet-50 at 320x320 folds its 4x4 pool into the batch, the classifier's output
    coming back 16 rows at batch 1; the page offered "Declare it ⟨batch×1000⟩", which changed
    nothing. Here y [batch, 4] comes back [2, 4] at batch 1."""
    model = reshaped_to(["batch", 2, 4], [-1, 4], ["batch", 4])
    open_model(page, server, upload(page, server, model, "fold1.onnx")["id"])
    page.click("#btn-model")
    callout = page.locator("#sidebar .callout", has_text="A named dim comes back at another size")
    callout.wait_for()
    assert "came back ⟨2×4⟩; the model declares ⟨batch×4⟩" in callout.text_content()
    assert "batch is not the size fed" in callout.text_content()
    assert page.locator("#sidebar .run-declare").count() == 0
