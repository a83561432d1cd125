// A tensor's histogram (the "histogram" of its statistics, docs/api.md): bars to scale, every
// non-empty bin at least a few pixels tall so a single outlier — what ruins a per-tensor
// quantization — shows beside the bulk; a log scale a click away; zero marked; each bar's range
// and count in its tooltip.
import { el, svg } from "./dom.js";
import { formatInteger, formatNumber } from "../lib/format.js";

const LEAST = 0.07; // the height of a non-empty bin's bar, at least (of the chart's 44 px: 3 px)

/** The value range bar `k` of `h` covers, in words. */
function binRange(h, k) {
  if (h.integers) return formatNumber(h.lo + k);
  const n = h.counts.length;
  const width = (h.hi - h.lo) / n;
  const from = h.lo + k * width;
  return `${formatNumber(from)} to ${formatNumber(k === n - 1 ? h.hi : from + width)}`;
}

/** Where value `v` falls along the bars (0..bins), for the zero mark. */
function position(h, v) {
  if (h.integers) return v - h.lo + 0.5;
  return ((v - h.lo) / (h.hi - h.lo)) * h.counts.length;
}

/** Each bar's height (0..1) on a linear or a log scale. */
function heights(counts, log) {
  const scale = log ? Math.log1p : (c) => c;
  const top = scale(Math.max(...counts)) || 1;
  return counts.map((c) => (c ? Math.max(LEAST, scale(c) / top) : 0));
}

/** The histogram `h` ({lo, hi, counts, integers?}) as a figure; null when it has nothing to show
 * (every value the same: min and max say it). */
export function histogramChart(h) {
  if (!h || !h.counts || h.counts.length < 2 || typeof h.lo !== "number" || typeof h.hi !== "number") return null;
  const n = h.counts.length;
  const bars = h.counts.map((c, k) => svg("rect", { x: k + 0.08, width: 0.84, class: "hist-bar", "data-count": c },
    svg("title", {}, `${binRange(h, k)}: ${formatInteger(c)}`)));
  const draw = (log) => {
    heights(h.counts, log).forEach((height, k) => { bars[k].setAttribute("y", String(1 - height)); bars[k].setAttribute("height", String(height)); });
    scale.textContent = log ? "log scale" : "linear scale";
    scale.setAttribute("aria-pressed", String(log));
    scale.title = log ? "Counts on a log scale: click for linear" : "Counts to scale (a non-empty bin is never shorter than 3 px): click for a log scale";
  };
  const scale = el("button", { type: "button", class: "linklike hist-scale" });
  scale.addEventListener("click", () => draw(scale.getAttribute("aria-pressed") !== "true"));
  const zero = h.lo < 0 && h.hi > 0 ? position(h, 0) : null;
  const chart = svg("svg", { class: "hist-chart", viewBox: `0 0 ${n} 1`, preserveAspectRatio: "none", role: "img",
    "aria-label": `Histogram of ${n} bars from ${formatNumber(h.lo)} to ${formatNumber(h.hi)}` },
  zero === null ? null : svg("line", { x1: zero, x2: zero, y1: 0, y2: 1, class: "hist-zero" }),
  bars);
  draw(false);
  return el("figure", { class: "tp-hist" }, chart,
    el("figcaption", { class: "hist-axis muted" },
      el("span", { class: "hist-lo" }, formatNumber(h.lo)),
      el("span", { class: "hist-note" }, h.integers ? "a bar per value, " : `${n} bins, `, scale),
      el("span", { class: "hist-hi" }, formatNumber(h.hi))));
}
