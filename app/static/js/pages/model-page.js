// Entry module of the model page (/models/<id>): loads the summary and a graph, lays it out
// in the worker, draws it, and wires the toolbar, the sidebar and the URL hash together.
// A data file (tensor, sequence, map, optional, operator set) gets the data view instead.
import * as api from "../lib/api.js";
import "../widgets/signed-out.js";
import { busyIn, el, clear, painted } from "../widgets/dom.js";
import { addInferredTypes, buildGraphModel } from "../pipeline/graph-model.js";
import { LayoutClient } from "../pipeline/layout-client.js";
import { renderBreadcrumb } from "../panels/breadcrumb.js";
import { selectionWords } from "../pipeline/selection-words.js";
import { announce } from "../lib/announce.js";
import { GraphController } from "../pipeline/graph-controller.js";
import { initGraphTools } from "./graph-tools.js";
import { buildHash, hashFollowed, linkSelection, parseHash, selectionKey, state, syncHash } from "./state.js";
import { askModelName } from "../widgets/rename-model.js";
import { apiAddress, graphPathOf, hasPositions, nodeAddress, nodeIdIn, withHolders } from "../lib/address.js";
import { withWaitStatus } from "../widgets/wait.js";
import { HEAT_METRICS, drawnValues, heatClasses } from "../pipeline/heat.js";
import { renderHeatLegend } from "../widgets/heat-legend.js";
import { HEAT_CLASSES } from "../renderers/theme.js";
import { referenceCause } from "../lib/reference-words.js";
import { linkRefusalNodes, offerRefusalFixes } from "../editing/edit-forms.js";
import { focusOn, keepFocus } from "../widgets/focus-keeper.js";
import { keepTyped } from "../widgets/typed-keeper.js";
import { changedSince } from "./changed-elsewhere.js";
import { watchHead } from "./head-watch.js";
import { smokeRunFailsTitle } from "../lib/smoke-run.js";

const $ = (id) => document.getElementById(id);
const graphEl = $("graph");
const heatLegendEl = $("heat-legend");
const messageEl = $("graph-message");
const sidebar = $("sidebar");
// the keyboard's place in the sidebar and the toolbar kept across their redraws (a Save, Undo)
const sidebarFocus = keepFocus(sidebar);
const sidebarTyped = keepTyped(sidebar);
const toolbarFocus = keepFocus(/** @type {HTMLElement} */ (document.querySelector(".toolbar")));
const breadcrumb = $("breadcrumb");
const toastEl = $("toast");
const waitPill = $("wait-status"); // "Saving…", "Undoing…" while an answer is slow (wait.js)
const buttons = /** @type {Record<"undo" | "redo" | "model" | "text" | "history" | "compare" | "run", HTMLButtonElement> & {download: HTMLAnchorElement}} */ ({
  undo: $("btn-undo"), redo: $("btn-redo"), model: $("btn-model"), text: $("btn-text"), download: $("btn-download"),
  history: $("btn-history"), compare: $("btn-compare"), run: $("btn-run"),
});
const OWN_PANELS = ["history", "compare", "run"]; // sidebar panels of their own, shown while nothing is selected

state.modelId = /** @type {HTMLElement} */ (document.querySelector(".workspace")).dataset.modelId;

const layoutClient = new LayoutClient(document.body.dataset.dagre, document.body.dataset.layoutWorker).prewarm();
// the drawing: groups by name scope, layouts per group in the workers (graph-controller.js)
const view = new GraphController(graphEl, layoutClient, {
  onSelect: (boxId) => selectBox(boxId),
  onSelectTensor: (name) => select({ kind: "tensor", id: name }),
  onSelectGroup: (id) => select({ kind: "group", id }),
  // a double-click on an If/Loop/Scan box: that node selected (what Back comes back to), then its subgraph
  onOpenSubgraph: (path, boxId) => {
    selectBox(boxId);
    window.location.hash = buildHash(path, null);
  },
  setState: (value, message) => setGraphState(value, message),
});

// ------------------------------------------------------------------ status + messages

/** @param {string} value @param {string | Node} [message] */
function setGraphState(value, message = "") {
  graphEl.dataset.state = value;
  graphEl.setAttribute("aria-busy", value === "loading" || value === "layout" ? "true" : "false");
  clear(messageEl);
  messageEl.className = `graph-message ${value}`;
  if (message instanceof Node) messageEl.append(message); else messageEl.textContent = message;
  messageEl.hidden = !message;
}

let toastTimer = 0;
let savedShownAt = -Infinity; // when "Saved as revision N" was last shown
let errorShownAt = -Infinity;
function toast(message, kind = "error") {
  // news of a failure outranks a confirmation arriving just after it: "Saved as revision N"
  // must not wipe "onnxruntime can't run revision N" off the screen (a later one may)
  if (kind !== "error" && !toastEl.hidden && performance.now() - errorShownAt < 3000) return;
  if (kind === "error") errorShownAt = performance.now();
  toastEl.textContent = message;
  toastEl.className = `toast ${kind}`;
  toastEl.hidden = false;
  clearTimeout(toastTimer);
  // long enough to read: a long note stays up to an error's time
  toastTimer = setTimeout(() => { toastEl.hidden = true; }, kind === "error" ? 8000 : Math.min(8000, Math.max(2500, 50 * message.length)));
}


// ------------------------------------------------------------------ toolbar

function renderToolbar() {
  const s = state.summary;
  if (!s) return;
  $("model-name").textContent = s.name || s.id;
  $("model-heading").textContent = s.name || s.id; // the page's h1, for a screen reader's outline
  $("model-name").title = `${s.name || s.id}: click to rename it (how the models list shows it)`;
  const past = state.viewing !== null;
  const revLabel = $("model-revision");
  revLabel.textContent = state.dataFile ? "" : past ? `rev ${s.revision} of ${s.head}` : `rev ${s.revision}`;
  revLabel.classList.toggle("badge-past", past);
  revLabel.title = past ? `An earlier revision, read-only: the model is now at revision ${s.head}` : "Current revision";
  const validity = $("model-validity");
  if (state.dataFile) {
    validity.hidden = false;
    validity.textContent = `${String(s.kind).replace("_", " ")} file`;
    validity.className = "badge badge-kind";
    validity.title = "A data file: it has no graph";
  } else {
    const v = s.validation || {};
    const fullOk = !v.full || v.full.ok;
    const runtime = v.runtime || {};
    validity.hidden = false;
    if (v.pending || runtime.status === "pending") {  // big models are checked in the background; watchValidation fills this in
      validity.textContent = "Checking…";
      validity.className = "badge badge-wait";
      validity.title = "onnx.checker, shape inference and onnxruntime are running in the background";
    } else if (v.ok && (s.missing_data || []).length) {
      // the graph checks out, its weights aren't here: nothing whole can be run or downloaded
      const files = s.missing_data.map((m) => m.location).join(", ");
      validity.textContent = "weights missing";
      validity.className = "badge badge-warn";
      validity.title = `External data ${s.missing_data.length === 1 ? "file" : "files"} ${files}: ${s.missing_data[0].reason}. Attach ${s.missing_data.length === 1 ? "it" : "them"} in the model panel (Validation).`;
    } else if (v.ok && fullOk && runtime.status === "fails") {
      // never "valid" on what doesn't run: onnx's checks passing is in the title and the panel
      const made = runtime.guessed; // it loads; what failed may be the sizes or integers made up for it
      validity.textContent = made ? "smoke run fails" : "onnxruntime fails";
      validity.className = "badge badge-warn";
      validity.title = made ? smokeRunFailsTitle(runtime.message)
        : `onnx's checks accept this model; onnxruntime can't run it: ${runtime.message || ""}`;
    } else if (v.ok && fullOk && runtime.status === "ok" && runtime.other_size && runtime.other_size.status === "fails") {
      const other = runtime.other_size; // it runs with its dynamic dims at 1, not at 2
      validity.textContent = "valid · runs at size 1 only";
      validity.className = "badge badge-warn";
      const failing = Object.entries(other.alone || {}).filter(([, s]) => s === "fails").map(([d]) => d);
      validity.title = (other.sizes ? `onnx's checks accept this model and onnxruntime runs it at its first sizes, but not with ${other.at}`
        : `onnx's checks accept this model and onnxruntime runs it with ${other.dims.join(", ")} at 1, but not at ${other.size}`)
        + `${failing.length ? ` (${failing.join(", ")} alone ${failing.length === 1 ? "fails" : "fail"})` : ""}: ${other.message || ""}`;
    } else {
      validity.textContent = !v.ok ? "checker errors" : fullOk ? "valid" : "valid · full check fails";
      validity.className = `badge ${!v.ok ? "badge-bad" : fullOk ? "badge-ok" : "badge-warn"}`;
      validity.title = !v.ok ? v.message || "" : fullOk ? `onnx.checker accepts this model${runtime.status === "ok" ? " and onnxruntime runs it" : ""}`
        : "onnx.checker accepts this model; the full check (with strict shape inference) does not — see the model panel";
    }
  }
  renderReferenceBadge(state.dataFile ? null : (s.validation || {}).reference);
  buttons.undo.disabled = state.busy || past || !s.can_undo;
  buttons.redo.disabled = state.busy || past || !s.can_redo;
  renderPastBanner();
  hideBehindIfCaughtUp();
  if (state.gone) {
    buttons.download.removeAttribute("href");
    buttons.download.classList.add("disabled");
  } else {
    buttons.download.href = `${api.downloadUrl(state.modelId)}?revision=${encodeURIComponent(s.revision)}`;
    buttons.download.classList.remove("disabled");
  }
  document.title = `${s.name || s.id} · ONNX Studio`;
}

// whether the revision gives its reference cases' outputs (api/reference.py): hidden without cases
function renderReferenceBadge(ref) {
  const badge = $("model-reference");
  if (!badge) return;
  badge.hidden = !ref || ref.status === "none";
  if (badge.hidden) return;
  const n = (ref.cases || []).length;
  const [text, cls, title] = ref.status === "pending" ? ["checking outputs…", "badge-wait", "Running the reference cases in the background"]
    : ref.status === "passed" ? ["outputs as kept", "badge-ok", `Gives the outputs kept for its ${n === 1 ? "reference case" : `${n} reference cases`}`]
      : ["outputs differ", "badge-warn", `Not the outputs kept for its reference cases: ${referenceCause(ref)}`];
  badge.textContent = text;
  badge.className = `badge badge-reference ${cls}`;
  badge.title = title;
}

/** A reference verdict of the revision on screen, fetched or answered elsewhere. */
function setReference(verdict) {
  if (!state.summary || !state.summary.validation) return;
  state.summary.validation = { ...state.summary.validation, reference: verdict };
  renderToolbar();
}

function setBusy(busy) {
  state.busy = busy;
  document.body.classList.toggle("busy", busy);
  renderToolbar();
  if (!busy) toolbarFocus.restore(); // Undo pressed by Enter: disabled meanwhile, focused again
}

// ------------------------------------------------------------------ selection + sidebar

function boxIdOf(selection) {
  if (!selection || selection.kind === "tensor") return null;
  return selection.kind === "node" ? selection.id : `${selection.kind}:${selection.id}`;
}

/** Does `selection` name something in the graph on screen? */
function selectionValid(model, selection) {
  if (!selection || !model) return false;
  if (selection.kind === "group") return view.h !== null && view.h.groups.has(selection.id);
  if (selection.kind !== "tensor") return model.boxes.has(boxIdOf(selection));
  const name = selection.id;
  return model.types.has(name) || model.initializers.has(name) || model.producer.has(name)
    || [...model.boxes.values()].some((b) => b.kind === "node" && (b.node.inputs || []).includes(name));
}

function selectionOf(boxId) {
  const box = boxId && state.model && state.model.boxes.get(boxId);
  if (!box) return null;
  if (box.kind === "node") return { kind: "node", id: box.id };
  return { kind: box.id.startsWith("init:") ? "outer" : box.kind, id: box.name };
}

/** The revision on screen: every call about what is drawn asks for it, so a panel opened after
 * an edit elsewhere still describes the drawing (and an earlier revision viewed is that one). */
const onScreen = () => (state.summary ? state.summary.revision : null);

const schemaCache = new Map(); // "<revision>|<node id>" -> Promise of the schema JSON

function loadSchema(nodeId) {
  const key = `${state.summary ? state.summary.revision : ""}|${nodeId}`;
  if (!schemaCache.has(key)) {
    const promise = api.getSchema(state.modelId, nodeId, onScreen());
    promise.catch(() => schemaCache.delete(key)); // a failed load is tried again next time
    schemaCache.set(key, promise);
  }
  return schemaCache.get(key);
}

const panelContext = {
  actions: {
    setAttribute: (node, name, value) => applyEdits([{ op: "set_attribute", node, name, value }]),
    setMetadata: (key, value) => applyEdits([{ op: "set_metadata", key, value }]),
    loadTensor: (ref, offset, count) => api.getTensor(state.modelId, ref, offset, count, onScreen()),
    loadSchema,
    select: (boxId) => selectBox(boxId, { reveal: true }),
    selectTensor: (name) => select({ kind: "tensor", id: name }, { reveal: true }),
    // editing (issue 4): any batch of edit ops; options.selection = what to select afterwards
    edit: (ops, options) => applyEdits(ops, options),
    applyRecipe: (file, onProgress, said) => applyRecipe(file, onProgress, said),
    uploadBlob: (file) => api.uploadBlob(file),
    attachDataFiles: (files, location) => attachDataFiles(files, location),
    loadNode: (nodeId) => api.getNode(state.modelId, nodeId, onScreen()),
    loadReaders: (name, path) => api.getReaders(state.modelId, name, path, onScreen()),
    loadTrees: (nodeId, tree) => api.getTrees(state.modelId, nodeId, tree, onScreen()),
    loadCoefficients: (nodeId) => api.getCoefficients(state.modelId, nodeId, onScreen()),
    loadRevisions: () => api.getRevisions(state.modelId),
    undo: () => step("undo"),
    // a recipe's batches undone at once (History): `words` name them in the toast
    undoSteps: (steps, words) => step("undo", steps, words),
    revisionNow: () => (state.summary ? state.summary.revision : null),
    toast: (message, kind) => toast(message, kind),
    redo: () => step("redo"),
    // the sizes of the inputs' symbolic dims, shared by Costs and Run: given in one, used in both
    loadStats: (sizes) => statsOf(state.summary ? state.summary.revision : null, { ...sizes })
      // sizes refused are not kept, nor those of dims the revision no longer has (fixed by an edit)
      .then((stats) => { state.dimSizes = { ...stats.dims }; return stats; }),
    // any model's revision (Compare's sides), at the sizes given (by default those of Costs or Run)
    loadStatsOf: (modelId, revision, sizes = state.dimSizes || {}) => statsOf(revision, sizes, modelId),
    currentStats: () => (state.summary ? statsOf(state.summary.revision, state.dimSizes || {}) : Promise.resolve(null)),
    rememberDimSizes: (sizes) => { state.dimSizes = { ...state.dimSizes, ...sizes }; },
    showHeat: (metric, stats) => showHeat(metric, stats),
    listModels: () => api.listModels(),
    modelAsBlob: (id) => api.modelAsBlob(id),
    weightRanges: (bits) => api.getWeightRanges(state.modelId, bits, state.summary.revision),
    compareWith: (choice) => compareWith(choice),
    stepCompare: (direction) => stepCompare(direction),
    // within: every output still close (drawn as a note, not as an error)
    markDivergence: (nodeId, within = false) => {
      // a node inside an If's branch: its If outlined too, in the main graph's drawing
      view.mark(nodeId && !within ? withHolders(nodeId) : [], "diverges");
      view.mark(nodeId && within ? withHolders(nodeId) : [], "diverges-within");
    },
    restore: (revision) => restoreRevision(revision),
    // the Run panel, "Compare with" set to `revision` (after a conversion: did the outputs move?)
    // `inputs`: a reference case's ({label, inputs, dims, expected}) to run on instead of the form's
    openCompare: (revision) => { state.panel = "compare"; selectBox(null); compareWith(`rev:${revision}`); },
    // go: run at once (a link that says it finds something, not one that fills a form)
    openRun: (revision, inputs = null, { go = false } = {}) => { state.runCompareTo = revision; state.runInputs = inputs; state.runGo = go; state.panel = "run"; selectBox(null); },
    run: (body) => withWaitStatus(waitPill, "Running…", () => api.runModel(state.modelId, { ...body, revision: state.summary.revision }))
      .then((answer) => { if (answer.profile) rememberTimes(answer); return answer; }),
    sensitivity: (body) => withWaitStatus(waitPill, "Measuring each tensor…", () => api.sensitivity(state.modelId, { ...body, revision: state.summary.revision })),
    sweepProgress: (token) => api.sweepProgress(token),
    // the model's reference cases: every revision is held to their outputs
    reference: {
      list: () => api.getChecks(state.modelId),
      add: (body) => api.addCheck(state.modelId, { ...body, revision: state.summary.revision })
        .then((answer) => { setReference(answer.verdict); return answer; }),
      remove: (name) => api.deleteCheck(state.modelId, name),
      setTolerance: (tolerance) => api.setChecks(state.modelId, { tolerance }),
      setGate: (on) => api.setChecks(state.modelId, { gate: on }),
      copyFrom: (other) => api.copyChecks(state.modelId, other),
      verdict: () => api.getReferenceVerdict(state.modelId, state.summary.revision)
        .then((verdict) => { setReference(verdict); return verdict; }),
    },
    nodeTime: (nodeId) => {
      const t = state.times;
      return t && state.summary && t.revision === state.summary.revision ? t.byNode.get(nodeId) || null : null;
    },
  },
  heatMetric: () => (state.heat ? state.heat.metric : null),
  heatStats: () => (state.heat ? state.heat.stats : null),
  afterFirstView: () => afterFirstView,
  dimSizes: () => ({ ...state.dimSizes }),
  runCompareTo: () => { const r = state.runCompareTo; state.runCompareTo = null; return r ?? null; },
  runInputs: () => { const i = state.runInputs; state.runInputs = null; return i ?? null; },
  runGo: () => { const g = state.runGo; state.runGo = false; return !!g; },
  downloadHref: (options) => api.downloadHref(state.modelId, options),
  recipeHref: (options) => api.recipeHref(state.modelId, options),
  textHref: () => api.textUrl(state.modelId, { download: true, revision: state.summary ? state.summary.revision : null }),
  graphHref: (path) => buildHash(path, null),
  // History: revision `rev` on screen (read-only unless it is the head), on the graph on screen
  revisionHref: (rev) => revisionHash(rev),
  nodeHref: (path, nodeId) => buildHash(path, { kind: "node", id: nodeId }),
};

// a refused edit's node, in the revision on screen (the base the edit was refused on)
linkRefusalNodes((id) => buildHash(graphPathOf(id), { kind: "node", id }),
  (id) => !!state.selection && state.selection.kind === "node" && state.selection.id === id);
// a refusal's way out (the batch with a graph output re-declared): sent as any edit is
offerRefusalFixes((ops) => applyEdits(ops));

// Work a first view must not compete with (a model's costs: inference in the helper process on the
// server's same cores) waits for it: afterFirstView resolves once the first drawing is painted.
/** @type {() => void} */
let firstViewShown = () => {};
const afterFirstView = new Promise((resolve) => { firstViewShown = () => resolve(undefined); });

// The sidebar's panels (panels/sidebar-panels.js): a chunk of their own, asked for when the
// sidebar is first drawn (after the first view is painted, or PANEL_WAITS_MS into its layout).
/** @type {Promise<typeof import("../panels/sidebar-panels.js")> | null} */
let panelsLoading = null;
let sidebarRenders = 0;
function sidebarPanels() {
  if (!panelsLoading) panelsLoading = import("../panels/sidebar-panels.js");
  return panelsLoading;
}

/** Draw the sidebar for what is on screen; resolves once it is drawn (a later call wins). */
function renderSidebar() {
  if (state.dataFile) return Promise.resolve();
  const token = ++sidebarRenders;
  return sidebarPanels().then((panels) => {
    if (token === sidebarRenders) drawSidebar(panels);
  }).catch((err) => {
    panelsLoading = null; // asked again at the next draw
    if (token !== sidebarRenders) return;
    clear(sidebar);
    sidebar.append(el("div", { class: "field-error" }, `The side panel could not be loaded: ${err.message || err}`));
  });
}

// what an earlier revision viewed may not do: edit (it would fork the history), undo, redo
const READ_ONLY = { edit: null, setAttribute: null, setMetadata: null, undo: null, undoSteps: null, redo: null, attachDataFiles: null };

function sidebarContext() {
  return {
    ...panelContext, actions: state.viewing === null && !state.gone ? panelContext.actions : { ...panelContext.actions, ...READ_ONLY },
    viewing: state.viewing, model: state.model, graph: state.graph, functions: (state.summary && state.summary.functions) || [],
    summary: state.summary, selection: state.selection, modelId: state.modelId, compare: state.compare,
    mainGraph: state.path === "" ? state.graph : null,
  };
}

/** The background checks answered: the panels that show them catch up, without closing a
 * form the person opened meanwhile (the model panel redraws its validation section alone). */
function showChecks() {
  const shown = sidebar.dataset.panel;
  if (shown === "model") sidebarPanels().then((panels) => panels.refreshValidation(sidebar, state.summary, sidebarContext())).catch(() => {});
  else if (shown === "history" && !busyIn(sidebar)) renderSidebar();
}

/** @param {typeof import("../panels/sidebar-panels.js")} panels */
function drawSidebar(panels) {
  const { renderComparePanel, renderGroupPanel, renderHistoryPanel, renderModelPanel, renderNodePanel, renderRunPanel, renderTensorPanel, renderValuePanel } = panels;
  const boxId = boxIdOf(state.selection);
  const box = boxId && state.model ? state.model.boxes.get(boxId) : null;
  const tensor = state.selection && state.selection.kind === "tensor" && state.graph ? state.selection.id : null;
  const ctx = sidebarContext();
  const shows = `${state.path}|${selectionKey(state.selection)}`;
  const scroll = sidebar.dataset.shows === shows ? sidebar.scrollTop : 0; // same panel redrawn: keep the place
  const group = !box && tensor === null && state.selection && state.selection.kind === "group";
  // Run's "first node that differs" outline belongs to its results, which a toolbar panel drawn
  // anew (Run's included) no longer shows; a node panel opened from them keeps it
  if (!box && tensor === null && !group && (view.marks.get("diverges") || []).length) view.mark([], "diverges");
  if (!box && tensor === null && !group && (view.marks.get("diverges-within") || []).length) view.mark([], "diverges-within");
  if (!box && tensor === null && !group) showCompareMarks(state.panel === "compare");
  sidebar.dataset.panel = box ? box.kind : tensor !== null ? "tensor" : group ? "group" : "model";
  sidebar.dataset.shows = shows;
  if (box && box.kind === "node") renderNodePanel(sidebar, box.node, ctx);
  else if (box) renderValuePanel(sidebar, box, ctx);
  else if (tensor !== null) renderTensorPanel(sidebar, tensor, ctx);
  else if (state.selection && state.selection.kind === "group" && view.h) renderGroupPanel(sidebar, view, state.selection.id, ctx);
  else if (state.summary && state.panel === "history") renderHistoryPanel(sidebar, ctx);
  else if (state.summary && state.panel === "compare") renderComparePanel(sidebar, ctx);
  else if (state.summary && state.panel === "run") renderRunPanel(sidebar, ctx);
  else if (state.summary) renderModelPanel(sidebar, state.summary, ctx);
  const own = !box && tensor === null && !group;
  if (own && OWN_PANELS.includes(state.panel)) sidebar.dataset.panel = state.panel;
  sidebar.scrollTop = scroll;
  sidebarFocus.restore();
  const heading = sidebar.querySelector("h2");
  if (state.focusPanel && heading) focusOn(/** @type {HTMLElement} */ (heading)); // opened from the toolbar (QA41 #7)
  state.focusPanel = false;
  const shown = (on) => !box && tensor === null && on;
  pressed(buttons.model, shown(!OWN_PANELS.includes(state.panel)));
  if (buttons.history) pressed(buttons.history, shown(state.panel === "history"));
  pressed(buttons.compare, shown(state.panel === "compare"));
  pressed(buttons.run, shown(state.panel === "run"));
}

/** A toolbar button of the panel shown: marked for the eye and for a screen reader. */
function pressed(button, on) {
  button.classList.toggle("active", on);
  button.setAttribute("aria-pressed", String(on));
}

function highlightSelection() {
  const sel = state.selection;
  if (sel && sel.kind === "tensor") view.highlightTensor(sel.id);
  else view.highlight(boxIdOf(sel));
}

/** Where the drawing goes for a selection: its box; a tensor's line where it starts (its
 * producer), else its first reader (a weight, an input) — QA28: Find → a tensor selected it and
 * left the view 16,000 px away. */
function revealTarget(selection) {
  const id = boxIdOf(selection);
  if (id || !selection || selection.kind !== "tensor" || !state.model) return id;
  return state.model.producer.get(selection.id) || (state.model.consumers.get(selection.id) || [])[0] || null;
}

function select(selection, { reveal = false } = {}) {
  state.selection = selection;
  const id = reveal ? revealTarget(selection) : null;
  highlightSelection();
  if (id) view.reveal(id);
  renderSidebar();
  syncHash();
  announce(selectionWords(selection, state.model, { groupWords }));
}

/** A group of the drawing in words: "group encoder.layer.3, 48 ops; Enter expands or collapses it". */
function groupWords(id) {
  const group = view.h ? view.h.groups.get(id) : null;
  if (!group) return `group ${id}`;
  return `group ${group.scope || group.label}, ${group.nodeCount} ops; Enter expands or collapses it`;
}

function selectBox(boxId, options) {
  select(selectionOf(boxId), options);
}

/** A graph input's or output's selection with its place among them (the graph on screen's):
 * what follows it where an undo or redo renamed it (QA34: an undone rename dropped the panel). */
function ioPlace(selection) {
  if (!selection || !state.graph || (selection.kind !== "input" && selection.kind !== "output")) return null;
  const list = (selection.kind === "input" ? state.graph.inputs : state.graph.outputs) || [];
  const place = list.findIndex((v) => v.name === selection.id);
  return place < 0 ? null : { kind: selection.kind, id: selection.id, place, count: list.length };
}

/** An ioPlace selection in `graph`: by its name, else the one at its place when as many are
 * listed (a rename moves none; one removed or added would make it another). */
function ioSelectionIn(graph, selection) {
  const list = (selection.kind === "input" ? graph.inputs : graph.outputs) || [];
  const named = list.some((v) => v.name === selection.id);
  const now = !named && list.length === selection.count ? list[selection.place] : null;
  return { kind: selection.kind, id: now ? now.name : selection.id };
}

/** A node selection as the graph on screen knows it: its `address` (kept over an edit) or its
 * id (a link's address, by name or position) resolved to the node's id; else as it was. */
function nodeSelectionIn(graph, model, selection) {
  for (const key of [selection.address, selection.id]) {
    const id = key ? nodeIdIn(graph, key) : null;
    if (id && model.boxes.has(id)) return { kind: "node", id };
  }
  return selection;
}

// ------------------------------------------------------------------ an earlier revision, read-only

/** The revision a summary asked `at` shows read-only: null when it is the head (edits go on). */
function viewingOf(summary, at) {
  return at !== null && summary.revision !== summary.head ? summary.revision : null;
}

/** Does a link's `at` (null: the current revision) ask for another revision than the one on screen? */
function wantsOtherRevision(at) {
  if (!state.summary) return false;
  if (at === null) return state.viewing !== null;
  return at !== state.summary.revision;
}

/** Put revision `at` (null: the current one) on screen: its summary, the toolbar, its checks,
 * the costs and comparison made of it; the caller draws its graph. */
async function showRevision(at) {
  let summary;
  try {
    summary = await api.getSummary(state.modelId, at);
  } catch (err) {
    toast(`Revision ${at} could not be shown: ${err.message || err}`);
    if (state.viewing === null) return;
    summary = await api.getSummary(state.modelId);
    at = null;
  }
  state.summary = summary;
  state.viewing = viewingOf(summary, at);
  state.times = null;
  watchValidation();
  renderToolbar();
  refreshHeat();
  if (state.compare) compareWith(state.compare.choice);
}

/** The link to revision `rev` on the graph on screen: read-only unless it is the head; back to
 * the head, a node selected is followed to where it is now. */
function revisionHash(rev) {
  const path = state.graph ? state.graph.address ?? state.path : state.path;
  if (state.summary && rev === state.summary.head) return buildHash(path, linkSelection(state.selection), onScreen(), null);
  return buildHash(path, linkSelection(state.selection), null, rev);
}

/** Above the drawing once the model is deleted (on another page, by a teammate): what the
 * page still shows is all there is; edits and History can't go on. */
function showModelGone() {
  const banner = $("model-gone");
  if (!banner.hidden) return;
  clear(banner);
  banner.append(
    el("span", { class: "past-words" }, el("strong", {}, "This model was deleted"), ", on another page or by another user: nothing here can be saved."),
    el("a", { class: "btn btn-small btn-primary", href: `${document.body.dataset.root || ""}/` }, "Open the models list"));
  banner.hidden = false;
  // nothing can be saved or downloaded any more: the panels go read-only, Undo and Download off
  state.gone = true;
  if (state.summary) state.summary = { ...state.summary, can_undo: false, can_redo: false };
  setBusy(true); // edits, undo and redo would each say it again
  renderSidebar();
}

document.addEventListener("studio:model-gone", (e) => {
  if (/** @type {CustomEvent} */ (e).detail.id === state.modelId) showModelGone();
});

/** Above the drawing while an earlier revision is on screen: which, and the way back. */
function renderPastBanner() {
  const banner = $("past-revision");
  const s = state.summary;
  clear(banner);
  banner.hidden = state.viewing === null || !s;
  if (banner.hidden) return;
  const back = el("button", { type: "button", class: "btn btn-small btn-primary", id: "past-back" }, `Back to revision ${s.head}`);
  back.addEventListener("click", () => { window.location.hash = revisionHash(s.head); });
  const restore = el("button", {
    type: "button", class: "btn btn-small", id: "past-restore", disabled: state.busy,
    title: `Make what revision ${s.revision} holds the current model again: a new revision after ${s.head}, which stays in the history`,
  }, "Restore it");
  restore.addEventListener("click", () => restoreRevision(s.revision));
  // short enough for a laptop's drawing column (the longer words cut off what mattered at 1024 px)
  const words = `, read-only: edits go on from revision ${s.head}.`;
  const title = `Revision ${s.revision}, as it was: read-only. The model is now at revision ${s.head}; edits, undo and redo start there.`;
  banner.append(el("span", { class: "past-words", title }, el("strong", {}, `Revision ${s.revision}`), words), restore, back);
}

/** "Restore it" (the banner, History): what revision `rev` holds becomes the head, as a new
 * revision (POST .../restore); the page goes on there, editable, on the graph and node on screen
 * (kept by name, as after an edit). */
async function restoreRevision(rev) {
  if (state.busy || !state.summary) return;
  setBusy(true);
  try {
    const result = await withWaitStatus(waitPill, "Restoring…", () => api.restoreRevision(state.modelId, state.summary.head, rev));
    state.viewing = null;
    await refreshAfter(result.summary);
    toast(result.unchanged ? `The current revision already holds what revision ${rev} holds: nothing changed.`
      : `Revision ${rev} restored as revision ${state.summary.revision}; Undo goes back.`, "info");
  } catch (err) {
    toast(err.status === 409 ? `Not restored: the model was changed elsewhere. ${err.message || ""}` : `Not restored: ${err.message || err}`);
    if (err.status === 409) {  // the page catches up with the head it did not know of
      if (state.viewing !== null) await showRevision(state.viewing);
      else await refreshAfter(null).catch(() => {});
    }
  } finally {
    setBusy(false);
  }
}

// ------------------------------------------------------------------ links

/** The graph path and selection a link (parseHash) means in the revision on screen. A link
 * written in another revision that names anything by position is followed by the names those
 * nodes had there (GET .../locate); names alone mean the same in every revision. */
async function followLink({ rev, path, selection }) {
  const node = selection && selection.kind === "node" ? selection.id : null;
  const current = state.summary ? state.summary.revision : rev;
  // a node named in another revision is followed too: renamed since, its name finds nothing
  if (rev === null || rev === current || !(hasPositions(path) || node)) return { path, selection };
  try {
    const now = await api.locate(state.modelId, rev, { path, node: node && apiAddress(path, node) });
    if (now.path === null) {
      toast(`The graph this link shows (revision ${rev}) is no longer in the model: showing the main graph.`);
      return { path: "", selection: null };
    }
    if (node && now.node === null) toast(`The node this link names (revision ${rev}) is no longer in the model.`);
    return { path: now.path, selection: node ? (now.node ? { kind: "node", id: now.node } : null) : selection };
  } catch (err) {
    // a name that revision never had: looked for as it is (the page says when it finds nothing)
    if (err.status === 404 && !hasPositions(path) && !hasPositions(node)) return { path, selection };
    toast(`This link (revision ${rev}) could not be followed: ${err.message || err}`);
    return { path: "", selection: null };
  }
}

// ------------------------------------------------------------------ the heat map of costs

/** Colour the drawing by a cost of its boxes (null: by op kind again), with a legend; drawn
 * again for each new drawing (a group expanded or collapsed changes what is compared). */
function showHeat(metric, stats) {
  state.heat = metric ? { metric, stats } : null;
  // Compare's outlines (amber on changed boxes) would sit on amber heat: the heat map waits
  // under them, and comes back when they go (showCompareMarks)
  const shown = metric && !compareMarksShown() ? metric : null;
  const drawn = shown ? drawnValues(stats.nodes, shown, (ids) => view.drawnBoxesOf(ids)) : null;
  const heat = drawn ? { ...heatClasses(drawn.values, shown), groups: drawn.groups } : null;
  for (const cls of HEAT_CLASSES) view.mark(heat ? /** @type {string[]} */ (heat.classes.get(cls)) : [], cls);
  renderHeatLegend(heatLegendEl, shown, heat, () => showHeat(null, stats), (stats && stats.unknown && stats.unknown.dims) || []);
  graphEl.dataset.heat = shown || "";
}

const compareMarksShown = () => (view.marks.get("diff-added") || []).length + (view.marks.get("diff-changed") || []).length > 0;
const heatAgain = () => { if (state.heat) showHeat(state.heat.metric, state.heat.stats); };
view.on((type) => { if (type === "scene" && state.heat) showHeat(state.heat.metric, state.heat.stats); });

// ------------------------------------------------------------------ compare

/** Compare the revision on screen with "rev:N" or "model:ID" (null: stop); marks the drawing. */
async function compareWith(choice) {
  if (!choice) {
    state.compare = null;
    view.mark([], "diff-added");
    view.mark([], "diff-changed");
    view.mark([], "diff-focus");
    heatAgain();
    renderSidebar();
    syncHash();
    return;
  }
  const current = state.summary.revision;
  const [kind, value] = [choice.slice(0, choice.indexOf(":")), choice.slice(choice.indexOf(":") + 1)];
  const query = kind === "rev" ? { from: Number(value), to: current } : { other: value, revision: current };
  state.compare = { choice, diff: null, step: -1 };
  renderSidebar();
  syncHash();
  try {
    const diff = await api.getDiff(state.modelId, query);
    if (!state.compare || state.compare.choice !== choice) return; // another choice meanwhile
    state.compare.diff = diff;
    showCompareMarks(state.panel === "compare");
  } catch (err) {
    if (state.compare) state.compare.error = `The comparison failed: ${err.message || err}`;
  }
  if (state.panel === "compare") renderSidebar();
}

/** The comparison's marks on the drawing: shown while Compare (or a node opened from it) is the
 * sidebar, hidden under another toolbar panel (no legend there says what orange means), kept. */
function showCompareMarks(on) {
  const diff = state.compare && state.compare.diff;
  const shown = (view.marks.get("diff-added") || []).length + (view.marks.get("diff-changed") || []).length > 0;
  if (!diff || on === shown) return;
  view.mark(on ? diff.nodes.added.map((n) => n.node) : [], "diff-added");
  view.mark(on ? diff.nodes.changed.map((n) => n.node) : [], "diff-changed");
  if (!on) view.mark([], "diff-focus");
  heatAgain();
}

// a node id's segments compared in order, positions by number: n2 < n10, a Loop before its body's nodes
const idOrder = (a, b) => {
  const x = a.split("/");
  const y = b.split("/");
  for (let k = 0; k < Math.min(x.length, y.length); k += 1) {
    if (x[k] === y[k]) continue;
    const [p, q] = [/^n(\d+)$/.exec(x[k]), /^n(\d+)$/.exec(y[k])];
    return p && q ? Number(p[1]) - Number(q[1]) : x[k] < y[k] ? -1 : 1;
  }
  return x.length - y.length;
};

/** Previous/Next: the changed and added nodes in the order of the model, into bodies and
 * functions too (the graph a node is in opened for it: Next stopped at a Loop, QA20 F13). */
async function stepCompare(direction) {
  const c = state.compare;
  if (!c || !c.diff) return;
  const ids = [...c.diff.nodes.changed, ...c.diff.nodes.added].map((n) => n.node).sort(idOrder);
  if (!ids.length) return;
  const at = ids.indexOf(c.stepped || "");
  if (at >= 0) c.step = (at + direction + ids.length) % ids.length;
  else {
    // the first step: from the graph on screen (its first node, or last going back), else the model's
    const here = ids.map((id, k) => (graphPathOf(id) === state.path ? k : -1)).filter((k) => k >= 0);
    c.step = here.length ? here[direction > 0 ? 0 : here.length - 1] : direction > 0 ? 0 : ids.length - 1;
  }
  const id = ids[c.step];
  c.stepped = id;
  // the Compare panel stays (a node selected would take its place): the node outlined instead
  if (graphPathOf(id) !== state.path) await loadGraph(graphPathOf(id), { home: false, selection: null, pick: false });
  if (state.compare !== c) return;
  focusCompared(id);
}

/** The comparison's node `id` (in the graph on screen) outlined, brought into view, marked in
 * Compare's list, and named in the URL. */
function focusCompared(id) {
  view.mark([id], "diff-focus");
  view.reveal(id);
  for (const li of sidebar.querySelectorAll(".compare-list li[data-node], .compare-changed")) li.classList.toggle("compare-current", li.getAttribute("data-node") === id);
  syncHash();
}

/** A link's comparison (#compare=rev:0&focus=@relu) opened as Compare would have it. */
async function openLinkedComparison(link) {
  if (!link.compare) return;
  state.panel = "compare";
  showPanel(true);
  await compareWith(link.compare);
  const c = state.compare;
  if (!c || !c.diff || !link.focus || !state.graph || !state.model) return;
  const found = nodeSelectionIn(state.graph, state.model, { kind: "node", id: link.focus });
  if (state.model.boxes.has(found.id)) {
    c.stepped = found.id;
    focusCompared(found.id);
  }
}

// the revision on screen and a comparison's two sides, each asked once (Compare asked both
// sides again and again through a one-entry cache)
const STATS_KEPT = 4;
/** @type {Map<string, Promise<any>>} */
const statsAsked = new Map();
/** GET .../stats once per model, revision and sizes: the model panel is drawn again as verdicts
 * and the graph arrive, and each drawing asked anew (three requests computing the same costs). */
function statsOf(revision, sizes, modelId = state.modelId) {
  const key = JSON.stringify([modelId, revision, sizes]);
  let answer = statsAsked.get(key);
  if (answer) statsAsked.delete(key); // kept as the latest asked
  else {
    answer = api.getStats(modelId, sizes, revision);
    const asked = answer;
    asked.catch(() => { if (statsAsked.get(key) === asked) statsAsked.delete(key); });
    if (statsAsked.size >= STATS_KEPT) statsAsked.delete(statsAsked.keys().next().value);
  }
  statsAsked.set(key, answer);
  return answer;
}

/** A run's node times (its "profile"), for the node panels of that revision. */
function rememberTimes(answer) {
  const nodes = answer.profile.nodes || [];
  const total = nodes.reduce((a, n) => a + n.time_us, 0) || 1;
  // nodes inside subgraphs too: their share of the run, which their If/Loop/Scan node's includes
  const timed = [...nodes, ...(answer.profile.subgraph_nodes || [])];
  /** @type {Map<string, {time_us: number | null, share: number | null, deployed?: object}>} */
  const byNode = new Map(timed.map((n) => [n.node, { time_us: n.time_us, share: n.time_us / total }]));
  // and as onnxruntime runs it by default: the kernel each node ran in, or what it was fused into
  const run = answer.profile.optimized_run || {};
  const runTotal = (run.ops || []).reduce((a, o) => a + o.time_us, 0) || 1;
  for (const d of run.by_node || []) {
    const entry = byNode.get(d.node) || { time_us: null, share: null };
    entry.deployed = { ...d, share: d.time_us / runTotal };
    byNode.set(d.node, entry);
  }
  state.times = { revision: answer.revision, byNode };
}

/** After an edit, undo or redo: the heat map of the revision now on screen. */
function refreshHeat() {
  if (!state.heat) return;
  const { metric } = state.heat;
  // a run's times are that revision's: off, until the next run measures this one
  if (!(metric in HEAT_METRICS)) { showHeat(null, null); return; }
  statsOf(state.summary.revision, state.dimSizes || {})
    .then((stats) => { if (state.heat && state.heat.metric === metric) showHeat(metric, stats); })
    .catch(() => showHeat(null, null));
}

/** Outline the nodes that shape inference or onnxruntime complain about (main-graph nodes). */
function markProblems() {
  const v = (state.summary && state.summary.validation) || {};
  const failing = [...(v.inference_errors || []), v.runtime && v.runtime.status === "fails" ? v.runtime : {}];
  view.mark(state.path === "" ? failing.map((e) => e.node).filter(Boolean) : [], "has-error");
}

// ------------------------------------------------------------------ loading a graph

/** The summary model.html started fetching while the modules loaded (first load only). */
async function prefetchedSummary() {
  const pre = window.summaryPrefetch;
  window.summaryPrefetch = null;
  const text = pre ? await pre : null;
  return text === null ? null : api.parseJSON(text);
}

/** The graph model.html started fetching while the modules loaded (first load only). */
async function prefetchedGraph(path) {
  const pre = window.graphPrefetch;
  window.graphPrefetch = null;
  if (!pre || pre.path !== path) return null;
  const text = await pre.text;
  return text === null ? null : api.withScopeLevels(api.parseJSON(text));
}

/** The node of graph `path` holding the subgraph `inner` (at any depth), or null:
 * ("", "n3/then_branch/n0/body") -> "n3"; ("n3/then_branch", "n3/then_branch/n0/body") -> "n3/then_branch/n0". */
function holderIn(path, inner) {
  const prefix = path ? `${path}/` : "";
  if (!inner || !inner.startsWith(prefix)) return null;
  const m = /^n\d+(?=\/)/.exec(inner.slice(prefix.length));
  return m ? prefix + m[0] : null;
}

/** Remember how the graph on screen looks (view, expanded groups, selection): coming back to it
 * shows it so (state.views, a few graphs per page). */
function rememberGraph() {
  const snap = state.graph ? view.snapshot() : null;
  if (!snap) return;
  state.views.delete(state.path);
  state.views.set(state.path, { ...snap, selection: state.selection });
  if (state.views.size > 32) state.views.delete(state.views.keys().next().value);
}

/** Show graph `path` (either address form); `fallbackPath`: the one to show should `path` be gone;
 * `pick: false`: with no selection asked for, none (a panel of the toolbar's stays). */
async function loadGraph(path, { home = true, selection = state.selection, keepPanel = false, fallbackPath = path, pick = true } = {}) {
  const seq = ++state.loadSeq;
  const stale = () => seq !== state.loadSeq;
  const samePath = !!state.graph && (path === state.path || path === state.graph.address);
  const cameFrom = samePath ? null : state.path;
  if (!samePath) rememberGraph();
  setGraphState("loading", samePath ? "Updating…" : "Loading graph…");
  delete graphEl.dataset.types;
  let graph;
  try {
    graph = (await prefetchedGraph(path)) || await api.getGraph(state.modelId, path, onScreen()).catch((err) => {
      if (err.status === 404 && fallbackPath !== path) return api.getGraph(state.modelId, fallbackPath, onScreen());
      throw err;
    });
  } catch (err) {
    if (stale()) return;
    showGraphError(err, path);
    return;
  }
  if (stale()) return;
  if (inFunction(graph)) await typeFunctionBody(graph);
  if (stale()) return;
  performance.mark("studio:graph-parsed");
  const model = buildGraphModel(graph, undefined, { lazy: true });
  performance.mark("studio:model-built");
  state.graph = graph;
  state.path = graph.path ?? path;
  state.model = model;
  if (selection && selection.kind === "node") selection = nodeSelectionIn(graph, model, selection);
  else if (selection && selection.place !== undefined) selection = ioSelectionIn(graph, selection);
  renderBreadcrumb(breadcrumb, graph, panelContext);
  if (!samePath && (path || cameFrom)) { // into a subgraph or back out: where one is now
    const where = [...breadcrumb.querySelectorAll(".crumb")].map((c) => c.textContent.trim()).join(" › ");
    announce(`${where}: ${(graph.nodes || []).length} nodes${path ? "; Backspace goes back" : ""}`);
  }
  // back to a graph seen before: as it was left; with no selection asked for, the node holding
  // the subgraph we come from, else what was selected here
  const memory = samePath ? null : state.views.get(state.path) || null;
  const holder = samePath ? null : holderIn(state.path, cameFrom);
  if (!samePath && !selection && pick) {
    selection = holder && model.boxes.has(holder) ? { kind: "node", id: holder } : memory ? memory.selection : null;
  }
  // a graph opened fresh shows its selection; one come back to, only something else asked for (a link)
  const revealSelection = home && (!memory || (selectionKey(selection) !== selectionKey(memory.selection)
    && !(holder && selection && selection.kind === "node" && selection.id === holder)));
  const drawing = view.show(model, { home, focus: boxIdOf(selection), keep: samePath, restore: memory });
  state.selection = selectionValid(model, selection) ? selection : null;
  // The panel is drawn once the graph is (a small graph's layout answers in a few ms, and a
  // panel drawn meanwhile held its answer 20-40 ms), or while a layout takes longer than that.
  let panelDrawn = keepPanel;
  const drawPanel = () => {
    if (panelDrawn || stale()) return;
    panelDrawn = true;
    renderSidebar().then(() => {
      if (stale()) return;
      sidebar.dataset.state = "ready";
      performance.mark("studio:sidebar-drawn");
    });
  };
  if (!keepPanel) delete sidebar.dataset.state;
  const panelTimer = setTimeout(drawPanel, PANEL_WAITS_MS);
  let drawn;
  try {
    drawn = await drawing;
  } catch (err) {
    clearTimeout(panelTimer);
    if (stale()) return;
    showGraphError(err, path);
    return;
  }
  if (stale() || !drawn) return;
  markProblems();
  highlightSelection();
  if (revealSelection && state.selection) view.reveal(boxIdOf(state.selection));
  await painted();
  if (stale()) return;
  setGraphState("ready", model.boxes.size === 0 ? "This graph is empty." : "");
  performance.mark("studio:ready");
  syncHash(); // after the paint: a same-document navigation costs the first frame 4-6 ms
  firstViewShown();
  clearTimeout(panelTimer);
  drawPanel();
  if (graph.inferred_types === "deferred") fillDeferredTypes(graph, model);
}

/** A big graph comes without shape inference's types (they would hold its first view back):
 * once it is drawn they are asked for, and fill the panels and the edges drawn from then on. */
async function fillDeferredTypes(graph, model) {
  let answer;
  try {
    answer = await api.getTypes(state.modelId, graph.path || "", graph.revision);
  } catch {
    return; // the types are a help, not the graph: it stays as drawn
  }
  if (state.graph !== graph) return;
  graph.inferred_value_info = answer.inferred_value_info;
  if (inFunction(graph)) graph.typed_at = answer.typed_at;
  graph.inferred_types = "included";
  addInferredTypes(model, answer.inferred_value_info);
  graphEl.dataset.types = "inferred"; // for tests and tools: the types are in
  // a node or value panel opened meanwhile shows them too, unless the person is busy in it
  if (state.selection && !busyIn(sidebar)) renderSidebar();
}

/** Whether a graph is a model-local function's body or a graph its nodes hold ("fn[0]",
 * "fn[0]/n2/then_branch"): a FunctionProto declares no types, its call gives them. */
function inFunction(graph) {
  return (graph.path || "").startsWith("fn[");
}

// how long a function's body waits for its types before it is drawn without them (the first
// ask infers every function's body in the helper: on a big model with many functions, a while)
const FUNCTION_TYPES_WAIT_MS = 3000;

/** A function's body: its values' types as at one call of it (GET .../types: `typed_at` says
 * which call), asked for before it is drawn so its edges and input/output boxes show them. When
 * they take longer than FUNCTION_TYPES_WAIT_MS it is drawn without, and they fill in as a big
 * graph's deferred types do (the panels, and edges drawn from then on). */
async function typeFunctionBody(graph) {
  const asked = api.getTypes(state.modelId, graph.path, graph.revision).catch(() => null);
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve("late"), FUNCTION_TYPES_WAIT_MS); });
  const answer = await Promise.race([asked, late]);
  clearTimeout(timer);
  if (answer === "late") {
    graph.inferred_types = "deferred";
    return;
  }
  if (!answer) return; // the types are a help, not the graph: drawn as the function declares it
  graph.inferred_value_info = answer.inferred_value_info;
  graph.typed_at = answer.typed_at;
}

// how long a first view's panel waits for the drawing before it is drawn anyway: the panels'
// chunk (~100 KB) loaded and run while a small graph's first frame is drawn (a fresh page:
// ~150-250 ms from the graph to its paint) would hold that frame 10-20 ms
const PANEL_WAITS_MS = 500;

function showGraphError(err, path) {
  view.reset();
  Object.assign(state, { graph: null, model: null, selection: null, path });
  clear(breadcrumb);
  const message = el("div", { class: "error-card" },
    el("strong", {}, err.status === 404 && path ? `This graph does not exist in revision ${onScreen()}.` : "The graph could not be shown."),
    el("div", {}, err.message || String(err)),
    path ? el("a", { href: buildHash("", null) }, "Open the main graph") : null);
  setGraphState("error", message);
  renderSidebar().then(() => { sidebar.dataset.state = "ready"; });
}

// ------------------------------------------------------------------ edits, undo, redo

async function refreshAfter(summary, options = {}) {
  // the graph and node on screen, kept by name: the change may have moved their positions (an
  // undo bringing back a node before them); by position when the name is gone (a rename)
  let path = state.graph ? state.graph.address ?? state.path : state.path;
  const io = options.selection === undefined ? ioPlace(state.selection) : null;
  const keep = options.selection === undefined && state.selection && state.selection.kind === "node"
    ? { selection: { ...state.selection, address: linkSelection(state.selection).id } } : io ? { selection: io } : {};
  const was = state.summary ? state.summary.revision : null;
  state.summary = summary || await api.getSummary(state.modelId);
  const kept = keep.selection ? keep.selection.address : null;
  if (was !== null && was !== state.summary.revision && (hasPositions(path) || hasPositions(kept))) {
    // an unnamed Loop's body (or node) is addressed by its position, which the change may have
    // moved (an undo bringing back a node before it): followed as a link of the revision before is
    const moved = await followLink({ rev: was, path, selection: kept ? { kind: "node", id: kept } : null });
    path = moved.path;
    if (keep.selection) keep.selection = moved.selection ? { ...moved.selection, address: moved.selection.id } : null;
  }
  watchValidation();
  renderToolbar();
  refreshHeat();
  if (state.compare) compareWith(state.compare.choice);
  await loadGraph(path, { home: false, fallbackPath: state.path, ...keep, ...options });
}

/** The words for a 409: the model changed elsewhere (`since`: how); the page has caught up. */
function staleError(err, since) {
  const rev = state.summary ? state.summary.revision : "?";
  return new api.ApiError(`Not saved: the model was changed elsewhere — ${since}. The page now shows revision ${rev}; `
    + `what you typed is kept: save again to apply it to revision ${rev}.`, err.status, err.code);
}

/**
 * @param {object[]} ops
 * @param {{selection?: {kind: string, id: string} | null, home?: boolean}} [options] what to select
 *   after the change; `home`: the view starts over at the graph's top (a tool that redraws the
 *   whole graph: the place on screen no longer shows what it did)
 */
async function applyEdits(ops, options = {}) {
  return saveChange(() => api.postEdits(state.modelId, state.summary.revision, ops), "Saving…", options);
}

/** A recipe file replayed on the current revision (POST .../recipe): its batches as revisions,
 * the page then at the last; `said(answer)` words the toast. */
async function applyRecipe(file, onProgress, said) {
  return saveChange(() => api.applyRecipe(state.modelId, state.summary.revision, file, onProgress), "Applying the recipe…", { said });
}

/** Send a change of the model (`send()`: its request, answering as POST .../edits does) and go on
 * at the revision it made: the drawing, the panels, what it says of the outputs.
 * @param {() => Promise<any>} send
 * @param {string} waiting
 * @param {{selection?: any, home?: boolean, said?: ((answer: any) => string) | null}} [options]
 */
async function saveChange(send, waiting, { selection = undefined, home = false, said = null } = {}) {
  if (state.busy) throw new Error("Another change is still being saved.");
  if (state.viewing !== null) throw new Error(`Revision ${state.viewing} is shown read-only: edits are made on the current revision.`);
  setBusy(true);
  const baseRan = ((state.summary.validation || {}).runtime || {}).status === "ok";
  try {
    const result = await withWaitStatus(waitPill, waiting, send);
    if (result && result.unchanged) {
      // the same value saved again: no new revision, nothing to redraw; right after a save (Enter,
      // then a click on Save) the "Saved as revision N" it repeats stays up
      // a tool that found nothing to do says why (simplify: what it kept as it is)
      if (result.notes && result.notes.length) toast(`Nothing changed: ${result.notes.join("; ")}`, "info");
      else if (performance.now() - savedShownAt > 3000) toast("Nothing changed: the model already says that.", "info");
      return result;
    }
    // a big model's smoke run finishes after the edit is stored: if it then fails where the
    // base ran, watchValidation says so at once (the badge alone is easy to miss)
    if (baseRan && result && result.summary) state.brokenIfFails = result.summary.revision;
    const keptBefore = ((state.summary.validation || {}).reference || {}).status === "passed";
    // what was typed elsewhere in the panel and not saved stays typed through its redraw (QA36 #5:
    // a value kept after a 409 was lost when another field was saved); the form saved goes
    const typed = sidebarTyped.take();
    const unsaved = { taken: typed.taken.filter((t) => !t.sending), sent: [] };
    await refreshAfter(result && result.summary, { ...(selection === undefined ? {} : { selection }), ...(home ? { home: true } : {}) });
    sidebarTyped.put(unsaved);
    const changes = (result && result.changes) || [];
    // the gate could not wait for onnxruntime on a model this big: said, and said again if it then fails
    const checking = ((result && result.validation && result.validation.runtime) || {}).status === "pending"
      ? " onnxruntime is still checking it: the badge says when it is done." : "";
    // (QA28: "…updated onnxruntime is still checking": the changes' sentence ends first)
    const saved = `Saved as revision ${state.summary.revision}${changes.length ? `: ${changes.join("; ")}` : ""}`;
    toast(said ? said(result) : `${saved}${/[.!?…]$/.test(saved) ? "" : "."}${checking}`, "info");
    savedShownAt = performance.now();
    // an edit that changes what the model computes: said at once, or when the background check ends
    const ref = ((state.summary.validation || {}).reference) || {};
    if (keptBefore && ref.status === "pending") state.outputsKeptBefore = state.summary.revision;
    else if (keptBefore) warnIfOutputsChanged(state.summary.revision, ref);
    return result;
  } catch (err) {
    throw err.status === 409 ? await movedOn(err) : err;
  } finally {
    setBusy(false);
  }
}

// The model moved on elsewhere: take its revision as the next base and draw it, the panel too
// (left as it was, it named what the new revision no longer holds), with what the person typed
// kept in it; trying again applies the change on top of that revision. Resolves to the error
// to show (in the form that replaced the one it was sent from; a toast when none did).
// The node whose panel was open is followed by what it is (GET .../locate), never by its
// position: deleted meanwhile, the node that took its place is not given what was typed for it
// (QA26: a teammate's delete, then "try again" set the next node's alpha).
async function movedOn(err) {
  const typed = sidebarTyped.take();
  const was = state.summary.revision;
  const editing = editedNode();
  state.summary = await api.getSummary(state.modelId).catch(() => state.summary);
  renderToolbar();
  const since = await changedSince(state.modelId, was, state.summary.revision);
  let path = state.graph ? state.graph.address ?? state.path : state.path;
  let selection;
  if (editing) {
    const now = await api.locate(state.modelId, was, { path, node: editing.address }).catch(() => null);
    if (now && now.path !== null) path = now.path;
    if (!now || !now.node) {
      await loadGraph(now && now.path !== null ? path : state.path, { home: false, selection: null, pick: false, fallbackPath: "" });
      const lost = typed.taken.map((t) => t.value).filter((v) => v !== "");
      const gone = new api.ApiError(`Not saved: ${editing.label} is no longer in the model — ${since}. `
        + `What you typed${lost.length ? ` (${lost.map((v) => `“${v}”`).join(", ")})` : ""} was given to no other node.`, err.status, err.code);
      toast(gone.message);
      return gone;
    }
    selection = { kind: "node", id: now.node };
  }
  await loadGraph(path, { home: false, keepPanel: true, fallbackPath: state.path, ...(selection ? { selection } : {}) });
  await renderSidebar();
  const stale = staleError(err, since);
  if (!sidebarTyped.put(typed)) toast(stale.message);
  return stale;
}

/** The node whose panel is open: its address in the revision on screen and its words. */
function editedNode() {
  if (!state.selection || state.selection.kind !== "node" || !state.model) return null;
  const box = state.model.boxes.get(state.selection.id);
  if (!box || !box.node) return null;
  const node = box.node;
  // as the API takes it (a name's "/" percent-encoded), not as a link writes it
  return { address: nodeAddress(state.graph, node), label: node.name ? `node “${node.name}” (${node.op_type})` : `the ${node.op_type} node ${state.selection.id}` };
}

/** Attach the external data files the model lacks (panels/missing-data.js): a new revision. */
async function attachDataFiles(files, location = null) {
  if (state.busy) throw new Error("Another change is still being saved.");
  setBusy(true);
  try {
    const result = await withWaitStatus(waitPill, "Uploading…", () => api.attachDataFiles(state.modelId, state.summary.revision, files, undefined, location));
    await refreshAfter(result.summary);
    toast(`Saved as revision ${state.summary.revision}: ${result.changes.join("; ")}`, "info");
  } catch (err) {
    throw err.status === 409 ? await movedOn(err) : err;
  } finally {
    setBusy(false);
  }
}

async function step(direction, steps = 1, words = "") {
  if (state.busy || !state.summary) return;
  if (state.viewing !== null) {
    toast(`Revision ${state.viewing} is shown read-only: back to the current revision to ${direction}.`, "info");
    return;
  }
  // the keys reach here with the button off too: nothing to step to is said, not asked (a 409)
  if (!(direction === "undo" ? state.summary.can_undo : state.summary.can_redo)) {
    toast(`Nothing to ${direction}.`, "info");
    return;
  }
  const pressed = document.activeElement === buttons.undo || document.activeElement === buttons.redo;
  setBusy(true);
  try {
    const call = direction === "undo" ? api.undo : api.redo;
    const was = state.summary.revision;
    const summary = await withWaitStatus(waitPill, direction === "undo" ? "Undoing…" : "Redoing…", () => call(state.modelId, was, steps));
    await refreshAfter(summary);
    if (steps > 1) {
      toast(`Undone ${words || `${steps} revisions`} — now at revision ${state.summary.revision}. Redo brings them back one by one.`, "info");
      return;
    }
    // what was undone is the revision left, what was redone the one reached: the toast says it
    // once the history answers (not awaited: the page is free again at once)
    const stepped = direction === "undo" ? was : state.summary.revision;
    const now = state.summary.revision;
    api.getRevisions(state.modelId)
      .then((data) => (data.revisions.find((r) => r.revision === stepped) || {}).changes || [])
      .catch(() => [])
      .then((changes) => {
        const what = changes.length ? `: ${changes.join("; ")}` : "";
        toast(`${direction === "undo" ? "Undone" : "Redone"}${what} — now at revision ${now}.`, "info");
      });
  } catch (err) {
    if (err.status === 409) {
      // Undo undoes the model's last revision, whoever made it: said before it is pressed again
      const was = state.summary.revision;
      await refreshAfter(null).catch(() => {});
      const since = await changedSince(state.modelId, was, state.summary.revision);
      // an undo elsewhere made no change of anyone's to undo: it would step back further (QA36 #7)
      const further = state.summary.revision < was ? `step back further, from revision ${state.summary.revision}` : "undo that change, not yours";
      toast(`Not ${direction === "undo" ? "undone" : "redone"}: the model was changed elsewhere — ${since}. The page now shows revision ${state.summary.revision}; `
        + (direction === "undo" ? `Undo now would ${further}: press it again only if you mean to.` : "press Redo again if you still mean to."));
      return;
    }
    toast(err.message || String(err));
  } finally {
    setBusy(false);
    keepStepFocus(pressed, direction);
  }
}

/** A keyboard user who pressed Undo (Redo) to its end stays on the toolbar: the button, now off,
 * lost the focus, so the other one takes it. */
function keepStepFocus(pressed, direction) {
  const [same, other] = direction === "undo" ? [buttons.undo, buttons.redo] : [buttons.redo, buttons.undo];
  if (!pressed) return;
  if (!same.disabled) same.focus();
  else if (!other.disabled) other.focus();
}

// ------------------------------------------------------------------ events

// the model named where its name is shown (a picked export listed as one more "model.onnx": QA34)
$("model-name").addEventListener("click", () => {
  if (!state.summary) return;
  askModelName(state.summary, (name) => {
    state.summary = { ...state.summary, name };
    renderToolbar();
    renderSidebar(); // the model panel's heading names it too
  });
});
buttons.undo.addEventListener("click", () => step("undo"));
buttons.redo.addEventListener("click", () => step("redo"));
// a toolbar panel asked for is shown, the side panel too if it was hidden
const openPanel = (panel) => { state.panel = panel; state.focusPanel = true; showPanel(true); selectBox(null); };
buttons.model.addEventListener("click", () => openPanel("model"));
if (buttons.history) buttons.history.addEventListener("click", () => openPanel("history"));
buttons.compare.addEventListener("click", () => openPanel("compare"));
buttons.run.addEventListener("click", () => openPanel("run"));
buttons.text.addEventListener("click", async () => {
  if (!state.summary || state.dataFile) return;
  const { openTextView } = await sidebarPanels();
  openTextView({
    title: state.summary.name || state.summary.id,
    // the revision on screen, not whatever the head is when the text arrives
    load: () => api.getText(state.modelId, state.summary.revision),
    downloadHref: api.textUrl(state.modelId, { download: true, revision: state.summary.revision }),
    dataHref: api.downloadHref(state.modelId, { revision: state.summary.revision, layout: "external" }),
  });
});

window.addEventListener("hashchange", async () => {
  hashFollowed();
  if (!state.summary || state.dataFile) return;
  const link = parseHash(window.location.hash);
  await followHash(link);
  // a comparison's link pasted in (its own write of the hash names the comparison open)
  if (link.compare && (!state.compare || state.compare.choice !== link.compare)) await openLinkedComparison(link);
});

/** The revision, graph and selection a hash names, shown. */
async function followHash(link) {
  const switched = wantsOtherRevision(link.at);
  if (switched) await showRevision(link.at);
  const { path, selection } = await followLink(link);
  const here = !!state.graph && (path === state.path || path === state.graph.address);
  if (switched) {
    // the same graph in another revision: drawn in place, the view kept where it was
    await loadGraph(path, { home: !here, selection, fallbackPath: "" });
    sayUnfound(selection);
    return;
  }
  if (!here || graphEl.dataset.state === "error") {
    await loadGraph(path, { home: true, selection });
    sayUnfound(selection);
    return;
  }
  const wanted = selection && selection.kind === "node" ? nodeSelectionIn(state.graph, state.model, selection) : selection;
  if (selectionKey(wanted) !== selectionKey(state.selection)) {
    select(selectionValid(state.model, wanted) ? wanted : null, { reveal: true });
    sayUnfound(selection);
  }
}

/** A link naming a node the graph drawn doesn't have (a typo, a name written by hand) is said,
 * not dropped without a word. */
function sayUnfound(selection) {
  if (!selection || selection.kind !== "node" || state.selection || !state.model) return;
  const where = state.path ? `graph ${state.path}` : "the main graph";
  toast(`This link names no node ${selection.id} in ${where} at revision ${onScreen()}: showing the graph.`);
}

// ------------------------------------------------------------------ the side panel hidden

const workspace = /** @type {HTMLElement} */ (document.querySelector(".workspace"));
const panelToggle = $("sidebar-toggle");
const PANEL_HIDDEN_KEY = "onnx-studio.panel-hidden"; // kept for the next page: a laptop's choice

function showPanel(shown) {
  workspace.classList.toggle("panel-hidden", !shown);
  panelToggle.textContent = shown ? "›" : "‹";
  panelToggle.setAttribute("aria-expanded", shown ? "true" : "false");
  const words = shown ? "Hide the side panel" : "Show the side panel";
  panelToggle.setAttribute("aria-label", words);
  panelToggle.title = `${words} (p)`;
  try { localStorage.setItem(PANEL_HIDDEN_KEY, shown ? "" : "1"); } catch { /* private mode: this page only */ }
}
panelToggle.addEventListener("click", () => showPanel(workspace.classList.contains("panel-hidden")));
try { if (localStorage.getItem(PANEL_HIDDEN_KEY)) showPanel(false); } catch { /* nothing kept */ }

document.addEventListener("keydown", (e) => {
  const t = /** @type {HTMLElement} */ (e.target);
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
  if (state.dataFile || document.querySelector("dialog[open]")) return;
  const mod = e.ctrlKey || e.metaKey;
  if (mod && e.key.toLowerCase() === "z") { e.preventDefault(); step(e.shiftKey ? "redo" : "undo"); }
  else if (mod && e.key.toLowerCase() === "y") { e.preventDefault(); step("redo"); }
  else if (!mod && e.key === "Escape") selectBox(null);
  else if (!mod && !e.altKey && e.key === "f") view.fit();
  else if (!mod && !e.altKey && e.key === "Home") view.home();
  else if (!mod && !e.altKey && e.key === "p") showPanel(workspace.classList.contains("panel-hidden"));
});

// ------------------------------------------------------------------ start

async function start() {
  const link = parseHash(window.location.hash);
  state.path = link.path;
  setGraphState("loading", "Loading model…");
  try {
    state.summary = (await prefetchedSummary()) || await api.getSummary(state.modelId, link.at).catch((err) => {
      if (link.at === null || err.code !== "unknown_revision") throw err;
      toast(`This model has no revision ${link.at}: showing the current one.`);
      link.at = null;
      return api.getSummary(state.modelId);
    });
    state.viewing = viewingOf(state.summary, link.at);
    watchValidation();
  } catch (err) {
    // the server's database or bucket down (a 503): the model is fine, the page may be reloaded soon
    const storeDown = err.code === "store_unavailable";
    $("model-name").textContent = err.status === 404 ? "Model not found" : storeDown ? "Storage unavailable" : "Error";
    clear(sidebar);
    const retry = storeDown ? el("button", { type: "button", class: "btn btn-small btn-primary retry-open" }, "Try again") : null;
    if (retry) retry.addEventListener("click", () => window.location.reload());
    const message = el("div", { class: "error-card" },
      el("strong", {}, err.status === 404 ? "There is no model with this id."
        : storeDown ? "The server can't reach its storage just now: the model is not damaged. Try again in a moment."
          : "The model could not be opened."),
      el("div", {}, err.message || String(err)),
      retry,
      el("a", { href: $("back-link").getAttribute("href") }, "Back to the model list"));
    setGraphState("error", message);
    sidebar.dataset.state = "ready";
    for (const b of [buttons.model, buttons.undo, buttons.redo, buttons.text, buttons.history, buttons.compare, buttons.run]) b.disabled = true;
    buttons.download.removeAttribute("href");
    buttons.download.classList.add("disabled");
    return;
  }
  if (state.summary.kind && state.summary.kind !== "model") {
    showDataFile(state.summary);
    return;
  }
  renderToolbar();
  sayUploadNote();
  const { path, selection } = await followLink(link);
  await loadGraph(path, { home: true, selection });
  sayUnfound(selection);
  await openLinkedComparison(link);
  watchHead(state.modelId, {
    known: () => (state.summary && !state.busy ? { head: state.summary.head, name: state.summary.name } : null),
    onMoved: showBehind,
    onRenamed: (name) => { state.summary.name = name; renderToolbar(); },
  });
}

/** Above the drawing once revisions were made elsewhere (head-watch.js): what they changed, and
 * a way to see them; gone once the page is at that head (Show it, or its own edit's 409). */
async function showBehind(head) {
  const banner = $("behind-head");
  if (Number(banner.dataset.head) === head) return;
  const was = state.summary.head;
  const since = await changedSince(state.modelId, was, head);
  if (!state.summary || state.summary.head === head) return; // caught up meanwhile
  clear(banner);
  banner.dataset.head = String(head);
  const show = el("button", { type: "button", class: "btn btn-small btn-primary", id: "behind-show" }, `Show revision ${head}`);
  show.addEventListener("click", async () => {
    if (state.busy) return;
    if (state.viewing !== null) { window.location.hash = revisionHash(head); return; }
    await refreshAfter(null);
  });
  const words = `Changed elsewhere since this page's revision ${was} — ${since}.`;
  banner.append(el("span", { class: "past-words", title: words }, el("strong", {}, "Changed elsewhere"), ` since this page's revision ${was} — ${since}.`), show);
  banner.hidden = false;
}

/** The banner goes once the page holds the head it named. */
function hideBehindIfCaughtUp() {
  const banner = $("behind-head");
  if (!banner.hidden && state.summary && state.summary.head >= Number(banner.dataset.head)) {
    banner.hidden = true;
    delete banner.dataset.head;
  }
}

/** What the models page's upload left to say about this model (index-page.js rememberUploadNote). */
function sayUploadNote() {
  try {
    const key = `upload-note:${state.modelId}`;
    const note = JSON.parse(sessionStorage.getItem(key) || "null");
    sessionStorage.removeItem(key);
    if (note && note.message) toast(note.message, note.problem ? "error" : "info");
  } catch { /* storage off or damaged: nothing to say */ }
}

/** A data file: the data view in place of the drawing; no edits, no graph controls. */
async function showDataFile(summary) {
  state.dataFile = true;
  document.body.classList.add("data-file");
  for (const b of [buttons.undo, buttons.redo, buttons.model, buttons.text, buttons.history]) if (b) b.hidden = true;
  renderToolbar();
  view.reset();
  clear(breadcrumb);
  breadcrumb.append(el("span", { class: "crumb current" }, summary.name || summary.id),
    el("span", { class: "crumb-info muted" }, `${String(summary.kind).replace("_", " ")} file · no graph`));
  const container = el("div", { class: "data-view", id: "data-view" });
  graphEl.append(container);
  graphEl.classList.add("has-data-view");
  const { renderDataPanel, renderDataView } = await sidebarPanels();
  renderDataView(container, summary, { loadTensor: (ref, offset, count) => api.getTensor(state.modelId, ref, offset, count) });
  renderDataPanel(sidebar, summary);
  sidebar.dataset.state = "ready";
  await painted();
  setGraphState("ready", "");
}

initGraphTools({ view, graphEl, state, select, selectBox, selectedBox: () => boxIdOf(state.selection) });
start();


// A big model's summary arrives before its checks finish: wait for them, then redraw the badge
// and the model panel (once per summary that says "pending").
function warnIfOutputsChanged(revision, ref) {
  if (ref && ref.status === "failed") toast(`Revision ${revision} no longer gives the outputs kept for the model (its revision before did): ${referenceCause(ref)}. Undo goes back.`);
}

function watchValidation() {
  const s = state.summary;
  const v = s && s.validation;
  const pending = v && (v.pending || (v.runtime && v.runtime.status === "pending") || (v.reference && v.reference.status === "pending"));
  if (!pending || s.validationWatched) return;
  s.validationWatched = true;
  api.getValidation(state.modelId, s.revision).then((v) => {
    if (state.summary !== s) return;
    s.validation = v;
    renderToolbar();
    showChecks();
    if (state.brokenIfFails === s.revision && v.runtime && v.runtime.status === "fails") {
      const cause = String(v.runtime.message || "").split("\n")[0];
      toast(`onnxruntime can't run revision ${s.revision}, which your edit made (the revision before ran): ${cause} — Undo goes back.`);
    } else if (state.outputsKeptBefore === s.revision) warnIfOutputsChanged(s.revision, v.reference);
  }).catch(() => {});
}
