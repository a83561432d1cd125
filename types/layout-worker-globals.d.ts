// For `tsc --checkJs` of pipeline/layout-worker.js (tsconfig.worker.json): dagre's UMD build,
// loaded with importScripts, defines the global `dagre`.
declare const dagre: typeof import("@dagrejs/dagre");
