// The heat map's legend over the drawing: what the colours count, each step's lower bound, the
// colours of no cost and of an unknown one, and a button that turns the heat map off.
import { el, clear } from "./dom.js";
import { formatMetric as amount, groupWords, metricLabel, stepStart, unknownWords, zeroWords } from "../pipeline/heat.js";
import { HEAT_STEPS } from "../renderers/theme.js";

/**
 * Fill `root` with the legend of `heat` (heatClasses' answer) for `metric`; hide it when off.
 * @param {HTMLElement} root
 * @param {string | null} metric
 * @param {{lo: number, hi: number, top?: number, unknown: number, groups?: number} | null} heat
 * @param {() => void} turnOff
 * @param {string[]} [asked] the inputs' dims the unknown boxes wait for (GET .../stats unknown.dims)
 */
export function renderHeatLegend(root, metric, heat, turnOff, asked = []) {
  clear(root);
  root.hidden = !metric || !heat;
  if (!metric || !heat) return;
  // one value over every box (a single box drawn, or all alike): one step, not six saying the same
  const one = !(heat.hi > heat.lo);
  // no box above 0 (parameters of a model without weights): every box has the "none" colour
  const none = !(heat.hi > 0);
  // boxes of unknown value have their own step below: the one colour is of the others
  const others = heat.unknown ? " other" : "";
  const steps = none ? [el("li", { class: "heat-step heat-zero" }, el("span", { class: "heat-swatch" }), `every${others} box: ${zeroWords(metric)}`)]
    : one ? [el("li", { class: `heat-step heat-${HEAT_STEPS - 1}` }, el("span", { class: "heat-swatch" }), `all${others ? " others" : ""} ${amount(metric, heat.hi)}`)]
    : Array.from({ length: HEAT_STEPS }, (_, k) => el("li", { class: `heat-step heat-${k}` },
      el("span", { class: "heat-swatch" }), amount(metric, stepStart(heat.lo, heat.hi, k))));
  root.append(
    el("div", { class: "heat-legend-head" },
      el("strong", {}, `${metricLabel(metric)} per box`),
      el("button", { type: "button", class: "tool tool-icon heat-off", title: "Colour by op kind again", "aria-label": "Stop colouring by this cost", onclick: turnOff }, "×")),
    el("ol", { class: "heat-scale" }, steps),
    el("div", { class: "heat-notes muted" },
      none ? "" : el("span", { class: "heat-step heat-zero" }, el("span", { class: "heat-swatch" }), zeroWords(metric)),
      el("span", { class: "heat-step heat-unknown" }, el("span", { class: "heat-swatch" }), heat.unknown ? `${unknownWords(metric)} (${heat.unknown})` : unknownWords(metric)),
      one ? "" : el("span", {}, `up to ${amount(metric, heat.top ?? heat.hi)}`)),
    heat.groups ? el("div", { class: "heat-groups muted" }, groupWords(metric)) : "",
    // boxes unknown until the inputs' sizes are given: say which, and where
    heat.unknown && asked.length ? el("div", { class: "heat-ask muted" }, `Give ${asked.join(", ")} in Costs to count them.`) : "");
}
