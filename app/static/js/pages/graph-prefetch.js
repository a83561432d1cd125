// A classic script at the top of model.html's <head>: takes the model's summary and main graph
// from the page (small models: JSON data blocks), or starts fetching them, while the modules
// load (model-page.js takes the answers, or asks again when one
// failed), and starts the first layout worker. Its tag carries data-base (the model's API
// URL), data-modules (JSON: the URLs of every module the page imports), data-layout-worker and
// data-dagre (the worker's script and the dagre build it loads).
(function (script) {
  "use strict";
  if (!window.fetch || !script) return;
  var prefetch = { base: script.dataset.base, modules: JSON.parse(script.dataset.modules || "[]") };
  var mark = function (name) { if (window.performance && performance.mark) performance.mark(name); };
  var get = function (url, done) {
    return fetch(url, { headers: { Accept: "application/json" }, priority: "high" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) { mark(done); return t; })
      .catch(function () { return null; });
  };
  // a small model's summary and main graph came with the page (JSON data blocks before this script)
  var embedded = function (id, done) {
    var block = document.getElementById(id);
    if (!block) return null;
    mark(done);
    return Promise.resolve(block.textContent);
  };
  var hash = new URLSearchParams(window.location.hash.slice(1));
  var path = hash.get("path") || "";
  // #at=N: an earlier revision, read-only; the page embeds the head's
  var at = /^\d+$/.test(hash.get("at") || "") ? hash.get("at") : null;
  var graph = path === "" && at === null ? embedded("embedded-graph", "studio:graph-fetched") : null;
  var graphUrl = prefetch.base + "/graph?path=" + encodeURIComponent(path) + (at === null ? "" : "&revision=" + at);
  // a data file (a SequenceProto .pb) has no graph to ask for
  if (!script.dataset.noGraph) window.graphPrefetch = { path: path, text: graph || get(graphUrl, "studio:graph-fetched") };
  window.summaryPrefetch = (at === null && embedded("embedded-summary", "studio:summary-fetched"))
    || get(prefetch.base + (at === null ? "" : "?revision=" + at), "studio:summary-fetched");
  // a worker started later, once the page parses a big graph, could not load its script until
  // the page's thread is free again: its first layout would wait 100-300 ms for it
  if (window.Worker && script.dataset.layoutWorker) {
    try {
      var url = new URL(script.dataset.layoutWorker, window.location.href);
      url.searchParams.set("dagre", new URL(script.dataset.dagre, window.location.href).href);
      var worker = new Worker(url.href);
      var early = { url: url.href, worker: worker, failed: false };
      // a script that fails to load fails before the page listens: remembered, not lost
      worker.onerror = function (e) { e.preventDefault(); early.failed = true; };
      window.layoutWorkerPrefetch = early;
    } catch { /* the page starts its own */ }
  }
  // then every module the page imports, all at once instead of one import level after another;
  // added from here rather than as <link>s in the HTML, which the browser's preload scanner
  // would fetch first, queueing the requests above behind ~45 files
  prefetch.modules.forEach(function (href) {
    var link = document.createElement("link");
    link.rel = "modulepreload";
    link.href = href;
    document.head.appendChild(link);
  });
}(document.currentScript));
