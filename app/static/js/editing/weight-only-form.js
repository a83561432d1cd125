// The model panel's "4-bit weights" tool: weight-only quantization by blocks (the server's
// quantize_weights op, onnxruntime's MatMulNBits quantizer, each value rounded to the nearest
// step: RTN) — what int4 LLM exports ship. HQQ needs PyTorch on the server: the API's only.
import { el } from "../widgets/dom.js";
import { checkbox, editForm, field, select, submit, textInput } from "./edit-forms.js";

const FORMAT_HINTS = {
  MatMulNBits: "onnxruntime's com.microsoft int4 kernels, on its CPU, CUDA and DirectML providers.",
  QDQ: "Standard ONNX: a blocked DequantizeLinear before each MatMul (opset 21 or later), for other runtimes.",
};

/**
 * @param {any} ctx the page's context (summary, actions)
 * @param {(ctx: any, title: string, ops: object[], options?: {compare?: boolean}) => Promise<void>} runTool
 */
export function weightOnlyForm(ctx, runTool) {
  const bits = select("bits", [["4", "4 bits"], ["8", "8 bits"]], "4", { "aria-label": "Bits" });
  const block = select("block_size", ["16", "32", "64", "128", "256"].map((v) => [v, `${v} values`]), "32", { "aria-label": "Block size" });
  const format = select("format", [["MatMulNBits", "MatMulNBits"], ["QDQ", "QDQ (opset 21+)"]], "MatMulNBits", { "aria-label": "Format" });
  const hint = el("p", { class: "ed-hint muted" }, FORMAT_HINTS.MatMulNBits);
  const exclude = textInput("nodes_to_exclude", "", { class: "mono", placeholder: "none (the LM head is often kept)", "aria-label": "Nodes left in float" });
  const embeddings = checkbox("embeddings", "Embedding tables too", false, "Gather weights as GatherBlockQuantized (RTN, MatMulNBits)");
  const symmetric = checkbox("symmetric", "Symmetric", false, "a scale per block, no zero point");
  format.addEventListener("change", () => { hint.textContent = FORMAT_HINTS[/** @type {keyof typeof FORMAT_HINTS} */ (format.value)]; });
  const { form } = editForm("ed-int4", [
    el("p", { class: "ed-hint muted" }, "Stores each MatMul's weight in 4 or 8 bits with a scale per block of values along its input dim; activations stay in float and no data is needed. Run → Compare with the revision before shows how far the outputs moved."),
    el("div", { class: "ed-grid2" }, field("Weights", bits), field("Block", block)),
    field("Format", format),
    hint,
    embeddings,
    symmetric,
    field("Nodes left in float", exclude, "Node names, comma separated."),
    el("div", { class: "ed-actions" }, submit("Quantize weights")),
  ], async (f) => {
    const listed = exclude.value.split(",").map((s) => s.trim()).filter(Boolean);
    const op = {
      op: "quantize_weights", bits: Number(bits.value), block_size: Number(block.value), format: format.value,
      embeddings: f.elements.embeddings.checked, symmetric: f.elements.symmetric.checked, nodes_to_exclude: listed,
    };
    await runTool(ctx, `Weights in ${bits.value} bits`, [op], { compare: true });
  }, { id: "quantize-weights" });
  return form;
}
