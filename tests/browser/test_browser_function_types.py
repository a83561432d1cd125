"""A model-local function's body drawn with its values' types as at one call of it (QA 11, F7):
edges labelled, its inputs and outputs typed, the sidebar naming the call."""

from __future__ import annotations

import onnx
import onnx.parser

from .browser_pages import open_model, upload, wait_ready

# torch's export_modules_as_functions: Linear called with two shapes, GELU once, Unused never
MLP = """
<ir_version: 8, opset_import: ["" : 17, "pkg.torch.nn" : 1]>
torch_jit (float[batch, 16] input, float[16, 32] w1, float[32] b1, float[32, 8] w2, float[8] b2)
  => (float[batch, 8] output) {
   l1 = pkg.torch.nn.Linear (input, w1, b1)
   a1 = pkg.torch.nn.GELU (l1)
   output = pkg.torch.nn.Linear (a1, w2, b2)
}
<domain: "pkg.torch.nn", opset_import: ["" : 17]>
Linear (x, w, b) => (y) {
   mm = MatMul (x, w)
   y = Add (mm, b)
}
<domain: "pkg.torch.nn", opset_import: ["" : 17]>
GELU <approximate: string = "none"> (x) => (y) {
   c = Constant <value_float: float = 0.70710677> ()
   xs = Mul (x, c)
   e = Erf (xs)
   one = Constant <value_float: float = 1.0> ()
   ep = Add (e, one)
   half = Constant <value_float: float = 0.5> ()
   xh = Mul (x, half)
   y = Mul (xh, ep)
}
<domain: "pkg.torch.nn", opset_import: ["" : 17]>
Unused (x) => (y) {
   y = Relu (x)
}
"""


def mlp_model() -> onnx.ModelProto:
    model = onnx.parser.parse_model(MLP)
    for i, n in enumerate(model.graph.node):
        n.name = f"/{n.op_type.lower()}_{i}"
    onnx.checker.check_model(model, full_check=True)
    return model


def open_function(page, server: str, model_id: str, k: int) -> None:
    open_model(page, server, model_id, f"#path=fn%5B{k}%5D")
    page.wait_for_selector(f"#graph[data-state=ready] [data-node-id='fn[{k}]/n0']")
    wait_ready(page)


def text_of(page, selector: str) -> str:
    return page.locator(selector).text_content().replace("\u00a0", " ")


def test_a_function_body_shows_the_types_of_a_call(page, server, artifacts):
    summary = upload(page, server, mlp_model(), "mlp.onnx")

    # GELU, called once: every edge labelled, its input and output typed, the call named
    open_function(page, server, summary["id"], 1)
    labels = page.locator("#graph .edge-label").all_text_contents()
    assert len(labels) == page.locator("#graph path.edge").count(), labels
    assert set(labels) == {"FLOAT ⟨batch×32⟩"}, labels
    assert text_of(page, "#graph g.box.io[data-io=input] .t-ioType") == "FLOAT ⟨batch×32⟩ (inferred)"
    assert text_of(page, "#graph g.box.io[data-io=output] .t-ioType") == "FLOAT ⟨batch×32⟩ (inferred)"
    note = page.locator("#sidebar .typed-at")
    assert text_of(page, "#sidebar .typed-at") == "Types as at the call /gelu_1"
    assert note.locator("a").get_attribute("data-node") == "n1"
    page.screenshot(path=str(artifacts / "function-types-gelu.png"))

    # a value of the body: its panel says where its type comes from
    page.click("#graph path.edge[data-tensor=xs]", force=True)
    page.locator("#sidebar", has_text="inferred as at the call /gelu_1").wait_for()

    # Linear, called with two shapes: typed as at the first call, and the note says others differ
    open_function(page, server, summary["id"], 0)
    labels = page.locator("#graph .edge-label").all_text_contents()
    # x, w, b, mm and y (the output's edge)
    assert sorted(labels) == ["FLOAT ⟨16×32⟩", "FLOAT ⟨32⟩", "FLOAT ⟨batch×16⟩", *["FLOAT ⟨batch×32⟩"] * 2], labels
    assert text_of(page, "#sidebar .typed-at") == (
        "Types as at the call /linear_0 (one of 2 calls; other calls take other types)"
    )
    page.screenshot(path=str(artifacts / "function-types-linear.png"))

    # Unused: no call, no types, as before
    open_function(page, server, summary["id"], 2)
    assert page.locator("#graph .edge-label").count() == 0
    assert text_of(page, "#graph g.box.io[data-io=input] .t-ioType") == "untyped (function)"
    assert "no call of this function has known input types" in text_of(page, "#sidebar .typed-at")
