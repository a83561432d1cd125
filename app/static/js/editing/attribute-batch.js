// The attribute changes typed in a node's panel and not yet saved. Each attribute row (and the
// "Add attribute" form) is a form of its own, yet some changes take two attributes at once: a
// MaxPool's kernel_shape 2 -> 3 keeps its output's size only with pads 0 -> 1, and each alone is
// refused. So any Save (or Enter, or a Delete) in a node's attributes sends every change pending
// there as ONE edit: one revision, applied by the server whole or not at all. The changed fields
// are marked, their Save buttons say "Save 2 changes", and a bar under the list names them with
// a Discard. What is typed and not saved stays when the person looks elsewhere (another node,
// a refusal's "Show the node ›", an edit saved elsewhere) and comes back to this node, as long
// as the model still holds the value it was typed over.
import { el } from "../widgets/dom.js";
import { fieldError, showError } from "../widgets/ui.js";
import { runForm } from "./edit-forms.js";

/**
 * One attribute field of the panel.
 * @typedef {object} Pending
 * @property {string} name the attribute it sets
 * @property {boolean} [isNew] an attribute the node doesn't set yet (the Add attribute form)
 * @property {HTMLElement} mark marked (class attr-changed) while its field holds a change
 * @property {HTMLButtonElement} button its Save button, which says how many changes it saves
 * @property {string} label that button's own text
 * @property {HTMLButtonElement} [del] its Delete button, which saves the other changes too
 * @property {HTMLElement} [error] its error box, cleared when its change is discarded
 * @property {() => boolean} changed whether its field differs from what the model holds
 * @property {() => object} op its set_attribute op (throws when what is typed is no value)
 * @property {() => void} discard its field back to what the model holds
 * @property {() => void} settle what its field holds is now what the model holds
 * @property {() => string} [typed] what its field holds (an existing attribute's: kept as a draft)
 * @property {() => string} [held] what the model holds, as its field shows it
 * @property {(text: string) => void} [retype] put a draft back in its field
 */

const batches = new WeakMap(); // a node panel's context (a new one each time it is drawn) -> its batch

/** Unsaved values of the page's node panels: "<node id>|<op>|<name>" -> attribute -> {text typed,
 * the value it was typed over}: after an edit elsewhere a draft comes back only where the node
 * still holds that value (a node id may name another node after an insertion: op and name too). */
const drafts = new Map();

/** The batch of the node panel whose context is `ctx` (the panel's own, made as it is drawn). */
export function attributeBatch(node, ctx) {
  let batch = batches.get(ctx);
  if (!batch) {
    batch = makeBatch(node, ctx);
    batches.set(ctx, batch);
  }
  return batch;
}

function makeBatch(node, ctx) {
  /** @type {Pending[]} */
  const entries = [];
  const words = (e) => (e.isNew ? `${e.name} (new)` : e.name);
  const pendingOnes = () => entries.filter((e) => e.changed());
  const draftKey = `${node.id}|${node.op_type}|${node.name || ""}`;

  /** The drafts of the fields followed so far, as their fields hold them now. */
  const keepDrafts = () => {
    const kept = drafts.get(draftKey) || new Map();
    for (const e of entries) {
      if (!e.typed) continue;
      if (e.changed()) kept.set(e.name, { text: e.typed(), was: e.held ? e.held() : "" });
      else kept.delete(e.name);
    }
    if (kept.size) drafts.set(draftKey, kept);
    else drafts.delete(draftKey);
  };

  const text = el("span", { class: "attr-batch-text" });
  const saveAll = el("button", { type: "button", class: "btn btn-small btn-primary attr-batch-save" }, "Save");
  const discard = el("button", { type: "button", class: "btn btn-small attr-batch-discard", title: "Put every changed field back to the value the model holds" }, "Discard");
  const barError = fieldError();
  const bar = el("div", { class: "attr-batch", role: "status", hidden: true },
    el("div", { class: "attr-batch-row" }, text, el("span", { class: "attr-batch-actions" }, saveAll, discard)), barError);

  /** Where a save's controls are disabled meanwhile: the attributes section `at` is in. */
  const scope = (at) => at.closest(".panel-section") || at;

  const refresh = () => {
    keepDrafts();
    const pending = pendingOnes();
    const n = pending.length;
    const names = pending.map(words).join(", ");
    for (const e of entries) {
      const on = pending.includes(e);
      e.mark.classList.toggle("attr-changed", on);
      e.button.textContent = on && n > 1 ? `Save ${n} changes` : e.label;
      const others = pending.filter((p) => p !== e).map(words).join(", ");
      e.button.title = others ? `Saves ${on ? `${words(e)} with ${others}` : others} as one edit` : "";
      if (e.del) e.del.title = others ? `Delete ${e.name}, saving ${others} in the same edit` : e.del.dataset.title || "";
    }
    if (!n) {
      bar.hidden = true;
      showError(barError, "");
      return;
    }
    if (!bar.isConnected) { // under the list of attributes (a node with none has no list: its one new field says it all)
      const list = entries.map((e) => e.mark.closest(".attrs")).find(Boolean);
      if (list) list.after(bar);
    }
    bar.hidden = false;
    text.textContent = `Not saved: ${names}`;
    saveAll.hidden = n < 2; // one change: its own Save is right beside it
    saveAll.textContent = `Save ${n} changes`;
    discard.textContent = n > 1 ? "Discard them" : "Discard";
  };

  /** An op of `e` for a batch of `count`: a value that can't be read names its attribute. */
  const opOf = (e, count) => {
    try {
      return e.op();
    } catch (err) {
      throw count > 1 ? new Error(`${e.name}: ${err.message}`, { cause: err }) : err;
    }
  };

  /**
   * Save the pending changes as one edit, with `from`'s own even when its field is unchanged and
   * nothing else is pending (the server then says nothing changed), and `own` (a deletion) last.
   * Throws a value that can't be read, naming its attribute, or the server's refusal.
   * @param {Pending | null} from @param {{op: string, name: string} | null} [own]
   */
  const save = async (from, own = null) => {
    const others = entries.filter((e) => e !== from && e.changed());
    // a field's value goes with its own Save; not with its Delete
    const list = entries.filter((e) => (e === from ? !own && (e.changed() || !others.length) : others.includes(e)));
    const count = list.length + (own ? 1 : 0);
    const ops = list.map((e) => opOf(e, count));
    if (own) ops.push(own);
    await ctx.actions.edit(ops); // a refusal of one op names its attribute ("attribute 'pads' of node …")
    // a panel drawn again is a new batch; one left on screen (nothing changed) holds the model's values
    for (const e of list) e.settle();
    refresh();
  };

  /** A field edited: a refusal shown is of changes since edited (the next save sends them all). */
  const changed = () => {
    for (const e of entries) if (e.error) showError(e.error, "");
    showError(barError, "");
    refresh();
  };

  saveAll.addEventListener("click", () => runForm(scope(bar), barError, () => save(null)));
  discard.addEventListener("click", () => {
    for (const e of pendingOnes()) {
      e.discard();
      if (e.error) showError(e.error, "");
    }
    refresh();
  });

  return {
    /** Follow one more field; `watch` are its controls, whose edits refresh the marks. */
    track(/** @type {Pending} */ entry, /** @type {HTMLElement[]} */ watch) {
      entries.push(entry);
      const draft = entry.retype ? (drafts.get(draftKey) || new Map()).get(entry.name) : undefined;
      if (draft !== undefined && draft.was === (entry.held ? entry.held() : "")) {
        entry.retype(draft.text);
        queueMicrotask(refresh); // the bar goes under the list, which holds the row once the panel is drawn
      }
      if (entry.del) entry.del.dataset.title = entry.del.title;
      for (const control of watch) {
        control.addEventListener("input", changed);
        control.addEventListener("change", changed);
      }
      refresh();
    },
    refresh,
    save,
    /** Save from the row `at` (`from`: its field, if it has one): the section's controls
     * disabled meanwhile, a refusal shown in `error`; `own`: the row's deletion. */
    submit(/** @type {HTMLElement} */ at, /** @type {Pending | null} */ from, /** @type {HTMLElement} */ error, own = null) {
      return runForm(scope(at), error, () => save(from, own));
    },
  };
}
