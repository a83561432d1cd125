// Graph JSON (docs/api.md) -> the graph the page draws: boxes with their text lines, and edges
// from producer to consumer. This is the whole graph, every node; grouping.js gathers the boxes
// into name-scope groups and scene.js decides what of it is on screen.
//
//  - one box per graph node (id = the node's graph JSON id);
//  - distinct boxes for graph inputs ("input:<name>") and outputs ("output:<name>");
//  - initializers are not boxes: they are listed inside the box of each node reading them;
//  - names a node reads that nothing in this graph produces come from an enclosing graph:
//    they get a dashed "outer:<name>" box (also used, captioned "produced nowhere", for
//    dangling names of a graph that has no enclosing scope).
//  - edges carry the tensor's dtype and shape when inputs/outputs/value_info know it.
//
// Box sizes are measured lazily (measureBox): a 40,000-node graph only measures what is drawn.
import { attributeValueName, formatDims, formatNumber, formatTensor, formatValueType, truncate } from "../lib/format.js";
import { FONTS } from "../renderers/theme.js";
import { quantizedPairs } from "./quantized-pairs.js";

/** Fonts of every kind of text line (app.css --g-font-*, through theme.js); the renderers draw with exactly these. */
export { FONTS };

// The smallest size box text may have on screen for a person to read it without zooming
// (issue 10: Netron opens at 100 %, 10-13 px text). Box text is at least 11 px at 100 %, so
// a drawing opens at 100 % unless it fits the window whole at that size.
export const READABLE_PX = 11;
const SMALLEST_BOX_FONT_PX = 11; // the smallest box text size of app.css (--g-font-*)
export const READABLE_SCALE = READABLE_PX / SMALLEST_BOX_FONT_PX;

export const METRICS = {
  padX: 10,
  headHeight: 24,
  lineHeight: 15,
  bodyPadY: 5,
  minWidth: 96,
  maxWidth: 280,
  ioHeight: 38,
  edgeLabelHeight: 13,
  stripe: 5,          // the op-category bar of a collapsed group box
};

const MAX_INIT_LINES = 4;
const MAX_ATTR_LINES = 2;

/** @type {Array<[string, RegExp]>} category, op types */
const CATEGORIES = [
  ["conv", /^(Conv|ConvTranspose|ConvInteger|QLinearConv|DeformConv|NhwcConv|FusedConv)$/],
  ["matmul", /^(MatMul|Gemm|MatMulInteger|QLinearMatMul|Einsum|FusedMatMul|Attention|MultiHeadAttention|GroupQueryAttention|MatMulNBits|FusedGemm)$/],
  ["activation", /^(Relu|LeakyRelu|PRelu|Sigmoid|HardSigmoid|Tanh|Softmax|LogSoftmax|Hardmax|Elu|Selu|Celu|Gelu|FastGelu|BiasGelu|QuickGelu|HardSwish|Softplus|Softsign|Mish|ThresholdedRelu|Swish|BiasSoftmax)$/],
  ["norm", /(Normalization|^LRN$|^Dropout$|^SkipLayerNormalization$|^SimplifiedLayerNormalization$|^SkipSimplifiedLayerNormalization$)/],
  ["pool", /(Pool|^MaxRoiPool$|^RoiAlign$|^MaxUnpool$)/],
  ["control", /^(If|Loop|Scan|SequenceMap)$/],
  ["quant", /(QuantizeLinear|^DynamicQuantizeLinear$|^QLinear|^QGemm$|^QAttention$)/],
  ["shape", /^(Reshape|Transpose|Flatten|Squeeze|Unsqueeze|Concat|Split|SplitToSequence|Slice|Gather|GatherElements|GatherND|Scatter|ScatterElements|ScatterND|Expand|Tile|Pad|Shape|Size|Identity|Cast|CastLike|DepthToSpace|SpaceToDepth|Resize|Upsample|Compress|OneHot|Range|ConstantOfShape|Constant|Trilu|ReverseSequence|NonZero|SequenceAt|SequenceConstruct|SequenceInsert|ConcatFromSequence)$/],
  ["math", /^(Add|Sub|Mul|Div|Pow|Sqrt|Exp|Log|Abs|Neg|Reciprocal|Sum|Mean|Max|Min|Floor|Ceil|Round|Sign|Erf|Mod|Clip|Where|Equal|Less|LessOrEqual|Greater|GreaterOrEqual|And|Or|Xor|Not|Sin|Cos|Tan|Asin|Acos|Atan|Sinh|Cosh|Asinh|Acosh|Atanh|CumSum|ArgMax|ArgMin|TopK|BitShift|IsNaN|IsInf)$|^Reduce/],
];

/** Domains of the ONNX standard; anything else is a custom domain (its own colour). */
const STANDARD_DOMAINS = new Set(["", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training"]);

/** Category names in legend order, with the words the page shows for them. */
export const CATEGORY_NAMES = {
  conv: "convolution", matmul: "matmul / linear", activation: "activation", norm: "normalization",
  pool: "pooling", control: "control flow", quant: "quantization", shape: "shape / tensor",
  math: "elementwise math", custom: "custom domain", other: "other",
};

const categoryCache = new Map();

export function opCategory(opType, domain = "") {
  const key = `${domain || ""}\u0000${opType}`;
  let cat = categoryCache.get(key);
  if (cat === undefined) {
    cat = CATEGORIES.find(([, re]) => re.test(opType));
    cat = cat ? cat[0] : STANDARD_DOMAINS.has(domain || "") ? "other" : "custom";
    categoryCache.set(key, cat);
  }
  return cat;
}

let canvasContext = null;
const widthCache = new Map();
/** Width of text in a CSS font, measured on a canvas (fonts match the drawn text); memoised. */
export function measureText(text, font) {
  const key = `${font}\u0000${text}`;
  let w = widthCache.get(key);
  if (w === undefined) {
    if (!canvasContext) canvasContext = document.createElement("canvas").getContext("2d");
    canvasContext.font = font;
    w = canvasContext.measureText(text).width;
    if (widthCache.size > 200_000) widthCache.clear();
    widthCache.set(key, w);
  }
  return w;
}

/** Shorten text with an ellipsis until it fits in maxWidth pixels. */
export function fitText(text, font, maxWidth, measure = measureText) {
  const s = truncate(text, 80);
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
 * A name shortened in its middle to fit in maxWidth pixels, or null when fewer than 4 of its
 * characters would stay. The start and the end of a name (".weight", "_output_0", the layer's
 * number) together say which one it is, where names of one graph often share a long start
 * (a function's or an exporter's prefix).
 */
function middleCut(text, font, maxWidth, measure) {
  const s = String(text ?? "");
  if (s.length <= 80 && measure(s, font) <= maxWidth) return s;
  // a path ("gpu_0/res3_0_branch2a_w_0"): its first parts dropped at a "/" first, as a file's
  // folders are — its last parts tell it from its neighbours, which a cut in the middle took
  // out ("gpu_…_w_0" on every Conv of a ResNet: QA28)
  // then a torch module path's ("val_model.layers.0.self_attn.q_proj.weight_dq": QA29, where
  // a cut in the middle read "val_model.la…j.weight_dq" for every q, k, v and o of every layer)
  for (const sep of ["/", "."]) {
    for (let at = s.indexOf(sep, 1); at > 0; at = s.indexOf(sep, at + 1)) {
      const tail = `…${s.slice(sep === "/" ? at : at + 1)}`; // "…/q_proj/MatMul", "…q_proj.weight"
      if (s.length - at > 4 && s.length - at <= 80 && measure(tail, font) <= maxWidth) return tail;
    }
  }
  const last = s.lastIndexOf("/");
  if (last > 0 && s.length - last > 8) { // its last part alone, cut in its middle: "…/res2_2…c_bn_s_0"
    const part = middleCut(s.slice(last + 1), font, maxWidth - measure("…/", font), measure);
    if (part !== null) return `…/${part}`;
  }
  const cut = (n) => `${s.slice(0, Math.ceil(n / 2))}…${s.slice(s.length - Math.floor(n / 2))}`;
  let lo = 0;
  let hi = Math.min(s.length - 1, 79);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(cut(mid), font) <= maxWidth) lo = mid; else hi = mid - 1;
  }
  return lo >= 4 ? cut(lo) : null;
}

/** A name in maxWidth pixels, shortened in its middle (at its end when the room is too small for that). */
export function fitMiddle(text, font, maxWidth, measure = measureText) {
  return middleCut(text, font, maxWidth, measure) ?? fitText(text, font, maxWidth, measure);
}

/** `name` then `keep` (a shape, a value) in maxWidth: the name is shortened in its middle, `keep` never is. */
export function fitNameAnd(name, keep, font, maxWidth, measure = measureText) {
  const whole = `${name} ${keep}`;
  if (measure(whole, font) <= maxWidth) return whole;
  const fitted = middleCut(name, font, maxWidth - measure(` ${keep}`, font), measure);
  return fitted === null ? fitText(whole, font, maxWidth, measure) : `${fitted} ${keep}`;
}

/** A dim's name in `keep` characters: a numbered one ("p2o.DynamicDimension.0") in its middle,
 * its number kept; a word ("past_sequence", "sequence") at its end, where it reads as itself
 * ("past_s…", "seque…" — a middle cut made "pa…ce" and "se…ce" of them). */
function cutDim(p, keep) {
  if (/\d$/.test(p)) {
    const half = Math.ceil((keep - 1) / 2);
    return `${p.slice(0, half)}…${p.slice(p.length - (keep - 1 - half))}`;
  }
  return `${p.slice(0, keep - 1)}…`;
}

/**
 * A type ("FLOAT ⟨p2o.DynamicDimension.0×3×p2o.DynamicDimension.1⟩") in maxWidth: its dims'
 * long names shortened (cutDim), all alike, as little as it takes — every dim stays, where a
 * cut at the end drops the last ones — and at its end only when that is not enough.
 */
export function fitType(text, font, maxWidth, measure = measureText) {
  const s = String(text ?? "");
  if (measure(s, font) <= maxWidth) return s;
  const open = s.search(/[(⟨[]/);
  if (open < 0) return fitText(s, font, maxWidth, measure);
  const head = s.slice(0, open);
  const parts = s.slice(open).split(/([×,()⟨⟩[\]\s])/); // the separators kept
  const longest = Math.max(...parts.map((p) => p.length));
  let cut = s;
  for (let keep = Math.min(longest - 1, 24); keep >= 5; keep -= 1) {
    cut = head + parts.map((p) => (p.length > keep && /[A-Za-z_]/.test(p) ? cutDim(p, keep) : p)).join("");
    if (measure(cut, font) <= maxWidth) return cut;
  }
  return fitText(cut, font, maxWidth, measure);
}

// Lines that hold a name are shortened in the middle; types by their dims' names; others (op
// types, captions) at the end.
const NAME_FONTS = new Set(["name", "ioName"]);

/**
 * name -> {dtype, shape, type} from inputs, outputs, value_info and initializers (later lists
 * win); types the server inferred (`inferred_value_info`, when it sends them) fill the gaps,
 * those of inputs and outputs declared without a type included, and last the types of what the
 * graph reads from the graphs enclosing it (`outer_value_info`).
 */
export function tensorTypes(graph) {
  const types = new Map();
  for (const list of [graph.outer_value_info, graph.inferred_value_info, graph.initializers, graph.value_info, graph.outputs, graph.inputs]) {
    for (const v of list || []) if (v && v.name && (declaresType(v) || !types.has(v.name))) types.set(v.name, v);
  }
  return types;
}

/** Whether a value's entry says anything of its type (no text made: a 40k-node graph has 30k). */
function declaresType(v) {
  const kind = v.type && v.type.kind;
  if (kind === "unknown") return false;
  if (kind && kind !== "tensor" && kind !== "sparse_tensor") return true;
  return !!v.dtype || Array.isArray(v.shape);
}

/** Types inference found after the model was built (a big graph's, fetched once it is drawn):
 * they fill what nothing declares, for the panels and for every edge labelled from now on. */
export function addInferredTypes(model, values) {
  for (const v of values || []) {
    const known = v && model.types.get(v.name);
    if (v && v.name && !(known && declaresType(known))) model.types.set(v.name, v);
  }
}

/** The type line of a graph input or output box: as declared, else as inferred (said so), else
 * `untyped` (what a missing type means in this graph). */
function ioTypeText(v, types, untyped) {
  const declared = formatValueType(v);
  if (declared) return declared;
  const inferred = formatValueType(types.get(v.name));
  return inferred ? `${inferred} (inferred)` : untyped;
}

/** The lines of a graph input or output box: its name, then — a Loop's or Scan's body input or
 * output, an If branch's output — its role under it ("carried ↔ hidden_out", "iteration #",
 * "scan out → tokens": the graph JSON's `role.box`, loop_roles.py), then its type. */
function ioLines(v, typeText) {
  const role = v.role && v.role.box;
  return role
    ? [{ text: v.name, font: "ioName" }, { text: role, font: "caption" }, { text: typeText, font: "ioType" }]
    : [{ text: v.name, font: "ioName" }, { text: typeText, font: "ioType" }];
}

/** A short text for an attribute value of `node` (ints, floats, strings; lists shortened; a data
 * type by its name). */
function attrValueText(a, node) {
  if (a.ref_attr_name) return `@${a.ref_attr_name}`; // a function attribute's, set by each call
  const v = a.value;
  const named = attributeValueName(node, a);
  if (named) return named;
  switch (a.type) {
    case "INT": case "FLOAT": return formatNumber(v);
    case "STRING": return JSON.stringify(truncate(v, 24));
    case "INTS": case "FLOATS": {
      const list = (v || []).map(formatNumber);
      if (!list.length) return "[]";
      if (/^(kernel_shape|strides|dilations)$/.test(a.name) && list.length <= 4) return list.join("×");
      if (a.name === "pads" && list.length > 1 && list.every((x) => x === list[0])) return list[0];
      return list.length > 6 ? `[${list.slice(0, 6).join(",")},…]` : `[${list.join(",")}]`;
    }
    case "STRINGS": return `[${(v || []).length} strings]`;
    case "TENSOR": return formatTensor(v && v.dtype, v && v.shape) || "tensor";
    case "GRAPH": return "graph";
    case "GRAPHS": return `${(v || []).length} graphs`;
    default: return a.type ? a.type.toLowerCase() : "";
  }
}

const ATTR_SHORT = { kernel_shape: "k", strides: "s", pads: "p", dilations: "d", group: "g", axis: "axis", perm: "perm" };

/** The node's key attributes, as at most MAX_ATTR_LINES short lines ("k 3×3 · s 2 · p 1"). */
export function keyAttributeLines(node) {
  const attrs = (node.attributes || []).filter((a) => a.type !== "GRAPH" && a.type !== "GRAPHS");
  if (!attrs.length) return [];
  const parts = attrs.map((a) => `${ATTR_SHORT[a.name] || a.name}=${attrValueText(a, node)}`);
  const lines = [];
  let line = "";
  for (const p of parts) {
    if (line && line.length + p.length + 3 > 34) {
      lines.push(line);
      line = "";
      if (lines.length === MAX_ATTR_LINES) break;
    }
    line = line ? `${line} · ${p}` : p;
  }
  if (line && lines.length < MAX_ATTR_LINES) lines.push(line);
  const shown = lines.join(" · ").split(" · ").length;
  if (shown < parts.length && lines.length) lines[lines.length - 1] += ` · +${parts.length - shown}`;
  return lines;
}

/**
 * The text lines of a node box: op type, then (as `options` ask) its name and key attributes,
 * the initializers it reads (with shapes) and its subgraphs. `extra` lines (long-edge references,
 * see long-edges.js) come last.
 */
export function nodeLines(model, box, options = {}, extra = []) {
  const { names = true, attrs = false } = options;
  const lines = [box.lines[0], ...box.lines.filter((l) => l.domain)];
  if (names && box.node.name) lines.push(box.lines.find((l) => l.font === "name") || { text: box.node.name, font: "name" });
  if (attrs) for (const text of keyAttributeLines(box.node)) lines.push({ text, font: "attr" });
  for (const l of box.lines) if ((l.font === "init" || l.font === "more" || l.font === "sub") && !l.domain) lines.push(l);
  return extra.length ? lines.concat(extra) : lines;
}

/**
 * Width and height of a box with these lines (the texts are cut to fit the widest box allowed).
 * kind: "node" | "group" | io kinds. Returns {width, height, lines}.
 */
export function measureBox(kind, lines, measure = measureText) {
  const { padX, headHeight, lineHeight, bodyPadY, minWidth, maxWidth, ioHeight, stripe } = METRICS;
  const inner = maxWidth - 2 * padX;
  const fitted = lines.map((line) => {
    const room = inner - (line.indent || 0);
    const font = FONTS[line.font];
    const text = line.keep ? fitNameAnd(line.text, line.keep, font, room, measure)
      : NAME_FONTS.has(line.font) ? fitMiddle(line.text, font, room, measure)
        : line.font === "ioType" ? fitType(line.text, font, room, measure) : fitText(line.text, font, room, measure);
    return { ...line, text, keep: undefined };
  });
  const widest = Math.max(0, ...fitted.map((l) => measure(l.text, FONTS[l.font]) + (l.indent || 0)));
  let width = Math.ceil(Math.min(maxWidth, Math.max(minWidth, widest + 2 * padX)));
  let height;
  if (kind === "node") {
    const body = fitted.length - 1;
    height = headHeight + (body > 0 ? body * lineHeight + 2 * bodyPadY : 0);
  } else if (kind === "group") {
    width = Math.max(width + 14, 132); // room for the expand control
    const body = fitted.length - 1;
    height = headHeight + stripe + body * lineHeight + 2 * bodyPadY;
  } else {
    width = Math.max(width, 80) + 12; // rounded ends
    height = ioHeight + (fitted.length > 2 ? (fitted.length - 2) * lineHeight : 0);
  }
  return { width, height, lines: fitted };
}

function sizeBox(box, measure) {
  const { width, height, lines } = measureBox(box.kind === "node" ? "node" : "io", box.lines, measure);
  box.width = width;
  box.height = height;
  box.lines = lines;
  box.sized = true;
}

/** Give `box` its width and height (measured once, on first need). */
export function ensureSized(model, box) {
  if (!box.sized) sizeBox(box, model.measure);
  return box;
}

/** Width of an edge's label (measured once, on first need). */
export function edgeLabelSize(model, edge) {
  if (edge.label === undefined) {
    const t = model.types.get(edge.tensor) || (edge.qdq && model.types.get(edge.qdq.source));
    edge.label = t ? formatValueType(t) : "";
    if (edge.qdq) edge.label = [edge.label, `QDQ ${edge.qdq.dtype}`].filter(Boolean).join(" · ");
  }
  if (edge.labelWidth === undefined) {
    if (edge.label) {
      const whole = edge.label;
      edge.label = fitType(whole, FONTS.edge, 220, model.measure);
      // a long dim expression cut to fit (torch dynamo's ((height - 1)//2)*2 + 2…): whole on hover
      if (edge.label !== whole) edge.fullLabel = whole;
    }
    edge.labelWidth = edge.label ? Math.ceil(model.measure(edge.label, FONTS.edge)) + 6 : 0;
    edge.labelHeight = edge.label ? METRICS.edgeLabelHeight : 0;
  }
  return edge;
}

/**
 * The box of a graph node. Its text lines (op type, name, initializers read, subgraphs) are
 * made on first use: a 40,000-node graph draws a few hundred boxes at first.
 */
class NodeBox {
  constructor(node, context) {
    this.id = node.id;
    this.kind = "node";
    this.node = node;
    this.name = node.name;
    this.category = opCategory(node.op_type, node.domain);
    this.context = context;
    this.textLines = null;
  }

  get lines() {
    if (!this.textLines) this.textLines = nodeBoxLines(this.node, this.context);
    return this.textLines;
  }

  set lines(value) {
    this.textLines = value;
  }
}

function nodeBoxLines(node, { initializers, producer, folded, nodeById, types, pairs }) {
  // the operator heads the box; a domain of its own (com.microsoft, a company's) goes on a line
  // under it, where "com.microsoft.SkipLayerNormalization" as the head was cut to fit
  const lines = [{ text: node.op_type, font: "op" }];
  // a call of a model-local function's overload says which (two calls of Act read alike else)
  const overload = node.overload ? ` · ${node.overload}` : "";
  if (node.domain && node.domain !== "ai.onnx") lines.push({ text: `${node.domain}${overload}`, font: "more", domain: true });
  else if (overload) lines.push({ text: `overload ${node.overload}`, font: "more", domain: true });
  if (node.name) lines.push({ text: node.name, font: "name" });
  // initializers and folded Constant nodes it reads, each once, in input order; a Constant's
  // first reader always lists it (that line is where the page draws the Constant node)
  const isInit = (n) => initializers.has(n) && !producer.has(n);
  const primary = (n) => { const hosts = folded.get(producer.get(n)); return !!hosts && hosts[0] === node.id; };
  const listed = (node.inputs || []).filter((n, i, all) => n && all.indexOf(n) === i && (isInit(n) || folded.has(producer.get(n))));
  const shown = listed.filter((n, k) => k < MAX_INIT_LINES || primary(n));
  for (const name of shown) {
    if (isInit(name)) {
      const init = initializers.get(name);
      const dims = formatDims(init.shape);
      // a scalar's or a short list's values; a 2×3 table keeps its shape (flat, it reads as a list)
      const few = Array.isArray(init.values) && (init.shape || []).length <= 1;
      const keep = few ? fewValuesText(init.values, init.shape) : dims === null ? "" : `⟨${dims}⟩`;
      lines.push({ text: name, keep, font: "init", tensor: name });
    } else {
      const constant = nodeById.get(producer.get(name));
      const pair = pairs.get(name); // a weight quantized in the graph: by the weight's name
      // onnxruntime's quantizer names a dequantized weight "<weight>_DequantizeLinear_Output":
      // its line reads the weight's name, whose middle a cut to fit hid (QA24 #13)
      const text = pair ? pair.source : constant.op_type === "DequantizeLinear" ? name.replace(DEQUANTIZED_SUFFIX, "") || name : name;
      const keep = pair ? quantizedWeightText(pair, initializers, types) : foldedText(constant, initializers, types);
      lines.push({ text, keep, font: "init", tensor: name, node: constant.id, primary: primary(name), title: pair ? undefined : foldedTitle(constant, name) });
      if (primary(name)) lines.push(...chainLines(constant, { initializers, producer, folded, nodeById, types }));
    }
  }
  if (listed.length > shown.length) lines.push({ text: `+${listed.length - shown.length} more constants`, font: "more" });
  if (node.subgraphs && node.subgraphs.length) {
    const subgraphs = subgraphsOf(node);
    // each with its size: a merged decoder's If holds the whole model in two branches (QA31);
    // the word "ops" left out where the line would be cut ("else_branch (171 …": QA32)
    const sized = (word) => subgraphs.map((p) => {
      const n = subgraphNodes(node, p);
      const name = p.slice(p.lastIndexOf("/") + 1);
      return n === null ? name : `${name} (${n}${word ? ` ${n === 1 ? "op" : "ops"}` : ""})`;
    });
    const room = METRICS.maxWidth - 2 * METRICS.padX;
    let parts = sized(true);
    if (measureText(`⤷ ${parts.join(" · ")}`, FONTS.sub) > room) parts = sized(false);
    lines.push({ text: `⤷ ${parts.join(" · ")}`, font: "sub", subgraphs, parts });
  }
  return lines;
}

/** How many nodes the subgraph at `path` of a node holds (its attribute's JSON says), or null. */
function subgraphNodes(node, path) {
  for (const a of node.attributes || []) {
    const values = a.type === "GRAPH" ? [a.value] : a.type === "GRAPHS" ? a.value : [];
    const g = values.find((v) => v && v.path === path);
    if (g && typeof g.nodes === "number") return g.nodes;
  }
  return null;
}

/** The graph paths of a node's subgraphs in reading order (an If's then before its else:
 * attributes come sorted by name); the first is what a double-click on its box opens.
 * @param {{subgraphs?: string[]}} node @returns {string[]} */
export function subgraphsOf(node) {
  const rank = (p) => (p.endsWith("/then_branch") ? 0 : p.endsWith("/else_branch") ? 1 : 2);
  return [...(node.subgraphs || [])].sort((a, b) => rank(a) - rank(b));
}

const STANDARD_OPS = new Set(["", "ai.onnx"]);

/** Node id -> ids of the nodes reading its output, for each node that only holds a value:
 * a node of the standard domain whose inputs are all weights (initializers, values of nodes
 * before it) or none — a Constant, an Identity of a weight (torch writes one per shared
 * weight), a ConstantOfShape (the onnx wheel's light models make every weight so), a
 * DequantizeLinear of a quantized weight, an Identity of that (onnxruntime's quantizer writes
 * one per reader of a shared bias) — with one output that nodes of this graph read and that is
 * not a graph output. */
function foldedConstants(graph, nodes, initializers) {
  const outputs = new Set((graph.outputs || []).map((v) => v.name));
  const weights = new Set(initializers.keys());
  for (const node of nodes) for (const out of node.outputs || []) weights.delete(out);
  const byTensor = new Map();
  for (const node of nodes) { // in graph order: what a value op makes of values is a value too
    if (!isValueNode(node, weights)) continue;
    const outs = node.outputs || [];
    if (outs.length !== 1 || !outs[0] || outputs.has(outs[0])) continue;
    byTensor.set(outs[0], node.id);
    weights.add(outs[0]);
  }
  const folded = new Map();
  if (!byTensor.size) return folded;
  for (const node of nodes) {
    for (const name of node.inputs || []) {
      const id = name && byTensor.get(name);
      if (!id || id === node.id) continue;
      let hosts = folded.get(id);
      if (!hosts) folded.set(id, hosts = []);
      if (hosts[hosts.length - 1] !== node.id) hosts.push(node.id);
    }
  }
  return folded;
}

// value-only ops whose inputs are weights: what they make is a weight too (no subgraphs, no
// randomness, nothing read from the graph's inputs)
const VALUE_OPS = new Set(["Constant", "ConstantOfShape", "Identity", "DequantizeLinear", "Cast", "Reshape", "Transpose", "Unsqueeze", "Squeeze"]);

function isValueNode(node, weights) {
  if (!STANDARD_OPS.has(node.domain || "") || !VALUE_OPS.has(node.op_type)) return false;
  if (node.subgraphs && node.subgraphs.length) return false;
  const inputs = (node.inputs || []).filter(Boolean);
  if (node.op_type === "Constant") return inputs.length === 0;
  return inputs.length > 0 && inputs.every((n) => weights.has(n));
}

/** What a folded node holds, short: "= [1,-1]" for a few numbers, else "⟨dims⟩" (with the
 * op for what is computed: "Transpose ⟨64×3×3×3⟩"; a dequantized weight's stored type). */
function foldedText(node, initializers, types) {
  if (node.op_type === "Constant") return constantText(node);
  const out = types && types.get(node.outputs[0]);
  let dims = out ? formatDims(out.shape) : null;
  if (dims === null && node.op_type === "Identity") dims = formatDims((initializers.get(node.inputs[0]) || {}).shape);
  const shape = dims === null ? "" : `⟨${dims || "scalar"}⟩`;
  // a weight stored in another type: in 8 or 4 bits ("⟨64×3×3×3⟩ · INT8"), or in float16
  // widened by a Cast ("⟨64×64⟩ · FLOAT16", QA29: it said "Cast ⟨64×64⟩", float16 nowhere)
  if (node.op_type === "DequantizeLinear" || (node.op_type === "Cast" && initializers.has(node.inputs[0]))) {
    const stored = initializers.get(node.inputs[0]) || (types && types.get(node.inputs[0]));
    return [shape, stored && stored.dtype].filter(Boolean).join(" · ") || node.op_type;
  }
  if (node.op_type === "Identity") return shape;
  // one value repeated (the wheel's light models make every weight so): said in a word, which
  // leaves the weight's name room to say which one it is (QA28: "gpu_…_w_0 ConstantOfShape ⟨…⟩")
  return `${node.op_type === "ConstantOfShape" ? "filled" : node.op_type} ${shape}`.trim();
}

/** The tooltip of a folded value's line where its short word needs one: "filled" (QA34: said
 * nowhere what it meant); undefined for the others, whose line says what they are. */
function foldedTitle(node, name) {
  if (node.op_type !== "ConstantOfShape") return undefined;
  const a = (node.attributes || []).find((x) => x.name === "value");
  // no value attribute: onnx fills with a float 0
  const one = !a ? 0 : a.value && Array.isArray(a.value.values) && a.value.values.length === 1 ? a.value.values[0] : null;
  return `${name}: filled — made by a ConstantOfShape in the graph, every element ${one === null ? "one value" : `= ${formatNumber(one)}`}`;
}

/** The folded values a folded value is made of (a Reshape of a ConstantOfShape, an Identity
 * of a DequantizeLinear), drawn nowhere else: a "↳" line each under it, in its first reader. */
function chainLines(value, { initializers, producer, folded, nodeById, types }, depth = 0) {
  const lines = [];
  if (depth >= 4) return lines;
  for (const name of new Set(value.inputs || [])) {
    const id = name && producer.get(name);
    const hosts = id && folded.get(id);
    if (!hosts || hosts[0] !== value.id) continue;
    const made = nodeById.get(id);
    lines.push({ text: `↳ ${name}`, keep: foldedText(made, initializers, types), font: "init", tensor: name, node: id, primary: true, title: foldedTitle(made, name) });
    lines.push(...chainLines(made, { initializers, producer, folded, nodeById, types }, depth + 1));
  }
  return lines;
}

const DEQUANTIZED_SUFFIX = /_DequantizeLinear_Output$/;

/** A weight quantized by a QDQ pair in the graph: "⟨64×3×3×3⟩ · QDQ INT8". */
function quantizedWeightText(pair, initializers, types) {
  const weight = initializers.get(pair.source) || types.get(pair.source);
  const dims = weight ? formatDims(weight.shape) : null;
  return [dims === null ? "" : `⟨${dims || "scalar"}⟩`, `QDQ ${pair.dtype}`].filter(Boolean).join(" · ");
}

/** A tensor of few values as a box line shows it: "= 0.45", "= [1,-1]". */
function fewValuesText(values, shape) {
  const items = values.map(formatNumber);
  return shape && shape.length === 0 ? `= ${items[0]}` : `= [${items.join(",")}]`;
}

function constantText(node) {
  const a = (node && node.attributes || [])[0];
  if (!a) return "";
  if (a.ref_attr_name) return `= @${a.ref_attr_name}`;
  const v = a.value;
  switch (a.type) {
    case "INT": case "FLOAT": return `= ${formatNumber(v)}`;
    case "INTS": case "FLOATS": return (v || []).length <= 6 ? `= [${(v || []).map(formatNumber).join(",")}]` : `⟨${(v || []).length}⟩`;
    case "STRING": return `= ${JSON.stringify(truncate(v, 20))}`;
    case "STRINGS": return `⟨${(v || []).length} strings⟩`;
    case "TENSOR": case "SPARSE_TENSOR": {
      if (v && Array.isArray(v.values)) return fewValuesText(v.values, v.shape);
      const dims = v ? formatDims(v.shape) : null;
      return dims === null ? "" : `⟨${dims || "scalar"}⟩`;
    }
    default: return "";
  }
}

/** The weights a graph's boxes list, by name: its initializers, and in a nested graph the
 * enclosing graphs' weights it reads (`from`: the path of the graph holding one) — a merged
 * decoder's branches read all of theirs from the main graph, and drawn as boxes of their own
 * they were a row of 50 "from enclosing graph" boxes (QA31).
 * @param {Record<string, any>} graph @returns {Map<string, Record<string, any>>} */
export function weightsRead(graph) {
  const weights = new Map((graph.initializers || []).map((t) => [t.name, t]));
  for (const v of graph.outer_value_info || []) {
    if (v.initializer && !weights.has(v.name)) weights.set(v.name, { ...v.initializer, from: v.from });
  }
  return weights;
}

/**
 * Build boxes and edges for a graph JSON.
 * @param {Record<string, any>} graph graph JSON from GET /api/models/<id>/graph
 * @param {function} measure (text, font) -> width in px
 * @param {{lazy?: boolean}} options lazy: leave box sizes and edge labels to be measured on need
 */
export function buildGraphModel(graph, measure = measureText, { lazy = false } = {}) {
  const nodes = graph.nodes || [];
  const types = tensorTypes(graph);
  const initializers = weightsRead(graph);
  const boxes = new Map();
  const edges = [];
  const producer = new Map(); // tensor name -> box id
  const nodeById = new Map();
  const nodeIndex = new Map(); // node id -> its index in the graph
  const consumers = new Map(); // tensor name -> box ids reading it (through an edge)

  // a function's inputs and outputs are untyped by design; elsewhere a missing type is an omission
  const untyped = graph.kind === "function" ? "untyped (function)" : "type not declared";
  const graphInputs = (graph.inputs || []).filter((v) => !initializers.has(v.name));
  for (const v of graphInputs) {
    const id = `input:${v.name}`;
    boxes.set(id, {
      id, kind: "input", name: v.name, data: v,
      lines: ioLines(v, ioTypeText(v, types, untyped)),
    });
    producer.set(v.name, id);
  }

  nodes.forEach((node, i) => {
    nodeById.set(node.id, node);
    nodeIndex.set(node.id, i);
    for (const out of node.outputs || []) if (out) producer.set(out, node.id);
  });

  const outer = new Set(graph.outer_scope || []);
  // Only a graph held by a node attribute has an enclosing scope; elsewhere (the main graph, a
  // function body) a name nothing produces is simply dangling.
  const nested = (graph.path || "").includes("/");
  const outerBox = (name) => {
    const id = `outer:${name}`;
    if (!boxes.has(id)) {
      const enclosing = nested || (graph.outer_scope || []).includes(name);
      // a training graph reads the main graph's initializers (TrainingInfoProto)
      const from = nested ? "from enclosing graph" : "from the main graph";
      boxes.set(id, {
        id, kind: "outer", name, data: types.get(name) || { name }, enclosing,
        lines: [{ text: enclosing ? from : "produced nowhere", font: "caption" }, { text: name, font: "ioName" }],
      });
      producer.set(name, id);
    }
    return id;
  };

  // Constant nodes (and Identity nodes of a weight) read by other nodes are listed inside their
  // readers' boxes, as initializers are (torch exports have thousands: drawn as boxes they are
  // most of the picture). They stay
  // boxes of the model, marked folded, with the boxes that list them as hosts: never drawn,
  // still selectable (their panel) and found by search, which shows a host.
  const folded = foldedConstants(graph, nodes, initializers);
  // QuantizeLinear -> DequantizeLinear pairs (quantized-pairs.js): one of a weight is listed in
  // its readers as a folded value; one of a computed value is drawn as the edge it quantizes
  const isWeight = (name) => (initializers.has(name) && !nodeById.has(producer.get(name) || "")) || folded.has(producer.get(name));
  const pairs = quantizedPairs(graph, nodes, isWeight, types);
  const elsewhere = new Map(); // node id -> the boxes that show it (the pair's readers)
  for (const pair of pairs.values()) {
    if (pair.weight) folded.set(pair.dq, pair.readers);
    else elsewhere.set(pair.dq, pair.readers);
    if (!elsewhere.has(pair.q)) elsewhere.set(pair.q, pair.readers);
  }
  const context = { initializers, producer, folded, nodeById, types, pairs };
  for (const node of nodes) {
    const box = /** @type {NodeBox & {folded?: boolean, hosts?: string[]}} */ (new NodeBox(node, context));
    const hosts = folded.get(node.id) || elsewhere.get(node.id);
    if (hosts) {
      box.folded = true;
      box.hosts = hosts;
    }
    boxes.set(node.id, box);
  }

  // Values read but produced by nothing here come from an enclosing scope.
  for (const node of nodes) {
    for (const name of node.inputs || []) {
      if (name && !producer.has(name) && !initializers.has(name)) outer.add(name);
    }
  }

  // an edge is (producer, consumer, tensor) once: a node reading a tensor twice gets one edge
  const readBy = (tensor, id) => {
    let list = consumers.get(tensor);
    if (!list) consumers.set(tensor, list = []);
    list.push(id);
  };
  const addEdge = (from, to, tensor) => {
    if (from === to) return null;
    const edge = { id: `e${edges.length}`, from, to, tensor, label: undefined };
    edges.push(edge);
    readBy(tensor, to);
    return edge;
  };

  for (const node of nodes) {
    const inputs = node.inputs || [];
    const hidden = elsewhere.has(node.id);
    for (let i = 0; i < inputs.length; i += 1) {
      const name = inputs[i];
      if (!name || inputs.indexOf(name) !== i) continue;
      const from = producer.get(name);
      const pair = pairs.get(name);
      if (hidden || (from !== undefined && folded.has(from))) {
        readBy(name, node.id); // read, with no line drawn: the reader lists it, or an edge stands for it
      } else if (pair && !pair.weight) {
        let start = pair.source; // a value quantized twice over (Q, DQ, Q, DQ): from the first
        for (let hops = 0; pairs.has(start) && !pairs.get(start).weight && hops < 64; hops += 1) start = pairs.get(start).source;
        const source = producer.get(start) ?? (outer.has(start) ? outerBox(start) : undefined);
        const edge = source === undefined ? null : addEdge(source, node.id, name);
        if (edge) edge.qdq = pair;
      } else if (from !== undefined) addEdge(from, node.id, name);
      else if (initializers.has(name)) readBy(name, node.id); // a weight: listed in its reader's box, no line
      else if (outer.has(name)) addEdge(outerBox(name), node.id, name);
    }
  }

  // what a node's subgraphs read from this graph (an If's branches reading the model's input):
  // a dashed edge to the node, so nothing it needs looks unconnected; weights are listed, not drawn
  for (const node of nodes) {
    if (elsewhere.has(node.id)) continue;
    for (const name of node.captures || []) {
      const from = producer.get(name) ?? (nested && !initializers.has(name) ? outerBox(name) : undefined);
      if (initializers.has(name) && !nodeById.has(from || "")) {
        if (!(consumers.get(name) || []).includes(node.id)) readBy(name, node.id); // a weight its subgraph reads
        continue;
      }
      if (from === undefined || folded.has(from)) continue;
      const edge = addEdge(from, node.id, name);
      if (edge) edge.implicit = true;
    }
  }

  for (const v of graph.outputs || []) {
    const id = `output:${v.name}`;
    boxes.set(id, {
      id, kind: "output", name: v.name, data: v,
      lines: ioLines(v, ioTypeText(v, types, untyped)),
    });
    let from = producer.get(v.name);
    if (!from && initializers.has(v.name)) {
      from = `init:${v.name}`;
      const t = initializers.get(v.name);
      boxes.set(from, {
        id: from, kind: "outer", name: v.name, data: t,
        lines: [{ text: "initializer", font: "caption" }, { text: v.name, keep: formatTensor("", t.shape), font: "ioName" }],
      });
    } else if (!from && v.name) {
      from = outerBox(v.name);
    }
    if (from && !boxes.get(id).linked) {
      boxes.get(id).linked = true;
      addEdge(from, id, v.name);
    }
  }

  const model = {
    path: graph.path || "", boxes, edges, nodeById, nodeIndex, types, initializers, producer, outer, consumers, measure, folded,
  };
  if (!lazy) {
    for (const box of boxes.values()) ensureSized(model, box);
    for (const e of edges) edgeLabelSize(model, e);
  }
  return model;
}

/** The box drawn for box `id`: itself, or for a box listed in others (a folded Constant, a
 * quantization pair) the first box that shows it, through pairs of pairs. */
export function shownBoxId(model, id) {
  for (let hops = 0; hops < 64; hops += 1) {
    const box = id && model ? model.boxes.get(id) : null;
    if (!box || !box.folded) return id;
    id = box.hosts[0];
  }
  return id;
}

/** @typedef {ReturnType<typeof buildGraphModel>} GraphModel the model of one graph (boxes, edges, lookups) */

/** The message the layout worker gets for a flat drawing of the whole model: sizes and connections. */
export function layoutInput(model) {
  for (const box of model.boxes.values()) ensureSized(model, box);
  return {
    nodes: [...model.boxes.values()].map((b) => ({ id: b.id, width: b.width, height: b.height })),
    edges: model.edges.map((e) => {
      edgeLabelSize(model, e);
      return { id: e.id, from: e.from, to: e.to, width: e.labelWidth, height: e.labelHeight };
    }),
  };
}

/** Box ids that read `tensor` (through an edge of the drawing). */
export function consumersOf(model, tensor) {
  return model.consumers ? [...(model.consumers.get(tensor) || [])] : model.edges.filter((e) => e.tensor === tensor).map((e) => e.to);
}
