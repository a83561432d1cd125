// A modal dialog (<dialog>, opened with showModal: focus stays inside, Escape closes it) with a
// title bar, action buttons and a scrolling body. Removed from the page once closed.
import { el } from "./dom.js";

/**
 * Open a modal. `title` and `actions` are nodes or text; returns {dialog, body}. `question`: the
 * body asks something and the actions answer it, so they come after it (read before choosing:
 * QA34 #9), not in the title bar as a viewer's tools do.
 * Only one modal with a given id is open at a time.
 */
export function openModal({ id, title, actions = [], label = "", cls = "", question = false }) {
  const old = document.getElementById(id);
  if (old) old.remove();
  const body = el("div", { class: "modal-body" });
  const buttons = el("div", { class: "modal-actions" }, actions,
    el("button", { type: "button", class: "btn btn-small modal-close", onclick: () => dialog.close() }, "Close"));
  const dialog = el("dialog", { id, class: `modal ${cls}`.trim(), "aria-label": label || null },
    el("header", { class: "modal-head" }, el("div", { class: "modal-title" }, title), question ? null : buttons),
    body,
    question ? el("footer", { class: "modal-foot" }, buttons) : null);
  dialog.addEventListener("close", () => dialog.remove());
  dialog.addEventListener("click", (e) => { if (e.target === dialog) dialog.close(); }); // the backdrop
  document.body.append(dialog);
  dialog.showModal();
  return { dialog, body };
}
