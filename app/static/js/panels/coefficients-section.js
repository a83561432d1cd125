// A linear model node's weights (GET .../coefficients): what a scikit-learn logistic regression,
// linear regression or linear SVM holds behind its flat `coefficients` list — a row per class
// or target with its intercept, and the features ranked by how much they weigh across them.
import { el } from "../widgets/dom.js";
import { formatInteger, formatNumber } from "../lib/format.js";
import { loadedSection, mono } from "../widgets/ui.js";
import { canEdit } from "../editing/edit-forms.js";

const FEATURES_SHOWN = 12;
const COLUMNS = 4; // rows (classes, targets) given a column of their own; past that, the norm alone

/** Whether a node is a linear model: LinearClassifier/LinearRegressor, an SVM without support vectors. */
export function isLinearModel(node) {
  if (node.domain !== "ai.onnx.ml" || !["LinearClassifier", "LinearRegressor", "SVMClassifier", "SVMRegressor"].includes(node.op_type)) return false;
  return !(node.attributes || []).some((a) => ["vectors_per_class", "n_supports", "support_vectors"].includes(a.name) && (Array.isArray(a.value) ? a.value.length : a.value));
}

/**
 * A weight's cell; with `set`, a click makes it a field whose Enter sets that one item of the
 * attribute (set_attribute_items: the list is never sent back whole), Escape leaves it.
 */
function weight(w, set) {
  const text = w === null ? "—" : formatNumber(w);
  const cell = el("td", { class: w !== null && w < 0 ? "num coef-neg" : "num" }, text);
  if (!set) return cell;
  cell.classList.add("coef-editable");
  cell.title = "Click to change this weight";
  cell.addEventListener("click", () => {
    if (cell.querySelector("input")) return;
    const field = /** @type {HTMLInputElement} */ (el("input", { type: "text", class: "coef-field", value: w === null ? "" : String(w), "aria-label": "New weight" }));
    cell.textContent = "";
    cell.append(field);
    field.focus();
    field.select();
    field.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { cell.textContent = text; return; }
      if (e.key !== "Enter") return;
      const value = Number(field.value.trim());
      if (field.value.trim() === "" || !Number.isFinite(value)) { field.setCustomValidity("a number"); field.reportValidity(); return; }
      set(value).catch((err) => { field.setCustomValidity(err.message || String(err)); field.reportValidity(); });
    });
  });
  return cell;
}

function table(coef, x, ctx, nodeId) {
  // a weight is item k·features + j of `coefficients` (rows × features, row-major); a Linear*
  // op's intercept item k of `intercepts` (a linear SVM's rho[0] serves every row: left alone)
  const edit = (name, index) => (canEdit(ctx) ? (value) => ctx.actions.edit([{ op: "set_attribute_items", node: nodeId, name, items: [{ index, value }] }]) : null);
  const ownIntercepts = coef.op_type.startsWith("Linear");
  const columns = coef.rows.length <= COLUMNS ? coef.rows : null;
  const most = Math.max(1e-30, ...coef.by_feature.map((f) => f.norm || 0));
  const bar = (f) => {
    const b = el("span", { class: "trees-bar" });
    b.style.width = `${(100 * (f.norm || 0) / most).toFixed(1)}%`; // a style property: the page's CSP refuses style attributes
    return b;
  };
  const head = columns
    ? columns.map((r) => el("th", { class: "num" }, `${coef.op_type.endsWith("Classifier") ? "class" : "target"} `, mono(String(r.label))))
    : [el("th", { class: "num" }, "‖w‖")];
  const rows = coef.by_feature.slice(0, FEATURES_SHOWN).map((f) => el("tr", { "data-feature": String(f.feature) },
    el("td", {}, mono(`${x}[${f.feature}]`)),
    ...(columns ? columns.map((_, k) => weight(f.weights[k], edit("coefficients", k * coef.features + f.feature))) : [el("td", { class: "num" }, f.norm === null ? "—" : formatNumber(f.norm))]),
    el("td", { class: "trees-bar-cell" }, bar(f))));
  const intercepts = columns && columns.some((r) => r.intercept !== null)
    ? el("tr", { class: "coef-intercept" }, el("td", {}, "intercept"), ...columns.map((r, k) => weight(r.intercept, ownIntercepts && r.intercept !== null ? edit("intercepts", k) : null)), el("td", {}))
    : null;
  const more = coef.features - Math.min(FEATURES_SHOWN, coef.by_feature.length);
  return el("table", { class: "coef-features", id: "coef-features" },
    el("thead", {}, el("tr", {}, el("th", {}, "Feature"), ...head, el("th", {}, "weight"))),
    el("tbody", {}, rows, intercepts),
    more > 0 ? el("caption", {}, `and ${formatInteger(more)} more features that weigh less`) : null);
}

function summary(coef) {
  const n = coef.rows.length;
  const classifier = coef.op_type.endsWith("Classifier");
  const rows = classifier
    ? (n === 1 ? `one score (class ${coef.rows[0].label}; the other's is its complement)` : `${formatInteger(n)} classes`)
    : `${formatInteger(n)} target${n === 1 ? "" : "s"}`;
  const then = coef.post_transform && coef.post_transform !== "NONE" ? ` · then ${coef.post_transform.toLowerCase()}` : "";
  return `${rows} × ${formatInteger(coef.features)} features${then}`;
}

/** The "Coefficients" section of a linear model node's panel, filled when the weights arrive. */
export function coefficientsSection(node, ctx) {
  const x = (node.inputs && node.inputs[0]) || "X";
  return loadedSection("Coefficients", "node-coefficients", "Reading the weights…", () => ctx.actions.loadCoefficients(node.id), (coef) => [
    el("p", { class: "coef-summary" }, summary(coef)),
    table(coef, x, ctx, node.id),
    coef.rows.length > COLUMNS ? el("p", { class: "muted" }, `Features by the norm of their ${formatInteger(coef.rows.length)} weights (one per ${coef.op_type.endsWith("Classifier") ? "class" : "target"}).`) : null]);
}
