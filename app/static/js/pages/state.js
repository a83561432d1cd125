// The model page's one application state object, and its mirror in the URL hash:
// #rev=<revision>&path=<graph path>&node=<node address>, or &input=<name> / &output=<name> /
// &outer=<name> / &tensor=<name> for any tensor name of the graph, shown in the tensor panel;
// &group=<id> for a name-scope group of the drawing, see grouping.js. The page writes graphs and
// nodes by name where it can (lib/address.js) and the revision it shows, so a link opens the same
// node after later edits; state.path and node selections are positional ids (the server's).
// #at=<revision> shows that earlier revision itself, read-only (History's "View"), where a link's
// rev= alone is followed to the same place in the current one. While Compare is open:
// &compare=rev:<revision> (or model:<id>) and &focus=<node address>, the changed node Next/Previous
// stepped to: a link opens the same comparison there (QA32 #12).
import { linkAddress, nodeAddress } from "../lib/address.js";

export const state = {
  modelId: "",
  summary: null,        // GET /api/models/<id>: of the head, or of the revision viewed
  /** an earlier revision on screen, read-only (#at=N); null: the head, which edits change
   * @type {number | null} */
  viewing: null,
  gone: false,          // the model was deleted meanwhile (a teammate, another page): read-only
  graph: null,          // graph JSON of the graph on screen
  path: "",             // its graph path ("" = main graph)
  model: null,          // graph-model.js result for `graph` (boxes, edges, indexes)
  selection: null,      // null | {kind: "node" | "input" | "output" | "outer" | "tensor" | "group", id}
  panel: "model",       // what the sidebar shows when nothing is selected
  busy: false,          // an edit/undo/redo request is in flight
  dataFile: false,      // the file is a data file (tensor, sequence, ...): data view, no graph
  loadSeq: 0,           // increments on each graph load; stale answers are dropped
  /** sizes of the inputs' symbolic dims ({batch: 1}) given in Costs or Run, used by both
   * @type {Record<string, number>} */
  dimSizes: {},
  /** the last run's node times ("Time each node"): the revision they were measured on
   * @type {{revision: number, byNode: Map<string, {time_us: number, share: number}>} | null} */
  times: null,
  brokenIfFails: -1,    // the revision an edit made from a base onnxruntime ran: its failing is news
  runInputs: null,       // a reference case's inputs the Run panel opens with (openRun)
  focusPanel: false,     // a toolbar button opened the panel: the keyboard goes to its title (QA41 #7)
  outputsKeptBefore: -1, // the revision an edit made from one that gave its reference outputs: its failing them is news
  /** graph path -> how it was left (pan/zoom, expanded groups, selection): coming back shows it so
   * @type {Map<string, {view: {x: number, y: number, k: number}, expanded: Set<string>, selection: {kind: string, id: string} | null}>} */
  views: new Map(),
};

const SELECTION_KEYS = { node: "node", input: "input", output: "output", outer: "outer", tensor: "tensor", group: "group" };

const revisionParam = (params, key) => (/^\d+$/.test(params.get(key) || "") ? Number(params.get(key)) : null);

/** Read {rev, at, path, selection} from a location hash (rev, at: null when it names none). */
export function parseHash(hash) {
  const params = new URLSearchParams(String(hash || "").replace(/^#/, ""));
  const path = params.get("path") || "";
  const rev = revisionParam(params, "rev");
  const at = revisionParam(params, "at");
  let selection = null;
  for (const [kind, key] of Object.entries(SELECTION_KEYS)) {
    const id = params.get(key);
    if (id) { selection = { kind, id }; break; }
  }
  const compare = /^(rev:\d+|model:[\w-]+)$/.test(params.get("compare") || "") ? params.get("compare") : null;
  return { rev, at, path, selection, compare, focus: compare ? params.get("focus") : null };
}

// a hash value encoded as URLSearchParams reads it back, with the '/' and '@' of addresses left
// as they are: #path=@branch/else_branch rather than #path=%40branch%2Felse_branch
const hashValue = (value) => encodeURIComponent(value).replace(/%2F|%40/g, (m) => decodeURIComponent(m));

/** The hash for a graph path and selection, in the revision on screen (`rev`, by default; `at`:
 * the earlier revision viewed, by default the one on screen). */
export function buildHash(path, selection, rev = state.summary ? state.summary.revision : null, at = state.viewing) {
  const params = [];
  if (at !== null && at !== undefined) params.push(`at=${at}`);
  else if (rev !== null && rev !== undefined) params.push(`rev=${rev}`);
  params.push(`path=${hashValue(path || "")}`);
  if (selection) params.push(`${SELECTION_KEYS[selection.kind]}=${hashValue(selection.id)}`);
  return `#${params.join("&")}`;
}

/** The selection as a link names it: a node by its address (name form) rather than its id. */
export function linkSelection(selection) {
  if (!selection || selection.kind !== "node" || !state.graph || !state.model) return selection;
  const box = state.model.boxes.get(selection.id);
  return box && box.node ? { kind: "node", id: linkAddress(nodeAddress(state.graph, box.node)) } : selection;
}

/** The comparison open in Compare as the hash carries it ("&compare=rev:0&focus=@relu"), or "". */
function compareParams() {
  const c = state.compare;
  if (!comparing()) return "";
  const focus = c.stepped ? linkSelection({ kind: "node", id: c.stepped }).id : "";
  return `&compare=${hashValue(c.choice)}${focus ? `&focus=${hashValue(focus)}` : ""}`;
}

const comparing = () => !!state.compare && state.panel === "compare" && !state.selection;

// The hash the page last followed (hashchange) or wrote (syncHash). Another one is a navigation
// whose hashchange is still queued — Backspace pressed while a subgraph was being drawn: the
// drawing's end wrote the subgraph's hash over it, and the page stayed in the subgraph.
let followedHash = typeof window === "undefined" ? "" : window.location.hash;

/** The hash in the URL is being followed now (the page's hashchange handler, first thing). */
export function hashFollowed() {
  followedHash = window.location.hash;
}

/** Put the current path + selection (or comparison) in the URL, by name, without adding a history entry.
 * A comparison's link pins its revision (at=): opened after more edits, it compares the same
 * two revisions, not the head with the older one (QA35 #1). */
export function syncHash() {
  if (window.location.hash !== followedHash) return; // a navigation its hashchange has yet to follow
  const path = state.graph ? state.graph.address ?? state.path : state.path;
  const pinned = comparing() && state.summary ? state.summary.revision : state.viewing;
  const hash = buildHash(path, linkSelection(state.selection), undefined, pinned) + compareParams();
  if (window.location.hash !== hash) {
    history.replaceState(history.state, "", `${window.location.pathname}${window.location.search}${hash}`);
  }
  followedHash = window.location.hash;
}

/** A comparable key for a selection ("" for none). */
export function selectionKey(selection) {
  return selection ? `${selection.kind}:${selection.id}` : "";
}
