"""A linear model's node panel: its weights as a table — a column per class with the intercepts
below, the features by weight (a bar each), negative weights marked."""

from __future__ import annotations

from onnx import TensorProto, helper
from test_coefficients import CASES
from test_ml_types import _model

from .browser_pages import open_model, upload


def test_the_coefficients_section_tables_a_logistic_regression(page, server, artifacts):
    model = _model([CASES["logistic regression, 3 classes"]()])
    model.graph.node[0].name = "classifier"
    del model.graph.output[:]  # declared as a converter declares them: the model passes the checker
    model.graph.output.extend(
        [
            helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", 3]),
        ]
    )
    summary = upload(page, server, model, "logreg.onnx")
    open_model(page, server, summary["id"], "#node=n0")
    section = page.locator("#node-coefficients")
    page.locator("#coef-features").wait_for()
    assert section.locator(".coef-summary").text_content() == "3 classes × 4 features"
    heads = page.locator("#coef-features thead th").all_text_contents()
    assert heads == ["Feature", "class 4", "class 5", "class 6", "weight"]
    rows = page.locator("#coef-features tbody tr[data-feature]")
    assert rows.count() == 4
    widths = [
        float(rows.nth(i).locator(".trees-bar").evaluate("e => e.getBoundingClientRect().width")) for i in range(4)
    ]
    assert widths == sorted(widths, reverse=True) and widths[-1] > 0  # the heaviest feature first
    intercepts = page.locator("#coef-features tr.coef-intercept td").all_text_contents()
    assert intercepts[:4] == ["intercept", "0.5", "-1", "2"]
    assert page.locator("#coef-features td.coef-neg").count() >= 1
    assert "null" not in section.text_content()
    page.locator("#model-validity.badge-ok").wait_for()  # a model as converters write it: valid
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "node-coefficients.png"))


def test_a_weight_is_changed_in_its_cell(page, server):
    """A click on a weight makes it a field; Enter sets that one item of `coefficients`
    (revision 1), the table redrawn with it; the intercepts likewise."""
    import onnx

    from .browser_pages import wait_revision

    model = _model([CASES["logistic regression, 3 classes"]()])
    summary = upload(page, server, model, "logreg.onnx")
    open_model(page, server, summary["id"], "#node=n0")
    cell = page.locator("#coef-features tr[data-feature='2'] td").nth(2)  # X[2], class 5
    cell.click()
    page.fill("#coef-features .coef-field", "0")
    page.press("#coef-features .coef-field", "Enter")
    wait_revision(page, 1)
    page.locator("#coef-features tr[data-feature='2']").wait_for()
    data = page.request.get(f"{server}/api/models/{summary['id']}/download").body()
    weights = onnx.helper.get_attribute_value(onnx.load_from_string(data).graph.node[0].attribute[1])
    before = onnx.helper.get_attribute_value(model.graph.node[0].attribute[1])
    assert weights[1 * 4 + 2] == 0.0 and [w for k, w in enumerate(weights) if k != 6] == [
        w for k, w in enumerate(before) if k != 6
    ]
    assert page.locator("#coef-features tr[data-feature='2'] td").nth(2).text_content() == "0"
