// The model panel's Costs section (GET .../stats): parameters, FLOPs and activations in all, the
// symbolic dims to count with, the heat map of the drawing (by FLOPs, parameters, output size or
// memory alive) and a sortable table of the nodes, each a link to it.
import { followFirstAxes } from "../lib/dim-fields.js";
import { fixedShapeOps } from "../lib/input-dims.js";
import { formulaText, hasFormula, waitingForSizes } from "../lib/cost-formula.js";
import { el, clear } from "../widgets/dom.js";
import { formatBytes, formatCount, formatInteger, nodeLabel, plural } from "../lib/format.js";
import { HEAT_METRICS, formatMetric } from "../pipeline/heat.js";
import { breakable, breakableFormula, mono, propertyList, section } from "../widgets/ui.js";
import { graphPathOf } from "../lib/address.js";

const ROWS = 50; // the table's first page; "Show all" shows up to MAX_ROWS
const MAX_ROWS = 2000;
// the node's name and op share the first column (the op under the name), so the numbers and
// formulas have the width a sidebar can give; either one sorts the rows
const COLUMNS = [
  ["name", "Node"], ["flops", "FLOPs"], ["params", "Params"], ["output_bytes", "Output"],
];
const TEXT_KEYS = ["name", "op_type"];

/** A node's FLOPs or output bytes as a formula in the inputs' sizes, when only that is known. */
const FORMULA_OF = { flops: "flops_formula", output_bytes: "output_formula" };

/** The formula text of node row `n`'s `key` ("1.18 M·batch·sequence"), or null. */
export function nodeFormula(n, key) {
  const terms = FORMULA_OF[key] ? n[FORMULA_OF[key]] : null;
  return terms ? formulaText(terms, key === "output_bytes" ? formatBytes : formatCount) : null;
}

/** The Loops of unknown count (stats.loops) whose body holds node row `n`, by node id. */
function openLoops(stats, n) {
  const ids = n.per_iteration || [];
  return (stats.loops || []).filter((l) => ids.includes(l.node));
}

/** "Loop while": a Loop as the page names it. */
const loopName = (l) => `Loop ${l.name || l.node}`;

/** "per iteration" after a body node's cost, when its Loop's count is unknown. */
function perIteration(stats, n) {
  const loops = openLoops(stats, n);
  if (!loops.length) return "";
  const of = loops.map(loopName).join(" and ");
  return el("div", { class: "muted cost-sub cost-per-iteration", title: `one iteration of ${of}: its number of iterations is unknown (${loops.map((l) => l.why).join("; ")}); give it in the sizes above to count them all` },
    "per iteration");
}

/** What the graphs a control-flow node (If, Loop, Scan) holds cost, under its own figure (its
 * row's `key`, "flops" or "params"): "holds 1.02 K per iteration"; "" for other nodes. The node
 * panel can put it under the node's own FLOPs and parameters too. */
export function heldCost(stats, n, key) {
  const value = key === "flops" ? n.inner_flops : key === "params" ? n.inner_params : undefined;
  if (value === undefined) return "";
  const formula = value === null && key === "flops" && n.inner_flops_formula ? formulaText(n.inner_flops_formula) : null;
  const shown = value !== null ? formatMetric(key, value) : formula ? breakableFormula(formula) : "?";
  const loop = (stats.loops || []).find((l) => l.node === n.node);
  const how = key !== "flops" ? ""
    : n.op_type === "If" ? " (the branch counted)"
      : loop && loop.iterations === null ? " per iteration"
        : loop ? ` (${formatCount(loop.iterations)} iterations)` : "";
  const title = key === "flops" ? "The FLOPs of the nodes its subgraphs hold, as the totals count them (their rows list them)"
    : "The parameters its subgraphs' nodes read or hold, each counted once";
  return el("div", { class: "muted cost-sub cost-inner", title }, "holds ", shown, how);
}

/** "+ 32.8 K shared" under a row's parameters when it reads weights an earlier row counts (a
 * rotary cache six nodes read): the rows add up to the total, and the weight is still said. */
function sharedNote(stats, n) {
  if (!n.shared_params) return "";
  const rows = new Map((stats.nodes || []).map((r) => [r.node, r]));
  const names = (n.shared_with || []).map((id) => (rows.has(id) ? rowLabel(stats, rows.get(id)) : id));
  return el("div", { class: "muted cost-sub cost-shared", title: `read here too, counted on the row of ${names.join(", ")}` },
    `+ ${formatCount(n.shared_params)} shared`);
}

/** Why an If branch's node is not in the totals. */
function skippedNote(stats, n) {
  const b = (stats.branches || []).find((x) => x.node === n.branch_skipped);
  const why = b && b.by === "given" ? `with ${flagWords(b.given)}, the If takes the other branch`
    : b && b.by === "constant" ? "the If's condition takes the other branch"
    : b && b.why.startsWith("neither") ? "the other branch is counted (neither's FLOPs are known)" : "the other branch costs more";
  return el("div", { class: "muted cost-skipped-note" }, `not counted: ${why}`);
}

function cell(stats, key, n) {
  const formula = n[key] === null ? nodeFormula(n, key) : null;
  const inner = heldCost(stats, n, key);
  if (!formula && key === "flops" && n.runs !== undefined && n.runs !== null && n[key] !== null) {
    // a Scan body's node: its FLOPs are over every step the body runs
    return el("span", { class: "cost-runs", title: `over ${formatCount(n.runs)} runs of its graph (a Scan's steps, a Loop's iterations)` },
      formatMetric(key, n[key]), el("span", { class: "muted cost-sub" }, ` (${formatCount(n.runs)} runs)`), perIteration(stats, n), inner);
  }
  const extra = key === "flops" ? [perIteration(stats, n), inner] : [inner, key === "params" ? sharedNote(stats, n) : ""];
  if (!formula) return extra.some(Boolean) ? el("span", {}, formatMetric(key, n[key]), ...extra) : formatMetric(key, n[key]);
  // the cell is narrow: a line may break before each "·" (the name of a size is never cut)
  return el("span", { class: "cost-formula-cell", title: `${formula}: for any sizes of the inputs' dims` }, breakableFormula(formula), ...extra);
}

/** How a formula grows: [highest total power, its largest coefficient] (terms come highest
 * first; no terms: the formula is 0). */
function growth(terms) {
  if (!terms.length) return [0, 0];
  const power = (t) => Object.values(t.symbols).reduce((a, b) => a + b, 0);
  const top = power(terms[0]);
  return [top, Math.max(...terms.filter((t) => power(t) === top).map((t) => t.coefficient))];
}

/** A row's sort key for `key`: unknown lowest, then counts, then formulas by how fast they grow
 * (with sizes not given, what grows with the inputs outweighs any fixed count); an empty
 * formula is 0. */
function sortKey(n, key) {
  const v = n[key];
  if (typeof v === "string") return [0, v];
  if (v !== null && v !== undefined) return [1, v, 0];
  const terms = FORMULA_OF[key] ? n[FORMULA_OF[key]] : null;
  if (terms && !terms.length) return [1, 0, 0];
  return terms ? [2, ...growth(terms)] : [-1, 0, 0];
}

/** A node's label in the tables: its name, or its place and, inside a subgraph, the graph's
 * ("#1 (unnamed) in while/body": the main graph has a #1 too); a name nodes of other graphs
 * bear too with its graph (a merged decoder's two branches repeat every name: QA31). */
export function rowLabel(stats, n) {
  const label = nodeLabel(n.name, n.node);
  const graph = graphPathOf(n.node);
  const where = graph && (!n.name || namesInSeveralGraphs(stats).has(n.name));
  return where ? `${label} in ${(stats.graphs || {})[graph] || graph}` : label;
}

const SEVERAL = new WeakMap(); // stats -> the node names rows of more than one graph bear

function namesInSeveralGraphs(stats) {
  let names = SEVERAL.get(stats);
  if (!names) {
    const graphsOf = new Map();
    for (const r of stats.nodes || []) {
      if (!r.name) continue;
      if (!graphsOf.has(r.name)) graphsOf.set(r.name, new Set());
      graphsOf.get(r.name).add(graphPathOf(r.node));
    }
    names = new Set([...graphsOf].filter(([, graphs]) => graphs.size > 1).map(([name]) => name));
    SEVERAL.set(stats, names);
  }
  return names;
}

function compareKeys(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    if (a[i] === b[i]) continue;
    return typeof a[i] === "string" || typeof b[i] === "string" ? String(a[i]).localeCompare(String(b[i])) : a[i] - b[i];
  }
  return 0;
}


function costTable(stats, ctx) {
  let key = "flops";
  let descending = true;
  let limit = ROWS;
  const formulas = stats.nodes.some((n) => n.flops_formula || n.output_formula);
  const table = el("table", { class: `cost-table${formulas ? " has-formulas" : ""}`, id: "cost-table" });
  const more = el("button", { type: "button", class: "btn btn-small cost-more" });
  const draw = () => {
    const rows = [...stats.nodes].sort((a, b) => {
      // the nodes of an If's branch the totals leave out come after those counted, either way
      const left = Number("branch_skipped" in a) - Number("branch_skipped" in b);
      if (left) return left;
      const order = compareKeys(sortKey(a, key), sortKey(b, key));
      return descending ? -order : order;
    });
    clear(table);
    const sortBy = (k, label) => el("button", { type: "button", class: "linklike", "data-sort": k, onclick: () => {
      descending = k === key ? !descending : !TEXT_KEYS.includes(k);
      key = k;
      draw();
    } }, label, el("span", { class: "sort-arrow", "aria-hidden": "true" }, k === key ? (descending ? "↓" : "↑") : ""));
    const sorted = (k) => (k === key || (k === "name" && key === "op_type") ? (descending ? "descending" : "ascending") : "none");
    table.append(el("thead", {}, el("tr", {}, COLUMNS.map(([k, label]) => el("th", {
      scope: "col", "data-key": k, "aria-sort": sorted(k), class: k === "name" ? "" : "num",
    // the op under the node's name, as each row has it (QA34: "Node | · op" read as two columns)
    }, k === "name" ? [sortBy("name", label), el("div", { class: "cost-op" }, sortBy("op_type", "op"))] : sortBy(k, label))))));
    table.append(el("tbody", {}, rows.slice(0, limit).map((n) => el("tr", { "data-node": n.node, class: "branch_skipped" in n ? "cost-skipped" : null },
      el("td", { title: `${rowLabel(stats, n)} (${n.op_type})`, class: "cost-name" },
        el("a", { href: ctx.nodeHref(graphPathOf(n.node), n.node), class: "cost-node" }, breakable(rowLabel(stats, n))),
        el("div", { class: "cost-op mono" }, n.op_type), "branch_skipped" in n ? skippedNote(stats, n) : ""),
      ...COLUMNS.slice(1).map(([k]) => el("td", { class: "num" }, cell(stats, k, n)))))));
    more.hidden = rows.length <= limit || limit >= MAX_ROWS;
    // (QA28: "Show 415 of 415 nodes")
    more.textContent = rows.length <= MAX_ROWS ? `Show all ${formatInteger(rows.length)} nodes`
      : `Show the first ${formatInteger(MAX_ROWS)} of ${formatInteger(rows.length)} nodes`;
  };
  more.addEventListener("click", () => { limit = MAX_ROWS; draw(); });
  draw();
  return el("div", { class: "cost-table-wrap" }, table, more);
}

/** "37.3 K·batch·sequence² + …": how a cost grows with the inputs' sizes; `lead`: it is the
 * value shown (no sizes given), else a muted line under the number counted at the sizes. */
function formulaLine(stats, key, lead) {
  if (!hasFormula(stats, key)) return "";
  const f = stats.formula;
  const format = key === "activation_bytes" ? formatBytes : formatCount;
  const left = key === "flops" && f.unknown_nodes ? ` (${plural(f.unknown_nodes, "node")} not in it: no formula of these sizes)`
    : key === "activation_bytes" && f.unknown_outputs ? ` (${plural(f.unknown_outputs, "output")} of unknown size not in it)` : "";
  // under a count of one iteration of a Loop, the formula is the count of them all
  const all = !lead && unknownLoops(stats).some((l) => f[key].some((t) => l.symbol in t.symbols));
  return el("div", { class: `cost-formula${lead ? "" : " muted"}`, "data-formula": key, title: `For any sizes of ${f.symbols.join(", ")}` },
    breakableFormula(`${lead ? "" : all ? "in all: " : "= "}${formulaText(f[key], format)}`), left ? el("span", { class: "muted" }, left) : "");
}

/** The Loops whose number of iterations is unknown (neither a constant nor given). */
const unknownLoops = (stats) => (stats.loops || []).filter((l) => l.iterations === null);

/** Under the FLOPs: the Loops whose iterations are unknown. A count shown counts one iteration
 * of each (a lower bound); a formula shown (`formula`) has their numbers as symbols. */
function loopNote(stats, formula) {
  const loops = unknownLoops(stats);
  if (!loops.length || !stats.totals.flops_lower_bound) return "";
  const each = (l) => [mono(l.symbol), ` (${loopName(l)}: ${l.why})`];
  const listed = loops.flatMap((l, i) => [i ? "; " : "", ...each(l)]);
  const text = formula
    ? [loops.length === 1 ? "Its number of iterations is unknown: " : "Their numbers of iterations are unknown: ", ...listed]
    : loops.length === 1
      ? [`A lower bound: one iteration of ${loopName(loops[0])} is counted. Its number of iterations, `, mono(loops[0].symbol), `, is unknown: ${loops[0].why}`]
      : [`A lower bound: one iteration of each of ${loops.length} Loops is counted. Their numbers of iterations are unknown: `, ...listed];
  return el("div", { class: "muted cost-loops", "data-loops": loops.map((l) => l.node).join(" ") }, ...text, ".");
}

/** " (as n42 Concat writes)": where the peak is reached, a link to that node. */
function peakLink(stats, nodeId, ctx) {
  const n = stats.nodes.find((x) => x.node === nodeId);
  const label = n ? `${rowLabel(stats, n)} (${n.op_type})` : nodeId;
  return el("span", { class: "cost-peak" }, " as ",
    el("a", { href: ctx.nodeHref(graphPathOf(nodeId), nodeId), class: "cost-node", "data-node": nodeId }, breakable(label)), " writes");
}

/** The inputs' symbolic dims (always, so sizes can be changed after counting) and any symbol
 * inference left once they are given — a size computed from the inputs' values, named with
 * where it first appears (unk__3 alone says nothing): counted again at the sizes written. */
/** Sizes counted that onnxruntime never ran the model at (QA23: a UNet counted at 31×33, which
 * its Concat refuses): said, with the sizes it did run at. */
function unrunSizes(stats, ctx) {
  const runtime = (ctx && ctx.summary && ctx.summary.validation && ctx.summary.validation.runtime) || {};
  const ran = runtime.status === "ok" ? runtime.sizes || {} : {};
  const other = Object.entries(stats.dims || {}).filter(([d, n]) => d in ran && ran[d] !== n);
  if (!other.length) return "";
  const at = Object.entries(ran).map(([d, n]) => `${d} ${n}`).join(", ");
  return el("div", { class: "muted cost-unrun", id: "cost-unrun" },
    `Counted, not run: onnxruntime ran the model at ${at}. Whether it takes these sizes, Run tells.`);
}

/** "Make static": the sizes in the fields written into the inputs' shapes (fixedShapeOps). */
function fixButton(names, fields, ctx) {
  const graph = ctx.mainGraph;
  if (!graph || !ctx.actions || !ctx.actions.edit || !names.length) return null;
  const button = el("button", { type: "button", class: "btn btn-small", id: "cost-fix-dims",
    title: "Write these sizes into the shapes of every input naming them, in one edit (outputs re-inferred)" }, "Make static");
  button.addEventListener("click", () => {
    const sizes = {};
    names.forEach((name, i) => { if (fields[i].value !== "") sizes[name] = Number(fields[i].value); });
    const ops = fixedShapeOps(graph, sizes);
    if (ops.length) ctx.actions.edit(ops);
  });
  return button;
}

/** The size fields, Count and Make static. `edited`: {name: value} typed into the fields drawn
 * before (not yet counted), kept. */
function dimsForm(stats, reload, ctx, edited) {
  // each Loop of no constant count has a field of its own for its number of iterations
  const loops = (stats.loops || []).filter((l) => l.symbol);
  const loopSymbols = new Set(loops.map((l) => l.symbol));
  // the sizes given stay listed, so they can be changed after counting
  // an If's flag is given beside its branches (branchNote), not as a size
  const flags = new Set(stats.branch_inputs || []);
  const names = [...new Set([...(stats.input_dims || []), ...Object.keys(stats.dims || {}), ...(stats.unknown.dims || [])])]
    .filter((name) => !loopSymbols.has(name) && !flags.has(name));
  if (!names.length && !loops.length) return null;
  const missing = new Set(stats.unknown.dims || []);
  const at = stats.unknown.dims_at || {};
  const fromValues = [...missing].every((name) => name in at);
  const fields = names.map((name) => el("input", { type: "number", min: "0", step: "1", name, value: String(stats.dims[name] ?? ""), "aria-label": name, required: true }));
  followFirstAxes(fields);
  const where = (name) => {
    const w = at[name];
    if (!w) return null;
    const tensor = w.node ? el("a", { href: ctx.nodeHref(graphPathOf(w.node), w.node), class: "cost-node", "data-node": w.node }, breakable(w.tensor)) : breakable(w.tensor);
    return el("span", { class: "muted cost-dim-where" }, `dim ${w.axis} of `, tensor, w.op ? ` (${w.op})` : "");
  };
  // a Loop's iterations: left empty, one is counted
  const loopFields = loops.map((l) => el("input", { type: "number", min: "0", step: "1", name: l.symbol, value: String(stats.dims[l.symbol] ?? ""), "aria-label": `iterations of ${loopName(l)}`, class: "cost-iterations" }));
  const growing = Object.entries(stats.unknown.growing_dims || {});
  const form = el("form", { class: "cost-dims" },
    names.length ? el("div", { class: "muted" }, !missing.size ? "Counted at these sizes"
      : fromValues ? "Some sizes are computed from the inputs' values, not their shapes: give them to count every node"
        : "Some sizes are symbolic: give them to count every node") : "",
    el("div", { class: "ed-row" }, ...names.map((name, i) => el("label", {}, mono(name), " = ", fields[i], where(name))),
      ...loops.map((l, i) => el("label", { class: "cost-loop-field", "data-loop": l.node }, mono(l.symbol), " = ", loopFields[i],
        el("span", { class: "muted cost-dim-where" }, `the number of iterations of ${loopName(l)}: ${l.why}`,
          l.iterations === null ? " (left empty: one is counted)" : ""))),
      el("button", { type: "submit", class: "btn btn-small" }, "Count"), fixButton(names, fields, ctx)),
    // an accumulator a Loop grows has no one size: not asked for
    growing.length ? el("div", { class: "muted cost-growing" }, `Not asked: the sizes of ${growing.map(([, w]) => w.tensor).join(", ")}, which a Loop carries and may grow each iteration.`) : "",
    unrunSizes(stats, ctx));
  // sizes typed but not yet counted when these counts came (an earlier request's) stay typed
  for (const field of [...fields, ...loopFields]) {
    const typed = edited[field.name];
    if (typed !== undefined) field.value = typed;
  }
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const given = { ...stats.dims, ...reload.asked() };
    for (const field of loopFields) {
      if (field.value === "") delete given[field.name];
    }
    [...fields, ...loopFields].forEach((field) => {
      if (field.value === "") return;
      const n = Number(field.value); // past 2^53 the typed digits go as typed: the server says what is wrong with them
      given[field.name] = Number.isSafeInteger(n) ? n : field.value.trim();
    });
    reload(given);
  });
  return form;
}

function heatChoice(stats, ctx) {
  const current = ctx.heatMetric ? ctx.heatMetric() : null;
  const buttons = [["", "Op kinds"], ...Object.entries(HEAT_METRICS)].map(([metric, label]) => {
    const b = el("button", { type: "button", class: "btn btn-small", "data-metric": metric, "aria-pressed": String((current || "") === metric) }, label);
    b.addEventListener("click", () => {
      ctx.actions.showHeat(metric || null, stats);
      for (const other of buttons) other.setAttribute("aria-pressed", String(other === b));
    });
    return b;
  });
  return el("div", { class: "ed-row cost-heat", role: "group", "aria-label": "Colour the drawing by" },
    el("span", { class: "muted" }, "Colour the drawing by"), ...buttons);
}

// one branch of an If runs: the totals count the one its condition takes where constants or the
// values given tell, else the costlier one, which the page says; the flags can be given here
function branchNote(stats, reload, ctx) {
  const branches = stats.branches || [];
  const guessed = branches.filter((b) => b.by === "flops");
  const given = branches.filter((b) => b.by === "given");
  if (!guessed.length && !given.length) return "";
  const unknown = guessed.filter((b) => b.why.startsWith("neither"));
  const lines = [];
  if (given.length) {
    lines.push(el("div", { class: "cost-branch-given" }, given.length === 1
      ? `The If's branch that ${flagWords(given[0].given)} takes is counted.`
      : `The branches of ${given.length} Ifs that the values given take are counted.`));
  }
  if (guessed.length) {
    lines.push(el("div", {}, guessed.length === 1
      ? (unknown.length ? "Neither branch of the If has known FLOPs: the one of more nodes is counted, as unknown."
        : "The If's costlier branch is counted: which one runs is known only when it runs.")
      : `The costlier branch of each of ${guessed.length} Ifs is counted: which one runs is known only when it runs${unknown.length ? ` (${unknown.length} with neither branch's FLOPs known)` : ""}.`));
  }
  // what each branch costs where both are known: a merged decoder's step with the cache, left
  // out when its first step costs more, is the one people budget for (QA32)
  const rows = new Map((stats.nodes || []).map((r) => [r.node, r]));
  const both = [...given, ...guessed].map((b) => {
    const f = b.flops || {};
    const [take, other] = [b.counted, b.skipped].map((p) => p.slice(p.lastIndexOf("/") + 1));
    if (typeof f[take] !== "number" || typeof f[other] !== "number") return null;
    const who = rows.has(b.node) ? rowLabel(stats, rows.get(b.node)) : b.node;
    return el("li", { "data-node": b.node }, `${who}: ${take} ${formatMetric("flops", f[take])} FLOPs (counted), ${other} ${formatMetric("flops", f[other])}`);
  }).filter(Boolean).slice(0, BRANCHES_LISTED);
  return el("div", { class: "muted cost-branches", title: [...given, ...guessed].map((b) => `${b.node}: ${b.counted} counted, ${b.skipped} left out`).join("\n") },
    ...lines, both.length ? el("ul", { class: "cost-branch-flops" }, both) : null, flagChoice(stats, reload, ctx));
}

/** "use_cache_branch = true": values given to flags, as the answer's `given` has them. */
function flagWords(values) {
  return Object.entries(values || {}).map(([k, v]) => `${k} = ${v}`).join(", ");
}

/** A field for each input an If's condition comes from: given a value, the branch it makes the
 * If take is counted (a merged decoder's per-token cost is its with-cache step's), left as it
 * is, the costlier. A boolean input picks true or false, any other a number. */
function flagChoice(stats, reload, ctx) {
  const names = stats.branch_inputs || [];
  if (!names.length) return null;
  const inputs = new Map(((ctx.mainGraph && ctx.mainGraph.inputs) || []).map((i) => [i.name, i]));
  const giveOrDrop = (name, value) => {
    // on the sizes last asked for: a Count still under way is not undone (QA45 #2)
    const dims = { ...stats.dims, ...reload.asked() };
    if (value === "") delete dims[name]; else dims[name] = Number(value);
    reload(dims);
  };
  const fields = names.map((name) => {
    const now = stats.dims[name];
    const boolean = (inputs.get(name) || {}).dtype === "BOOL";
    const field = boolean
      ? el("select", { name, class: "cost-flag", "aria-label": `${name}: the branch it picks is counted` },
        el("option", { value: "" }, "not given (the costlier branch)"), el("option", { value: "1" }, "true"), el("option", { value: "0" }, "false"))
      : el("input", { type: "number", step: "1", min: "0", name, class: "cost-flag", "aria-label": `${name}: the branch it picks is counted`, placeholder: "not given" });
    field.value = now === undefined ? "" : boolean ? String(now ? 1 : 0) : String(now);
    field.addEventListener("change", () => giveOrDrop(name, field.value.trim()));
    return el("label", {}, "Count the branch taken with ", mono(name), " = ", field);
  });
  return el("div", { class: "ed-row cost-flags" }, ...fields);
}

const BRANCHES_LISTED = 4; // Ifs whose two branches' FLOPs the note lists

/** {name: value} of the size fields a person has typed into and not counted yet. */
function editedFields(body) {
  const out = {};
  for (const field of body.querySelectorAll(".cost-dims input[name]")) {
    const input = /** @type {HTMLInputElement} */ (field);
    if (input.value !== input.defaultValue) out[input.name] = input.value;
  }
  return out;
}

function fill(body, stats, ctx, reload, error = "") {
  const edited = editedFields(body);
  clear(body);
  body.classList.remove("muted");
  const t = stats.totals;
  const unknown = stats.unknown;
  const unknownOps = Object.entries(unknown.flops_ops || {}).map(([op, n]) => `${op} ×${n}`).join(", ");
  // with input sizes missing, the few FLOPs counted are not the model's: say what is missing first
  const waiting = waitingForSizes(stats);
  body.append(propertyList([
    // the exact count too: what one checks against the framework's (torch's sum of numel())
    ["Parameters", t.params >= 1000 ? `${formatCount(t.params)} (${formatInteger(t.params)} · ${formatBytes(t.param_bytes)})` : `${formatCount(t.params)} (${formatBytes(t.param_bytes)})`],
    // the If's flag can be given before any size (QA35 #6): its note comes in either case
    ["FLOPs", waiting && unknown.flops_nodes && hasFormula(stats, "flops") ? [formulaLine(stats, "flops", true), loopNote(stats, true), branchNote(stats, reload, ctx)]
      : [waiting && unknown.flops_nodes
        ? el("span", { class: "muted cost-unknown" }, `unknown until the input sizes are given (${plural(unknown.flops_nodes, "node")}: ${unknownOps})`)
        : t.flops === null ? el("span", { class: "muted cost-unknown" }, `unknown: no formula for ${unknownOps}`)
        : el("span", {}, formatCount(t.flops), unknown.flops_nodes
          ? el("span", { class: "muted cost-unknown" }, ` + ${plural(unknown.flops_nodes, "node")} unknown: ${unknownOps}`) : "",
          // papers quote multiply-accumulates: ResNet-50's 4.1 G is 8.2 G here
          el("span", { class: "muted flops-mac", title: "Papers often quote multiply-accumulates (MACs): about half this figure" }, " · a multiply-add counts 2")),
      formulaLine(stats, "flops", false), loopNote(stats, false), branchNote(stats, reload, ctx)]],
    [el("span", { title: "Every node's outputs summed, and the most alive at once when the graph runs in its order (each output freed after its last reader; a runtime reusing buffers needs less)" }, "Activations"),
      waiting && unknown.output_nodes && hasFormula(stats, "activation_bytes")
        ? [formulaLine(stats, "activation_bytes", true), stats.formula.unknown_outputs ? "" : el("span", { class: "muted" }, "in all")]
        : unknown.output_nodes && !t.activation_bytes
          ? el("span", { class: "muted cost-unknown" }, `unknown${waiting ? " until the input sizes are given" : ""} (${plural(unknown.output_nodes, "output")} of unknown size)`)
          : el("span", {}, `${formatBytes(t.activation_bytes)} written by its nodes`,
        // the peak counts the inputs fed, the total only what nodes write: say so, or a peak over the total reads wrong
        t.peak_activation_bytes === null || t.peak_activation_bytes === undefined ? "" : `, ${formatBytes(t.peak_activation_bytes)} at most at once (inputs included)`,
        t.peak_node ? peakLink(stats, t.peak_node, ctx) : "",
        unknown.output_nodes
          ? el("span", { class: "muted cost-unknown" }, ` (not counting ${plural(unknown.output_nodes, "output")} of unknown size)`) : "",
        formulaLine(stats, "activation_bytes", false))],
  ]));
  // sizes it could not count at: said under their fields, the last counts kept
  const refused = error ? el("div", { class: "field-error", role: "alert" }, `Not counted at those sizes: ${error}`) : null;
  body.append(...[dimsForm(stats, reload, ctx, edited), refused, heatChoice(stats, ctx), costTable(stats, ctx)].filter(Boolean));
  // a heat map on the drawing follows the numbers: counted at other sizes, it is coloured again
  const metric = ctx.heatMetric ? ctx.heatMetric() : null;
  if (metric && metric in HEAT_METRICS && ctx.heatStats && ctx.heatStats() !== stats) ctx.actions.showHeat(metric, stats);
  body.dataset.ready = "true";
}

/** The Costs section; its numbers load after the panel is drawn. */
export function costsSection(ctx) {
  const body = el("div", { class: "costs-body muted", id: "costs" }, "Counting parameters and FLOPs…");
  let shown = null; // the last counts drawn: sizes they can't be counted at leave them up
  // the sizes and flags last asked for, each new ask built on them, and only the last ask's
  // answer drawn: a flag picked while a Count was under way (or the other way round) was
  // dropped by whichever answer came last (QA45 #2: the with-cache step counted 795 M, not 7.3 M)
  let asked = {};
  let latest = 0;
  const reload = Object.assign((/** @type {Record<string, any>} */ dims) => {
    asked = { ...dims };
    const mine = ++latest;
    ctx.actions.loadStats(dims).then((stats) => {
      if (mine !== latest) return;
      shown = stats;
      fill(body, stats, ctx, reload);
    }).catch((err) => {
      if (mine !== latest) return;
      if (shown) {
        fill(body, shown, ctx, reload, err.message || String(err));
        return;
      }
      body.className = "field-error";
      body.textContent = `The costs could not be counted: ${err.message || err}`;
    });
  }, { asked: () => asked });
  // counted once the first view is painted (a first view's panel may be drawn before it)
  (ctx.afterFirstView ? ctx.afterFirstView() : Promise.resolve()).then(() => reload(ctx.dimSizes ? ctx.dimSizes() : {}));
  return section("Costs", body);
}
