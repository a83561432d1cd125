// A model's costs as GET .../stats gives them: a count when every size is known, else a formula
// in the inputs' symbolic dims ("72·batch"), else unknown. Pure functions, no DOM: the model
// panel's Costs and the compare panel read totals through here, so both say the same.
import { dimWord, formatBytes, formatCount } from "./format.js";

/** @typedef {{coefficient: number, symbols: Record<string, number>}} Term */

const SUPERSCRIPT = ["", "", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸"];

/** A formula's terms (GET .../stats "formula") as "37.3 K·batch·sequence² + 170 M·batch·sequence + 12". */
export function formulaText(/** @type {Term[]} */ terms, format = formatCount) {
  if (!terms.length) return "0";
  // a dim named B beside the byte unit B reads as B²: the unit spelled out then ("32 bytes·B·S")
  const clash = format !== formatCount && terms.some((t) => Object.hasOwn(t.symbols, "B"));
  return terms.map((t, i) => {
    // a formula's symbols are the inputs' dims, named as their size fields name them (a tf2onnx
    // batch called unk__312 read "?" in the formula, QA43 #4)
    const symbols = Object.entries(t.symbols).map(([name, p]) => `${dimWord(name, true, true)}${SUPERSCRIPT[p] ?? `^${p}`}`);
    const c = Math.abs(t.coefficient);
    const head = c === 1 && symbols.length && format === formatCount ? "" : clash ? format(c).replace(/ B$/, " bytes") : format(c);
    const sign = t.coefficient < 0 ? (i ? " − " : "−") : i ? " + " : "";
    return `${sign}${[head, ...symbols].filter(Boolean).join("·")}`;
  }).join("");
}

const power = (/** @type {Term} */ t) => Object.values(t.symbols).reduce((a, b) => a + b, 0);

/** `now − before`, term by term (highest power first); [] when they are the same. */
export function formulaDifference(/** @type {Term[]} */ before, /** @type {Term[]} */ now) {
  /** @type {Map<string, Term>} */
  const sum = new Map();
  const add = (/** @type {Term} */ t, /** @type {number} */ sign) => {
    const key = Object.entries(t.symbols).sort(([a], [b]) => a.localeCompare(b)).map(([s, p]) => `${s}^${p}`).join("·");
    const old = sum.get(key);
    sum.set(key, { coefficient: (old ? old.coefficient : 0) + sign * t.coefficient, symbols: t.symbols });
  };
  for (const t of now) add(t, 1);
  for (const t of before) add(t, -1);
  return [...sum.values()].filter((t) => t.coefficient !== 0).sort((a, b) => power(b) - power(a));
}

/** Whether the stats carry `key` as a formula in the inputs' sizes. */
export function hasFormula(stats, key) {
  const f = stats.formula;
  return !!(f && f[key] && f[key].some((/** @type {Term} */ t) => Object.keys(t.symbols).length));
}

/** Some input dims have no size: counts of what depends on them are missing, not zero. */
export function waitingForSizes(stats) {
  return (stats.input_dims || []).some((/** @type {string} */ d) => !(d in (stats.dims || {})));
}

/** The nodes a total leaves out for want of sizes ("flops" or "activation_bytes"). */
function unknownNodes(stats, key) {
  const u = stats.unknown || {};
  return key === "flops" ? u.flops_nodes || 0 : key === "activation_bytes" ? u.output_nodes || 0 : 0;
}

/**
 * One total as it can be told: {value} counted, {formula} in the input sizes (the nodes it
 * leaves out in `left`), or {unknown} until the input sizes are given.
 * @returns {{value: number, formula?: undefined, unknown?: undefined} | {formula: Term[], left: number, value?: undefined, unknown?: undefined} | {unknown: true, value?: undefined, formula?: undefined}}
 */
export function totalOf(stats, key) {
  const value = stats.totals[key];
  if (waitingForSizes(stats) && unknownNodes(stats, key)) {
    if (hasFormula(stats, key)) return { formula: stats.formula[key], left: key === "flops" ? stats.formula.unknown_nodes || 0 : 0 };
    return { unknown: true };
  }
  return typeof value === "number" ? { value } : { unknown: true };
}

/** A total as text in `format` ("1.2 M", "72·batch", "?"). */
export function totalText(total, format) {
  return total.formula ? formulaText(total.formula, format) : total.unknown ? "?" : format(total.value);
}

/** How a total moved from `a` to `b`: "same", "+1.2 M (+3.4 %)", "+73.9 K (×18.5 K)", "+8·batch", or "?" (not comparable). */
export function totalChange(a, b, format) {
  if (a.value !== undefined && b.value !== undefined) {
    if (a.value === b.value) return "same";
    const d = Math.abs(b.value - a.value);
    const sign = b.value > a.value ? "+" : "−";
    // past tenfold, as a factor: "+73.9 K (×18.5 K)", not "(+1846300.0 %)" wrapped in its column
    const relative = !a.value ? "" : b.value > 10 * a.value ? ` (×${formatCount(b.value / a.value)})` : ` (${sign}${((100 * d) / a.value).toFixed(1)} %)`;
    return `${sign}${format(d)}${relative}`;
  }
  if (a.formula && b.formula) {
    const d = formulaDifference(a.formula, b.formula);
    if (!d.length) return "same";
    const text = formulaText(d, format);
    return text.startsWith("−") ? text : `+${text}`;
  }
  return "?";
}

/** The byte or count format of a total. */
export function formatOf(/** @type {string} */ key) {
  return key === "params" || key === "flops" ? formatCount : formatBytes;
}
