// A classic (non-module) script model.html runs before the modules: it starts fetching the graph
// while they load; model-page.js takes the answer (or asks again when this one failed). On a
// 40,000-node model the server needs about as long for the graph as the browser for the modules.
(function () {
  "use strict";
  var workspace = document.querySelector(".workspace");
  if (!workspace || !window.fetch) return;
  var root = (document.body && document.body.dataset.root) || "";
  var path = new URLSearchParams(window.location.hash.slice(1)).get("path") || "";
  var url = root + "/api/models/" + encodeURIComponent(workspace.dataset.modelId) + "/graph?path=" + encodeURIComponent(path);
  var text = fetch(url, { headers: { Accept: "application/json" } })
    .then(function (r) { return r.ok ? r.text() : null; })
    .then(function (t) { if (window.performance && performance.mark) performance.mark("studio:graph-fetched"); return t; })
    .catch(function () { return null; });
  window.graphPrefetch = { path: path, text: text };
}());
