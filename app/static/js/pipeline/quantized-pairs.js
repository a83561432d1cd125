// QuantizeLinear -> DequantizeLinear pairs, drawn as what they stand for. A QDQ model (what
// static quantization makes, what TensorRT and QNN take) has two boxes more per quantized
// tensor — a ResNet-50's 169 nodes become 329, each Conv behind a Q box and a DQ box — so:
//  - a pair on a computed value becomes the edge from the value's producer straight to the
//    readers of the dequantized value, labelled with the 8-bit type it passes through;
//  - a pair on a weight (quantization-aware exports quantize float weights in the graph) is
//    listed in its readers' boxes, as a DequantizeLinear of an int8 weight already is.
// Both nodes stay in the model: found by search, selected (their reader is shown), in every panel.

const STANDARD = new Set(["", "ai.onnx"]);

/**
 * @typedef {{q: string, dq: string, source: string, dtype: string, weight: boolean, readers: string[]}} Pair
 * @param {Record<string, any>} graph graph JSON
 * @param {Array<Record<string, any>>} nodes its nodes
 * @param {(tensor: string) => boolean} isWeight whether a tensor is a weight (an initializer, a folded constant)
 * @param {Map<string, any>} types tensor -> {dtype, shape}
 * @returns {Map<string, Pair>} dequantized tensor -> its pair
 */
export function quantizedPairs(graph, nodes, isWeight, types) {
  const pairs = new Map();
  if (!nodes.some((n) => n.op_type === "QuantizeLinear")) return pairs;
  const outputs = new Set((graph.outputs || []).map((v) => v.name));
  const readers = new Map();
  for (const node of nodes) {
    for (const name of new Set(node.inputs || [])) {
      if (!name) continue;
      let list = readers.get(name);
      if (!list) readers.set(name, list = []);
      list.push(node);
    }
  }
  for (const q of nodes) {
    if (q.op_type !== "QuantizeLinear" || !STANDARD.has(q.domain || "")) continue;
    const [source] = q.inputs || [];
    const quantized = (q.outputs || [])[0];
    if (!source || !quantized || outputs.has(quantized)) continue;
    const dqs = readers.get(quantized) || [];
    const unfoldable = (dq) => dq.op_type !== "DequantizeLinear" || !STANDARD.has(dq.domain || "") || dq.inputs[0] !== quantized
      || (dq.outputs || []).length !== 1 || outputs.has(dq.outputs[0]) || !(readers.get(dq.outputs[0]) || []).length;
    if (!dqs.length || dqs.some(unfoldable)) continue;
    const dtype = quantizedType(q, types);
    for (const dq of dqs) {
      const readIn = readers.get(dq.outputs[0]).map((n) => n.id);
      pairs.set(dq.outputs[0], { q: q.id, dq: dq.id, source, dtype, weight: isWeight(source), readers: readIn });
    }
  }
  return pairs;
}

/** The 8-bit (or 4-, 16-bit) type a QuantizeLinear makes: its output's, its zero point's, or
 * the operator's default, uint8. */
function quantizedType(q, types) {
  for (const name of [q.outputs[0], q.inputs[2]]) {
    const t = name && types.get(name);
    if (t && t.dtype) return t.dtype;
  }
  return "UINT8";
}
