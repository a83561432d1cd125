// Entry module of the model page (/models/<id>): loads the summary and a graph, lays it out
// in the worker, draws it, and wires the toolbar, the sidebar and the URL hash together.
import * as api from "./api.js";
import { el, clear } from "./dom.js";
import { buildGraphModel, layoutInput } from "./graph-model.js";
import { LayoutClient } from "./layout-client.js";
import { renderBreadcrumb, renderModelPanel, renderNodePanel, renderValuePanel } from "./panels.js";
import { GraphView } from "./renderer.js";
import { buildHash, parseHash, state, syncHash } from "./state.js";

const $ = (id) => document.getElementById(id);
const graphEl = $("graph");
const messageEl = $("graph-message");
const sidebar = $("sidebar");
const breadcrumb = $("breadcrumb");
const toastEl = $("toast");
const buttons = { undo: $("btn-undo"), redo: $("btn-redo"), fit: $("btn-fit"), model: $("btn-model"), download: $("btn-download") };

state.modelId = document.querySelector(".workspace").dataset.modelId;

const layoutClient = new LayoutClient(document.body.dataset.dagre);
const view = new GraphView(graphEl, { onSelect: (boxId) => selectBox(boxId) });
let layoutCache = { key: "", layout: null };

// ------------------------------------------------------------------ status + messages

function setGraphState(value, message = "") {
  graphEl.dataset.state = value;
  graphEl.setAttribute("aria-busy", value === "loading" || value === "layout" ? "true" : "false");
  clear(messageEl);
  messageEl.className = `graph-message ${value}`;
  if (message instanceof Node) messageEl.append(message); else messageEl.textContent = message;
  messageEl.hidden = !message;
}

let toastTimer = 0;
function toast(message, kind = "error") {
  toastEl.textContent = message;
  toastEl.className = `toast ${kind}`;
  toastEl.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toastEl.hidden = true; }, kind === "error" ? 8000 : 2500);
}

// Resolves once the browser has painted what was just drawn (or soon, in a hidden tab
// where animation frames do not run).
const painted = () => new Promise((resolve) => {
  const timer = setTimeout(resolve, 200);
  requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(timer); resolve(); }));
});

// ------------------------------------------------------------------ toolbar

function renderToolbar() {
  const s = state.summary;
  if (!s) return;
  $("model-name").textContent = s.name || s.id;
  $("model-name").title = s.name || "";
  $("model-revision").textContent = `rev ${s.revision}`;
  const validity = $("model-validity");
  const ok = s.validation && s.validation.ok;
  validity.hidden = false;
  validity.textContent = ok ? "valid" : "checker errors";
  validity.className = `badge ${ok ? "badge-ok" : "badge-bad"}`;
  validity.title = ok ? "onnx.checker accepts this model" : (s.validation && s.validation.message) || "";
  buttons.undo.disabled = state.busy || !s.can_undo;
  buttons.redo.disabled = state.busy || !s.can_redo;
  buttons.download.href = `${api.downloadUrl(state.modelId)}?revision=${encodeURIComponent(s.revision)}`;
  buttons.download.classList.remove("disabled");
  document.title = `${s.name || s.id} · ONNX Studio`;
}

function setBusy(busy) {
  state.busy = busy;
  document.body.classList.toggle("busy", busy);
  renderToolbar();
}

// ------------------------------------------------------------------ selection + sidebar

function boxIdOf(selection) {
  if (!selection) return null;
  return selection.kind === "node" ? selection.id : `${selection.kind}:${selection.id}`;
}

function selectionOf(boxId) {
  const box = boxId && state.model && state.model.boxes.get(boxId);
  if (!box) return null;
  if (box.kind === "node") return { kind: "node", id: box.id };
  return { kind: box.id.startsWith("init:") ? "outer" : box.kind, id: box.name };
}

const panelContext = {
  actions: {
    setAttribute: (node, name, value) => applyEdits([{ op: "set_attribute", node, name, value }]),
    setMetadata: (key, value) => applyEdits([{ op: "set_metadata", key, value }]),
    loadTensor: (ref, offset, count) => api.getTensor(state.modelId, ref, offset, count),
    select: (boxId) => selectBox(boxId, { reveal: true }),
  },
  graphHref: (path) => buildHash(path, null),
};

function renderSidebar() {
  const boxId = boxIdOf(state.selection);
  const box = boxId && state.model ? state.model.boxes.get(boxId) : null;
  const ctx = {
    ...panelContext, model: state.model, graph: state.graph, functions: (state.summary && state.summary.functions) || [],
  };
  sidebar.dataset.panel = box ? box.kind : "model";
  if (box && box.kind === "node") renderNodePanel(sidebar, box.node, ctx);
  else if (box) renderValuePanel(sidebar, box, ctx);
  else if (state.summary) renderModelPanel(sidebar, state.summary, ctx);
  buttons.model.classList.toggle("active", !box);
}

function selectBox(boxId, { reveal = false } = {}) {
  state.selection = selectionOf(boxId);
  const id = boxIdOf(state.selection);
  view.highlight(id);
  if (reveal && id) view.reveal(id);
  renderSidebar();
  syncHash();
}

// ------------------------------------------------------------------ loading a graph

async function layoutOf(model) {
  const input = layoutInput(model);
  const key = JSON.stringify(input);
  if (layoutCache.key === key) return layoutCache.layout; // an edit that moved nothing
  const layout = await layoutClient.run(input);
  graphEl.dataset.layoutMs = String(Math.round(layout.ms));
  layoutCache = { key, layout };
  return layout;
}

async function loadGraph(path, { fit = true, selection = state.selection } = {}) {
  const seq = ++state.loadSeq;
  const stale = () => seq !== state.loadSeq;
  setGraphState("loading", state.graph && path === state.path ? "Updating…" : "Loading graph…");
  let graph;
  try {
    graph = await api.getGraph(state.modelId, path);
  } catch (err) {
    if (stale()) return;
    showGraphError(err, path);
    return;
  }
  if (stale()) return;
  const model = buildGraphModel(graph);
  state.graph = graph;
  state.path = graph.path ?? path;
  state.model = model;
  renderBreadcrumb(breadcrumb, graph, panelContext);
  setGraphState("layout", model.boxes.size > 150 ? `Laying out ${model.boxes.size} boxes…` : "");
  let layout;
  try {
    layout = await layoutOf(model);
  } catch (err) {
    if (stale()) return;
    showGraphError(err, path);
    return;
  }
  if (stale()) return;
  view.render(model, layout);
  if (fit) view.fit();
  state.selection = model.boxes.has(boxIdOf(selection)) ? selection : null;
  view.highlight(boxIdOf(state.selection));
  if (fit && state.selection) view.reveal(boxIdOf(state.selection));
  renderSidebar();
  syncHash();
  await painted();
  if (stale()) return;
  setGraphState("ready", model.boxes.size === 0 ? "This graph is empty." : "");
}

function showGraphError(err, path) {
  view.reset();
  Object.assign(state, { graph: null, model: null, selection: null, path });
  clear(breadcrumb);
  const message = el("div", { class: "error-card" },
    el("strong", {}, err.status === 404 && path ? "This graph does not exist in the current revision." : "The graph could not be shown."),
    el("div", {}, err.message || String(err)),
    path ? el("a", { href: buildHash("", null) }, "Open the main graph") : null);
  setGraphState("error", message);
  renderSidebar();
}

// ------------------------------------------------------------------ edits, undo, redo

async function refreshAfter(summary) {
  state.summary = summary || await api.getSummary(state.modelId);
  renderToolbar();
  await loadGraph(state.path, { fit: false });
}

async function applyEdits(ops) {
  if (state.busy) throw new Error("Another change is still being saved.");
  setBusy(true);
  try {
    const result = await api.postEdits(state.modelId, state.summary.revision, ops);
    await refreshAfter(result && result.summary);
    const changes = (result && result.changes) || [];
    toast(`Saved as revision ${state.summary.revision}${changes.length ? `: ${changes.join("; ")}` : "."}`, "info");
  } catch (err) {
    if (err.status === 409) {
      // The model moved on elsewhere: take its revision as the next base. The panel (and the
      // message shown in it) stays; Save again applies the change on top of that revision.
      state.summary = await api.getSummary(state.modelId).catch(() => state.summary);
      renderToolbar();
    }
    throw err;
  } finally {
    setBusy(false);
  }
}

async function step(direction) {
  if (state.busy || !state.summary) return;
  setBusy(true);
  try {
    const call = direction === "undo" ? api.undo : api.redo;
    const summary = await call(state.modelId, state.summary.revision);
    await refreshAfter(summary);
    toast(`${direction === "undo" ? "Undone" : "Redone"} — now at revision ${state.summary.revision}.`, "info");
  } catch (err) {
    toast(err.message || String(err));
  } finally {
    setBusy(false);
  }
}

// ------------------------------------------------------------------ events

buttons.undo.addEventListener("click", () => step("undo"));
buttons.redo.addEventListener("click", () => step("redo"));
buttons.fit.addEventListener("click", () => view.fit());
buttons.model.addEventListener("click", () => selectBox(null));

window.addEventListener("hashchange", () => {
  const { path, selection } = parseHash(window.location.hash);
  if (!state.summary) return;
  if (path !== state.path || graphEl.dataset.state === "error") {
    loadGraph(path, { fit: true, selection });
  } else if (boxIdOf(selection) !== boxIdOf(state.selection)) {
    selectBox(boxIdOf(selection), { reveal: true });
  }
});

document.addEventListener("keydown", (e) => {
  const t = e.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
  const mod = e.ctrlKey || e.metaKey;
  if (mod && e.key.toLowerCase() === "z") { e.preventDefault(); step(e.shiftKey ? "redo" : "undo"); }
  else if (mod && e.key.toLowerCase() === "y") { e.preventDefault(); step("redo"); }
  else if (!mod && e.key === "Escape") selectBox(null);
  else if (!mod && !e.altKey && e.key === "f") view.fit();
});

// ------------------------------------------------------------------ start

async function start() {
  const { path, selection } = parseHash(window.location.hash);
  state.path = path;
  setGraphState("loading", "Loading model…");
  try {
    state.summary = await api.getSummary(state.modelId);
  } catch (err) {
    $("model-name").textContent = err.status === 404 ? "Model not found" : "Error";
    clear(sidebar);
    const message = el("div", { class: "error-card" },
      el("strong", {}, err.status === 404 ? "There is no model with this id." : "The model could not be opened."),
      el("div", {}, err.message || String(err)),
      el("a", { href: $("back-link").getAttribute("href") }, "Back to the model list"));
    setGraphState("error", message);
    buttons.fit.disabled = true;
    buttons.model.disabled = true;
    buttons.download.removeAttribute("href");
    buttons.download.classList.add("disabled");
    return;
  }
  renderToolbar();
  await loadGraph(path, { fit: true, selection });
}

start();
