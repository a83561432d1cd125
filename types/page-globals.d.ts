// Declarations for `tsc --checkJs` (make lint-js) of app/static/js: what the page scripts share
// through `window`, and what the TypeScript library does not declare yet. Not served.

interface Window {
  /** graph-prefetch.js: the graph JSON of `path`, asked for while the modules load (model-page.js takes it). */
  graphPrefetch?: { path: string; text: Promise<string | null> } | null;
  /** graph-prefetch.js: the model's summary JSON (model-page.js takes it). */
  summaryPrefetch?: Promise<string | null> | null;
  /** graph-prefetch.js: the first layout worker (layout-client.js adopts it). */
  layoutWorkerPrefetch?: { url: string; worker: Worker; failed: boolean } | null;
}

interface JSON {
  /** JSON.rawJSON (ES2026, feature-tested by lib/api.js's toJSON): a value serialised as `text`. */
  rawJSON?(text: string): object;
}
