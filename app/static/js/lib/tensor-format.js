// Tensor values as text, exactly, for every ONNX element type. Pure functions, no DOM.
//
// The API sends floats of every width as JSON numbers holding the value's exact double (so a
// FLOAT8E4M3FN 0.1 arrives as 0.1015625), NaN/±Inf as strings, 64-bit integers beyond 2^53 as
// BigInt (api.js), booleans as true/false, strings as strings and complex numbers as [re, im].
// FLOAT, FLOAT16 and BFLOAT16 values are shown as the shortest decimal that reads back as the
// same value of their own type (0.1, as numpy prints them); the 8-, 6- and 4-bit floats, whose
// few values are far apart, as their exact value (0.1015625: "0.1" would hide a 1.5% error).
import { formatFloat32 } from "./format.js";

/** Significand bits (with the implicit one) of the 16-bit floats. */
const SIGNIFICAND_BITS = { FLOAT16: 11, BFLOAT16: 8 };
/** Floats of 8 bits or fewer: shown exactly. */
const EXACT_FLOATS = new Set(["FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0",
  "FLOAT6E2M3", "FLOAT6E3M2", "FLOAT4E2M1"]);

const INTEGER_TYPES = new Set(["INT2", "UINT2", "INT4", "UINT4", "INT8", "UINT8", "INT16", "UINT16",
  "INT32", "UINT32", "INT64", "UINT64"]);

export function isFloatType(dtype) {
  return dtype === "FLOAT" || dtype === "DOUBLE" || dtype in SIGNIFICAND_BITS || EXACT_FLOATS.has(dtype);
}

export function isIntegerType(dtype) {
  return INTEGER_TYPES.has(dtype);
}

/** Round x to `bits` significant binary digits, ties to even (normal numbers). */
function roundToBits(x, bits) {
  if (x === 0 || !Number.isFinite(x)) return x;
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1; // log2 may round up just below a power of two
  else if (2 ** (e + 1) <= a) e += 1;
  const scale = 2 ** (bits - 1 - e);
  const r = a * scale;
  const f = Math.floor(r);
  const diff = r - f;
  let n = f;
  if (diff > 0.5 || (diff === 0.5 && f % 2 === 1)) n = f + 1;
  return (sign * n) / scale;
}

/** The shortest decimal that rounds back to v at `bits` significand bits. */
export function shortestDecimal(v, bits) {
  for (let p = 1; p <= 17; p += 1) {
    const s = v.toPrecision(p);
    if (roundToBits(Number(s), bits) === v) return String(Number(s));
  }
  return String(v);
}

function special(v) {
  if (v === "NaN") return "NaN";
  if (v === "Infinity") return "inf";
  if (v === "-Infinity") return "-inf";
  return null;
}

function formatFloat(v, dtype) {
  if (typeof v === "string") return special(v) ?? v;
  if (typeof v !== "number") return String(v);
  if (Object.is(v, -0)) return "-0";
  if (!Number.isFinite(v)) return Number.isNaN(v) ? "NaN" : v > 0 ? "inf" : "-inf";
  if (dtype === "FLOAT") return formatFloat32(v);
  if (dtype in SIGNIFICAND_BITS) return shortestDecimal(v, SIGNIFICAND_BITS[dtype]);
  return String(v); // DOUBLE (shortest round trip), and the exact value of the narrow floats
}

function formatComplex(v, dtype) {
  if (!Array.isArray(v) || v.length !== 2) return String(v);
  const part = dtype === "COMPLEX64" ? "FLOAT" : "DOUBLE";
  const re = formatFloat(v[0], part);
  const im = formatFloat(v[1], part);
  const sign = im.startsWith("-") ? "-" : "+";
  return `${re}${sign}${im.replace(/^-/, "")}j`;
}

/** One value of a tensor of `dtype` as text. */
export function formatValue(v, dtype) {
  if (v === null || v === undefined) return "";
  if (dtype === "STRING") return JSON.stringify(String(v));
  if (dtype === "BOOL") return v === true || v === 1 ? "true" : v === false || v === 0 ? "false" : String(v);
  if (dtype === "COMPLEX64" || dtype === "COMPLEX128") return formatComplex(v, dtype);
  if (dtype === "UINT64" && (typeof v === "bigint" || typeof v === "number") && v < 0) {
    // the server sends UINT64 values of 2^63 and above wrapped to negative int64: unwrap them
    return (BigInt(v) + 2n ** 64n).toString();
  }
  if (typeof v === "bigint") return v.toString();
  if (isFloatType(dtype)) return formatFloat(v, dtype);
  if (typeof v === "string") return special(v) ?? v;
  return String(v);
}

/** Row-major strides of a shape (dims as numbers). */
export function strides(shape) {
  const out = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i -= 1) out[i] = out[i + 1] * Math.max(1, Number(shape[i + 1]));
  return out;
}

/** Flat index -> multi-index, e.g. 5 in [2, 3] -> [1, 2]. */
export function unravel(index, shape) {
  if (!shape || shape.length === 0) return [];
  const st = strides(shape);
  return st.map((s, i) => Math.floor(index / s) % Math.max(1, Number(shape[i])));
}

/**
 * Text typed into "go to" -> a flat index, or null when it names no element.
 * Accepts a flat index ("17") or a multi-index ("1, 2" / "[1, 2]" / "(1,2)").
 */
export function parseIndex(text, shape, size) {
  const t = String(text || "").trim().replace(/^[[(]|[\])]$/g, "").trim();
  if (!t) return null;
  const parts = t.split(/[\s,]+/).filter(Boolean);
  if (!parts.every((p) => /^-?\d+$/.test(p))) return null;
  const nums = parts.map(Number);
  let flat;
  if (nums.length === 1 && (shape || []).length !== 1) {
    flat = nums[0] < 0 ? size + nums[0] : nums[0];
  } else {
    if (!shape || nums.length !== shape.length) return null;
    const st = strides(shape);
    flat = 0;
    for (let i = 0; i < nums.length; i += 1) {
      const dim = Number(shape[i]);
      const k = nums[i] < 0 ? dim + nums[i] : nums[i];
      if (k < 0 || k >= dim) return null;
      flat += k * st[i];
    }
  }
  return flat >= 0 && flat < size ? flat : null;
}
