// What the model became on other pages (a teammate, a script) while this one showed an older
// revision: the changes of the revisions made since, in words, for the messages of a refused
// save or undo (a 409) and of the banner that says the page is behind.
import * as api from "../lib/api.js";

const SHOWN = 3; // changes named at most; the rest counted

/** The revisions from `was` (exclusive) to `head` along the head's line of parents, oldest
 * first, each with its changes; [] when `was` is no ancestor of `head` (an undo went below it). */
function revisionsSince(revisions, was, head) {
  const byNumber = new Map(revisions.map((r) => [r.revision, r]));
  const line = [];
  for (let r = byNumber.get(head); r && r.revision !== was; r = byNumber.get(r.parent)) line.unshift(r);
  return line.length && line[0].parent === was ? line : [];
}

/** "revision 5 by Ana: attribute 'alpha' of node "act" (LeakyRelu) set to 0.25" (or "revisions 3–5:
 * …; … and 2 more"); what an undo or a redo elsewhere did, and who did it, when that is all. */
export async function changedSince(modelId, was, head) {
  const data = await api.getRevisions(modelId).catch(() => null);
  const line = data ? revisionsSince(data.revisions, was, head) : [];
  const moved = data && data.moved && data.moved.from === was && data.moved.to === head ? data.moved : null;
  if (moved && moved.how === "undo" && moved.by) return `${moved.by} stepped it back to revision ${head} (an undo)`;
  if (!line.length) return head < was ? `it was stepped back to revision ${head} (an undo)` : `it is now at revision ${head}`;
  const changes = line.flatMap((r) => r.changes || []);
  const named = changes.slice(0, SHOWN).join("; ");
  const more = changes.length > SHOWN ? ` and ${changes.length - SHOWN} more` : "";
  const which = line.length === 1 ? `revision ${line[0].revision}` : `revisions ${line[0].revision}–${line[line.length - 1].revision}`;
  // whose (QA26: "who did what"): the names the revisions were made under, when they say
  const authors = [...new Set(line.map((r) => r.author).filter(Boolean))];
  const by = authors.length ? ` by ${authors.length > 2 ? `${authors.slice(0, 2).join(", ")} and others` : authors.join(" and ")}` : "";
  // a redo brings back a revision made before: who pressed it, then whose it is (QA36 #4)
  if (moved && moved.how === "redo") {
    const who = moved.by ? `${moved.by} redid ${which}` : `${which} was redone`;
    return `${who}${by ? ` (made${by})` : ""}: ${named || "no change named"}${more}`;
  }
  return `${which}${by}: ${named || "no change named"}${more}`;
}
