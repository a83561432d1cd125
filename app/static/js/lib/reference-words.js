// A reference verdict's failure in words (api/reference.py), for the model panel, the toolbar's
// badge and the note after an edit.
import { formatPercent, formatShape, plural } from "./format.js";

/** Rows of one output found among the other's (output_compare.matched_rows), in words:
 * "the same 28 rows in another order", "23 of 28 rows the same, reordered"; "" without. */
export function rowsWords(rows) {
  if (!rows) return "";
  const { here, there, matched } = rows;
  if (here === there) return matched === here ? `the same ${here} rows in another order` : `${matched} of ${here} rows the same, reordered`;
  return `${matched} of its ${here} rows among the other's ${there}`;
}

/** One output's miss in words: "probs is 31 % of its range off", "probs changed shape [1,10] → [1,5]". */
function outputMiss(name, o) {
  if (o.missing) return `${name} is not an output of this revision`;
  if (o.rows) return `${name}: ${rowsWords(o.rows)}`;
  if (Array.isArray(o.shape) && Array.isArray(o.shape[0])) return `${name} changed shape ${formatShape(o.shape[1])} → ${formatShape(o.shape[0])}`;
  if (o.max_rel_to_range === null || o.max_rel_to_range === undefined) return `${name} differs`;
  return `${name} is ${formatPercent(o.max_rel_to_range)} of its range off`;
}

/** Why a verdict failed, in one line ("" when it did not). */
export function referenceCause(ref) {
  if (!ref || ref.status !== "failed") return "";
  const bad = (ref.cases || []).filter((c) => c.status !== "passed");
  const first = bad.find((c) => ref.worst && c.name === ref.worst.case) || bad[0];
  if (!first) return "";
  const more = bad.length > 1 ? ` (and ${plural(bad.length - 1, "other case")})` : "";
  if (first.status === "error") return `case “${first.name}”: ${first.message}${more}`;
  const misses = Object.entries(first.outputs || {}).filter(([, o]) => !o.passed);
  const worst = misses.find(([n]) => ref.worst && n === ref.worst.output) || misses[0];
  const tolerance = ref.tolerance === undefined ? "" : ` (tolerance ${formatPercent(ref.tolerance)})`;
  return `case “${first.name}”: ${worst ? outputMiss(worst[0], worst[1]) : "differs"}${tolerance}${more}`;
}
