// Saving a tensor as a .npy file from the page: the values are fetched page by page through
// the tensor preview API and packed into NumPy's .npy format (version 1.0) in the browser.
// Only for tensors up to NPY_MAX_ELEMENTS values of a dtype NumPy stores natively; anything
// bigger needs a server-side download (GET .../tensors/<ref>.npy does not exist yet).
import { formatInteger } from "./format.js";


export const NPY_MAX_ELEMENTS = 1_000_000;
const PAGE = 10_000; // the server's largest preview window

/** dtype name -> [NumPy descr, bytes per value, writer(view, offset, value)] */
const CODECS = {
  FLOAT: ["<f4", 4, (v, o, x) => v.setFloat32(o, num(x), true)],
  DOUBLE: ["<f8", 8, (v, o, x) => v.setFloat64(o, num(x), true)],
  FLOAT16: ["<f2", 2, (v, o, x) => v.setUint16(o, halfBits(num(x)), true)],
  INT8: ["|i1", 1, (v, o, x) => v.setInt8(o, Number(x))],
  INT16: ["<i2", 2, (v, o, x) => v.setInt16(o, Number(x), true)],
  INT32: ["<i4", 4, (v, o, x) => v.setInt32(o, Number(x), true)],
  INT64: ["<i8", 8, (v, o, x) => v.setBigInt64(o, BigInt(x), true)],
  UINT8: ["|u1", 1, (v, o, x) => v.setUint8(o, Number(x))],
  UINT16: ["<u2", 2, (v, o, x) => v.setUint16(o, Number(x), true)],
  UINT32: ["<u4", 4, (v, o, x) => v.setUint32(o, Number(x), true)],
  UINT64: ["<u8", 8, (v, o, x) => v.setBigUint64(o, BigInt(x), true)],
  BOOL: ["|b1", 1, (v, o, x) => v.setUint8(o, x ? 1 : 0)],
  COMPLEX64: ["<c8", 8, (v, o, x) => { v.setFloat32(o, num(x[0]), true); v.setFloat32(o + 4, num(x[1]), true); }],
  COMPLEX128: ["<c16", 16, (v, o, x) => { v.setFloat64(o, num(x[0]), true); v.setFloat64(o + 8, num(x[1]), true); }],
};

function num(x) {
  if (typeof x === "number") return x;
  if (x === "NaN") return NaN;
  if (x === "Infinity") return Infinity;
  if (x === "-Infinity") return -Infinity;
  return Number(x);
}

/** IEEE 754 half-precision bits of a number (round to nearest even). */
export function halfBits(value) {
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  f32[0] = value;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // Inf / NaN
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> Inf
  if (e <= 0) { // subnormal half (or zero)
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && (half & 1))) half += 1;
    return sign | half;
  }
  let half = sign | (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1; // may carry into the exponent: still right
  return half;
}

/** Can the page build a .npy of this tensor? "" when it can, else the reason in words. */
export function npyProblem(dtype, size) {
  if (!CODECS[dtype]) return `${dtype} tensors can't be saved as .npy from the page (NumPy has no native ${dtype.toLowerCase()} type, or the preview shortens the values).`;
  if (size > NPY_MAX_ELEMENTS) return `This tensor has more than ${formatInteger(NPY_MAX_ELEMENTS)} values: the page only builds .npy files up to that size.`;
  return "";
}

/** The .npy (v1.0) bytes of `values` (flat, row-major) with `dtype` and `shape`. */
export function buildNpy(dtype, shape, values) {
  const codec = CODECS[dtype];
  if (!codec) throw new Error(npyProblem(dtype, 0));
  const [descr, width, write] = codec;
  const dims = shape.map((d) => String(Number(d)));
  const tuple = dims.length === 0 ? "()" : dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(", ")})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${tuple}, }`;
  const unpadded = 10 + header.length + 1; // magic(6) + version(2) + length(2) + header + "\n"
  header += " ".repeat((64 - (unpadded % 64)) % 64) + "\n";
  const out = new Uint8Array(10 + header.length + values.length * width);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], 0); // \x93NUMPY v1.0
  const view = new DataView(out.buffer);
  view.setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i += 1) out[10 + i] = header.charCodeAt(i);
  let offset = 10 + header.length;
  for (const v of values) { write(view, offset, v); offset += width; }
  return out;
}

/**
 * Fetch every value of tensor `ref` with `load(ref, offset, count)` (the preview API) and
 * resolve to the .npy bytes. onProgress(fraction) after each page.
 * @param {string} ref
 * @param {(ref: string, offset: number, count: number) => Promise<any>} load
 * @param {(fraction: number) => void} [onProgress]
 */
export async function fetchNpy(ref, load, onProgress = () => {}) {
  const first = await load(ref, 0, PAGE);
  const size = Number(first.size);
  const problem = npyProblem(first.dtype, size);
  if (problem) throw new Error(problem);
  if (first.sparse) throw new Error("Sparse tensors can't be saved as .npy from the page.");
  const values = [...(first.values || [])];
  onProgress(size ? values.length / size : 1);
  while (values.length < size) {
    const page = await load(ref, values.length, PAGE);
    const got = page.values || [];
    if (!got.length) throw new Error("The server sent fewer values than the tensor holds.");
    values.push(...got);
    onProgress(values.length / size);
  }
  return { bytes: buildNpy(first.dtype, (first.shape || []).map(Number), values), name: first.name || ref };
}

/** Offer bytes to the browser as a download named `filename`. */
export function saveBytes(bytes, filename, type = "application/octet-stream") {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The shape a .npy file's header declares (its first bytes read, not the values), or null for
 * a file that is no .npy (a .pb) or one whose header can't be read. */
export async function npyShape(/** @type {Blob} */ file) {
  const head = new Uint8Array(await file.slice(0, 65536).arrayBuffer());
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
  if (head.length < 10 || magic.some((b, k) => head[k] !== b)) return null;
  const view = new DataView(head.buffer);
  const v1 = head[6] === 1;
  const length = v1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = v1 ? 10 : 12;
  if (start + length > head.length) return null;
  const text = new TextDecoder("latin1").decode(head.subarray(start, start + length));
  const m = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(text);
  if (!m) return null;
  const dims = m[1].split(",").map((x) => x.trim()).filter(Boolean).map(Number);
  return dims.every((d) => Number.isInteger(d) && d >= 0) ? dims : null;
}
