// Reference checks in the model panel (api/reference.py): whether the revision on screen still
// gives the outputs kept for the model's reference cases, its worst miss in words, and the
// cases themselves — kept from a run (the Run panel's "Keep as a reference case") or here in
// one click on random inputs, dropped, and the tolerance they are held to.
import { el, clear } from "../widgets/dom.js";
import { disclosure } from "../editing/edit-forms.js";
import { formatPercent, formatShape } from "../lib/format.js";
import { referenceCause } from "../lib/reference-words.js";
import { symbolicDims } from "../lib/input-dims.js";
import { checkRow, fieldError, mono, runInline, tag } from "../widgets/ui.js";

function verdictRow(ref, ctx, revision) {
  const title = "Reference outputs";
  const n = (ref.cases || []).length;
  let row;
  if (!ref || ref.status === "none") {
    row = checkRow(null, title, "no reference cases kept",
      "Keep a case and every revision is run on its inputs and held to its outputs: an edit that changes what the model computes shows here.", { prose: true });
  } else if (ref.status === "pending") row = checkRow(null, title, "checking in the background…");
  else if (ref.status === "passed") {
    const far = ref.worst ? ref.worst.max_rel_to_range : 0;
    row = checkRow(true, title, `${n === 1 ? "its case gives its" : `all ${n} cases give their`} outputs${far ? ` (within ${formatPercent(far)} of range)` : ", bit for bit"}`);
  } else {
    const bad = (ref.cases || []).filter((c) => c.status !== "passed").length;
    row = checkRow(false, title, n === 1 ? "its case differs" : `${bad} of ${n} cases differ`, referenceCause(ref));
    // where the outputs part: a run of both revisions on the same inputs, node by node
    const from = (ref.cases || []).find((c) => c.status === "failed" && c.recorded_from !== null && c.recorded_from !== undefined && c.recorded_from !== revision);
    if (from && ctx.actions && ctx.actions.openRun) {
      const locate = async () => {
        const kept = (await ctx.actions.reference.list()).cases.find((c) => c.name === from.name);
        ctx.actions.openRun(from.recorded_from, kept ? caseInputs(kept, from.renamed) : null, { go: true });
      };
      row.append(el("button", { type: "button", class: "linklike ref-locate", onclick: () => { locate().catch((err) => ctx.actions.toast(err.message || String(err))); } },
        `Find the first node whose output differs from revision ${from.recorded_from}'s ›`));
    }
  }
  row.classList.add("reference-check");
  row.dataset.status = (ref && ref.status) || "none";
  return row;
}

/** A kept case as the Run panel takes it (openRun): its inputs, dims and expected outputs, by
 * the names the model has now (`renamed`: the verdict's old name -> new, for those renamed since). */
function caseInputs(c, renamed = {}) {
  const blobs = (side) => Object.fromEntries(Object.entries(c[side] || {}).map(([name, a]) => [renamed[name] || name, { npy: a.npy }]));
  return { label: c.name, inputs: blobs("inputs"), dims: c.dims || {}, expected: blobs("expected") };
}

/** How the revision on screen does on one case (its verdict's entry), as a tag. */
function caseVerdict(result) {
  if (!result) return null;
  if (result.status === "passed") return tag("gives its outputs", "tag-set ref-case-verdict");
  if (result.status === "not_applicable") { // an input it feeds is held fixed at another value now
    const t = tag("no longer applies", "ref-case-verdict");
    t.title = result.message || "";
    return t;
  }
  const t = tag(result.status === "error" ? "can't run" : "differs", "tag-warn ref-case-verdict");
  t.title = result.message || Object.entries(result.outputs || {}).filter(([, o]) => !o.passed)
    .map(([n, o]) => `${n}: ${o.max_rel_to_range === null || o.max_rel_to_range === undefined ? "shape or type changed" : `${formatPercent(o.max_rel_to_range)} of its range off`}`).join("; ");
  return t;
}

function caseItem(c, ctx, refresh, errorBox, result) {
  const arrays = (side) => Object.entries(c[side] || {}).map(([name, a], i) => [i ? ", " : "", mono(name), a.shape ? ` ${a.dtype || ""} ${formatShape(a.shape)}` : ""]);
  const drop = el("button", { type: "button", class: "btn btn-small ref-drop", title: `Drop case “${c.name}”` }, "Drop");
  const run = el("button", { type: "button", class: "btn btn-small ref-run", title: `Run this revision on case “${c.name}”'s inputs: its outputs against the kept ones, in the Run panel` }, "Run it");
  run.addEventListener("click", () => ctx.actions.openRun(null, caseInputs(c, (result || {}).renamed)));
  drop.addEventListener("click", () => runInline(drop.parentElement || drop, errorBox, async () => {
    await ctx.actions.reference.remove(c.name);
    await refresh();
  }));
  return el("li", { class: "ref-case", "data-name": c.name },
    el("div", { class: "ref-case-head" }, el("strong", { class: "ref-case-name" }, c.name), caseVerdict(result), run, drop),
    el("div", { class: "muted ref-arrays" }, c.copied_from ? `outputs of ${c.copied_from.name}'s case “${c.copied_from.case}”`
      : c.recorded_from === null || c.recorded_from === undefined ? "outputs given" : `outputs of revision ${c.recorded_from}`),
    el("div", { class: "muted ref-arrays" }, "in: ", ...arrays("inputs")),
    el("div", { class: "muted ref-arrays" }, "out: ", ...arrays("expected")));
}

function casesEditor(ctx, refresh, latest) {
  const box = el("div", { class: "ref-cases" });
  const errorBox = fieldError();
  const list = el("ul", { class: "ref-case-list" });
  const tolerance = el("input", { type: "number", class: "ref-tolerance", min: "0", max: "100", step: "any", "aria-label": "Tolerance in percent" });
  const keep = el("button", { type: "button", class: "btn btn-small", id: "ref-keep-random",
    title: "Run this revision on random inputs (a new seed; symbolic dims at the sizes given in Costs or Run, else 1) and keep those inputs and its outputs as a case" }, "Keep this revision's outputs on random inputs");
  const saveTolerance = el("button", { type: "button", class: "btn btn-small" }, "Set");
  const gate = el("input", { type: "checkbox", id: "ref-gate" });
  const gateLabel = el("label", { class: "ref-gate", title: "An edit whose result does not give these outputs (within the tolerance) is refused and nothing is stored; a big model is checked after the edit is stored, and the page says when it fails" },
    gate, "Refuse edits that change these outputs");
  const show = (checks) => {
    clear(list);
    const results = new Map(((latest() || {}).cases || []).map((r) => [r.name, r]));
    list.append(...(checks.cases || []).map((c) => caseItem(c, ctx, reload, errorBox, results.get(c.name))));
    if (!(checks.cases || []).length) list.append(el("li", { class: "muted" }, "No cases yet."));
    tolerance.value = String(+(100 * checks.tolerance).toPrecision(6));
    gate.checked = !!checks.gate;
  };
  const reload = async () => { await refresh(); show(await ctx.actions.reference.list()); };
  keep.addEventListener("click", () => runInline(box, errorBox, async () => {
    const seed = (await ctx.actions.reference.list()).cases.length + 1; // a case's inputs unlike the others'
    const graph = ctx.mainGraph || { inputs: [], initializers: [] };
    const fed = (graph.inputs || []).filter((i) => !(graph.initializers || []).some((t) => t.name === i.name));
    const inputs = Object.fromEntries(fed.map((i) => [i.name, { random: { seed } }]));
    const known = ctx.dimSizes ? ctx.dimSizes() : {};
    // each dim a run asks for at the size given in Costs or Run, else 1
    const dims = Object.fromEntries(symbolicDims(fed, graph.dim_expressions || {}).map((d) => [d, known[d] ?? 1]));
    await ctx.actions.reference.add({ inputs, ...(Object.keys(dims).length ? { dims } : {}) });
    await reload();
  }));
  gate.addEventListener("change", () => runInline(box, errorBox, async () => {
    show(await ctx.actions.reference.setGate(gate.checked));
  }));
  saveTolerance.addEventListener("click", () => runInline(box, errorBox, async () => {
    const pct = Number(tolerance.value);
    if (tolerance.value === "" || !(pct >= 0 && pct <= 100)) throw new Error("The tolerance is a percentage from 0 to 100.");
    await ctx.actions.reference.setTolerance(pct / 100);
    await reload();
  }));
  const others = el("select", { id: "ref-copy-from", "aria-label": "Another model" }, el("option", { value: "" }, "another model…"));
  const copy = el("button", { type: "button", class: "btn btn-small", id: "ref-copy" }, "Copy its cases");
  copy.addEventListener("click", () => runInline(box, errorBox, async () => {
    if (!others.value) throw new Error("Pick the model whose cases to copy.");
    const answer = await ctx.actions.reference.copyFrom(others.value);
    await reload();
    const skipped = answer.skipped.map((x) => `${x.name}: ${x.reason}`).join("; ");
    ctx.actions.toast(`Copied ${answer.kept.length ? answer.kept.join(", ") : "no case"}${skipped ? ` — not copied: ${skipped}` : ""}.`, skipped ? "error" : "info");
  }));
  ctx.actions.listModels().then(({ models }) => {
    for (const m of models || []) {
      if (m.id !== ctx.modelId && (m.kind || "model") === "model") others.append(el("option", { value: m.id }, m.name || m.id));
    }
  }).catch(() => { copy.disabled = true; });
  box.append(list,
    el("div", { class: "ed-row" }, keep),
    el("div", { class: "ed-row" }, "or copy the cases of ", others, copy),
    el("div", { class: "ed-row" }, gateLabel),
    el("div", { class: "ed-row" }, el("label", {}, "Tolerance ", tolerance, " % "), saveTolerance,
      el("span", { class: "muted ed-hint" }, "of each value, plus that share of the output's largest magnitude")),
    el("p", { class: "muted ed-hint" }, "Run (toolbar) keeps a case from your own inputs or a test data set: “Keep as a reference case”."),
    errorBox);
  ctx.actions.reference.list().then(show).catch((err) => { errorBox.hidden = false; errorBox.textContent = err.message || String(err); });
  return box;
}

/** The validation section's reference row, with the cases to manage below it. */
export function referenceChecks(ref, ctx) {
  const wrap = el("div", { class: "reference-checks", id: "reference-checks" }, verdictRow(ref || { status: "none" }, ctx, ctx.summary && ctx.summary.revision));
  if (!ctx.actions || !ctx.actions.reference) return wrap;
  let latest = ref;
  const refresh = async () => {
    latest = await ctx.actions.reference.verdict();
    wrap.firstChild.replaceWith(verdictRow(latest, ctx, ctx.summary && ctx.summary.revision));
  };
  const count = ref && ref.cases && ref.cases.length ? [String(ref.cases.length), ref.gate ? "gating edits" : ""].filter(Boolean).join(", ") : "";
  wrap.append(disclosure(`Reference cases${count ? ` (${count})` : ""}…`,
    () => casesEditor(ctx, refresh, () => latest), { cls: "ref-toggle" }));
  return wrap;
}
