// Graph JSON (docs/api.md) -> what the layout worker and the renderer need:
// boxes with their text lines and sizes, and edges from producer to consumer.
//
//  - one box per graph node (id = the node's graph JSON id);
//  - distinct boxes for graph inputs ("input:<name>") and outputs ("output:<name>");
//  - initializers are not boxes: they are listed inside the box of each node reading them;
//  - names a node reads that nothing in this graph produces come from an enclosing graph:
//    they get a dashed "outer:<name>" box (also used, captioned "produced nowhere", for
//    dangling names of a graph that has no enclosing scope).
//  - edges carry the tensor's dtype and shape when inputs/outputs/value_info know it.
import { formatDims, formatTensor, formatValueType, truncate } from "./format.js";

const SANS = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "Liberation Sans", "DejaVu Sans", Arial, sans-serif';
const MONO = '"DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace';

/** Fonts of every kind of text line; the renderer draws with exactly these. */
export const FONTS = {
  op: `600 13px ${SANS}`,
  name: `11.5px ${SANS}`,
  init: `10.5px ${MONO}`,
  more: `italic 10.5px ${SANS}`,
  sub: `italic 10.5px ${SANS}`,
  ioName: `600 12px ${SANS}`,
  ioType: `10.5px ${MONO}`,
  caption: `italic 10px ${SANS}`,
  edge: `10px ${MONO}`,
};

export const METRICS = {
  padX: 10,
  headHeight: 24,
  lineHeight: 15,
  bodyPadY: 5,
  minWidth: 96,
  maxWidth: 280,
  ioHeight: 38,
  edgeLabelHeight: 13,
};

const MAX_INIT_LINES = 4;
// Above this many edges the labels are left out: they double the ranks dagre lays out.
const MAX_LABELLED_EDGES = 1500;

const CATEGORIES = [
  ["conv", /^(Conv|ConvTranspose|ConvInteger|QLinearConv|DeformConv)$/],
  ["matmul", /^(MatMul|Gemm|MatMulInteger|QLinearMatMul|Einsum|FusedMatMul|Attention|MultiHeadAttention)$/],
  ["activation", /^(Relu|LeakyRelu|PRelu|Sigmoid|HardSigmoid|Tanh|Softmax|LogSoftmax|Hardmax|Elu|Selu|Celu|Gelu|FastGelu|BiasGelu|QuickGelu|HardSwish|Softplus|Softsign|Mish|ThresholdedRelu|Swish)$/],
  ["norm", /(Normalization|^LRN$|^Dropout$|^SkipLayerNormalization$|^SimplifiedLayerNormalization$)/],
  ["pool", /(Pool|^MaxRoiPool$|^RoiAlign$|^MaxUnpool$)/],
  ["control", /^(If|Loop|Scan|SequenceMap)$/],
  ["quant", /(QuantizeLinear|^DynamicQuantizeLinear$)/],
  ["shape", /^(Reshape|Transpose|Flatten|Squeeze|Unsqueeze|Concat|Split|SplitToSequence|Slice|Gather|GatherElements|GatherND|Scatter|ScatterElements|ScatterND|Expand|Tile|Pad|Shape|Size|Identity|Cast|CastLike|DepthToSpace|SpaceToDepth|Resize|Upsample|Compress|OneHot|Range|ConstantOfShape|Constant|Trilu|ReverseSequence)$/],
  ["math", /^(Add|Sub|Mul|Div|Pow|Sqrt|Exp|Log|Abs|Neg|Reciprocal|Sum|Mean|Max|Min|Floor|Ceil|Round|Sign|Erf|Mod|Clip|Where|Equal|Less|LessOrEqual|Greater|GreaterOrEqual|And|Or|Xor|Not|Sin|Cos|Tan|Asin|Acos|Atan|Sinh|Cosh|Asinh|Acosh|Atanh|CumSum|ArgMax|ArgMin|TopK|BitShift|IsNaN|IsInf)$|^Reduce/],
];

export function opCategory(opType) {
  for (const [name, re] of CATEGORIES) if (re.test(opType)) return name;
  return "other";
}

let canvasContext = null;
/** Width of text in a CSS font, measured on a canvas (fonts match the SVG text). */
export function measureText(text, font) {
  if (!canvasContext) canvasContext = document.createElement("canvas").getContext("2d");
  canvasContext.font = font;
  return canvasContext.measureText(text).width;
}

/** Shorten text with an ellipsis until it fits in maxWidth pixels. */
function fit(text, font, maxWidth, measure) {
  let s = truncate(text, 80);
  if (measure(s, font) <= maxWidth) return s;
  let lo = 1;
  let hi = s.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(`${s.slice(0, mid)}…`, font) <= maxWidth) lo = mid; else hi = mid - 1;
  }
  return `${s.slice(0, lo)}…`;
}

/**
 * name -> {dtype, shape, type} from inputs, outputs, value_info and initializers (later lists
 * win); types the server inferred (`inferred_value_info`, when it sends them) fill the gaps.
 */
export function tensorTypes(graph) {
  const types = new Map();
  for (const list of [graph.inferred_value_info, graph.initializers, graph.value_info, graph.outputs, graph.inputs]) {
    for (const v of list || []) if (v && v.name) types.set(v.name, v);
  }
  return types;
}

function sizeBox(box, measure) {
  const { padX, headHeight, lineHeight, bodyPadY, minWidth, maxWidth, ioHeight } = METRICS;
  const inner = maxWidth - 2 * padX;
  for (const line of box.lines) line.text = fit(line.text, FONTS[line.font], inner, measure);
  const widest = Math.max(0, ...box.lines.map((l) => measure(l.text, FONTS[l.font])));
  box.width = Math.ceil(Math.min(maxWidth, Math.max(minWidth, widest + 2 * padX)));
  if (box.kind === "node") {
    const body = box.lines.length - 1;
    box.height = headHeight + (body > 0 ? body * lineHeight + 2 * bodyPadY : 0);
  } else {
    box.width = Math.max(box.width, 80) + 12; // rounded ends
    box.height = ioHeight + (box.lines.length > 2 ? (box.lines.length - 2) * lineHeight : 0);
  }
}

/**
 * Build boxes and edges for a graph JSON.
 * @param {object} graph graph JSON from GET /api/models/<id>/graph
 * @param {function} measure (text, font) -> width in px
 */
export function buildGraphModel(graph, measure = measureText) {
  const nodes = graph.nodes || [];
  const types = tensorTypes(graph);
  const initializers = new Map((graph.initializers || []).map((t) => [t.name, t]));
  const boxes = new Map();
  const edges = [];
  const producer = new Map(); // tensor name -> box id
  const nodeById = new Map();

  // a function's inputs and outputs are untyped by design; elsewhere a missing type is an omission
  const untyped = graph.kind === "function" ? "untyped (function)" : "type not declared";
  const graphInputs = (graph.inputs || []).filter((v) => !initializers.has(v.name));
  for (const v of graphInputs) {
    const id = `input:${v.name}`;
    boxes.set(id, {
      id, kind: "input", name: v.name, data: v,
      lines: [{ text: v.name, font: "ioName" }, { text: formatValueType(v) || untyped, font: "ioType" }],
    });
    producer.set(v.name, id);
  }

  for (const node of nodes) {
    nodeById.set(node.id, node);
    for (const out of node.outputs || []) if (out) producer.set(out, node.id);
  }

  const outer = new Set(graph.outer_scope || []);
  // Only a graph held by a node attribute has an enclosing scope; elsewhere (the main graph, a
  // function body) a name nothing produces is simply dangling.
  const nested = (graph.path || "").includes("/");
  const outerBox = (name) => {
    const id = `outer:${name}`;
    if (!boxes.has(id)) {
      const enclosing = nested || (graph.outer_scope || []).includes(name);
      boxes.set(id, {
        id, kind: "outer", name, data: types.get(name) || { name }, enclosing,
        lines: [{ text: enclosing ? "from enclosing graph" : "produced nowhere", font: "caption" }, { text: name, font: "ioName" }],
      });
      producer.set(name, id);
    }
    return id;
  };

  for (const node of nodes) {
    const lines = [{ text: node.domain && node.domain !== "ai.onnx" ? `${node.domain}.${node.op_type}` : node.op_type, font: "op" }];
    if (node.name) lines.push({ text: node.name, font: "name" });
    const inits = (node.inputs || []).filter((n) => n && initializers.has(n) && !producer.has(n));
    for (const name of inits.slice(0, MAX_INIT_LINES)) {
      const t = initializers.get(name);
      const dims = formatDims(t.shape);
      lines.push({ text: dims === null ? name : `${name} ⟨${dims}⟩`, font: "init" });
    }
    if (inits.length > MAX_INIT_LINES) lines.push({ text: `+${inits.length - MAX_INIT_LINES} more initializers`, font: "more" });
    if (node.subgraphs && node.subgraphs.length) {
      const names = node.subgraphs.map((p) => p.slice(p.lastIndexOf("/") + 1));
      lines.push({ text: `⤷ ${names.join(" · ")}`, font: "sub" });
    }
    boxes.set(node.id, { id: node.id, kind: "node", node, name: node.name, category: opCategory(node.op_type), lines });
  }

  // Values read but produced by nothing here come from an enclosing scope.
  for (const node of nodes) {
    for (const name of node.inputs || []) {
      if (name && !producer.has(name) && !initializers.has(name)) outer.add(name);
    }
  }

  const seen = new Set();
  const addEdge = (from, to, tensor) => {
    const key = JSON.stringify([from, to, tensor]);
    if (seen.has(key) || from === to) return;
    seen.add(key);
    const t = types.get(tensor);
    edges.push({ id: `e${edges.length}`, from, to, tensor, label: t ? formatValueType(t) : "" });
  };

  for (const node of nodes) {
    for (const name of node.inputs || []) {
      if (!name) continue;
      if (producer.has(name)) addEdge(producer.get(name), node.id, name);
      else if (outer.has(name)) addEdge(outerBox(name), node.id, name);
    }
  }

  for (const v of graph.outputs || []) {
    const id = `output:${v.name}`;
    boxes.set(id, {
      id, kind: "output", name: v.name, data: v,
      lines: [{ text: v.name, font: "ioName" }, { text: formatValueType(v) || untyped, font: "ioType" }],
    });
    let from = producer.get(v.name);
    if (!from && initializers.has(v.name)) {
      from = `init:${v.name}`;
      const t = initializers.get(v.name);
      boxes.set(from, {
        id: from, kind: "outer", name: v.name, data: t,
        lines: [{ text: "initializer", font: "caption" }, { text: `${v.name} ${formatTensor("", t.shape)}`.trim(), font: "ioName" }],
      });
    } else if (!from && v.name) {
      from = outerBox(v.name);
    }
    if (from) addEdge(from, id, v.name);
  }

  for (const box of boxes.values()) sizeBox(box, measure);

  const labelled = edges.length <= MAX_LABELLED_EDGES;
  for (const e of edges) {
    if (!labelled) e.label = "";
    if (e.label) e.label = fit(e.label, FONTS.edge, 220, measure);
    e.labelWidth = e.label ? Math.ceil(measure(e.label, FONTS.edge)) + 6 : 0;
    e.labelHeight = e.label ? METRICS.edgeLabelHeight : 0;
  }

  return { path: graph.path || "", boxes, edges, nodeById, types, initializers, producer, outer };
}

/** The message the layout worker gets: sizes and connections only. */
export function layoutInput(model) {
  return {
    nodes: [...model.boxes.values()].map((b) => ({ id: b.id, width: b.width, height: b.height })),
    edges: model.edges.map((e) => ({ id: e.id, from: e.from, to: e.to, width: e.labelWidth, height: e.labelHeight })),
  };
}

/** Tensors consumed by a node, with the box producing each (for panel navigation). */
export function consumersOf(model, tensor) {
  const out = [];
  for (const e of model.edges) if (e.tensor === tensor) out.push(e.to);
  return out;
}
