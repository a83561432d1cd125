// Turning API values into short readable text. Pure functions, no DOM.

/** A number from the API: a JS number, a BigInt (integers beyond 2^53) or "NaN"/"Infinity". */
export function formatNumber(v) {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "string") return v;
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return String(v);
  const abs = Math.abs(v);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e6)) return v.toExponential(4).replace(/\.?0+e/, "e");
  return String(Number(v.toPrecision(6)));
}

/** A measured difference in 3 significant digits that keeps to a table's narrow column:
 * 0, 0.0312, 1.43e-6 (not 0.00000143), 2.5e+5. */
export function formatMeasure(v) {
  if (v === 0) return "0";
  const abs = Math.abs(v);
  if (abs < 1e-3 || abs >= 1e5) return v.toExponential(2).replace(/\.?0+e/, "e");
  return String(Number(v.toPrecision(3)));
}

/** An integer with thousands separators: 12345 -> "12,345". Not Intl.NumberFormat or
 * toLocaleString: their first use on a page loads ICU's locale data (15-20 ms on a fresh page,
 * on the way to a first view). */
export function formatInteger(n) {
  const s = String(Math.trunc(n));
  return s.replace(/\B(?=(\d{3})+$)/g, ",");
}

/** "1 output", "1,024 outputs": a count with its noun. */
export function plural(n, word, many = `${word}s`) {
  return `${formatInteger(n)} ${n === 1 ? word : many}`;
}

/** [1, "N", null] -> "1×N×?"; [] -> "scalar"; null (unknown rank) -> null */
export function formatDims(shape) {
  if (shape === null || shape === undefined) return null;
  if (shape.length === 0) return "scalar";
  return shape.map((d) => dimWord(d, shape.length > 1)).join("×");
}

// onnx's shape inference names a size it can't tell unk__0, unk__1… (fresh at each tensor, a
// graph output's mostly): no name of the model's, and "unk__3×unk__4×768" reads worse than "?×?×768";
// onnxruntime's names an If output's size its branches make differently If_9_o1__d2 (a merged
// decoder's past + seq with the cache, seq without: QA32 #10): no one size to name either
const INVENTED_DIM = /^(unk__\d+|If\w*_\d+_o\d+__d\d+)$/;

/** A dim as a shape shows it: a size, a name, "?" for neither (or a name onnx's inference
 * invented, unless `asInput`: an input's dim, which the person gives a size by that name); an
 * expression of other dims bracketed among others, "batch×(past_sequence + sequence)"
 * (app/views/search.py dim_word).
 * @param {unknown} d
 * @param {boolean} among
 * @param {boolean} [asInput] */
export function dimWord(d, among, asInput = false) {
  if (d === null || d === undefined || d === "") return "?";
  const text = String(d);
  if (INVENTED_DIM.test(text) && !asInput) return "?";
  return among && /[\s+*/]/.test(text) ? `(${text})` : text;
}

export function formatShape(shape) {
  const dims = formatDims(shape);
  if (dims === null) return "";
  return dims === "scalar" ? "scalar" : `⟨${dims}⟩`;
}

/**
 * What a node is called on the page: its name, or for an unnamed node its place in its graph,
 * "#422 (unnamed)" — never the API's id ("n422"), which reads like the names some exporters give
 * ("n15"). `id`: the node's id ("n422", "n4/then_branch/n0").
 * @param {string | null | undefined} name
 * @param {string} id
 */
export function nodeLabel(name, id) {
  if (name) return name;
  const place = nodePlace(id);
  return place ? `${place} (unnamed)` : String(id || "");
}

/** "#422": a node's place in its graph, from its id ("n422", "n4/then_branch/n0" -> "#0"). */
export function nodePlace(id) {
  const index = /n(\d+)$/.exec(String(id || ""));
  return index ? `#${index[1]}` : "";
}

/** dtype + shape, e.g. "FLOAT ⟨1×3×224×224⟩". */
export function formatTensor(dtype, shape) {
  return [dtype || "", formatShape(shape)].filter(Boolean).join(" ");
}

/** "FLOAT8E4M3FN" -> "float8e4m3fn": the element type as ONNX type strings spell it. */
export function dtypeWord(dtype) {
  return dtype ? String(dtype).toLowerCase() : "?";
}

function bracketDims(shape) {
  if (shape === null || shape === undefined) return "";
  return `[${shape.map((d) => (d === null || d === undefined || d === "" ? "?" : String(d))).join(",")}]`;
}

/**
 * A TypeProto in the notation of ONNX type strings, nested all the way down:
 * tensor(float)[N,3], seq(tensor(float)[N,3]), map(int64, tensor(float)), optional(...),
 * sparse_tensor(float)[4], opaque(domain.name). A missing shape (unknown rank) has no brackets.
 */
export function onnxType(type) {
  if (!type) return "?";
  switch (type.kind) {
    case "tensor": return `tensor(${dtypeWord(type.dtype)})${bracketDims(type.shape)}`;
    case "sparse_tensor": return `sparse_tensor(${dtypeWord(type.dtype)})${bracketDims(type.shape)}`;
    case "sequence": return `seq(${onnxType(type.elem)})`;
    case "optional": return `optional(${onnxType(type.elem)})`;
    case "map": return `map(${dtypeWord(type.key)}, ${onnxType(type.value)})`;
    case "opaque": return `opaque(${[type.domain, type.name].filter(Boolean).join(".")})`;
    default: return "?";
  }
}

/** A TypeProto as served by the API: plain tensors as "FLOAT ⟨1×3⟩", everything else as onnxType(). */
export function formatType(type) {
  if (!type) return "";
  if (type.kind === "tensor") return formatTensor(type.dtype, type.shape);
  if (type.kind === "unknown" || !type.kind) return "unknown type";
  return onnxType(type);
}

/** The type of a graph input/output/value_info entry. */
export function formatValueType(v) {
  if (!v) return "";
  if (v.type && v.type.kind === "unknown") return "";
  if (v.type && v.type.kind && v.type.kind !== "tensor") return formatType(v.type);
  if (v.sparse) return `sparse ${formatTensor(v.dtype, v.shape)}`;
  return formatTensor(v.dtype, v.shape);
}

export function formatBytes(n) {
  if (typeof n !== "number") return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"]; // powers of 1024, named as the server names them
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

/** A count in SI units: 8.2 G, 25.6 M, 1.3 K, 512. */
export function formatCount(n) {
  if (typeof n !== "number") return "";
  const units = ["", " K", " M", " G", " T", " P"];
  let i = 0;
  while (Math.abs(n) >= 1000 && i < units.length - 1) { n /= 1000; i += 1; }
  return i === 0 ? String(Math.round(n)) : `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)}${units[i]}`;
}

export function formatDate(value) {
  if (value === null || value === undefined || value === "") return "";
  const date = typeof value === "number" ? new Date(value * (value < 1e12 ? 1000 : 1)) : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A date in a list's column: "6 Dec, 20:16" (the year too when it is another year's). */
export function shortDate(seconds) {
  if (typeof seconds !== "number") return "";
  const date = new Date(seconds * 1000);
  const sameYear = date.getFullYear() === new Date().getFullYear();
  /** @type {Intl.DateTimeFormatOptions} */
  const parts = { day: "numeric", month: "short", ...(sameYear ? {} : { year: "numeric" }), hour: "numeric", minute: "2-digit" };
  return date.toLocaleString(undefined, parts);
}

/** Cut a string to at most `max` characters, with an ellipsis. */
export function truncate(text, max) {
  const s = String(text ?? "");
  return s.length > max ? `${s.slice(0, Math.max(1, max - 1))}…` : s;
}

/** The text an editable attribute value starts with in its input field. */
export function attributeEditText(attr) {
  if (attr.ref_attr_name) return `@${attr.ref_attr_name}`; // a function attribute's: no value of its own
  const v = attr.value;
  switch (attr.type) {
    case "FLOAT": return formatFloat32(v);
    case "INT": return formatNumberExact(v);
    case "STRING": return String(v);
    case "FLOATS": return `[${(v || []).map(formatFloat32).join(", ")}]`;
    case "INTS": return `[${(v || []).map(formatNumberExact).join(", ")}]`;
    case "STRINGS": return JSON.stringify(v || []);
    default: return "";
  }
}

function formatNumberExact(v) {
  return typeof v === "bigint" ? v.toString() : String(v);
}

/**
 * The shortest decimal that reads back as the same float32: an ONNX FLOAT 0.1 arrives as
 * 0.10000000149011612 (its exact double value) and is shown as 0.1.
 */
export function formatFloat32(v) {
  if (typeof v !== "number" || !Number.isFinite(v)) return String(v);
  const target = Math.fround(v);
  if (target !== v) return String(v); // not a float32 value: show it as it is
  for (let p = 1; p <= 9; p += 1) {
    const s = v.toPrecision(p);
    if (Math.fround(Number(s)) === target) return String(Number(s));
  }
  return String(v);
}

/** TensorProto.DataType: the element type names by number (onnx.proto; the server's dtype
 * names are these; tests/test_dtype_tables.py checks the list against onnx). */
export const DATA_TYPES = [
  "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL",
  "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
  "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
  "FLOAT8E8M0", "UINT2", "INT2", "FLOAT6E2M3", "FLOAT6E3M2",
];

/** The name of TensorProto.DataType number `n` ("INT64" for 7), or null. */
export function dtypeName(n) {
  const i = typeof n === "bigint" ? Number(n) : n;
  return Number.isInteger(i) && i > 0 && i < DATA_TYPES.length ? DATA_TYPES[i] : null;
}

/** The number of a TensorProto.DataType name (7 for "INT64"), or null. */
export function dtypeNumber(name) {
  const i = DATA_TYPES.indexOf(String(name));
  return i > 0 ? i : null;
}

// INT attributes whose value is a TensorProto.DataType, by operator: those onnx.defs documents
// as one ("The data type…", "…precision…"; tests/test_dtype_tables.py finds them there).
// Key: the op type, prefixed by its domain outside ai.onnx.
const DTYPE_ATTRIBUTES = new Map(Object.entries({
  Bernoulli: ["dtype"], BitCast: ["to"], Cast: ["to"], EyeLike: ["dtype"], Multinomial: ["dtype"],
  RandomNormal: ["dtype"], RandomNormalLike: ["dtype"], RandomUniform: ["dtype"], RandomUniformLike: ["dtype"],
  SequenceEmpty: ["dtype"], BlackmanWindow: ["output_datatype"], HammingWindow: ["output_datatype"],
  HannWindow: ["output_datatype"], MelWeightMatrix: ["output_datatype"], DequantizeLinear: ["output_dtype"],
  QuantizeLinear: ["output_dtype", "precision"], Attention: ["softmax_precision"],
  LayerNormalization: ["stash_type"], GroupNormalization: ["stash_type"], RMSNormalization: ["stash_type"],
  Range: ["stash_type"], "ai.onnx.preview.FlexAttention": ["softmax_precision"],
}));

/** Does attribute `attr` of `node` hold a TensorProto.DataType (Cast's `to`, RandomNormal's `dtype`…)? */
export function isDtypeAttribute(node, attr) {
  if (!node || !attr || attr.type !== "INT") return false;
  const domain = node.domain === "ai.onnx" ? "" : node.domain || "";
  const names = DTYPE_ATTRIBUTES.get(domain ? `${domain}.${node.op_type}` : node.op_type);
  return !!names && names.includes(attr.name);
}

/** The name an enum-valued attribute's value stands for ("INT64" for Cast's to = 7), or null. */
export function attributeValueName(node, attr) {
  return isDtypeAttribute(node, attr) && !attr.ref_attr_name ? dtypeName(attr.value) : null;
}

/** A fraction as a percentage of two significant digits: 0.31 -> "31 %", 0.0012 -> "0.12 %". */
export function formatPercent(fraction) {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return "?";
  const pct = 100 * fraction;
  if (pct === 0) return "0 %";
  if (Math.abs(pct) < 1e-4) return "< 0.0001 %";
  return `${+pct.toPrecision(2)} %`;
}
