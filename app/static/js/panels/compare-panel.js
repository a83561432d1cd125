// The compare panel (toolbar "Compare"): pick a revision of this model or another model, and see
// what differs from the model on screen (GET .../diff): counts, the changed nodes with each
// field's value on both sides, the added and removed nodes, tensors, inputs and outputs,
// metadata and model fields, and the model-local functions: each changed one's own fields
// (attributes and their defaults, opsets, doc string...) and its body's nodes, listed with the
// other nodes ("in function local.fns.Block"). The drawing marks added and changed boxes
// (model-page.js), a function body's when it is on screen; each node in the lists links to it
// (opening its function or subgraph), and Previous/Next step through those of the graph on screen.
import { el, clear } from "../widgets/dom.js";
import { breakable, breakableFormula, mono, plural, section } from "../widgets/ui.js";
import { graphPathOf } from "../lib/address.js";
import { formatOf, totalChange, totalOf, totalText } from "../lib/cost-formula.js";
import { formatInteger, nodeLabel, shortDate } from "../lib/format.js";
import { revisionChoice, standing } from "./history-panel.js";
import { modelOption, twinsOf } from "../widgets/model-options.js";

/** "attribute alpha: 0.1 → 0.3" -> ["attribute alpha", "0.1", "0.3"]; other lines whole. */
export function splitChange(line) {
  const colon = line.indexOf(": ");
  const arrow = line.indexOf(" → ", colon);
  if (colon < 0 || arrow < 0) return [line, "", ""];
  return [line.slice(0, colon), line.slice(colon + 2, arrow), line.slice(arrow + 3)];
}

/** A long list's change, "attribute nodes_values: 3 of 911,203 values differ — [500000] 0.52 →
 * 0.61, [500001] …", and a forest's, "trees: 14 of 100 differ — thresholds in 12, …" ->
 * { field, summary, items: [{ index, before, now } | { index, value, what }], more, rest };
 * null for another line. */
export function splitItemChange(line) {
  const m = /^([^:]+): ([^→—]*\b(?:differs?|the same)[^→—]*?)(?: — (.*))?$/.exec(line);
  if (!m) return null;
  const [, field, summary, tail = ""] = m;
  const more = tail.endsWith(", …");
  const parts = (more ? tail.slice(0, -3) : tail).split(/, (?=\[\d+\] )/).filter(Boolean);
  const items = [];
  for (const part of parts) {
    const changed = /^\[(\d+)\] (.*) → (.*)$/.exec(part);
    const ends = /^\[(\d+)\] (.*) (added|removed)$/.exec(part);
    if (changed) items.push({ index: changed[1], before: changed[2], now: changed[3] });
    else if (ends) items.push({ index: ends[1], value: ends[2], what: ends[3] });
    else return { field, summary, items: [], more: false, rest: tail };
  }
  return { field, summary, items, more, rest: "" };
}

/** The cell of a long list's change: how many items differ, then the first few by position,
 * each before (red) and now (green). */
function itemChangeCell(change) {
  const items = change.items.map((it) => el("div", { class: "compare-item" },
    el("span", { class: "muted" }, `[${formatInteger(Number(it.index))}] `),
    it.what
      ? el("span", { class: it.what === "added" ? "compare-now" : "compare-before" }, breakable(it.value), ` ${it.what}`)
      : [el("span", { class: "compare-before" }, breakable(it.before)), " → ", el("span", { class: "compare-now" }, breakable(it.now))]));
  return el("td", { colspan: "2", class: "compare-items" },
    el("div", {}, change.summary, change.rest ? ` — ${change.rest}` : ""),
    items,
    change.more ? el("div", { class: "muted" }, "…") : null);
}

/** "12 Mar, 14:05" (the year too when it isn't this one): when a revision or model was made. */
function picker(ctx, onPick) {
  const select = el("select", { id: "compare-with", "aria-label": "Compare with" },
    el("option", { value: "" }, "Loading…"));
  Promise.all([ctx.actions.loadRevisions(), ctx.actions.listModels()]).then(([revs, models]) => {
    clear(select);
    const here = ctx.summary.revision;
    const stands = standing(revs.revisions, ctx.summary.head ?? here);
    const stored = models.models.filter((m) => (m.kind || "model") === "model"); // not a data file, a lone tensor
    const others = stored.filter((m) => m.id !== ctx.modelId);
    const twins = twinsOf(stored);
    // copies of this model (the same name: uploaded again, edited apart) before the rest
    const name = ctx.summary.name;
    const copies = others.filter((m) => m.name === name);
    const rest = others.filter((m) => m.name !== name);
    // (the DOM's own append writes a null as the text "null": QA36 found "nullnull" in it)
    select.append(...[el("option", { value: "" }, "Choose…"),
      el("optgroup", { label: "Revisions of this model" },
        [...revs.revisions].sort((a, b) => b.revision - a.revision).filter((r) => r.revision !== here)
          .map((r) => {
            const { text, title } = revisionChoice(r, stands.get(r.revision));
            const when = shortDate(r.created);
            return el("option", { value: `rev:${r.revision}`, title: [when ? `made ${when}` : "", title].filter(Boolean).join("\n") }, text);
          })),
      copies.length ? el("optgroup", { label: `Other models named ${name}` }, copies.map((m) => modelOption(m, twins))) : null,
      rest.length ? el("optgroup", { label: "Other models" }, rest.map((m) => modelOption(m, twins))) : null].filter(Boolean));
    const chosen = ctx.compare && ctx.compare.choice;
    if (chosen) select.value = chosen;
  }).catch((err) => {
    clear(select);
    select.append(el("option", { value: "" }, `The revisions and models could not be listed: ${err.message || err}`));
  });
  select.addEventListener("change", () => { if (select.value) onPick(select.value); });
  return el("div", { class: "ed-row compare-pick" }, el("label", { for: "compare-with" }, "Compare with"), select);
}

function nodeLink(ctx, id, label) {
  // a long node name wraps at its separators inside the panel (it ran past its right edge)
  return el("a", { class: "compare-node", href: ctx.nodeHref(graphPathOf(id), id), "data-node": id }, breakable(label || id));
}

const FUNCTION_ROOT = /^fn\[\d+\]$/;

/** Where a node of a function body is, in words: "in function local.fns.Block", and the
 * subgraph inside it ("· n1/then_branch"); null for a node of another graph. `side`: "path" for
 * an id of the side on screen (added, changed), "other" for one of the other side (removed). */
export function functionPlace(id, functions, side) {
  const segs = String(id).split("/");
  if (segs.length < 2 || !FUNCTION_ROOT.test(segs[0])) return null;
  const fn = ((functions && functions.changed) || []).find((f) => typeof f === "object" && f[side] === segs[0]);
  const inner = segs.slice(1, -1).join("/");
  return `in function ${fn ? fn.function : segs[0]}${inner ? ` · ${inner}` : ""}`;
}

function placeNote(id, d, side) {
  const place = functionPlace(id, d.functions, side);
  return place ? [" ", el("span", { class: "muted compare-place" }, place)] : [];
}

/** A table of change lines: field, before, now ("attribute alpha: 0.1 → 0.3"). */
/** A list of names as the diff writes it ("['r38', 'gpu_0/w']"), or null for other text (a name
 * holding a quote, a note after the list). */
function nameList(text) {
  const m = /^\[((?:'[^'\\]*'(?:, )?)*)\]$/.exec(text.trim());
  return m ? [...m[1].matchAll(/'([^'\\]*)'/g)].map((x) => x[1]) : null;
}

/** An inputs or outputs line, one row a place that differs ("input 0: r38 → r37") — the whole
 * lists, each name repeated, read as nothing changed (QA28); null when the line says more. */
function slotRows(field, before, now, words) {
  const slot = { inputs: "input", outputs: "output" }[field];
  const [was, is] = [nameList(before), nameList(now)];
  if (!slot || !was || !is) return null;
  const rows = [];
  for (let k = 0; k < Math.max(was.length, is.length); k += 1) {
    if (was[k] === is[k]) continue;
    rows.push(el("tr", {}, el("td", {}, words(`${slot} ${k}`)),
      el("td", { class: "compare-before" }, k < was.length ? breakable(was[k] || "(none)") : "(none)"),
      el("td", { class: "compare-now" }, k < is.length ? breakable(is[k] || "(none)") : "(none)")));
  }
  return rows.length ? rows : null;
}

function fieldsTable(lines, words = (f) => f) {
  return el("table", { class: "compare-fields" },
    el("thead", {}, el("tr", {}, el("th", {}, "field"), el("th", {}, "before"), el("th", {}, "now"))),
    el("tbody", {}, lines.flatMap((line) => {
      const items = splitItemChange(line);
      if (items) return el("tr", {}, el("td", {}, words(items.field)), itemChangeCell(items));
      const [field, before, now] = splitChange(line);
      const slots = slotRows(field, before, now, words);
      if (slots) return slots;
      // a line with no before and now ("metadata 'k' = 'v' added", "subgraph body: 2 node(s)
      // added…") across the row, not squeezed into the field's column
      if (!before && !now && field === line) return el("tr", {}, el("td", { colspan: "3" }, breakable(words(line))));
      // long names wrap at their separators ("/", ".", "_") before anywhere else
      return el("tr", {}, el("td", {}, words(field)), el("td", { class: "compare-before" }, breakable(before)), el("td", { class: "compare-now" }, breakable(now)));
    })));
}

/** " compare-current" for the node Next/Previous stepped to: the panel drawn again (a verdict
 * arriving) keeps it marked, where focusCompared marked the list drawn before. */
function currentClass(ctx, node) {
  return ctx.compare && ctx.compare.stepped === node ? " compare-current" : "";
}

function changedItem(c, ctx, d) {
  return el("li", { class: `compare-changed${currentClass(ctx, c.node)}`, "data-node": c.node },
    el("div", {}, nodeLink(ctx, c.node, nodeLabel(c.name, c.node)), " ", mono(c.op_type), ...placeNote(c.node, d, "path")),
    fieldsTable(c.fields));
}

/** A function's own field as a person names it: "doc_string" -> "doc string", "opset ai.onnx"
 * -> "opset ai.onnx", "inputs" -> "inputs". */
function functionFieldWords(field) {
  return field.replace(/^doc_string$/, "doc string").replace(/^value_info\b/, "value info");
}

/** "its body: 1 node changed, 2 added" (the nodes themselves are in the node lists above). */
function bodyWords(nodes) {
  if (!nodes) return "";
  const parts = [
    nodes.changed ? `${plural(nodes.changed, "node")} changed` : "",
    nodes.added ? `${plural(nodes.added, "node")} added` : "",
    nodes.removed ? `${plural(nodes.removed, "node")} removed` : "",
  ].filter(Boolean);
  return parts.length ? `its body: ${parts.join(", ")} (in the node lists above)` : "";
}

/** The Functions section: each function added or removed, and each changed one with a link
 * opening its body, how many of its body's nodes changed and its own fields before and now. */
function functionsSection(fns, ctx) {
  if (!fns) return null;
  const items = [
    ...(fns.added || []).map((name) => el("li", { "data-function": name }, mono(name), " added (its nodes are not listed)")),
    ...(fns.removed || []).map((name) => el("li", { "data-function": name }, mono(name), " removed (its nodes are not listed)")),
    ...(fns.changed || []).map((c) => {
      if (typeof c === "string") return el("li", {}, `${c} changed`); // an older server's answer
      const body = bodyWords(c.nodes);
      const open = ctx.graphHref ? el("a", { class: "compare-function", href: ctx.graphHref(c.path), title: `open the body of ${c.function} (${c.path})` }, breakable(c.function)) : mono(c.function);
      return el("li", { class: "compare-function-changed", "data-function": c.function, "data-path": c.path },
        el("div", {}, open, " changed"),
        body ? el("div", { class: "muted" }, body) : null,
        c.fields.length ? fieldsTable(c.fields, functionFieldWords) : el("div", { class: "muted" }, "its own fields (inputs, outputs, attributes, opsets, doc string, metadata) are the same"));
    }),
  ];
  return items.length ? section("Functions", el("ul", { class: "compare-lines", id: "compare-functions" }, items)) : null;
}

function pairs(title, obj, words) {
  const lines = [];
  for (const name of obj.added || []) lines.push(`${words(name)} added`);
  for (const name of obj.removed || []) lines.push(`${words(name)} removed`);
  for (const c of obj.changed || []) lines.push(typeof c === "string" ? `${c} changed` : `${words(c.name)}: ${c.change || `${c.from} → ${c.to}`}`);
  // after the changes: a re-export renames hundreds of tensors, which would bury them
  for (const r of obj.renamed || []) lines.push(`${words(r.from)} renamed to ${words(r.to)}${r.graph ? ` in ${r.graph}` : ""}${r.type ? ` (${r.type})` : ""}`);
  return lines.length ? section(title, cappedList("ul", { class: "compare-lines" }, lines, (l) => el("li", {}, l))) : null;
}

function metadataLines(m) {
  const lines = [
    ...Object.entries(m.added || {}).map(([k, v]) => `${k} = ${v} added`),
    ...Object.entries(m.removed || {}).map(([k]) => `${k} removed`),
    ...Object.entries(m.changed || {}).map(([k, [a, b]]) => `${k}: ${a} → ${b}`),
  ];
  return lines.length ? section("Metadata", cappedList("ul", { class: "compare-lines" }, lines, (l) => el("li", {}, l))) : null;
}

/** ", opset 13 → 17" (and each other domain whose version moved, "ai.onnx.ml 1 → 3"): a
 * conversion is news for the summary line, not only a line under Model at the panel's end (QA27). */
function opsetWords(model) {
  const pair = model && model.opset_import;
  if (!pair) return "";
  const [was, now] = pair;
  const moved = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((k) => was[k] !== now[k])
    .sort((a, b) => (a === "" || a === "ai.onnx" ? -1 : b === "" || b === "ai.onnx" ? 1 : a.localeCompare(b)));
  const words = moved.map((k) => `${k && k !== "ai.onnx" ? `${k} ` : ""}${was[k] ?? "none"} → ${now[k] ?? "none"}`);
  return words.length ? `, opset ${words.join(", ")}` : "";
}

function modelLines(model) {
  // graph and training_info: lines of their own; other fields: [before, after]
  const lines = Object.entries(model).flatMap(([k, v]) => (k === "graph" ? v.map((l) => `graph ${l}`)
    : k === "training_info" ? (Array.isArray(v) ? v : [v]).map((l) => `training ${l}`)
    : Array.isArray(v) ? [`${k}: ${JSON.stringify(v[0])} → ${JSON.stringify(v[1])}`] : [`${k} ${v}`]));
  return lines.length ? section("Model", cappedList("ul", { class: "compare-lines" }, lines, (l) => el("li", {}, l))) : null;
}

const COST_ROWS = [
  ["params", "Parameters"], ["param_bytes", "Weights"], ["flops", "FLOPs"], ["activation_bytes", "Activations"], ["peak_activation_bytes", "At most at once"],
];

const UNKNOWN_WHY = "unknown until the input sizes are given (Costs, in the model panel)";

/** One side's total: a count, a formula in the input sizes, or "unknown" (why in its title). */
function totalValue(total, key, stats) {
  if (total.unknown) return el("span", { class: "muted", title: UNKNOWN_WHY }, "unknown");
  const left = key === "flops" && total.value !== undefined && stats.unknown.flops_nodes ? plural(stats.unknown.flops_nodes, "node") : 0;
  return el("span", { title: total.formula ? "for any sizes of the inputs' dims" : null },
    breakableFormula(totalText(total, formatOf(key))), left ? el("div", { class: "muted cost-unknown" }, `+ ${left} unknown`) : null);
}

/** How a total moved; a dash where one side is unknown (nothing to measure the change from). */
function changeValue(change) {
  return change === "?" ? el("span", { class: "muted", title: "one side's total is unknown: no change to tell" }, "—") : breakableFormula(change);
}

/** A cost row's cells after its label: three numbers side by side; formulas (a few terms each,
 * too wide for a third of the sidebar: they printed over each other) one under the other across
 * the three columns; unknown on both sides, said once in words. */
function costCells(a, b, change, key, before, now) {
  if (a.unknown && b.unknown) {
    return [el("td", { colspan: "3", class: "muted cost-unknown cost-both-unknown" },
      key === "peak_activation_bytes" ? `${UNKNOWN_WHY}: a largest moment has no formula` : UNKNOWN_WHY)];
  }
  if (!a.formula && !b.formula) {
    return [el("td", { class: "num" }, totalValue(a, key, before)), el("td", { class: "num" }, totalValue(b, key, now)), el("td", { class: "num" }, changeValue(change))];
  }
  const line = (name, value) => [el("span", { class: "muted cost-side" }, name), el("span", { class: "cost-side-value" }, value)];
  return [el("td", { colspan: "3", class: "cost-sides-cell" }, el("div", { class: "cost-sides" },
    ...line("before", totalValue(a, key, before)), ...line("now", totalValue(b, key, now)), ...line("change", changeValue(change))))];
}

/** The sizes each side is counted at: those given in Costs or Run (the model on screen's, passed
 * to the other side's dims by name or by place), then the ones the diff's same_shapes pins so that
 * both take the same input shapes (a batch one side fixes to 1 is 1 on the other). A pin holds on
 * both sides: where one input's batch was fixed, the other inputs naming batch are that batch too
 * (a decoder's mask and caches beside input_ids), else the change would show a cost no edit made. */
export function sizesOfSides(given, shapes) {
  const theirs = (mine) => shapes.names[mine] ?? mine;
  const mineOf = Object.fromEntries(Object.entries(shapes.names).map(([mine, other]) => [other, mine]));
  const pinsTo = { ...shapes.to, ...Object.fromEntries(Object.entries(shapes.from).map(([k, v]) => [theirs(k), v])) };
  const pinsFrom = { ...shapes.from, ...Object.fromEntries(Object.entries(shapes.to).map(([k, v]) => [mineOf[k] ?? k, v])) };
  const to = { ...given, ...pinsTo };
  const from = { ...given };
  for (const [mine, other] of Object.entries(shapes.names)) if (other in to) from[mine] = to[other];
  return { from: { ...from, ...pinsFrom }, to };
}

const sizeWords = (sizes) => Object.entries(sizes).map(([k, v]) => `${k} = ${v}`).join(", ");

/** Which sizes the counts are at, and why they aren't the ones given where the other side fixes them. */
function sizesNote(given, shapes, sideName, d) {
  const pin = (k, v, side) => `${k} = ${v} (${sideName(side)} fixes it${k in given && given[k] !== v ? `; not the ${given[k]} given in Costs` : ""})`;
  const pinned = [
    ...Object.entries(shapes.to).map(([k, v]) => pin(k, v, d.from)),
    ...Object.entries(shapes.from).map(([k, v]) => pin(k, v, d.to)),
  ];
  if (pinned.length) return el("p", { class: "muted", id: "compare-sizes" }, `Both counted at the same input shapes: ${pinned.join("; ")}.`);
  return Object.keys(given).length ? el("p", { class: "muted", id: "compare-sizes" }, `Both counted at the sizes given in Costs: ${sizeWords(given)}.`) : null;
}

/** What each side costs (GET .../stats of both, at the same input shapes) and how it moved. */
function costsSection(d, ctx, sideName) {
  const body = el("div", { class: "muted", id: "compare-costs" }, "Counting…");
  const sec = section("Costs", body);
  const given = ctx.dimSizes ? ctx.dimSizes() : {};
  const shapes = d.same_shapes || { from: {}, to: {}, names: {} };
  const sizes = sizesOfSides(given, shapes);
  Promise.all([[d.from, sizes.from], [d.to, sizes.to]].map(([side, at]) => ctx.actions.loadStatsOf(side.model, side.revision, at))).then(([before, now]) => {
    clear(body);
    body.classList.remove("muted");
    body.append(el("table", { class: "compare-costs" },
      el("thead", {}, el("tr", {}, ["", "before", "now", "change"].map((h, i) => el("th", { class: i ? "num" : "" }, h)))),
      el("tbody", {}, COST_ROWS.map(([key, label]) => {
        const a = totalOf(before, key);
        const b = totalOf(now, key);
        const change = totalChange(a, b, formatOf(key));
        return el("tr", { "data-cost": key, class: change !== "same" && change !== "?" ? "cost-moved" : "" },
          el("td", {}, label), ...costCells(a, b, change, key, before, now));
      }))), ...[sizesNote(given, shapes, sideName, d)].filter(Boolean)); // (DOM append writes a null as "null")
  }).catch((err) => { body.className = "field-error"; body.textContent = `The costs could not be counted: ${err.message || err}`; });
  return sec;
}

/** ", 1 function changed, 1 added" after the node counts (a function's own fields can change
 * with no node of it changing). */
function functionCounts(fns) {
  if (!fns) return "";
  const [changed, added, removed] = [fns.changed, fns.added, fns.removed].map((l) => (l || []).length);
  const parts = [changed ? `${plural(changed, "function")} changed` : "", added ? `${plural(added, "function")} added` : "", removed ? `${plural(removed, "function")} removed` : ""].filter(Boolean);
  return parts.length ? `; ${parts.join(", ")}` : "";
}

/** What Previous/Next step through: the changed and added nodes, into bodies and functions
 * (the graph of each opened for it); where none is on screen, that Next opens the first's. */
function stepWords(n, ctx) {
  const here = ctx.graph ? ctx.graph.path ?? "" : null;
  const ids = [...n.changed, ...n.added].map((x) => x.node);
  const inside = ids.some((id) => graphPathOf(id) !== "");
  if (here === null || !ids.length || ids.some((id) => graphPathOf(id) === here)) {
    return `through the changed and added nodes${inside ? ", into the bodies and functions that hold them" : " on the drawing"}`;
  }
  return "none of the changed or added nodes is in the graph on screen: Next opens the graph of the first";
}

// a comparison with an unrelated model adds every one of its nodes: thousands of items (a
// 242,000 px panel) — the first ones, then the rest on asking
const LIST_FIRST = 50;

/** A list of `items` drawn by `render`: the first LIST_FIRST, then a button for the others. */
function cappedList(tag, attrs, items, render) {
  const list = el(tag, attrs, items.slice(0, LIST_FIRST).map(render));
  if (items.length <= LIST_FIRST) return list;
  const more = el("button", { type: "button", class: "linklike compare-more" }, `Show all ${formatInteger(items.length)}`);
  more.addEventListener("click", () => {
    const added = items.slice(LIST_FIRST).map(render);
    list.append(...added);
    more.remove(); // it had the focus: the first item shown now takes it, where the reader goes on
    const first = added[0];
    let next = first.matches("a, button") ? first : first.querySelector("a, button");
    if (!next) { first.tabIndex = -1; next = first; } // a line of text: focusable by script only
    next.focus();
  });
  return el("div", {}, list, more);
}

/** "2 nodes changed (and the 2 holding them)": an If or Loop whose only change is in its
 * bodies is counted apart from the nodes changed there (QA35 #10: 4 "changed" for 2 renames). */
function changedWords(changed) {
  const holders = changed.filter((c) => (c.fields || []).length && c.fields.every((f) => f.startsWith("subgraph "))).length;
  const own = changed.length - holders;
  return `${plural(own, "node")} changed${holders ? ` (and the ${holders === 1 ? "one" : holders} holding them)` : ""}`;
}

/** " (20 of them QuantizeLinear/DequantizeLinear, …)": a quantization's added pairs, which the
 * drawing shows on the edges and weight lines they quantize, not as (green) boxes (QA30). */
function qdqWords(added) {
  const qdq = added.filter((a) => (a.op_type === "QuantizeLinear" || a.op_type === "DequantizeLinear") && !a.domain).length;
  if (!qdq) return "";
  return ` (${qdq === added.length ? "all" : `${qdq} of them`} QuantizeLinear/DequantizeLinear: drawn on the edges and weights they quantize, not as boxes)`;
}

function result(root, d, ctx) {
  const n = d.nodes;
  // another model of this one's name (a copy uploaded again) by its id too, as the picker names it
  const sideName = (s) => (s.model === ctx.modelId ? `revision ${s.revision}`
    : s.name === ctx.summary.name ? `${s.name} (model ${s.model}, revision ${s.revision})` : `${s.name} (revision ${s.revision})`);
  const stepper = el("div", { class: "ed-row compare-step" },
    el("button", { type: "button", class: "btn btn-small", id: "compare-prev", onclick: () => ctx.actions.stepCompare(-1) }, "‹ Previous"),
    el("button", { type: "button", class: "btn btn-small", id: "compare-next", onclick: () => ctx.actions.stepCompare(1) }, "Next ›"),
    el("span", { class: "muted", id: "compare-step-note" }, stepWords(n, ctx)));
  root.append(...[
    el("p", { class: "compare-summary", id: "compare-summary" }, d.same ? "The two are the same model."
      : d.same_content ? "The two hold the same model: only how its tensors are stored differs (raw bytes or typed fields, inside the file or beside it)." : [
      `From ${sideName(d.from)} to ${sideName(d.to)}: `,
      `${changedWords(n.changed)}, ${n.added.length} added${qdqWords(n.added)}, ${n.removed.length} removed`,
      opsetWords(d.model),
      functionCounts(d.functions),
      d.tensors.changed.length ? `, ${plural(d.tensors.changed.length, "tensor")} with other values` : "",
      d.tensors.added.length ? `, ${plural(d.tensors.added.length, "tensor")} added` : "",
      d.tensors.removed.length ? `, ${plural(d.tensors.removed.length, "tensor")} removed` : "",
      // a re-export's tensors spelled anew: listed under Tensors, no node changed for them
      d.tensors.renamed_count ? `, ${plural(d.tensors.renamed_count, "tensor")} renamed` : "",
      ` (${d.ms} ms).`].join("")),
    n.changed.length || n.added.length ? el("div", { class: "compare-legend" },
      el("span", { class: "compare-key diff-changed" }, "changed"), el("span", { class: "compare-key diff-added" }, "added")) : null,
    n.changed.length || n.added.length ? stepper : null,
    ctx.actions.loadStatsOf ? costsSection(d, ctx, sideName) : null,
    n.changed.length ? section("Changed nodes", cappedList("ol", { class: "compare-list", id: "compare-changed" }, n.changed, (c) => changedItem(c, ctx, d))) : null,
    n.added.length ? section("Added nodes", cappedList("ul", { class: "compare-list", id: "compare-added" }, n.added, (a) => el("li", { "data-node": a.node, class: currentClass(ctx, a.node).trim() || null }, nodeLink(ctx, a.node, nodeLabel(a.name, a.node)), " ", mono(a.op_type), ...placeNote(a.node, d, "path")))) : null,
    n.removed.length ? section("Removed nodes", cappedList("ul", { class: "compare-list", id: "compare-removed" }, n.removed, (r) => el("li", {}, nodeLabel(r.name, r.node), " ", mono(r.op_type), ...placeNote(r.node, d, "other")))) : null,
    pairs("Tensors", d.tensors, (x) => x),
    pairs("Graph inputs", d.inputs, (x) => x),
    pairs("Graph outputs", d.outputs, (x) => x),
    functionsSection(d.functions, ctx),
    metadataLines(d.metadata),
    modelLines(d.model)].filter((x) => x !== null));
}

/** Fill `root` (the sidebar) with the compare panel; ctx.compare: {choice, diff} when a comparison is on. */
export function renderComparePanel(root, ctx) {
  clear(root);
  const body = el("div", { class: "compare-body", id: "compare-body" });
  root.append(
    el("header", { class: "panel-head" },
      el("div", { class: "panel-kicker" }, "Compare"),
      el("h2", { class: "panel-title" }, "What differs"),
      el("div", { class: "panel-subtitle" }, `from another revision or model to revision ${ctx.summary.revision} on screen`)),
    el("section", { class: "panel-section" },
      picker(ctx, (choice) => ctx.actions.compareWith(choice)),
      ctx.compare ? el("button", { type: "button", class: "btn btn-small", id: "compare-stop", onclick: () => ctx.actions.compareWith(null) }, "Stop comparing") : null,
      body));
  if (ctx.compare && ctx.compare.error) body.append(el("div", { class: "field-error" }, ctx.compare.error));
  else if (ctx.compare && ctx.compare.diff) {
    result(body, ctx.compare.diff, ctx);
    body.dataset.ready = "true";
  } else if (ctx.compare) body.append(el("div", { class: "muted" }, "Comparing…"));
  else body.append(el("p", { class: "muted" }, "Choose a revision or a model: what was added or changed is marked on the drawing."));
}
