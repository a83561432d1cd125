// A classic (non-module) script model.html runs before the modules: it starts fetching the
// model's summary and graph while they load; model-page.js takes the answers (or asks again
// when one failed). On a 40,000-node model the server needs about as long for the graph as the
// browser for the modules.
(function () {
  "use strict";
  var workspace = document.querySelector(".workspace");
  if (!workspace || !window.fetch) return;
  var root = (document.body && document.body.dataset.root) || "";
  var base = root + "/api/models/" + encodeURIComponent(workspace.dataset.modelId);
  var mark = function (name) { if (window.performance && performance.mark) performance.mark(name); };
  var get = function (url, done) {
    return fetch(url, { headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) { mark(done); return t; })
      .catch(function () { return null; });
  };
  var path = new URLSearchParams(window.location.hash.slice(1)).get("path") || "";
  window.graphPrefetch = { path: path, text: get(base + "/graph?path=" + encodeURIComponent(path), "studio:graph-fetched") };
  window.summaryPrefetch = get(base, "studio:summary-fetched");
}());
