// What a person typed in a panel, kept across its redraw. An edit refused because the model
// moved on elsewhere (a 409) redraws the panel from the newer revision (a panel left as it was
// showed the old node's name under a drawing of the new one, QA pass 18): the fields the person
// typed in are found again in the new drawing and given what they held, and the form the edit
// was sent from is known by its successor, so the refusal is said where it was asked.
import { find, markOf } from "./focus-keeper.js";

/** @typedef {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} Field */

/** @type {WeakMap<Element, Element>} a form (or a section saving as one) drawn again: what replaced it */
const successors = new WeakMap();

const isField = (/** @type {any} */ n) => n instanceof HTMLInputElement || n instanceof HTMLTextAreaElement || n instanceof HTMLSelectElement;

/**
 * Follow what is typed inside `root`: `take()` before a redraw, `put(taken)` after it.
 * @param {HTMLElement} root
 */
export function keepTyped(root) {
  /** @type {Set<Field>} */
  const touched = new Set();
  const note = (/** @type {Event} */ e) => { if (isField(e.target) && e.target.type !== "file") touched.add(e.target); };
  root.addEventListener("input", note);
  root.addEventListener("change", note);
  return {
    /** The fields typed in that are still on screen: where they are and what they hold. */
    take() {
      /** @type {{mark: any, value: string, checked: boolean | null, form: HTMLFormElement | null, sending: boolean}[]} */
      const taken = [];
      for (const field of [...touched]) {
        if (!field.isConnected || !root.contains(field)) { touched.delete(field); continue; }
        const checkable = field instanceof HTMLInputElement && (field.type === "checkbox" || field.type === "radio");
        // sending: in what an edit is being sent from (a form, or an attributes section saving its rows)
        taken.push({ mark: markOf(root, field), value: field.value, checked: checkable ? /** @type {HTMLInputElement} */ (field).checked : null, form: field.form, sending: !!field.closest(".pending") });
      }
      // what an edit was sent from (a form, or an attributes section saving its rows: pending
      // while it is saved), typed in or not (a Delete)
      const sent = [...root.querySelectorAll(".pending")].map((form) => ({ mark: markOf(root, form), form }));
      return { taken, sent };
    },
    /** Give the fields of the new drawing what they held, and know the forms sent from by their
     * successors. Answers whether everything found a home (a form sent from included). */
    put(/** @type {ReturnType<ReturnType<typeof keepTyped>["take"]>} */ { taken, sent }) {
      for (const s of sent) {
        const again = find(root, s.mark, (n) => n.tagName === s.form.tagName && n.isConnected);
        if (again) successors.set(s.form, again);
      }
      let placed = 0;
      for (const t of taken) {
        const again = find(root, t.mark, (n) => isField(n) && n.isConnected);
        if (!isField(again)) continue;
        if (t.checked !== null && again instanceof HTMLInputElement) again.checked = t.checked;
        else again.value = t.value;
        // as if typed: its form marks it unsaved (and Discard gives back the value drawn)
        again.dispatchEvent(new Event("input", { bubbles: true }));
        touched.add(again);
        if (t.form && again.form) successors.set(t.form, again.form);
        placed += 1;
      }
      return placed === taken.length && sent.every((s) => successorOf(s.form) !== null);
    },
  };
}

/** The form (or section) drawn in place of `form` (itself while it is on screen), or null. */
export function successorOf(/** @type {Element} */ form) {
  let f = form;
  for (let hops = 0; f && !f.isConnected && hops < 8; hops += 1) f = successors.get(f);
  return f && f.isConnected ? f : null;
}
