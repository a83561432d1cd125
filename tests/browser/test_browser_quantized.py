"""A QDQ model drawn as what it computes: each QuantizeLinear -> DequantizeLinear pair of an
activation is the edge it quantizes (labelled with the 8-bit type), a weight's pair and a
DequantizeLinear of an int8 weight are lines of their reader's box; the hidden nodes are still
found and selected (their reader is shown)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

from .browser_models import qdq_model
from .browser_pages import open_model, upload, wait_ready, wait_revision


def test_quantization_pairs_are_drawn_as_the_edges_and_weights_they_quantize(page, server, artifacts):
    model = qdq_model()
    summary = upload(page, server, model, "qdq.onnx")
    open_model(page, server, summary["id"])
    wait_ready(page)
    page.screenshot(path=str(artifacts / "quantized-qdq.png"))
    boxes = page.locator("#graph g.box[data-node-id]")
    drawn = sorted(boxes.evaluate_all("els => els.map(e => e.getAttribute('data-node-id'))"))
    assert drawn == ["n3", "n8", "n9"]  # Conv, Flatten, MatMul: every Q and DQ is drawn elsewhere
    labels = page.locator("#graph .edge-label").all_text_contents()
    assert "FLOAT ⟨1×3×4×4⟩ · QDQ UINT8" in labels  # x -> Conv, through x's pair
    assert "FLOAT ⟨1×4×4×4⟩ · QDQ UINT8" in labels  # Conv -> Flatten, through c's pair
    assert page.locator("#graph path.edge").count() == 4  # x->Conv, Conv->Flatten, Flatten->MatMul, MatMul->y
    conv = page.locator("#graph g.box[data-node-id=n3]")
    assert "conv.weight_dq ⟨4×3×3×3⟩ · INT8" in conv.text_content()  # an int8 weight, dequantized
    matmul = page.locator("#graph g.box[data-node-id=n9]")
    assert "fc.weight ⟨64×5⟩ · QDQ INT8" in matmul.text_content()  # a float weight quantized in the graph

    # a hidden node is found, its panel opens, and its reader's box is the one outlined
    page.keyboard.press("/")
    page.keyboard.type("c_QuantizeLinear")
    page.locator(".search-results li").first.click()
    panel = page.locator("#sidebar")
    panel.locator(".panel-title").wait_for()
    assert panel.locator(".panel-title").text_content() == "QuantizeLinear"
    assert "c_QuantizeLinear" in panel.text_content()
    page.wait_for_function("document.querySelector('#graph g.box[data-node-id=n8]').classList.contains('selected')")


def test_a_qdq_pair_is_removed_in_one_edit_from_either_half(page, server, artifacts):
    """Leaving one value in float: "Remove QDQ pair" on the DequantizeLinear takes it and its
    QuantizeLinear in one edit (each half alone is refused: the types between them break, QA24
    #2); the Flatten reads the Conv's float output, and the model still checks and runs."""
    model = qdq_model()
    summary = upload(page, server, model, "qdq.onnx")
    open_model(page, server, summary["id"])
    page.keyboard.press("/")
    page.keyboard.type("c_DequantizeLinear")
    page.locator(".search-results li").first.click()
    panel = page.locator("#sidebar")
    panel.locator("#node-edit [data-action=remove-qdq]").click()
    form = panel.locator(".ed-remove-qdq")
    assert "their readers read c in float again" in form.text_content()
    page.screenshot(path=str(artifacts / "remove-qdq.png"))
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)
    edited = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    onnx.checker.check_model(edited, full_check=True)
    names = [n.name for n in edited.graph.node]
    assert "c_QuantizeLinear" not in names and "c_DequantizeLinear" not in names
    assert "x_QuantizeLinear" in names  # the other pairs stay
    flatten = next(n for n in edited.graph.node if n.op_type == "Flatten")
    assert list(flatten.input) == ["c"]
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    ort.InferenceSession(edited.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})


def test_a_dequantized_weight_shows_the_values_its_reader_multiplies_by(page, server, artifacts):
    """The value a DequantizeLinear of an int8 weight writes: its panel shows (q − zero point) ×
    scale, the values the Conv computes with (QA24 #4: "type inferred" and nothing else)."""
    model = qdq_model()
    summary = upload(page, server, model, "qdq.onnx")
    open_model(page, server, summary["id"])
    page.keyboard.press("/")
    page.keyboard.type("conv.weight_dq")
    page.locator(".search-results li", has_text="conv.weight_dq").first.click()
    section = page.locator("#sidebar .panel-section", has_text="Dequantized values")
    section.wait_for()
    assert "(conv.weight_quantized − wz) × s, per tensor" in section.locator(".dequantized-formula").text_content()
    section.locator(".tp-values").wait_for()
    q = next(numpy_helper.to_array(t) for t in model.graph.initializer if t.name == "conv.weight_quantized")
    want = q.astype(np.float32) * np.float32(0.05)
    assert (
        f"max {want.max():g}" in section.text_content().replace("\u2009", " ") or section.locator(".tp-stats").count()
    )
    page.screenshot(path=str(artifacts / "dequantized-weight.png"))


def test_a_weight_dequantized_by_onnxruntimes_quantizer_reads_as_the_weights_name(page, server):
    """onnxruntime's quantizer names a dequantized weight "<weight>_DequantizeLinear_Output": the
    Conv's line reads "conv.weight", whose middle a cut to fit hid (QA24 #13)."""
    model = qdq_model()
    long = "conv.weight_DequantizeLinear_Output"
    model.graph.node[2].output[0] = long
    model.graph.node[3].input[1] = long
    summary = upload(page, server, model, "qdq_ort.onnx")
    open_model(page, server, summary["id"])
    conv = page.locator("#graph g.box[data-node-id=n3]")
    assert "conv.weight ⟨4×3×3×3⟩ · INT8" in conv.text_content()
    assert "…" not in conv.text_content()


def test_matmulnbits_weights_show_their_values_unpacked(page, server, artifacts):
    """A MatMulNBits' B: its Values are the bytes its 4-bit weights are packed in (0–255), and
    Dequantized values the N×K weights the node computes with (QA24 #3)."""
    from test_dequantized import one_matmul

    summary = upload(page, server, one_matmul(), "fc.onnx")
    op = {"op": "quantize_weights", "block_size": 32}
    assert page.request.post(f"{server}/api/models/{summary['id']}/edits", data={"base": 0, "ops": [op]}).status == 200
    open_model(page, server, summary["id"])
    wait_revision(page, 1)
    page.keyboard.press("/")
    page.keyboard.type("W_Q4")
    page.locator(".search-results li", has_text="W_Q4").first.click()
    section = page.locator("#sidebar .panel-section", has_text="Dequantized values")
    section.wait_for()
    assert "96 rows of 256 values of 4 bits, 2 to a byte below" in section.text_content()
    section.locator(".tp-values").wait_for()
    assert "FLOAT ⟨96×256⟩" in section.text_content()
    page.screenshot(path=str(artifacts / "matmulnbits-unpacked.png"))


def test_the_value_a_qdq_pair_writes_removes_the_pair_from_its_panel(page, server):
    """The drawing's "· QDQ UINT8" edge opens the dequantized value's panel: the pair is removed
    from there too (QA24 #2: the edge's panel had no such action)."""
    summary = upload(page, server, qdq_model(), "qdq.onnx")
    open_model(page, server, summary["id"])
    page.keyboard.press("/")
    page.keyboard.type("c_dq")
    page.locator(".search-results li", has_text="c_dq").first.click()
    section = page.locator("#sidebar .panel-section", has_text="QDQ pair")
    section.wait_for()
    assert "c quantized and back" in section.text_content()
    section.locator(".ed-remove-qdq button[type=submit]").click()
    wait_revision(page, 1)
    edited = onnx.load_from_string(page.request.get(f"{server}/api/models/{summary['id']}/download").body())
    assert next(n for n in edited.graph.node if n.op_type == "Flatten").input[0] == "c"


def test_a_float16_weight_widened_by_a_cast_says_its_stored_type(page, server, artifacts):
    """QA29 #6: a layer kept in float16 (its weight Cast to float32 before the MatMul) read
    "w_f32 Cast ⟨8×4⟩": FLOAT16 nowhere. It says the stored type, as a dequantized one does."""
    from onnx import TensorProto as T
    from onnx import helper as h

    w = numpy_helper.from_array(np.ones((8, 4), np.float16), "model.layers.1.mlp.up_proj.weight")
    graph = h.make_graph(
        [
            h.make_node("Cast", [w.name], ["w_f32"], name="widen", to=T.FLOAT),
            h.make_node("MatMul", ["x", "w_f32"], ["y"], name="up"),
        ],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 8])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 4])],
        [w],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    summary = upload(page, server, model, "half.onnx")
    open_model(page, server, summary["id"])
    wait_ready(page)
    box = page.locator("#graph g.box[data-node-id=n1]")
    assert "w_f32 ⟨8×4⟩ · FLOAT16" in box.text_content()
    assert page.locator("#graph g.box[data-node-id=n0]").count() == 0  # the Cast is the weight's line


def test_compare_says_its_added_quantization_pairs_are_drawn_on_edges(page, server, artifacts):
    """QA30: "21 added" and not one green box on the drawing: the pairs a quantization adds are
    drawn on the edges and weights they quantize, which the summary now says."""
    quantized = qdq_model()
    plain = onnx.ModelProto()
    plain.CopyFrom(quantized)
    kept = [n for n in plain.graph.node if n.name not in ("c_QuantizeLinear", "c_DequantizeLinear")]
    next(n for n in kept if n.name == "flatten").input[0] = "c"
    del plain.graph.node[:]
    plain.graph.node.extend(kept)
    del plain.graph.value_info[:]
    onnx.checker.check_model(plain, full_check=True)
    before = upload(page, server, plain, "float.onnx")
    summary = upload(page, server, quantized, "qdq.onnx")
    open_model(page, server, summary["id"])
    page.click("#btn-compare")
    page.locator(f"#compare-with option[value='model:{before['id']}']").wait_for(state="attached")
    page.select_option("#compare-with", f"model:{before['id']}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    text = page.locator("#compare-summary").text_content()
    assert (
        "2 added (all QuantizeLinear/DequantizeLinear: drawn on the edges and weights they quantize, not as boxes)"
        in text
    )
    page.screenshot(path=str(artifacts / "compare-qdq-added.png"))
