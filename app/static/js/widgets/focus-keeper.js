// The keyboard's place kept across a redraw. A panel is drawn anew after an edit, a run, a sort
// (and its controls are disabled while a request runs, which drops the focus to the page): the
// control that had the focus — an attribute's field, a Save, a sort header — is found again in
// the new drawing and focused, so a keyboard user goes on from there rather than from the top
// of the page (30 Tab presses back, QA pass 12).

/** What identifies a control across redraws: its id, or the nearest keyed ancestor (an
 * attribute row, a tensor row, an action) plus its own tag, name and words. */
export function markOf(root, target) {
  const scopeEl = target.closest("[id], [data-attr], [data-fn-attr], [data-node], [data-tensor], [data-key], [data-action], [data-sort]");
  let scope = null;
  if (scopeEl && root.contains(scopeEl) && scopeEl !== root) {
    const attr = ["id", "data-attr", "data-fn-attr", "data-node", "data-tensor", "data-key", "data-action", "data-sort"]
      .find((a) => scopeEl.hasAttribute(a));
    if (attr) scope = `[${attr}="${CSS.escape(scopeEl.getAttribute(attr) || "")}"]`;
  }
  const words = (target.getAttribute("aria-label") || target.textContent || "").trim().slice(0, 60);
  return { scope, tag: target.tagName, name: target.getAttribute("name"), words, path: pathOf(root, target) };
}

function pathOf(root, target) {
  const path = [];
  for (let n = target; n && n !== root; n = n.parentElement) {
    const parent = n.parentElement;
    if (!parent) return null;
    path.unshift([...parent.children].indexOf(n));
  }
  return path;
}

function follow(root, path) {
  let n = root;
  for (const k of path || []) {
    n = n && n.children[k];
    if (!n) return null;
  }
  return n;
}

const focusable = (n) => n instanceof HTMLElement && !(/** @type {any} */ (n).disabled) && !n.closest("[hidden]") && n.isConnected;

/** The control `mark` names in `root` as drawn now, or null; `usable` (by default: it can take
 * the focus) says which controls count. */
export function find(root, mark, usable = focusable) {
  const within = mark.scope ? root.querySelector(mark.scope) : root;
  const alike = (n) => n.tagName === mark.tag && n.getAttribute("name") === mark.name
    && (n.getAttribute("aria-label") || n.textContent || "").trim().slice(0, 60) === mark.words;
  if (within) {
    const candidates = [within, ...within.querySelectorAll(mark.tag)].filter((n) => n.tagName === mark.tag);
    const same = candidates.find(alike) || (mark.name !== null || mark.tag === "INPUT" || mark.tag === "SELECT" || mark.tag === "TEXTAREA"
      ? candidates.find((n) => n.getAttribute("name") === mark.name) : null);
    if (same && usable(same)) return same;
  }
  const at = follow(root, mark.path);
  return at && at.tagName === mark.tag && usable(at) ? at : null;
}

/**
 * Follow the focus inside `root`; `restore()` after a redraw puts it back on the same control
 * when the focus was lost meanwhile (it is on the page itself), never taking it from elsewhere.
 * @param {HTMLElement} root
 */
export function keepFocus(root) {
  /** @type {ReturnType<typeof markOf> | null} */
  let mark = null;
  document.addEventListener("focusin", (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    mark = root.contains(t) && t !== root ? markOf(root, t) : null;
  });
  return {
    restore() {
      const now = document.activeElement;
      if (!mark || (now && now !== document.body && now !== document.documentElement)) return;
      // the control gone with the panel (History's "View" draws another): the panel's title
      const again = find(root, mark) || root.querySelector("h2");
      if (again) focusOn(/** @type {HTMLElement} */ (again));
    },
  };
}

/** Focus `target`, a heading too (made focusable by script only), without scrolling to it. */
export function focusOn(target) {
  if (!target.matches("a[href], button, input, select, textarea, [tabindex]")) target.setAttribute("tabindex", "-1");
  target.focus({ preventScroll: true });
}
