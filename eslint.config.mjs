// ESLint of the page scripts (app/static/js), run by `make lint-js` next to `tsc --checkJs`.
// ESLint's recommended rules (correctness, no style: formatting is left as it is).
import js from "@eslint/js";
import globals from "globals";

const WORKER = "app/static/js/pipeline/layout-worker.js";
const HEAD_SCRIPTS = ["app/static/js/pages/graph-prefetch.js", "app/static/js/pages/scheme-choice.js"];

export default [
  { ignores: ["app/static/dist/", "app/static/vendor/", "node_modules/", "build/", "test-artifacts/"] },
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  {
    // ES modules of the pages (bundled by esbuild for ES2022)
    files: ["app/static/js/**/*.js"],
    ignores: [WORKER],
    rules: js.configs.recommended.rules,
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
  },
  {
    // the classic scripts in the pages' <head> (model.html's, base.html's)
    files: HEAD_SCRIPTS,
    languageOptions: { sourceType: "script" },
  },
  {
    // the layout worker: a classic worker script; dagre is its global (importScripts, /* global */)
    files: [WORKER],
    rules: js.configs.recommended.rules,
    languageOptions: { ecmaVersion: 2022, sourceType: "script", globals: globals.worker },
  },
];
