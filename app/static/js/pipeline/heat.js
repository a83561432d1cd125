// The heat map of a model's costs (GET .../stats): each node's FLOPs, parameters or output size
// put in one of HEAT_STEPS classes on a log scale between the smallest and the largest non-zero
// value; no cost at all and an unknown cost have classes of their own (never the coolest step).
import { HEAT_CLASSES, HEAT_STEPS } from "../renderers/theme.js";
import { formatBytes, formatCount } from "../lib/format.js";

/** What the drawing can be coloured by: a node field of the stats answer -> its words. */
export const HEAT_METRICS = { flops: "FLOPs", params: "Parameters", output_bytes: "Output size", live_bytes: "Memory alive" };

const BYTE_METRICS = new Set(["output_bytes", "live_bytes"]);

/** A node's value of `metric` (a stats node field) as text: bytes or a count; "?" unknown. */
export function formatMetric(metric, v) {
  if (v === null || v === undefined) return "?";
  return BYTE_METRICS.has(metric) ? formatBytes(Math.round(v)) : formatCount(v);
}

/**
 * @param {Array<Record<string, any>>} nodes the stats answer's nodes
 * @param {string} metric a key of HEAT_METRICS
 * @returns {{classes: Map<string, string[]>, lo: number, hi: number, unknown: number}}
 *   node ids by heat class, and the range the steps span
 */
export function heatClasses(nodes, metric) {
  const positive = nodes.map((n) => n[metric]).filter((v) => typeof v === "number" && v > 0);
  const lo = positive.length ? Math.min(...positive) : 0;
  const hi = positive.length ? Math.max(...positive) : 0;
  const span = Math.log(hi) - Math.log(lo);
  const classes = new Map(HEAT_CLASSES.map((c) => [c, /** @type {string[]} */ ([])]));
  let unknown = 0;
  for (const n of nodes) {
    const v = n[metric];
    let cls;
    if (v === null || v === undefined) {
      cls = "heat-unknown";
      unknown += 1;
    } else if (v <= 0) cls = "heat-zero";
    else {
      const k = span > 0 ? Math.floor(((Math.log(v) - Math.log(lo)) / span) * HEAT_STEPS) : HEAT_STEPS - 1;
      cls = `heat-${Math.min(HEAT_STEPS - 1, Math.max(0, k))}`;
    }
    /** @type {string[]} */ (classes.get(cls)).push(n.node);
  }
  return { classes, lo, hi, unknown };
}

/** The value at which step `k` starts (the log scale's edges), for the legend. */
export function stepStart(lo, hi, k) {
  if (!(lo > 0) || !(hi > lo)) return lo;
  return Math.exp(Math.log(lo) + ((Math.log(hi) - Math.log(lo)) * k) / HEAT_STEPS);
}
