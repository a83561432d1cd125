// The graph on screen: which groups are expanded, laying out what changed, drawing, keeping
// selection/highlights on the right boxes, jumping to a node inside collapsed groups.
// model-page.js uses it where it used the plain renderer (same method names: render is
// `show`), plus expand/collapse, expand-all, collapse-all, trace and the view options.
import { allGroupIds, ancestorsOf, buildHierarchy, overviewExpanded } from "./grouping.js";
import { READABLE_SCALE, shownBoxId } from "./graph-model.js";
import { GraphView } from "../renderers/renderer.js";
import { nextTask, painted } from "../widgets/dom.js";
import { composeScene, firstViewLevels, layoutScene, planScene } from "./scene.js";
import { formatInteger } from "../lib/format.js";

const PROGRESS_AFTER_MS = 400;


function progressMessage(text, fraction) {
  const box = document.createElement("div");
  box.className = "layout-progress";
  const label = document.createElement("span");
  label.textContent = text;
  box.append(label);
  if (fraction !== null) {
    const bar = document.createElement("span");
    bar.className = "progress-bar";
    const fill = document.createElement("span");
    fill.style.width = `${Math.round(fraction * 100)}%`;
    bar.append(fill);
    box.append(bar);
  }
  return box;
}

/**
 * @typedef {object} ControllerHandlers what the drawing asks of the page
 * @property {(id: string | null) => void} onSelect a box id (null: nothing)
 * @property {(name: string) => void} onSelectTensor
 * @property {(id: string) => void} onSelectGroup
 * @property {(path: string, boxId: string) => void} onOpenSubgraph a double-click on the box of a node holding subgraphs
 * @property {(value: string, message?: string | Node) => void} setState #graph's data-state and message
 */

/** @typedef {{view: {x: number, y: number, k: number}, expanded: Set<string>}} ViewSnapshot a graph's view, to come back to */

export class GraphController {
  /**
   * @param {HTMLElement} container #graph
   * @param {import("./layout-client.js").LayoutClient} client
   * @param {ControllerHandlers} handlers (listeners of a new drawing, the selection, pan/zoom: on())
   */
  constructor(container, client, handlers) {
    this.container = container;
    this.client = client;
    this.handlers = handlers;
    this.model = null;
    this.h = null;
    this.expanded = new Set([""]);
    this.options = { names: true, attrs: false };
    this.seq = 0;
    this.plan = null;
    this.scene = null;
    this.selected = null; // a box id ("n3", "input:x") or "group:<id>"
    this.pendingReveal = null; // a box to bring into view once it is drawn
    this.revealed = null; // the drawn box last brought into view (kept in place by the second pass)
    this.activeTensor = null;
    this.marks = new Map();
    this.traceOn = false;
    this.adjacency = null;
    this.listeners = new Set();
    this.view = new GraphView(container, {
      onSelect: (id) => handlers.onSelect(id),
      onSelectTensor: (name) => handlers.onSelectTensor(name),
      onSelectGroup: (id) => handlers.onSelectGroup(id),
      onToggleGroup: (id) => this.toggle(id),
      onOpenSubgraph: (path, boxId) => handlers.onOpenSubgraph(path, boxId),
      onReference: (ref, boxId) => this.followReference(ref, boxId),
      onViewChange: (v) => this.emit("view", v),
    });
  }

  /** Listen to "scene" (a new drawing), "selection", "view" (pan/zoom) and "marks" ({cls}: boxes
   * given a class); returns the remover. */
  on(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emit(type, detail) {
    for (const fn of this.listeners) fn(type, detail);
  }

  get busy() {
    return this.container.dataset.state === "layout" || this.container.dataset.state === "loading";
  }

  // ---------------------------------------------------------------- drawing

  /**
   * Show a new graph model (a graph loaded or reloaded after an edit).
   * home: start from the reader's view (renderer.home); keep: the same graph as before (an edit): keep the expanded groups that still exist.
   * focus: a box id to show (its groups are expanded before the first layout).
   * restore: a snapshot() of this graph taken earlier (coming back to it): its expanded groups and view.
   * @param {import("./graph-model.js").GraphModel} model
   * @param {{home?: boolean, focus?: string | null, keep?: boolean, restore?: ViewSnapshot | null}} [options]
   */
  async show(model, { home = true, focus = null, keep = false, restore = null } = {}) {
    const previous = restore ? restore.expanded : this.expanded;
    const before = this.h;
    this.model = model;
    this.adjacency = null;
    this.revealed = null;
    this.h = buildHierarchy(model);
    performance.mark("studio:grouped");
    if ((keep || restore) && previous) {
      this.expanded = new Set([...previous].filter((id) => this.h.groups.has(id)));
      this.expanded.add("");
      if (keep && before) this.openNewGroups(before);
    } else {
      this.expanded = overviewExpanded(this.h);
    }
    delete this.container.dataset.expanded;
    if (focus) for (const g of ancestorsOf(this.h, focus)) this.expanded.add(g.id);
    return this.redraw({ home: home && !restore, restore: restore && restore.view, settle: false });
  }

  /** Groups the graph had none of before (an edit's or another revision's) open where their
   * parent is open: what was drawn stays drawn. A float16 conversion's Casts, scopeless beside a
   * torch export's lone "/model" scope, make "/model" a group of its own where the root had
   * opened it in place: kept shut, every node went into one box. */
  openNewGroups(before) {
    const fresh = [...this.h.groups.values()].filter((g) => g.id && !before.groups.has(g.id)).sort((a, b) => a.depth - b.depth);
    for (const g of fresh) {
      if (g.parent && this.expanded.has(g.parent.id) && g.nodeCount <= this.h.limits.smallGraph) this.expanded.add(g.id);
    }
  }

  /** What to come back to on this graph: its pan/zoom and expanded groups (null before it is drawn).
   * @returns {ViewSnapshot | null} */
  snapshot() {
    if (!this.scene || this.drawnModel !== this.model) return null;
    return { view: { ...this.view.view }, expanded: new Set(this.expanded) };
  }

  /** Plan, lay out (workers, cached), compose and draw; false when a newer redraw took over. */
  async redraw(options = {}) {
    if (options.settle === false) return this.draw(options).catch((err) => { this.drawing = false; throw err; });
    try {
      return await this.draw(options);
    } catch (err) {
      this.drawing = false;
      // the drawing on screen stays as it was; say why nothing changed
      this.handlers.setState("ready", `The drawing could not be updated: ${err.message || err}`);
      return false;
    }
  }

  /** @param {{home?: boolean, anchor?: string | null, keepInView?: boolean, readable?: boolean, restore?: {x: number, y: number, k: number} | null, settle?: boolean}} [options]
   * anchor: a drawn id kept where it was on screen (keepInView: and brought into the window);
   * restore: the view to show (pan and zoom) */
  async draw({ home = false, anchor = null, keepInView = false, readable = false, restore = null, settle = true } = {}) {
    const seq = ++this.seq;
    this.drawing = true;
    const started = performance.now();
    this.handlers.setState("layout", "");
    let shown = false;
    const report = (done, total) => {
      if (seq !== this.seq) return;
      const elapsed = performance.now() - started;
      if (elapsed < PROGRESS_AFTER_MS && !shown) return;
      shown = true;
      const secs = elapsed >= 2000 ? ` · ${(elapsed / 1000).toFixed(0)} s` : "";
      this.handlers.setState("layout", progressMessage(`Laying out ${formatInteger(done)} of ${formatInteger(total)} groups${secs}…`, total ? done / total : null));
    };
    const ticker = setInterval(() => report(this.lastDone || 0, this.lastTotal || 0), 500);
    let scene;
    let plan;
    let only;
    try {
      plan = planScene(this.model, this.h, this.expanded, this.options);
      performance.mark("studio:planned");
      this.lastTotal = plan.levels.size;
      this.lastDone = 0;
      // a first view draws once what the window shows is laid out; the rest follows
      only = home ? firstViewLevels(plan, this.h) : null;
      const laying = layoutScene(plan, (input) => this.client.run(input), (done, total) => {
        this.lastDone = done;
        report(done, total);
      }, { only });
      // the drawing area's size, measured while the workers lay out: it costs the page its
      // first full layout (~20-30 ms), and asked after a big drawing went in, the browser
      // would lay the whole drawing out on the spot
      this.view.viewportSize();
      const results = await laying;
      if (seq !== this.seq) return false;
      performance.mark("studio:laid-out");
      scene = composeScene(plan, results);
      this.plan = plan;
    } finally {
      clearInterval(ticker);
    }
    let before = null;
    if (anchor && this.scene) {
      const r = this.view.rectOf(anchor);
      if (r) before = this.view.toScreen(r.x, r.y);
    }
    this.scene = scene;
    this.drawnModel = this.model;
    performance.mark("studio:composed");
    this.view.render(scene, () => {
      if (home) this.view.home();
      else if (restore) this.view.setView(restore.x, restore.y, restore.k);
      else if (before) {
        const r = this.view.rectOf(anchor);
        if (r) this.view.anchor(r.x, r.y, before[0], before[1]);
        if (r && keepInView) this.view.reveal(anchor, { minScale: 0, zoom: 0 });
        // a group opened from a far view (Fit) is brought to a size its boxes can be read at
        if (r && readable && this.view.view.k < READABLE_SCALE) this.view.reveal(anchor, { minScale: READABLE_SCALE, zoom: READABLE_SCALE });
      }
      if (!home) this.view.keepInSight(); // a view kept over a drawing that moved away from it
      this.revealPending(!only);
    });
    this.drawing = false;
    performance.mark("studio:rendered");
    this.applyMarks();
    this.applySelection();
    this.applyTrace();
    // for benchmarks: time from asking to drawn; layouts computed / answered from the cache
    this.container.dataset.layoutMs = String(Math.round(performance.now() - started));
    const st = this.client.stats;
    this.container.dataset.layouts = `${st.computed} computed (${Math.round(st.ms)} ms in workers), ${st.cached} cached`;
    this.emit("scene", scene);
    this.container.dataset.complete = only ? "false" : "true";
    // the rest of the layout starts once the first view is painted: planning its levels takes
    // the page's thread for tens of ms that the first frame would otherwise wait for; and after
    // the page has seen that paint (its own painted(), asked for after this one: ready)
    if (only) painted().then(nextTask).then(() => { if (seq === this.seq) this.completeLayout(seq, plan); });
    if (!settle) return true;
    await painted();
    if (seq !== this.seq) return false;
    this.handlers.setState("ready", scene.boxes.length + scene.groups.length === 0 ? "This graph is empty." : "");
    return true;
  }

  /**
   * The second pass of a first view drawn before all of it was laid out: every level laid out
   * (those already done answer from the layout cache), drawn again with what is on screen kept
   * where it is. Sets #graph[data-complete=true].
   */
  async completeLayout(seq, plan) {
    let results;
    try {
      results = await layoutScene(plan, (input) => this.client.run(input));
    } catch (err) {
      if (seq === this.seq) this.handlers.setState("ready", `Part of the drawing could not be laid out: ${err.message || err}`);
      return;
    }
    if (seq !== this.seq) return;
    // what is selected stays where it is, else what a link or Find brought into view (put
    // away with Escape meanwhile: it is still what the person looks at), else the window's top box
    const anchor = this.view.anchorOnScreen([this.drawnIdOf(this.selected), this.revealed]);
    const scene = composeScene(plan, results);
    this.scene = scene;
    this.view.render(scene, () => {
      const r = anchor && this.view.rectOf(anchor.id);
      if (r) this.view.anchor(r.x, r.y, anchor.sx, anchor.sy);
      this.revealPending(true);
    });
    this.applyMarks();
    this.applySelection();
    this.applyTrace();
    this.container.dataset.complete = "true";
    performance.mark("studio:complete");
    this.emit("scene", scene);
  }

  // ---------------------------------------------------------------- groups

  isCollapsedGroup(id) {
    return this.h && this.h.groups.has(id) && !this.expanded.has(id);
  }

  /** Expand a collapsed group, collapse an expanded one (in place: it stays where it was). */
  toggle(id) {
    if (!this.h || !this.h.groups.has(id) || id === "") return Promise.resolve(false);
    // a double-click on the +/− control is one toggle, not three
    const now = performance.now();
    if (this.lastToggle && this.lastToggle.id === id && now - this.lastToggle.at < 450) return Promise.resolve(false);
    this.lastToggle = { id, at: now };
    if (this.expanded.has(id)) {
      this.expanded.delete(id);
      // collapsing a group collapses what it holds too
      const drop = (g) => { for (const c of g.children) if (c.group) { this.expanded.delete(c.group.id); drop(c.group); } };
      drop(this.h.groups.get(id));
    } else {
      this.expanded.add(id);
    }
    const opened = this.expanded.has(id);
    delete this.container.dataset.expanded;
    return this.redraw({ anchor: id, readable: opened });
  }

  expand(id) {
    return this.isCollapsedGroup(id) ? this.toggle(id) : Promise.resolve(false);
  }

  collapse(id) {
    return this.h && this.expanded.has(id) && id !== "" ? this.toggle(id) : Promise.resolve(false);
  }

  async expandAll() {
    if (!this.h) return false;
    this.expanded = new Set(["", ...allGroupIds(this.h)]);
    delete this.container.dataset.expanded;
    const ok = await this.redraw({ home: true });
    if (ok) this.container.dataset.expanded = "all";
    return ok;
  }

  /** Every group collapsed, as the button says: the graph's top-level groups in reading order
   * (it was "back to the first view", which left a BERT's embeddings open) — inside the one
   * group holding most of the graph, where there is one ("model" beside a few loose nodes:
   * collapsed, the whole LLaMA was one box). */
  collapseAll() {
    if (!this.h) return Promise.resolve(false);
    this.expanded = dominantChain(this.h);
    delete this.container.dataset.expanded;
    return this.redraw({ home: true });
  }

  /** The expanded groups the window's centre is in, outermost first ({id, label}): zoomed into
   * a layer, its frame's tab has scrolled away and this says which layer it is. */
  groupsInView() {
    if (!this.scene || !this.scene.frames.length) return [];
    const { w, h } = this.view.viewportSize();
    const { x, y, k } = this.view.view;
    const top = this.view.insetTop || 0;
    const cx = (w / 2 - x) / k;
    const cy = (top + (h - top) / 2 - y) / k;
    let inner = null;
    for (const f of this.scene.frames) {
      if (cx < f.x || cx > f.x + f.w || cy < f.y || cy > f.y + f.h) continue;
      if (!inner || f.depth > inner.depth) inner = f;
    }
    const out = [];
    for (let g = inner && inner.group; g && g.id !== ""; g = g.parent) out.unshift({ id: g.id, label: g.label });
    return out;
  }

  /** The id drawn for a box id: itself, or "group:<id>" of the collapsed group holding it. */
  /** The box that shows box `id`: itself, or for a folded Constant (a quantization pair) the
   * first box listing it. */
  shownBoxOf(id) {
    return shownBoxId(this.model, id);
  }

  drawnIdOf(id) {
    if (!id || !this.plan) return null;
    id = this.shownBoxOf(id);
    if (id.startsWith("group:")) {
      const g = this.h.groups.get(id.slice(6));
      if (!g) return null;
      const chain = [];
      for (let p = g; p && p.id !== ""; p = p.parent) chain.unshift(p);
      for (const c of chain) if (!this.expanded.has(c.id)) return c.id;
      return g.id;
    }
    const key = this.plan.visOf(id);
    return key ? key.slice(1) : null;
  }

  /** Make box `id` drawn (expanding the groups holding it) and bring it into view. */
  async reveal(id) {
    if (!id || !this.h) return;
    if (id.startsWith("group:")) {
      const g = this.h.groups.get(id.slice(6));
      if (!g) return;
      let missing = false;
      for (let p = g.parent; p && p.id !== ""; p = p.parent) if (!this.expanded.has(p.id)) { this.expanded.add(p.id); missing = true; }
      if (missing && !(await this.redraw({}))) return;
      this.view.reveal(g.id, { minScale: 0.3, zoom: 0.6 });
      return;
    }
    if (!this.model.boxes.has(id)) return;
    const groups = ancestorsOf(this.h, id).filter((g) => !this.expanded.has(g.id));
    if (groups.length) {
      for (const g of groups) this.expanded.add(g.id);
      if (!(await this.redraw({}))) return;
    }
    this.revealDrawn(this.shownBoxOf(id));
  }

  /** Bring a drawn box into view; one not laid out yet (a first view drawn before the rest
   * was laid out) is brought into view once the rest is in. */
  revealDrawn(id) {
    this.pendingReveal = id;
    // while a drawing is being laid out, the box is brought into view once it is drawn
    if (!this.drawing) this.revealPending(this.container.dataset.complete !== "false");
  }

  /** The box asked for while the drawing was not all in, brought into view once it is drawn
   * (last: when nothing more will come). */
  revealPending(last) {
    const id = this.pendingReveal;
    if (!id) return;
    if (this.view.rectOf(id) || last) {
      this.pendingReveal = null;
      this.revealed = id;
      this.view.reveal(id);
    }
  }

  // ---------------------------------------------------------------- selection and marks

  applySelection() {
    if (this.activeTensor !== null) this.view.highlightTensor(this.activeTensor);
    else this.view.highlight(this.drawnIdOf(this.selected));
    // a tensor: outline its producer and consumers too (its edges may be references)
    const t = this.activeTensor;
    const ends = t !== null && this.model ? [this.model.producer.get(t), ...(this.model.consumers.get(t) || [])] : [];
    this.view.mark([...new Set(ends.map((id) => this.drawnIdOf(id)).filter(Boolean))], "tensor-end");
  }

  highlight(id) {
    this.selected = id;
    this.activeTensor = null;
    this.applySelection();
    this.applyTrace();
    this.emit("selection", { id });
  }

  highlightTensor(name) {
    this.selected = null;
    this.activeTensor = name;
    this.applySelection();
    this.applyTrace();
    this.emit("selection", { tensor: name });
  }

  /**
   * The boxes drawn now for node ids `ids`: the id mark() takes for each box (a node's own, or
   * "group:<id>" of a collapsed group) -> the ids it shows; ids not drawn here are left out.
   * @param {string[]} ids
   * @returns {Map<string, string[]>}
   */
  drawnBoxesOf(ids) {
    const boxes = new Map();
    for (const id of ids) {
      const drawn = this.drawnIdOf(id);
      if (!drawn) continue;
      const box = this.isCollapsedGroup(drawn) ? `group:${drawn}` : drawn;
      if (!boxes.has(box)) boxes.set(box, []);
      boxes.get(box).push(id);
    }
    return boxes;
  }

  mark(ids, cls) {
    this.marks.set(cls, ids);
    this.applyMarks();
    this.emit("marks", { cls });
  }

  applyMarks() {
    for (const [cls, ids] of this.marks) {
      this.view.mark(ids.map((id) => this.drawnIdOf(id)).filter(Boolean), cls);
    }
  }

  // ---------------------------------------------------------------- upstream / downstream

  setTrace(on) {
    this.traceOn = on;
    this.applyTrace();
  }

  neighbours() {
    if (this.adjacency) return this.adjacency;
    const preds = new Map();
    const succs = new Map();
    for (const e of this.model.edges) {
      if (!preds.has(e.to)) preds.set(e.to, []);
      preds.get(e.to).push(e.from);
      if (!succs.has(e.from)) succs.set(e.from, []);
      succs.get(e.from).push(e.to);
    }
    this.adjacency = { preds, succs };
    return this.adjacency;
  }

  /** The lines as drawn around group `gid`, for the arrow keys on a selected group: its boxes
   * (at any depth) as one, "group:<gid>", and every other box as what shows it now (itself, or
   * "group:<id>" of the collapsed group holding it): a group steps to groups, a layer to the next. */
  neighboursOfGroup(gid) {
    const self = `group:${gid}`;
    const items = new Map();
    const itemOf = (id) => {
      let item = items.get(id);
      if (item === undefined) {
        const box = shownBoxId(this.model, id);
        let held = false;
        for (let g = this.h.parentOf.get(box); g && g.id !== "" && !held; g = g.parent) held = g.id === gid;
        const key = held ? null : this.plan.visOf(box);
        item = held ? self : !key ? null : key[0] === "g" ? `group:${key.slice(1)}` : key.slice(1);
        items.set(id, item);
      }
      return item;
    };
    const preds = new Map();
    const succs = new Map();
    const link = (map, a, b) => { const list = map.get(a); if (list) list.push(b); else map.set(a, [b]); };
    for (const e of this.model.edges) {
      const a = itemOf(e.from);
      const b = itemOf(e.to);
      if (a && b && a !== b) { link(succs, a, b); link(preds, b, a); }
    }
    return { preds, succs };
  }

  /** Box ids upstream and downstream of box `id` (whole graph, not just what is drawn). */
  lineage(id) {
    const { preds, succs } = this.neighbours();
    const walk = (start, next) => {
      const seen = new Set();
      const stack = [start];
      while (stack.length) {
        const v = stack.pop();
        for (const w of next.get(v) || []) if (!seen.has(w)) { seen.add(w); stack.push(w); }
      }
      seen.delete(start);
      return seen;
    };
    return { up: walk(id, preds), down: walk(id, succs) };
  }

  applyTrace() {
    const id = this.selected;
    if (!this.traceOn || !id || id.startsWith("group:") || !this.model || !this.model.boxes.has(id)) {
      this.view.setTrace(null);
      return;
    }
    const { up, down } = this.lineage(id);
    const focus = this.drawnIdOf(id);
    const map = (set) => new Set([...set].map((b) => this.drawnIdOf(b)).filter((d) => d && d !== focus));
    this.view.setTrace({ focus, up: map(up), down: map(down) });
  }

  // ---------------------------------------------------------------- references

  /** A click on a reference line: jump to the producer, or select the tensor. */
  async followReference(ref, boxId) {
    if (ref.kind === "in" && ref.tensor) {
      const producer = this.model.producer.get(ref.tensor);
      if (producer) {
        await this.reveal(producer);
        this.handlers.onSelect(producer);
        return;
      }
    }
    if (ref.kind === "out" && ref.tensor) {
      this.handlers.onSelectTensor(ref.tensor);
      return;
    }
    if (this.h.groups.has(boxId)) this.handlers.onSelectGroup(boxId);
    else this.handlers.onSelect(boxId);
  }

  // ---------------------------------------------------------------- view options

  /** Change what boxes show (names, attributes); the selection stays where it was on screen. */
  setOptions(options) {
    Object.assign(this.options, options);
    if (!this.model) return Promise.resolve(false);
    const t = this.activeTensor;
    const anchor = this.drawnIdOf(t !== null ? this.model.producer.get(t) : this.selected);
    return this.redraw({ anchor, keepInView: true });
  }

  // ---------------------------------------------------------------- pass-through

  fit() { this.view.fit(); }

  home() { this.view.home(); }

  reset() {
    this.seq += 1;
    this.scene = null;
    this.plan = null;
    this.view.reset();
  }
}

/** The root and the chain of groups below it each holding most of its parent's nodes, alone
 * among its siblings: what "every group collapsed" opens, so that it shows the model's parts. */
function dominantChain(h) {
  const open = new Set([""]);
  for (let g = h.root; ;) {
    const groups = g.children.filter((c) => c.group).map((c) => c.group);
    if (groups.length !== 1 || groups[0].nodeCount * 2 <= g.nodeCount) return open;
    g = groups[0];
    open.add(g.id);
  }
}
