// An open model page learns what others did meanwhile (a teammate's edit, a script's, a rename,
// a delete): it asks the model's head now and then (GET .../head, the index alone), and when the
// window comes back into view. Left to itself, a page showed revision 2 while a script made 7
// more, and its Download gave the old one unsaid (QA26).
import * as api from "../lib/api.js";

const EVERY_MS = 15_000;

/**
 * Ask now and then; `known()` is what the page holds ({head, name}, or null while it is busy).
 * A 404 says the model was deleted (api.js' studio:model-gone), a 401 that the session ended.
 * @param {string} modelId
 * @param {{known: () => ({head: number, name: string} | null), onMoved: (head: number) => void, onRenamed: (name: string) => void}} hooks
 */
export function watchHead(modelId, { known, onMoved, onRenamed }) {
  let asking = false;
  let gone = false;
  const check = async () => {
    if (asking || gone || document.hidden) return;
    asking = true;
    try {
      const now = await api.getHead(modelId);
      const held = known();
      if (!held) return;
      if (now.name !== held.name) onRenamed(now.name);
      if (now.head !== held.head) onMoved(now.head);
    } catch (err) {
      gone = err.status === 404; // said once by the page's banner; nothing more to watch
    } finally {
      asking = false;
    }
  };
  setInterval(check, EVERY_MS);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) check(); });
  window.addEventListener("focus", check);
  return check;
}
