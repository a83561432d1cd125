// Talks to layout-worker.js: a small pool of workers, requests matched by sequence number, and
// a cache of finished layouts keyed by their structure (scene.js builds the key from sizes and
// connections only, never from names), so a layout is computed once per page whatever the
// number of identical groups or the number of times a group is expanded and collapsed.

const CACHE_LIMIT = 4000;
// layouts waiting on every worker before one more is started
const SPAWN_AT_QUEUE = 3;

class Worker1 {
  constructor(url) {
    this.url = url;
    this.seq = 0;
    this.pending = new Map();
    this.worker = null;
  }

  /** Start a worker, or adopt `worker` (one graph-prefetch.js started for this URL). */
  start(worker = null) {
    this.worker = worker || new Worker(this.url);
    this.worker.onmessage = (e) => {
      const job = this.pending.get(e.data.seq);
      if (!job) return;
      this.pending.delete(e.data.seq);
      if (e.data.ok) job.resolve(e.data); else job.reject(new Error(`Layout failed: ${e.data.error}`));
    };
    this.worker.onerror = (e) => {
      e.preventDefault();
      const err = /** @type {Error & {workerStopped?: boolean}} */ (new Error(`The layout worker stopped: ${e.message || "it could not start"}`));
      err.workerStopped = true;
      this.failAll(err);
      this.worker.terminate();
      this.worker = null; // the next request starts a fresh one
    };
  }

  failAll(err) {
    for (const job of this.pending.values()) job.reject(err);
    this.pending.clear();
  }

  run(message) {
    if (!this.worker) this.start();
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, ...message });
    });
  }
}

/** The worker graph-prefetch.js started for `href`, if it is there and loaded; taken once. */
function adoptEarlyWorker(href) {
  const early = window.layoutWorkerPrefetch;
  window.layoutWorkerPrefetch = null;
  if (!early) return null;
  if (early.failed || early.url !== href) {
    early.worker.terminate();
    return null;
  }
  early.worker.onerror = null;
  performance.mark("studio:worker-adopted");
  return early.worker;
}

export class LayoutClient {
  /** workerUrl: layout-worker.js (named by the page: the modules may run bundled elsewhere). */
  constructor(dagreUrl, workerUrl, size = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 2))) {
    const url = new URL(workerUrl, window.location.href);
    url.searchParams.set("dagre", new URL(dagreUrl, window.location.href).href);
    this.url = url;
    this.size = size;
    this.workers = [];
    this.cache = new Map(); // key -> Promise of a layout
    this.stats = { computed: 0, cached: 0, ms: 0 };
  }

  /** Start the first worker now (it loads and compiles dagre while the graph is fetched), or
   * take the one graph-prefetch.js started at the top of the page. */
  prewarm() {
    if (!this.workers.length) {
      const w = new Worker1(this.url);
      w.start(adoptEarlyWorker(this.url.href));
      this.workers.push(w);
    }
    return this;
  }

  /** The least busy worker; another one is started only once every worker has a queue (a
   * worker starting cold takes 100-150 ms to load and compile dagre: a small graph's few
   * layouts are done sooner by the warm one, one after another). */
  pick() {
    if (this.workers.length < this.size && this.workers.every((w) => w.pending.size >= SPAWN_AT_QUEUE)) {
      this.workers.push(new Worker1(this.url));
    }
    let best = this.workers[0];
    for (const w of this.workers) if (w.pending.size < best.pending.size) best = w;
    return best;
  }

  /**
   * Lay out one level: {key, opts, nodes, edges} (scene.js); resolves to
   * {width, height, xy, edges, labels}. The same key answers from the cache.
   */
  run(input) {
    const hit = this.cache.get(input.key);
    if (hit) {
      this.stats.cached += 1;
      this.cache.delete(input.key); // most recently used last
      this.cache.set(input.key, hit);
      return hit;
    }
    if (!this.workers.length) this.workers.push(new Worker1(this.url));
    const message = { opts: input.opts, nodes: input.nodes, edges: input.edges };
    // a worker that stopped (its script failed to load, it crashed) is replaced once
    const promise = this.pick().run(message).catch((err) => {
      if (!err.workerStopped) throw err;
      return this.pick().run(message);
    }).then((r) => {
      this.stats.computed += 1;
      this.stats.ms += r.ms;
      return r;
    });
    promise.catch(() => this.cache.delete(input.key)); // a failure is tried again next time
    this.cache.set(input.key, promise);
    if (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value);
    return promise;
  }
}
