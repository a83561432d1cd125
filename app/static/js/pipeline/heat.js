// The heat map of a model's costs (GET .../stats): each drawn box's FLOPs, parameters, output
// size or memory alive (a collapsed group's: what its nodes add up to) put in one of HEAT_STEPS
// classes on a log scale between the smallest and the largest non-zero value of what is drawn;
// no cost at all and an unknown cost have classes of their own (never the coolest step).
import { HEAT_CLASSES, HEAT_STEPS } from "../renderers/theme.js";
import { formatBytes, formatCount } from "../lib/format.js";

/** What the drawing can be coloured by: a node field of the stats answer -> its words. */
export const HEAT_METRICS = { flops: "FLOPs", params: "Parameters", output_bytes: "Output size", live_bytes: "Memory alive" };

/** ... and what a run measures (POST .../run): each node's time ("profile"), how far its
 * output is from another revision's ("locate": ‖Δ‖ / ‖value‖), and how far the model's outputs
 * move when that node alone is quantized (POST .../sensitivity). */
export const MEASURED_METRICS = { time_us: "Time", rel_error: "Error", quant_cost: "Cost quantized alone" };

const RATIO_METRICS = new Set(["rel_error", "quant_cost"]);

// errors coloured on one scale whatever the run (0.001 % to 100 %), not from the smallest to the
// largest drawn: a float16 conversion's 0.04 % was deep red, the hottest of a harmless run (QA30)
const FIXED_SCALES = { rel_error: [1e-5, 1], quant_cost: [1e-5, 1] };

const BYTE_METRICS = new Set(["output_bytes", "live_bytes"]);

/** A node's value of `metric` (a stats or profile node field) as text: bytes, time or a count; "?" unknown. */
export function formatMetric(metric, v) {
  if (v === null || v === undefined) return "?";
  if (v === Infinity) return "∞"; // a value not finite on one side (an overflow): off most
  if (metric === "time_us") return v >= 1e6 ? `${(v / 1e6).toPrecision(3)} s` : v >= 1000 ? `${(v / 1000).toPrecision(3)} ms` : `${Math.round(v)} µs`;
  if (RATIO_METRICS.has(metric)) return v === 0 ? "0" : `${Number((100 * v).toPrecision(2))} %`;
  return BYTE_METRICS.has(metric) ? formatBytes(Math.round(v)) : formatCount(v);
}

/** The words of any metric the drawing can be coloured by. */
export function metricLabel(metric) {
  return { ...HEAT_METRICS, ...MEASURED_METRICS }[metric] || metric;
}

/** How a collapsed group's box counts its nodes: their sum, or for memory alive their most. */
const GROUP_MEASURE = { flops: "sum", params: "sum", output_bytes: "sum", live_bytes: "max", time_us: "sum", rel_error: "max", quant_cost: "max" };

/** How a collapsed group's value is made, in words for the legend. */
export function groupWords(metric) {
  if (metric === "live_bytes") return "A collapsed group: the most while its nodes run";
  if (metric === "quant_cost") return "A collapsed group: its costliest node";
  return GROUP_MEASURE[/** @type {keyof typeof GROUP_MEASURE} */ (metric)] === "max" ? "A collapsed group: its node furthest off" : "A collapsed group: its nodes' sum";
}

/** What a value of 0 is called in the legend. */
export function zeroWords(metric) {
  return { rel_error: "identical", time_us: "no kernel of its own", quant_cost: "no loss" }[metric] || "none";
}

/** What a box without a value is called in the legend. */
export function unknownWords(metric) {
  return { rel_error: "not compared", time_us: "not timed", quant_cost: "not quantized" }[metric] || "unknown";
}

/**
 * The value of `metric` for each box drawn now: a node's own; a collapsed group's, its nodes'
 * sum (live_bytes: their most), unknown if any of them is.
 * @param {Array<Record<string, any>>} nodes the stats answer's nodes
 * @param {string} metric a key of HEAT_METRICS
 * @param {(ids: string[]) => Map<string, string[]>} drawnBoxesOf the controller's: box -> node ids it shows
 * @returns {{values: Array<[string, number | null]>, groups: number}} [box id as mark() takes it, value]
 */
export function drawnValues(nodes, metric, drawnBoxesOf) {
  // an output infinite or NaN on one side (float16's overflow) has no error: the hottest box
  const own = new Map(nodes.map((n) => [n.node, metric === "rel_error" && n.non_finite ? Infinity : n[metric] ?? null]));
  const values = /** @type {Array<[string, number | null]>} */ ([]);
  let groups = 0;
  for (const [box, members] of drawnBoxesOf(nodes.map((n) => n.node))) {
    if (!box.startsWith("group:")) {
      values.push([box, own.get(box) ?? null]);
      continue;
    }
    groups += 1;
    values.push([box, groupValue(members.map((id) => own.get(id) ?? null), metric)]);
  }
  return { values, groups };
}

/**
 * A group's `metric` from its nodes' values: their sum (live_bytes: their most); null if any
 * is unknown.
 * @param {Array<number | null>} values
 * @param {string} metric
 */
export function groupValue(values, metric) {
  if (values.some((v) => v === null || v === undefined)) return null;
  const sum = GROUP_MEASURE[/** @type {keyof typeof GROUP_MEASURE} */ (metric)] === "sum";
  return values.reduce((acc, v) => (sum ? acc + Number(v) : Math.max(acc, Number(v))), 0);
}

/**
 * @param {Array<[string, number | null]>} values box ids and their values (null: unknown)
 * @param {string} [metric] its own fixed scale, where it has one (FIXED_SCALES)
 * @returns {{classes: Map<string, string[]>, lo: number, hi: number, top: number, unknown: number}}
 *   box ids by heat class, the range the steps span and the largest value
 */
export function heatClasses(values, metric = "") {
  const positive = values.map(([, v]) => v).filter((v) => typeof v === "number" && v > 0);
  const top = positive.length ? Math.max(...positive) : 0;
  const fixed = FIXED_SCALES[/** @type {keyof typeof FIXED_SCALES} */ (metric)];
  const lo = fixed && top > 0 ? fixed[0] : positive.length ? Math.min(...positive) : 0;
  const hi = fixed && top > 0 ? fixed[1] : top;
  const span = Math.log(hi) - Math.log(lo);
  const classes = new Map(HEAT_CLASSES.map((c) => [c, /** @type {string[]} */ ([])]));
  let unknown = 0;
  for (const [id, v] of values) {
    let cls;
    if (v === null || v === undefined) {
      cls = "heat-unknown";
      unknown += 1;
    } else if (v <= 0) cls = "heat-zero";
    else {
      const k = span > 0 ? Math.floor(((Math.log(v) - Math.log(lo)) / span) * HEAT_STEPS) : HEAT_STEPS - 1;
      cls = `heat-${Math.min(HEAT_STEPS - 1, Math.max(0, k))}`;
    }
    /** @type {string[]} */ (classes.get(cls)).push(id);
  }
  return { classes, lo, hi, top, unknown };
}

/** The value at which step `k` starts (the log scale's edges), for the legend. */
export function stepStart(lo, hi, k) {
  if (!(lo > 0) || !(hi > lo)) return lo;
  return Math.exp(Math.log(lo) + ((Math.log(hi) - Math.log(lo)) * k) / HEAT_STEPS);
}
