// The model panel (nothing selected): the graph or function on screen, validation in detail
// (basic checker, full check, inference errors linked to their nodes, onnxruntime's smoke run,
// the gates an edit was stored past), model fields, the
// doc_string as Markdown, costs (costs-section.js), editable metadata, model-local functions, training info and device
// configurations. Editing: the model fields, graph inputs, whole-model tools (opset
// conversion, shape inference, clean-up, subgraph extraction) and the download choices
// (model-tools.js).
import { busyIn, el, clear } from "../widgets/dom.js";
import { canEdit, disclosure } from "../editing/edit-forms.js";
import { downloadChoices, ioOverview, modelFieldsForm, modelTools, weightInputsWhy } from "../editing/model-tools.js";
import { formatBytes, formatInteger, formatNumber, nodeLabel } from "../lib/format.js";
import { costsSection } from "./costs-section.js";
import { deviceConfigurations } from "./device-config.js";
import { graphInfo, opsetText } from "./graph-info.js";
import { markdownBlock } from "../lib/markdown.js";
import { metadataEditor } from "../editing/metadata-editor.js";
import { checkRow, graphLink, keyValueList, mono, plural, propertyList, section } from "../widgets/ui.js";
import { referenceChecks } from "./reference-checks.js";
import { graphPathOf } from "../lib/address.js";
import { declaredMismatch } from "./declared-shape.js";
import { missingDataCheck } from "./missing-data.js";
import { SMOKE_RUN } from "../lib/smoke-run.js";
import { focusOn } from "../widgets/focus-keeper.js";

function nodeLink(ctx, node, label) {
  return el("a", { class: "inference-link", href: ctx.nodeHref(graphPathOf(node), node), "data-node": node }, `${label} ›`);
}

// onnxruntime loads the model (graph optimisations on) and runs it once on a smoke input
// it ran with its dynamic dims at 1 and failed with them at 2: a size hard-coded at export
function onlyAtOne(r, out, ctx) {
  const other = r.other_size;
  out.classList.replace("ok", "warn");
  const icon = out.querySelector(".check-icon");
  if (icon) icon.textContent = "!";
  out.append(el("div", { class: "verdict-message" }, `With ${other.at || `${other.dims.join(", ")} at ${other.size}`}: ${other.message}`));
  const alone = aloneWords(other);
  if (alone) out.append(el("div", { class: "verdict-message runtime-alone" }, alone));
  if (other.node) out.append(nodeLink(ctx, other.node, `${other.op_type || "node"} ${nodeLabel(other.node_name, other.node)}`));
  const failing = Object.entries(other.alone || {}).filter(([, s]) => s === "fails").map(([d]) => d);
  const which = failing.length === 1 ? `${failing[0]} dynamic, yet fails when it is` : "these dims dynamic, yet fails when they are";
  out.append(el("div", { class: "muted runtime-note" },
    `The model declares ${which} not 1: a Reshape, Expand or ConstantOfShape may hold the size it was exported at. `,
    "Run it at the sizes you ship to be sure."));
  return out;
}

/** "Each alone at 2: sequence fails; batch runs." — which dims the model holds fixed, when the
 * check tried them one at a time (several dynamic dims, all at 2 failing). */
/** "5 nodes", then, with subgraphs, "5 nodes in the main graph, 105 more in its subgraphs" once
 * the costs (which list every node of every graph that runs) are counted: most of a model may
 * sit in If branches. (QA34: "1 node, 5 with subgraphs" read as 5 nodes holding subgraphs.) */
function nodeCount(counts, ctx) {
  const main = counts.nodes ?? 0;
  const span = el("span", { class: "model-node-count" }, plural(main, "node"));
  if (counts.subgraphs && ctx.actions && ctx.actions.currentStats) {
    (ctx.afterFirstView ? ctx.afterFirstView() : Promise.resolve()).then(() => ctx.actions.currentStats()).then((stats) => {
      const all = stats ? stats.nodes.length : 0;
      if (all > main) span.textContent = `${plural(main, "node")} in the main graph, ${formatInteger(all - main)} more in its subgraphs`;
    }).catch(() => {}); // no costs: the main graph's count stays
  }
  return span;
}

/** "270 inputs (269 of them weights: IR 3 lists initializers as inputs)": the main graph's inputs,
 * with the weights among them said (QA34: "270 inputs" beside a list of one). */
function inputsCount(summary, ctx) {
  const counts = summary.counts || {};
  const text = plural(counts.inputs ?? 0, "input");
  const main = ctx.graph && !ctx.graph.path && ctx.graph.kind !== "function" ? ctx.graph : null;
  const inits = main ? new Set((main.initializers || []).map((t) => t.name)) : null;
  // another graph on screen: IR < 4 lists every initializer as an input
  const weights = main ? (main.inputs || []).filter((v) => inits.has(v.name)).length
    : summary.ir_version < 4 ? Math.min(counts.initializers ?? 0, counts.inputs ?? 0) : 0;
  return weights ? `${text} (${formatInteger(weights)} of them weights: ${weightInputsWhy(summary.ir_version)})` : text;
}

export function aloneWords(other) {
  const tried = Object.entries(other.alone || {});
  if (!tried.length) return "";
  const fails = tried.filter(([, s]) => s === "fails").map(([d]) => d);
  const runs = tried.filter(([, s]) => s === "ok").map(([d]) => d);
  const parts = [fails.length ? `${fails.join(", ")} ${fails.length === 1 ? "fails" : "fail"}` : "", runs.length ? `${runs.join(", ")} ${runs.length === 1 ? "runs" : "run"}` : ""].filter(Boolean);
  const only = !fails.length ? " (only together do they fail)" : "";
  return `Each alone at ${other.size}, the others at 1: ${parts.join("; ")}${only}.`;
}

/** " (use_cache_branch true and false)": the values the smoke run fed the flags an If's branch
 * turns on (an Optimum merged decoder's), each value a run of its own; a flag run at one value
 * only (the other's run would not have ended within the check's limits) says so. */
function flagWords(r) {
  const flags = Object.entries(r.flags || {});
  if (!flags.length) return { words: "", note: "" };
  const names = flags.map(([name]) => name).join(", ");
  const runs = flags[0][1].length; // each run feeds every flag a value
  if (flags.length > 1 && runs === 2 ** flags.length) return { words: ` (${names}: all ${runs} combinations)`, note: "" };
  if (flags.length > 1 && runs === 2) return { words: ` (${names} all false, then all true)`, note: `Only the two runs with every one of ${names} false and every one true ran: a branch taken at mixed values is not checked (more than 3 such inputs, or the check's limits).` };
  if (flags.every(([, values]) => values.length > 1)) return { words: ` (${names} true and false)`, note: "" };
  const ran = flags.map(([name, values]) => `${name} ${values.join(" and ")}`).join(", ");
  return { words: ` (${ran} only)`, note: `Only one value of ${names} ran: the run with the other would not have ended, or did not, within the check's limits, so the branch it takes is not checked.` };
}

function runtimeCheck(r, ctx) {
  const title = r.onnxruntime ? `onnxruntime ${r.onnxruntime}` : "onnxruntime";
  const row = (ok, detail, message) => {
    const out = checkRow(ok, title, detail, message);
    out.classList.add("runtime-check");
    out.dataset.status = r.status || "";
    return out;
  };
  if (r.status === "pending") return row(null, "checking in the background…");
  // weights not uploaded: the smoke run put zeros in their place (missing-data.js says so)
  const ran = (ctx.summary && (ctx.summary.missing_data || []).length) ? "loads and runs its graph" : "loads and runs it";
  // sizes a run found (where the smoke run's made-up ones failed): what edits are checked at
  const fromRun = r.sizes_from === "run" && r.sizes ? ` at ${Object.entries(r.sizes).map(([d, n]) => `${d} ${n}`).join(", ")} (a run's sizes)` : "";
  const flags = flagWords(r);
  if (r.status === "ok") return r.other_size && r.other_size.status === "fails" ? onlyAtOne(r, row(true, "runs it, but only at size 1"), ctx) : row(true, ran + fromRun + flags.words, flags.note);
  if (r.status !== "fails") return row(null, "not run", r.message);
  const out = row(false, r.guessed ? "loads it, fails on made-up inputs" : "can't run it", r.message);
  if (r.node) out.append(nodeLink(ctx, r.node, `${r.op_type || "node"} ${nodeLabel(r.node_name, r.node)}`));
  if (r.guessed) {
    out.append(el("div", { class: "muted runtime-note" }, `The smoke run: ${SMOKE_RUN}; the model may not take those. `,
      "Run it on real inputs (Run, or a reference case) to know whether it works: sizes it runs at become the ones its edits are checked at."));
  }
  return out;
}

// the gates an edit was stored past ("allow_invalid", or a background check that came late)
function invalidMarks(reasons) {
  if (!reasons || !reasons.length) return null;
  return el("div", { class: "invalid-marks" },
    el("h4", {}, "Stored although invalid"),
    el("ul", {}, reasons.map((m) => el("li", { class: "verdict-message" }, m))));
}

// outputs the smoke run got back in another shape than declared, at its first size or at 2
function declaredShapes(r, ctx) {
  if (!r || r.status !== "ok") return [];
  const other = r.other_size && r.other_size.status === "ok" ? r.other_size : null;
  const at = (size, dims) => `with ${other && other.at ? other.at : `${dims.join(", ")} at ${size}`}`;
  const seen = new Set();
  const out = [];
  // one named dynamic dim (not "x[0]"): what came back at its size is declared by its name
  const only = other && other.dims.length === 1 && !other.dims[0].includes("[") ? { name: other.dims[0], size: other.size } : null;
  const fed = other ? other.sizes || Object.fromEntries(other.dims.map((d) => [d, other.size])) : null;
  // the first run's sizes too: a named dim coming back otherwise there (a Reshape folding the
  // pixels into the batch) is the model's doing, no declaration to fix (QA17: "Declare it" did nothing)
  for (const [list, when, dim, sizes] of [[r.declared_mismatches, "", null, r.sizes || null], [other && other.declared_mismatches, other ? at(other.size, other.dims) : "", only, fed]]) {
    for (const m of list || []) {
      if (seen.has(m.output)) continue;
      seen.add(m.output);
      // the smoke run feeds values it made up (a run's sizes, never its values)
      out.push(declaredMismatch(m, ctx, { when, named: true, dim, sizes, madeUp: true }));
    }
  }
  return out;
}

function validationSection(summary, ctx) {
  const v = summary.validation || {};
  const weights = missingDataCheck(summary.missing_data, ctx);
  const runtime = v.runtime ? runtimeCheck(v.runtime, ctx) : null;
  const declared = declaredShapes(v.runtime, ctx);
  if (v.pending) {
    return el("section", { class: "panel-section validation", id: "validation", "data-pending": "true" },
      el("h3", {}, "Validation"),
      checkRow(null, "onnx.checker", "checking in the background…"),
      checkRow(null, "Full check", "checking in the background…"),
      weights, runtime, referenceChecks(v.reference, ctx), invalidMarks(v.invalid));
  }
  const full = v.full;
  const errors = v.inference_errors || [];
  const same = full && !full.ok && full.message === v.message;
  return el("section", { class: "panel-section validation", id: "validation", "data-ok": v.ok ? "true" : "false" },
    el("h3", {}, "Validation"),
    checkRow(v.ok, "onnx.checker", v.ok ? "passes" : "fails", v.ok ? "" : v.message),
    full ? checkRow(full.ok, "Full check", full.ok ? "passes, with strict shape inference" : same ? "fails (as above)" : "fails",
      full.ok || same ? "" : full.message)
      : checkRow(null, "Full check", "not run: the model is too large to serialise for it"),
    weights,
    runtime,
    ...declared,
    referenceChecks(v.reference, ctx),
    invalidMarks(v.invalid),
    errors.length ? el("div", { class: "inference-errors" },
      el("h4", {}, `Shape inference errors (${errors.length})`),
      el("ul", {}, errors.map((e) => el("li", { class: "inference-error", "data-node": e.node || "" },
        el("div", { class: "ie-head" },
          e.node ? nodeLink(ctx, e.node, `${e.op_type || "node"} ${nodeLabel(e.node_name, e.node)}`)
            : el("span", { class: "muted" }, e.op_type ? `${e.op_type} ${e.node_name || ""}` : "whole model")),
        el("div", { class: "verdict-message" }, e.message))))) : null);
}

function functionList(fns, ctx) {
  return el("ul", { class: "link-list fn-list" }, fns.map((f) => el("li", { "data-path": f.path },
    graphLink(ctx, f.path, f.name, "fn-link"),
    el("span", { class: "muted" }, ` · ${f.domain || "ai.onnx"}${f.overload ? ` · overload ${f.overload}` : ""} · ${plural(f.nodes ?? 0, "node")}`))));
}

function trainingList(training, ctx) {
  return el("div", { class: "training" }, training.map((t) => el("div", { class: "training-item", "data-index": t.index },
    el("div", { class: "training-head" }, el("strong", {}, `Training info #${t.index}`)),
    propertyList([
      ["Initialization", t.init ? graphLink(ctx, t.init, "initialization graph ›", "subgraph-link train-init") : el("span", { class: "muted" }, "none")],
      ["Algorithm", t.algo ? graphLink(ctx, t.algo, "training step graph ›", "subgraph-link train-algo") : el("span", { class: "muted" }, "none")],
    ]),
    el("h4", { title: "Initializers set from outputs of the initialization graph" }, `Initialization binding (${(t.initialization_binding || []).length})`),
    (t.initialization_binding || []).length
      ? keyValueList(t.initialization_binding, { keyLabel: "Initializer", valueLabel: "Set from output", cls: "binding-init" })
      : el("p", { class: "muted" }, "none"),
    el("h4", { title: "Initializers updated from outputs of the algorithm graph after each step" }, `Update binding (${(t.update_binding || []).length})`),
    (t.update_binding || []).length
      ? keyValueList(t.update_binding, { keyLabel: "Initializer", valueLabel: "Updated from output", cls: "binding-update" })
      : el("p", { class: "muted" }, "none"))));
}

/** The validation section redrawn in place, once the background checks answer: the rest of the
 * panel (a form being filled in, the place scrolled to) stays as it is. */
export function refreshValidation(root, summary, ctx) {
  const old = root.querySelector(":scope > #validation");
  if (old && !busyIn(old)) old.replaceWith(validationSection(summary, ctx));
}

export function renderModelPanel(root, summary, ctx) {
  clear(root);
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, "Model"),
    el("h2", { class: "panel-title" }, summary.name || summary.graph_name || "model"),
    el("div", { class: "panel-subtitle" }, `revision ${summary.revision} · ${formatBytes(summary.size)}`,
      summary.source === "text" ? " · opened from ONNX text" : "")));

  const graph = ctx.graph;
  if (graph && graph.path) root.append(...graphInfo(graph, ctx).filter(Boolean));

  root.append(validationSection(summary, ctx));

  const counts = summary.counts || {};
  const editing = canEdit(ctx);
  root.append(section("Properties", propertyList([
    ["IR version", summary.ir_version === undefined ? "" : mono(formatNumber(summary.ir_version))],
    ["Opsets", opsetText(summary.opset_import)],
    ["Producer", [summary.producer_name, summary.producer_version].filter(Boolean).join(" ")],
    ["Domain", summary.domain ? mono(summary.domain) : ""],
    ["Model version", summary.model_version === undefined ? "" : formatNumber(summary.model_version)],
    ["Graph", summary.graph_name ? mono(summary.graph_name) : ""],
    ["Contents", el("span", {}, nodeCount(counts, ctx), " · ", [
      plural(counts.initializers ?? 0, "initializer"),
      inputsCount(summary, ctx), plural(counts.outputs ?? 0, "output"),
      counts.subgraphs ? plural(counts.subgraphs, "subgraph") : "", counts.functions ? plural(counts.functions, "function") : "",
    ].filter(Boolean).join(" · "))],
    (summary.external_files || []).length ? ["External data", el("span", {}, summary.external_files.map((f, i) => [i ? ", " : "", mono(f)]))] : null,
  ]), editing ? disclosure("Edit model fields…", () => modelFieldsForm(summary, ctx), { cls: "ed-fields-toggle" }) : null));

  // what the model takes and gives, with types, before the long parts (QA34: 1,860 px down)
  const io = ioOverview(ctx);
  if (io.length) {
    const s = section("Graph inputs and outputs", ...io);
    s.id = "model-io";
    root.append(s);
  }

  if (summary.doc_string) root.append(section("Documentation", markdownBlock(summary.doc_string, { cls: "doc model-doc" })));
  const props = summary.metadata_props || [];
  root.append(section("Model metadata", editing ? metadataEditor(props, ctx)
    : props.length ? keyValueList(props, { cls: "model-metadata" }) : el("p", { class: "muted" }, "None.")));
  // the costs' table is long: what the model says of itself (fields, metadata) comes first
  if (ctx.actions && ctx.actions.loadStats) root.append(costsSection(ctx));
  if (graph && !graph.path) root.append(...graphInfo(graph, ctx).filter(Boolean));
  if (editing) {
    const tools = section("Tools", ...modelTools(summary, ctx).filter(Boolean));
    tools.id = "model-tools";
    root.append(tools);
  }
  const downloads = section("Download", downloadChoices(summary, ctx));
  downloads.id = "downloads";
  root.append(downloads);

  const fns = summary.functions || [];
  if (fns.length) root.append(section(`Functions (${fns.length})`, functionList(fns, ctx)));
  const training = summary.training || [];
  if (training.length) root.append(section(`Training (${training.length})`, trainingList(training, ctx)));
  const configs = summary.configuration || [];
  if (configs.length) root.append(section(`Device configurations (${configs.length})`, deviceConfigurations(configs)));
  root.querySelector(":scope > .panel-head").append(sectionIndex(root));
}

// the panel's long parts, one click away from its top (QA34 #7: Tools 2,000 px down, found by scrolling)
const INDEXED = [["#validation", "Validation"], ["#model-io", "Inputs and outputs"], ["#costs", "Costs"], ["#model-tools", "Tools"], ["#downloads", "Download"]];

/** Links to the panel's sections present, each scrolling its section to the top. */
function sectionIndex(root) {
  const links = INDEXED.map(([selector, label]) => {
    const target = root.querySelector(selector);
    const at = target && (target.closest(".panel-section") || target);
    if (!at) return null;
    const link = el("button", { type: "button", class: "linklike panel-index-link", "data-target": selector }, label);
    link.addEventListener("click", () => {
      at.scrollIntoView({ block: "start", behavior: "smooth" });
      // the keyboard goes there too: the next Tab is the section's first control (QA41 #6)
      const heading = at.querySelector("h3") || at;
      focusOn(/** @type {HTMLElement} */ (heading));
    });
    return link;
  }).filter(Boolean);
  return el("nav", { class: "panel-index", "aria-label": "Sections of the model panel" }, ...links);
}
