// The model page's one application state object, and its mirror in the URL hash
// (#path=<graph path>&node=<node id>, or &input=<name> / &output=<name> / &outer=<name> /
// &tensor=<name> for any tensor name of the graph, shown in the tensor panel; &group=<id> for a
// name-scope group of the drawing, see grouping.js).

export const state = {
  modelId: "",
  summary: null,        // GET /api/models/<id>
  graph: null,          // graph JSON of the graph on screen
  path: "",             // its graph path ("" = main graph)
  model: null,          // graph-model.js result for `graph` (boxes, edges, indexes)
  selection: null,      // null | {kind: "node" | "input" | "output" | "outer" | "tensor" | "group", id}
  panel: "model",       // what the sidebar shows when nothing is selected
  busy: false,          // an edit/undo/redo request is in flight
  dataFile: false,      // the file is a data file (tensor, sequence, ...): data view, no graph
  loadSeq: 0,           // increments on each graph load; stale answers are dropped
  /** graph path -> how it was left (pan/zoom, expanded groups, selection): coming back shows it so
   * @type {Map<string, {view: {x: number, y: number, k: number}, expanded: Set<string>, selection: {kind: string, id: string} | null}>} */
  views: new Map(),
};

const SELECTION_KEYS = { node: "node", input: "input", output: "output", outer: "outer", tensor: "tensor", group: "group" };

/** Read {path, selection} from a location hash. */
export function parseHash(hash) {
  const params = new URLSearchParams(String(hash || "").replace(/^#/, ""));
  const path = params.get("path") || "";
  let selection = null;
  for (const [kind, key] of Object.entries(SELECTION_KEYS)) {
    const id = params.get(key);
    if (id) { selection = { kind, id }; break; }
  }
  return { path, selection };
}

/** The hash for a graph path and selection. */
export function buildHash(path, selection) {
  const params = new URLSearchParams();
  params.set("path", path || "");
  if (selection) params.set(SELECTION_KEYS[selection.kind], selection.id);
  return `#${params.toString()}`;
}

/** Put the current path + selection in the URL without adding a history entry. */
export function syncHash() {
  const hash = buildHash(state.path, state.selection);
  if (window.location.hash !== hash) {
    history.replaceState(history.state, "", `${window.location.pathname}${window.location.search}${hash}`);
  }
}

/** A comparable key for a selection ("" for none). */
export function selectionKey(selection) {
  return selection ? `${selection.kind}:${selection.id}` : "";
}
