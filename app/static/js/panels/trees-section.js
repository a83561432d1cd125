// A tree ensemble node's trees (GET .../trees): what a LightGBM, XGBoost or scikit-learn forest
// holds behind its thousands of nodes_* values — how many trees, how deep, which features they
// split on and between which thresholds, and any one tree as rules, stepped through.
import { el } from "../widgets/dom.js";
import { formatInteger, formatNumber } from "../lib/format.js";
import { fieldError, loadedSection, mono, propertyList } from "../widgets/ui.js";

const FEATURES_SHOWN = 12;
// opset 5's TreeEnsemble numbers its enums (an older server sent them as such)
const POST_TRANSFORMS = ["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"];
const AGGREGATES = ["AVERAGE", "SUM", "MIN", "MAX"];

/** An enum attribute's name: "SUM" for opset 5's 1. */
function enumName(value, names) {
  return typeof value === "number" && names[value] ? names[value] : String(value);
}

/** Whether a node is one of ai.onnx.ml's tree ensembles. */
export function isTreeEnsemble(node) {
  return node.domain === "ai.onnx.ml" && ["TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble"].includes(node.op_type);
}

function featureTable(trees, x) {
  const most = Math.max(1, ...trees.features.map((f) => f.splits));
  const bar = (f) => {
    const b = el("span", { class: "trees-bar" });
    b.style.width = `${(100 * f.splits / most).toFixed(1)}%`; // a style property: the page's CSP refuses style attributes
    return b;
  };
  const rows = trees.features.slice(0, FEATURES_SHOWN).map((f) => el("tr", { "data-feature": String(f.feature) },
    el("td", {}, mono(`${x}[${f.feature}]`)),
    el("td", { class: "num" }, formatInteger(f.splits)),
    el("td", { class: "trees-bar-cell" }, bar(f)),
    el("td", { class: "num" }, f.min === null ? "—" : f.min === f.max ? formatNumber(f.min) : `${formatNumber(f.min)} … ${formatNumber(f.max)}`)));
  const more = trees.features.length - FEATURES_SHOWN;
  return el("table", { class: "trees-features", id: "trees-features" },
    el("thead", {}, el("tr", {}, el("th", {}, "Feature"), el("th", { class: "num" }, "Splits"), el("th", {}), el("th", { class: "num" }, "Thresholds"))),
    el("tbody", {}, rows),
    more > 0 ? el("caption", {}, `and ${formatInteger(more)} more features split on less`) : null);
}

function what(trees) {
  if (trees.classes) {
    return `${trees.classes.length} classes (${trees.classes.slice(0, 8).join(", ")}${trees.classes.length > 8 ? ", …" : ""})`;
  }
  const base = trees.base_values ? ` from ${trees.base_values.map(formatNumber).join(", ")}` : "";
  return `${formatInteger(trees.targets)} target${trees.targets === 1 ? "" : "s"}, ${enumName(trees.aggregate_function, AGGREGATES).toLowerCase()}${base}`;
}

/** What the scores go through: "nothing (post_transform NONE)", "SOFTMAX". */
function thenWords(post) {
  return post === "NONE" ? "nothing (post_transform NONE)" : mono(post);
}

/** The "Trees" section of a tree ensemble node's panel, filled when the summary arrives. */
export function treesSection(node, ctx) {
  const x = (node.inputs && node.inputs[0]) || "X";
  return loadedSection("Trees", "node-trees", "Reading the trees…", () => ctx.actions.loadTrees(node.id), (trees) => {
    const d = trees.depth;
    return [
      el("p", { class: "trees-summary" }, `${formatInteger(trees.trees)} tree${trees.trees === 1 ? "" : "s"} · ${formatInteger(trees.splits)} splits · ${formatInteger(trees.leaves)} leaves · depth ${d.min === d.max ? d.max : `${d.min}–${d.max}`}${d.min === d.max ? "" : ` (mean ${d.mean})`}`),
      propertyList([["Predicts", what(trees)], ["Then", thenWords(enumName(trees.post_transform, POST_TRANSFORMS))]]),
      trees.features.length ? featureTable(trees, x) : el("p", { class: "muted" }, "No tree splits: every tree is a leaf."),
      trees.trees ? treeViewer(node, trees.trees, ctx) : null];
  });
}

/** One tree's rules at a time: its number, previous/next. */
function treeViewer(node, count, ctx) {
  const index = /** @type {HTMLInputElement} */ (el("input", { type: "number", min: "0", max: String(count - 1), step: "1", value: "0", class: "trees-index", "aria-label": "Tree number" }));
  const prev = el("button", { type: "button", class: "btn btn-small", "aria-label": "Previous tree" }, "‹");
  const next = el("button", { type: "button", class: "btn btn-small", "aria-label": "Next tree" }, "›");
  const info = el("span", { class: "muted" });
  const rules = el("pre", { class: "trees-rules", id: "trees-rules" });
  const error = fieldError();
  let asked = 0;
  const show = async (k) => {
    const tree = Math.max(0, Math.min(count - 1, Math.floor(k) || 0));
    index.value = String(tree);
    const mine = ++asked;
    error.textContent = "";
    try {
      const answer = await ctx.actions.loadTrees(node.id, tree);
      if (mine !== asked) return; // a later step answered first
      const t = answer.tree;
      info.textContent = ` of ${formatInteger(count)} · ${formatInteger(t.splits)} splits, depth ${t.depth}`;
      rules.textContent = t.rules.join("\n") + (t.more ? `\n… and ${formatInteger(t.more)} more lines` : "");
      rules.dataset.tree = String(tree);
    } catch (err) {
      error.textContent = err.message || String(err);
    }
  };
  prev.addEventListener("click", () => show(Number(index.value) - 1));
  next.addEventListener("click", () => show(Number(index.value) + 1));
  index.addEventListener("change", () => show(Number(index.value)));
  show(0);
  return el("div", { class: "trees-viewer" },
    el("div", { class: "ed-row" }, el("label", {}, "Tree ", index), info, prev, next),
    rules, error);
}
