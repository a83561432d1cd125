// "Check the weights first" in the Quantize form: how each weight tensor survives integer
// quantization (GET .../weight-ranges), from the weights alone — which a scale per tensor would
// crush (one outlier sets the scale, the rest round to 0), what a scale per channel gets back —
// with the means to act on it: per channel, or those nodes left in float.
import { el, clear } from "../widgets/dom.js";
import { breakable, mono, plural } from "../widgets/ui.js";
import { nodeLabel } from "../lib/format.js";
import { bodyOf, graphPathOf } from "../lib/address.js";

const SHOWN = 8;
// a tensor losing more of its values than this to 0 is at risk: well-spread weights lose 1–2 %
// at 8 bits (those within half a step of 0), one with an outlier far more
const LOST = 0.05;

const percent = (share) => (share === 0 ? "0 %" : share === 1 ? "100 %" : share < 0.001 ? "< 0.1 %" : share > 0.999 ? "> 99.9 %" : `${(100 * share).toFixed(1)} %`);
const db = (v) => (v === null || v === undefined ? "lossless" : `${v.toFixed(1)} dB`);

/**
 * The check. `bits()`: the weight width chosen now; `perChannel(on)` ticks the form's per
 * channel box; `exclude(names)` puts node names in its "Nodes left in float" field.
 */
export function weightCheck(ctx, { bits, perChannel, exclude }) {
  const go = el("button", { type: "button", class: "btn btn-small", id: "weight-check-go" }, "Check the weights first");
  const out = el("div", { id: "weight-check" });
  go.addEventListener("click", async () => {
    go.disabled = true;
    clear(out);
    out.append(el("p", { class: "muted" }, "Quantizing each weight tensor…"));
    try {
      const answer = await ctx.actions.weightRanges(bits());
      clear(out);
      const risky = answer.weights.filter((w) => w.zeroed_per_tensor > LOST);
      const saved = risky.filter((w) => w.zeroed_per_channel < w.zeroed_per_tensor / 2); // per channel helps
      if (!answer.weights.length) {
        out.append(el("p", { class: "ed-hint muted", id: "weight-check-summary" }, "No weights to check: no Conv, Gemm, MatMul or Gather reads a float initializer as its weights (computed weights, a ConstantOfShape say, aren't known before the model runs)."));
        out.dataset.ready = "true";
        return;
      }
      out.append(el("p", { class: "ed-hint muted", id: "weight-check-summary" },
        `${plural(answer.weights.length, "weight tensor")} at ${answer.bits} bits: `,
        risky.length
          ? `${risky.length} ${risky.length === 1 ? "loses" : "lose"} more than ${100 * LOST} % of its values to 0 with one scale per tensor (an outlier sets the scale); ${saved.length} of them ${saved.length === 1 ? "keeps" : "keep"} most of those with a scale per channel.`
          : `none loses more than ${100 * LOST} % of its values to 0 with one scale per tensor.`),
      table(answer.weights.slice(0, SHOWN), ctx));
      if (risky.length) {
        const channel = el("button", { type: "button", class: "btn btn-small", id: "weight-check-per-channel" }, "Quantize per channel");
        channel.addEventListener("click", () => perChannel(true));
        const names = [...new Set(risky.flatMap((w) => w.nodes.map((n) => n.name)).filter(Boolean))];
        const leave = el("button", { type: "button", class: "btn btn-small", id: "weight-check-exclude" }, `Leave their ${plural(names.length, "node")} in float`);
        leave.addEventListener("click", () => exclude(names));
        out.append(el("div", { class: "ed-row" }, saved.length ? channel : null, names.length ? leave : null));
      }
      out.dataset.ready = "true";
    } catch (err) {
      clear(out);
      out.append(el("div", { class: "field-error" }, err.message || String(err)));
    } finally {
      go.disabled = false;
    }
  });
  return el("div", { class: "weight-check" }, el("div", { class: "ed-row" }, go), out);
}

function table(weights, ctx) {
  return el("table", { class: "run-compare weight-check-table" },
    el("caption", { class: "muted" }, "Each cell: one scale per tensor, then one per output channel below it."),
    el("thead", {}, el("tr", {}, [["weights", "", ""], ["lost to 0", "num", "values that round to 0: one scale per tensor / per channel"], ["SQNR", "num", "signal to quantization noise: per tensor / per channel (~6 dB a bit)"]]
      .map(([h, cls, title]) => el("th", { class: cls, title: title || null }, h)))),
    el("tbody", {}, weights.map((w) => el("tr", { "data-tensor": w.tensor },
      el("td", { class: "cost-name", title: w.tensor },
        el("div", {}, mono(breakable(w.tensor))),
        el("div", { class: "muted run-owners" }, w.nodes.map((n, k) => [k ? ", " : "",
          // a reader inside an If's branch links into it, and says which (both branches name theirs alike)
          el("a", { href: ctx.nodeHref(graphPathOf(n.node), n.node), class: "cost-node" }, breakable(nodeLabel(n.name, n.node))),
          bodyOf(n.node) ? el("span", { class: "muted" }, ` (${bodyOf(n.node)})`) : null]),
        ` · max ${w.outlier_ratio === null ? "?" : w.outlier_ratio.toFixed(0)}σ`)),
      el("td", { class: "num" }, percent(w.zeroed_per_tensor), el("div", { class: "muted" }, percent(w.zeroed_per_channel))),
      el("td", { class: "num" }, db(w.per_tensor_sqnr_db), el("div", { class: "muted" }, db(w.per_channel_sqnr_db)))))));
}
