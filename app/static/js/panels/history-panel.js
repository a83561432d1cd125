// The history panel (toolbar "History"): every revision of the model from GET .../revisions,
// newest first, each with its edit ops in words and the server's account of what changed; the
// current revision marked, where the others stand (undo reaches them, redo reaches them, or a
// branch left behind by an edit after an undo), Undo/Redo, and a download of any revision and of
// the recipe that leads to it (its edits from the original, for `onnx-studio apply`), and "Apply
// recipe…": such a recipe, made on another export of the model, replayed here.
import { el, clear } from "../widgets/dom.js";
import { formatDate, plural, shortDate } from "../lib/format.js";
import { ApiError } from "../lib/api.js";
import { tag } from "../widgets/ui.js";
import { addressWords } from "../lib/address.js";
import { canEdit, disclosure, editForm, submit } from "../editing/edit-forms.js";
import { smokeRunFailsTitle } from "../lib/smoke-run.js";

function short(value, max = 60) {
  let text;
  if (value === null || value === undefined) text = "null";
  else if (typeof value === "string") text = JSON.stringify(value);
  else text = JSON.stringify(value, (k, v) => (typeof v === "bigint" ? v.toString() : v));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function shapeWords(shape) {
  if (shape === null || shape === undefined) return "unknown rank";
  return `[${shape.map((d) => (d === null ? "?" : String(d))).join(", ")}]`;
}

function valueWords(value) {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    if ("npy" in value) return "an uploaded .npy file";
    if ("values" in value) {
      // a few values are shown as they are (a flag's false, a K of 5); more by their type
      const shape = value.shape || [];
      const few = Array.isArray(value.values) && value.values.length <= 4 ? (shape.length ? short(value.values, 40) : short(value.values[0], 40)) : null;
      const type = `${value.dtype || ""} ${shape.length ? shapeWords(shape) : "scalar"}`.trim();
      return few ? `${few} (${type})` : `${type} typed values`;
    }
  }
  return short(value);
}

function targetWords(target) {
  if (target === undefined || target === null || target === "model") return "the model";
  if (target === "" || target === "graph") return "the main graph";
  if (/(^|\/)(n\d+|@[^/]+)$/.test(target)) return `node ${target}`; // by position or by name
  return `graph ${target}`;
}

// how the server's account of a change names a node: node "conv1" (Conv), node n213 (Conv)
const NODE_IN_CHANGE = /node (?:"(?:[^"\\]|\\.)*"|\S+) \([^)]*\)/;

/** ", left in float: a, b" of the nodes or ops a conversion leaves out, or "". */
function leftOut(names) {
  return names && names.length ? `, left in float: ${names.map((x) => short(x, 40)).join(", ")}` : "";
}

/** One edit op in plain words; `change` (the server's line for it) lends the node's name and op;
 * an op of a body says which ("in while/body"). */
export function describeOp(op, change = "") {
  const o = op || {};
  const words = opWords(o, change);
  return typeof o.graph === "string" && o.graph ? `${words} in ${addressWords(o.graph)}` : words;
}

function opWords(o, change) {
  const found = NODE_IN_CHANGE.exec(change);
  const nodeWords = (id) => (found ? found[0] : `node ${id}`);
  switch (o.op) {
    case "set_metadata":
      return o.value === null ? `Delete metadata ${short(o.key)} of ${targetWords(o.target)}`
        : `Set metadata ${short(o.key)} of ${targetWords(o.target)} to ${short(o.value)}`;
    case "set_model_field": return `Set the model's ${o.field} to ${short(o.value)}`;
    case "set_attribute": return `Set attribute ${o.name} of ${nodeWords(o.node)} to ${valueWords(o.value)}`;
    case "set_attribute_items": return o.items.length === 1
      ? `Set ${o.name}[${o.items[0].index}] of ${nodeWords(o.node)} to ${valueWords(o.items[0].value)}`
      : `Set ${o.items.length} items of ${o.name} of ${nodeWords(o.node)}`;
    case "delete_attribute": return `Delete attribute ${o.name} of ${nodeWords(o.node)}`;
    case "rename_node": return `Rename ${nodeWords(o.node)} to ${short(o.name)}`;
    case "rename_tensor": return `Rename tensor ${short(o.from)} to ${short(o.to)}`;
    case "fix_dims": return `Fix ${Object.entries(o.dims || {}).map(([d, n]) => `${d} = ${n}`).join(", ")}`;
    case "rename_dim": return `Rename dim ${short(o.from)} to ${short(o.to)}${o.graph ? ` in ${short(o.graph)}` : ""}${o.merge ? " (merged with the one of that name)" : ""}`;
    case "set_io_shape": return `Set ${short(o.name)} to ${o.dtype ? `${o.dtype} ` : ""}${shapeWords(o.shape)}${o.cast ? ", the graph kept in its own type by a Cast" : ""}`;
    case "add_output": return `Make ${short(o.tensor)} a graph output`;
    case "remove_output": return `Remove graph output ${short(o.name)}`;
    case "add_input": return `Add graph input ${short(o.name)} (${o.dtype} ${shapeWords(o.shape)})`;
    case "remove_input": return `Remove graph input ${short(o.name)}`;
    case "freeze_input": return `Fix graph input ${short(o.name)} to ${valueWords(o.value)}`;
    case "delete_node": return `Delete ${nodeWords(o.node)}${o.reconnect ? ", reconnecting its readers" : ""}`;
    case "insert_node": {
      const where = o.consumers ? `before node${o.consumers.length > 1 ? "s" : ""} ${o.consumers.join(", ")} on ${short(o.tensor)}` : `after ${short(o.tensor)}`;
      return `Insert ${o.domain ? `${o.domain}.` : ""}${o.op_type}${o.name ? ` ${short(o.name)}` : ""} ${where}`;
    }
    case "set_node_op": return `Change ${nodeWords(o.node)} to ${o.domain ? `${o.domain}.` : ""}${o.op_type}`;
    case "set_initializer": return `Replace the values of initializer ${short(o.name)} with ${valueWords(o.value)}${o.allow_type_change ? " (type/shape may change)" : ""}`;
    case "add_initializer": return `Add initializer ${short(o.name)} (${valueWords(o.value)})`;
    case "delete_initializer": return `Delete initializer ${short(o.name)}`;
    case "infer_shapes": return "Run shape inference and store its value_info";
    case "cleanup": {
      const parts = [["nodes", "dead nodes"], ["initializers", "unused initializers"], ["value_info", "stale value_info"]]
        .filter(([k]) => o[k] !== false).map(([, w]) => w);
      if (o.unread_inputs) parts.push("inputs nothing reads");
      return `Clean up ${parts.join(", ") || "nothing"}`;
    }
    case "extract_subgraph": return `Extract the subgraph from ${(o.inputs || []).map((x) => short(x)).join(", ") || "(no inputs)"} to ${(o.outputs || []).map((x) => short(x)).join(", ")}`;
    case "convert_opset": return `Convert ${o.domain && o.domain !== "ai.onnx" ? `${o.domain} ` : ""}to opset ${o.version}`;
    case "restore_revision": return `Restore revision ${o.revision}`;
    case "write_out": {
      const what = [...(o.op_types || []).map((t) => `every ${t}`), ...(o.nodes || []).map((n) => `node ${short(addressWords(n))}`)];
      return `Write out ${what.join(", ") || "nothing"} as primitive operators`;
    }
    case "unroll_loop": return `Unroll ${found ? found[0] : `node ${short(addressWords(o.node))}`}`;
    case "add_node": {
      const writes = (o.outputs || []).map((x) => short(x)).join(", ");
      return `Add ${o.domain ? `${o.domain}.` : ""}${o.op_type}${o.name ? ` ${short(o.name)}` : ""}${writes ? ` writing ${writes}` : ""}`;
    }
    case "set_node_input": return `Connect input ${o.index} of ${nodeWords(o.node)} to ${short(o.tensor) || "nothing"}`;
    case "compose": return `Add the graph of another model ${o.position === "before" ? "before" : "after"} this one${o.prefix ? ` (names prefixed ${short(o.prefix)})` : ""}`;
    case "simplify": return "Simplify (fold constants, fuse, drop what nothing reads)";
    case "convert_float16": return `Convert to float16${leftOut([...(o.op_block_list || []), ...(o.node_block_list || [])])}${o.keep_io_types === false ? ", inputs and outputs too" : ""}`;
    case "quantize_dynamic": return `Quantize dynamically to ${o.weight_type || "QInt8"}${o.op_types ? ` (${o.op_types.join(", ")})` : ""}${leftOut(o.nodes_to_exclude)}`;
    case "quantize_static": return `Quantize statically (${o.quant_format || "QDQ"}, ${o.weight_type || "QInt8"} weights)${leftOut(o.nodes_to_exclude)}`;
    case "quantize_weights": return `Quantize weights to ${o.bits || 4} bits${leftOut(o.nodes_to_exclude)}`;
    default: return `${o.op || "edit"} ${short(o, 80)}`;
  }
}

const PICKED_MAX = 80; // characters of a revision's label in a picker

// how a picker marks a revision off the head's line (undo reaches the rest)
// ("left behind", not "other branch": a merged decoder's If has branches of its own — QA31)
const OFF_LINE = { redo: " (undone)", branch: " (left behind)" };

/** A revision as Run's and Compare's pickers list it: its number, whether it was undone or
 * left behind by an edit after an undo (`where`: its standing), and what made it (the first edit in plain
 * words, how many more); `title` holds them all. */
export function revisionChoice(r, where = "") {
  const ops = r.ops || [];
  const all = ops.map((op, i) => describeOp(op, (r.changes || [])[i] || ""));
  let what = r.revision === 0 ? "as opened" : all.length ? all[0] : "";
  if (what.length > PICKED_MAX) what = `${what.slice(0, PICKED_MAX - 1)}…`;
  const more = all.length > 1 ? ` (+${all.length - 1} more)` : "";
  return { text: `Revision ${r.revision}${OFF_LINE[where] || ""}${what ? `: ${what}${more}` : ""}`, title: all.join("\n") || null };
}

/** Where each revision stands relative to the current one ("current", "undo", "redo", "branch"). */
export function standing(revisions, head) {
  const byRev = new Map(revisions.map((r) => [r.revision, r]));
  const ancestors = new Set();
  for (let r = byRev.get(head); r && r.parent !== null && r.parent !== undefined; r = byRev.get(r.parent)) ancestors.add(r.parent);
  const descends = (r) => {
    for (let p = r; p; p = byRev.get(p.parent)) if (p.parent === head) return true;
    return false;
  };
  const out = new Map();
  for (const r of revisions) {
    if (r.revision === head) out.set(r.revision, "current");
    else if (ancestors.has(r.revision)) out.set(r.revision, "undo");
    else if (descends(r)) out.set(r.revision, "redo");
    else out.set(r.revision, "branch");
  }
  return out;
}

const STANDING = {
  current: ["current", "tag-set", "The model's current revision: edits, undo and redo start here"],
  // the usual case, untagged (QA28: "undo reaches it" on every past revision said nothing)
  undo: [null, "", "An earlier state: Undo goes back to it"],
  redo: ["redo reaches it", "tag-ref", "Undone: Redo brings it back"],
  branch: ["left behind", "tag-warn", "Left behind when an edit followed an undo: Undo/Redo no longer reach it, but it can be downloaded"],
};

// stored past a gate (allow_invalid, or a background check that came late): say so, and why
function validityTag(v) {
  const invalid = v.invalid || [];
  if (invalid.length) {
    const t = tag("stored invalid", "hist-tag hist-invalid tag-bad");
    t.title = invalid.join("\n");
    return t;
  }
  if (v.runtime && v.runtime.status === "fails") {
    const t = tag(v.runtime.guessed ? "smoke run fails" : "onnxruntime fails", "hist-tag hist-runtime tag-warn");
    t.title = v.runtime.guessed ? smokeRunFailsTitle(v.runtime.message) : v.runtime.message || "";
    return t;
  }
  return null;
}

// whether it gives the outputs kept for the model's reference cases (known once checked)
function referenceTag(v) {
  if (v.reference === "passed") {
    const t = tag("outputs as kept", "hist-tag hist-reference tag-set");
    t.title = "Gives the outputs of the model's reference cases";
    return t;
  }
  if (v.reference === "failed") {
    const t = tag("outputs differ", "hist-tag hist-reference tag-warn");
    t.title = "Does not give the outputs of the model's reference cases: open it and see the model panel's Validation";
    return t;
  }
  return null;
}

// a word as both accounts spell it: "renamed"/"rename", "places"/"place", "[1, 1]"/"[1,1]"
const stem = (w) => w.replace(/s$/, "").replace(/ed$/, "").replace(/e$/, "");
const wordSet = (text) => new Set((text.toLowerCase().match(/[\p{L}\p{N}_./-]+/gu) || []).map((w) => stem(w.replace(/\.+$/, ""))));

/** Whether the server's account of an edit says something its description doesn't ("(2
 * places)", what a cleanup removed): the same words in another order are said once (QA34). */
function saysMore(change, described) {
  if (!change) return false;
  const said = wordSet(described);
  return [...wordSet(change)].some((w) => !said.has(w));
}

/** "Redone by Ben, 6 Dec, 20:16" / "Stepped back to here by Ana (an undo from revision 3), …". */
function movedLine(moved) {
  const by = moved.by ? ` by ${moved.by}` : "";
  const words = moved.how === "redo" ? `Redone${by}` : `Stepped back to here${by} (an undo from revision ${moved.from})`;
  return el("div", { class: "muted hist-moved", title: formatDate(moved.at) }, `${words}, ${shortDate(moved.at)}`);
}

function revisionItem(r, where, ctx, name) {
  const [label, cls, title] = STANDING[where];
  const ops = r.ops || [];
  const changes = r.changes || [];
  const item = el("li", { class: `hist-item hist-${where}${r.revision === ctx.viewing ? " hist-on-screen" : ""}`, "data-revision": r.revision, "aria-current": where === "current" ? "true" : null },
    el("div", { class: "hist-head" },
      el("strong", { class: "hist-rev" }, `Revision ${r.revision}`),
      label ? tag(label, `hist-tag ${cls}`.trim()) : null,
      r.revision === ctx.viewing ? tag("on screen", "hist-tag hist-viewing tag-warn") : null,
      validityTag(r.validation || {}),
      referenceTag(r.validation || {}),
      // where it branches off: said on every revision of a branch (the one after the fork too), and where a line skips
      r.parent !== null && r.parent !== undefined && (r.parent !== r.revision - 1 || where === "branch") ? el("span", { class: "muted hist-parent" }, `after revision ${r.parent}`) : null,
      el("span", { class: "hist-time muted" }, formatDate(r.created), r.author ? el("span", { class: "hist-author", title: "The name given at sign-in (or a script's X-Studio-Author)" }, ` · ${r.author}`) : null)),
    r.recipe ? el("div", { class: "hist-recipe-tag muted", title: r.recipe.origin ? `Replays ${r.recipe.origin}` : "" },
      `Recipe ${r.recipe.name} · batch ${r.recipe.batch} of ${r.recipe.batches}`) : null,
    r.revision === 0 || (r.parent === null && !ops.length)
      // a model made from another's revision (a split's part) says so (QA39 #8), an upload "Opened"
      ? el("div", { class: "hist-ops muted" }, r.revision === 0 && changes.length ? changes[0] : `Opened ${name}`)
      : el("ol", { class: "hist-ops" }, ops.map((op, i) => el("li", { class: "hist-op", "data-op": op.op },
        el("div", {}, describeOp(op, changes[i] || "")),
        saysMore(changes[i], describeOp(op, changes[i] || "")) ? el("div", { class: "hist-change muted" }, changes[i]) : null))));
  item.title = title;
  const recipe = r.revision === 0 ? null : el("a", {
    class: "linklike hist-recipe",
    href: ctx.recipeHref({ from: 0, to: r.revision }),
    download: "",
    title: "The edits from the original up to this revision, as JSON: `onnx-studio apply MODEL.onnx RECIPE.json -o OUT.onnx` replays them on the next export of the model",
  }, "Download recipe");
  // any revision can be looked at (read-only unless it is the current one) and compared with
  // (the page may show an older head than the list, changed elsewhere meanwhile: "Show it")
  const onScreen = r.revision === (ctx.summary || {}).revision;
  const past = ctx.viewing !== null && ctx.viewing !== undefined;
  const view = onScreen ? null : el("a", {
    class: "linklike hist-view", href: ctx.revisionHref(r.revision),
    title: where === "current" ? "The current revision, where edits are made" : "Show this revision as it was, read-only",
  }, where !== "current" ? "View" : past ? "Back to it" : "Show it");
  const compare = onScreen ? null : el("button", {
    type: "button", class: "linklike hist-compare", title: "What differs between this revision and the one on screen",
    onclick: () => ctx.actions.openCompare(r.revision),
  }, "Compare");
  // what it holds made the head again (a new revision): for any but the current one
  const restore = where === "current" ? null : el("button", {
    type: "button", class: "linklike hist-restore", title: "Make what this revision holds the current model again: a new revision, the ones between kept",
    onclick: () => ctx.actions.restore(r.revision),
  }, "Restore");
  item.append(el("div", { class: "hist-actions" }, view, compare, restore,
    el("a", { class: "linklike hist-download", href: ctx.downloadHref({ revision: r.revision }), download: "" }, "Download"),
    recipe));
  return item;
}

/** "Revisions 5–8", "revision 5": the revisions a recipe made. */
function revisionsWords(revisions) {
  return revisions.length === 1 ? `revision ${revisions[0]}` : `revisions ${revisions[0]}–${revisions[revisions.length - 1]}`;
}

/** What applying a recipe did, in one line. */
function recipeWords(answer) {
  const skipped = answer.skipped ? ` (${plural(answer.skipped, "batch", "batches")} changed nothing)` : "";
  if (!answer.revisions.length) return `Nothing changed: the model already holds every batch of the recipe${skipped}.`;
  // nodes the export names otherwise, found by what they read: said, the edit went there
  const moved = (answer.moved || []).length ? ` Found elsewhere: ${answer.moved.join("; ")}.` : "";
  return `Recipe applied: ${plural(answer.batches, "batch", "batches")} as ${revisionsWords(answer.revisions)}${skipped}; History's “Undo the recipe” takes them all back at once, Undo one batch at a time.${moved}`;
}

/** "Apply recipe…": a .recipe.json (Download recipe, on another export of the model) replayed on
 * the current revision; the page then shows the revision it ends at. */
function applyRecipeForm(ctx) {
  const file = el("input", { type: "file", name: "recipe", accept: ".json,application/json", "aria-label": "Recipe file (.recipe.json)" });
  const status = el("div", { class: "muted ed-hint hist-apply-status", role: "status", hidden: true });
  const say = (text) => { status.textContent = text; status.hidden = !text; };
  const { form } = editForm("hist-apply-recipe", [
    el("p", { class: "ed-hint muted" }, "Replays a recipe (Download recipe, on another export of this model) on the current revision: each of its batches becomes a revision, checked as an edit is; nothing is kept unless every batch passes."),
    el("div", { class: "ed-row" }, file, submit("Apply")),
    status,
  ], async () => {
    const chosen = file.files && file.files[0];
    if (!chosen) throw new Error("Choose a .recipe.json file.");
    say("Uploading the recipe…");
    try {
      // the page goes on at the last revision it made (the panel is drawn anew: the toast says it)
      const answer = await ctx.actions.applyRecipe(chosen,
        (sent) => say(sent < 1 ? `Uploading the recipe… ${Math.round(sent * 100)} %` : "Replaying its batches, each checked as an edit is…"),
        recipeWords);
      say(recipeWords(answer));
    } catch (err) {
      say("");
      // all or nothing: a refusal stored no batch, whichever batch it names
      throw new ApiError(`Not applied: ${err.message || err}`, err.status, err.code, err.details || [], err.node || "");
    }
  });
  return form;
}

/** "Undo the recipe (4 revisions)" when the head is the last batch of a recipe applied here and
 * the revisions before it are the rest of that run (QA27: undoing one took an Undo a batch). */
function recipeUndo(revisions, head, ctx) {
  const byNumber = new Map(revisions.map((r) => [r.revision, r]));
  const last = byNumber.get(head);
  const run = last && last.recipe;
  if (!run || run.batch !== run.batches) return null;
  let r = last;
  for (let k = run.batches; k > 1; k -= 1) {
    r = byNumber.get(r.parent);
    if (!r || !r.recipe || r.recipe.run !== run.run || r.recipe.batch !== k - 1) return null;
  }
  const words = `the recipe ${run.name} (${run.batches === 1 ? "1 revision" : `${run.batches} revisions`})`;
  return el("button", {
    type: "button", class: "btn btn-small", id: "history-undo-recipe",
    title: `Back to revision ${r.parent}, before the recipe, in one step`,
    onclick: () => ctx.actions.undoSteps(run.batches, words),
  }, run.batches === 1 ? "Undo the recipe" : `Undo the recipe (${run.batches} revisions)`);
}

/** Fill `root` (the sidebar) with the history panel; the revisions are fetched. */
export function renderHistoryPanel(root, ctx) {
  clear(root);
  const summary = ctx.summary || {};
  const list = el("ol", { class: "hist-list", id: "history-list", reversed: true });
  const status = el("div", { class: "muted hist-status" }, "Loading the revisions…");
  const past = ctx.viewing !== null && ctx.viewing !== undefined;
  const undo = el("button", { type: "button", class: "btn btn-small", id: "history-undo", disabled: past || !summary.can_undo, onclick: () => ctx.actions.undo() }, "Undo");
  const redo = el("button", { type: "button", class: "btn btn-small", id: "history-redo", disabled: past || !summary.can_redo, onclick: () => ctx.actions.redo() }, "Redo");
  root.append(
    el("header", { class: "panel-head" },
      el("div", { class: "panel-kicker" }, "History"),
      el("h2", { class: "panel-title" }, "Revisions"),
      el("div", { class: "panel-subtitle" }, past ? `now at revision ${summary.head}; revision ${summary.revision} on screen` : `now at revision ${summary.revision ?? "?"}`)),
    el("section", { class: "panel-section hist-section" },
      el("div", { class: "ed-row hist-controls" }, undo, redo,
        el("span", { class: "muted ed-hint" }, "Each edit makes a revision; undo and redo move between them. View shows any revision as it was.")),
      past || !canEdit(ctx) ? null : el("div", { class: "hist-controls" }, disclosure("Apply recipe…", () => applyRecipeForm(ctx), {
        cls: "hist-apply-toggle", title: "Replay the edits of a .recipe.json (Download recipe on another export of this model) here",
      })),
      status, list));
  ctx.actions.loadRevisions().then((data) => {
    const revisions = [...(data.revisions || [])].sort((a, b) => b.revision - a.revision);
    const where = standing(revisions, data.head);
    status.remove();
    list.append(...revisions.map((r) => revisionItem(r, where.get(r.revision), ctx, summary.name || "the model")));
    // who moved the head here (an undo or a redo: the revision stays its author's, QA38 #10)
    const moved = data.moved && list.querySelector(`li[data-revision="${data.moved.to}"] .hist-head`);
    if (moved) moved.after(movedLine(data.moved));
    const whole = past || !canEdit(ctx) ? null : recipeUndo(revisions, data.head, ctx);
    if (whole) undo.after(whole);
    list.dataset.ready = "true";
  }).catch((err) => {
    status.className = "field-error";
    status.textContent = `The revisions could not be loaded: ${err.message || err}`;
  });
}
