// A tensor's histogram (the "histogram" of its statistics, docs/api.md): bars on a log scale, so a
// single outlier — what ruins a per-tensor quantization — stays as visible as the bulk; its
// range under it, zero marked; each bar's range and count in its tooltip.
import { el, svg } from "./dom.js";
import { formatInteger, formatNumber } from "../lib/format.js";

/** The value range bar `k` of `h` covers, in words. */
function binRange(h, k) {
  if (h.integers) return formatNumber(h.lo + k);
  const n = h.counts.length;
  const width = (h.hi - h.lo) / n;
  const from = h.lo + k * width;
  return n === 1 ? formatNumber(h.lo) : `${formatNumber(from)} to ${formatNumber(k === n - 1 ? h.hi : from + width)}`;
}

/** Where value `v` falls along the bars (0..bins), for the zero mark. */
function position(h, v) {
  const n = h.counts.length;
  if (h.integers) return v - h.lo + 0.5;
  return ((v - h.lo) / (h.hi - h.lo)) * n;
}

/** The histogram `h` ({lo, hi, counts, integers?}) as a figure; null when it has nothing to show. */
export function histogramChart(h) {
  if (!h || !h.counts || !h.counts.length || typeof h.lo !== "number" || typeof h.hi !== "number") return null;
  const n = h.counts.length;
  const top = Math.log1p(Math.max(...h.counts)) || 1;
  const bars = h.counts.map((c, k) => {
    const height = c ? Math.max(0.04, Math.log1p(c) / top) : 0; // a count of 1 still shows
    return svg("rect", { x: k + 0.08, y: 1 - height, width: 0.84, height, class: "hist-bar", "data-count": c },
      svg("title", {}, `${binRange(h, k)}: ${formatInteger(c)}`));
  });
  const zero = h.lo < 0 && h.hi > 0 ? position(h, 0) : null;
  const chart = svg("svg", { class: "hist-chart", viewBox: `0 0 ${n} 1`, preserveAspectRatio: "none", role: "img",
    "aria-label": `Histogram of ${n} bars from ${formatNumber(h.lo)} to ${formatNumber(h.hi)}, counts on a log scale` },
  zero === null ? null : svg("line", { x1: zero, x2: zero, y1: 0, y2: 1, class: "hist-zero" }),
  bars);
  return el("figure", { class: "tp-hist" }, chart,
    el("figcaption", { class: "hist-axis muted" },
      el("span", { class: "hist-lo" }, formatNumber(h.lo)),
      el("span", { class: "hist-note" }, h.integers ? "one bar per value, log scale" : `${n} bins, log scale`),
      el("span", { class: "hist-hi" }, formatNumber(h.hi))));
}
