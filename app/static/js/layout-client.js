// Talks to layout-worker.js: one worker per page, requests matched by sequence number.

export class LayoutClient {
  constructor(dagreUrl) {
    const url = new URL("./layout-worker.js", import.meta.url);
    url.searchParams.set("dagre", new URL(dagreUrl, window.location.href).href);
    this.url = url;
    this.seq = 0;
    this.pending = new Map();
    this.worker = null;
  }

  start() {
    this.worker = new Worker(this.url);
    this.worker.onmessage = (e) => {
      const job = this.pending.get(e.data.seq);
      if (!job) return;
      this.pending.delete(e.data.seq);
      if (e.data.ok) job.resolve(e.data); else job.reject(new Error(`Layout failed: ${e.data.error}`));
    };
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.failAll(new Error(`The layout worker stopped: ${e.message || "it could not start"}`));
      this.worker.terminate();
      this.worker = null; // the next request starts a fresh one
    };
  }

  failAll(err) {
    for (const job of this.pending.values()) job.reject(err);
    this.pending.clear();
  }

  /** Lay out {nodes, edges}; resolves to {width, height, nodes, edges}. */
  run(input) {
    if (!this.worker) this.start();
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, ...input });
    });
  }
}
