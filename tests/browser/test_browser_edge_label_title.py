"""An edge label cut to fit (torch dynamo names dims by their expressions: ((height - 1)//2)…)
shows its whole text on hover over the edge (QA23 F11; the label's own text stays the label)."""

from __future__ import annotations

import onnx
from onnx import helper

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload

H = "((((height - 1)//2 - 1)//2 - 1)//2 + 1)"
W = "((((width - 1)//2 - 1)//2 - 1)//2 + 1)"


def test_a_cut_edge_label_shows_its_whole_type_on_hover(page, server):
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"], name="act"), helper.make_node("Neg", ["h"], ["y"], name="neg")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 128, H, W])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", 128, H, W])],
        value_info=[helper.make_tensor_value_info("h", onnx.TensorProto.FLOAT, ["batch", 128, H, W])],
    )
    summary = upload(page, server, helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "dims.onnx")
    open_model(page, server, summary["id"])
    label = page.locator(".edge-label[data-tensor=h]")
    shown = label.text_content()
    title = page.locator("path.edge[data-tensor=h] title").text_content()
    assert "…" in shown and len(shown) < len(title)
    assert title == f"h: FLOAT ⟨batch×128×({H})×({W})⟩"


def test_sizes_onnx_inference_invents_read_as_unknown(page, server):
    """Where onnxruntime's symbolic inference can't name them (a big graph past its time, a
    model it raises on), onnx's inference calls sizes it can't tell unk__0, unk__1: a shape reads
    "?" for them as for any unknown size, not names the model never had."""
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    shown = page.evaluate(
        "async () => { const f = await import('/static/js/lib/format.js');"
        " return [f.formatShape(['unk__3', 'unk__14', 768]), f.formatShape(['batch', 'unk_len', 'unk__2x'])]; }"
    )
    assert shown == ["⟨?×?×768⟩", "⟨batch×unk_len×unk__2x⟩"]
    # onnxruntime's name for an If output's size its branches make differently (QA32 #10)
    shown = page.evaluate(
        "async () => { const f = await import('/static/js/lib/format.js');"
        " return [f.formatShape(['batch', 4, 'If_9_o1__d2', 16]), f.formatShape(['NonZero_3_o0__d1'])]; }"
    )
    assert shown == ["⟨batch×4×?×16⟩", "⟨NonZero_3_o0__d1⟩"]
