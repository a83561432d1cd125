// Find in the whole model: the server searches every graph — main graph, subgraphs at any depth,
// functions, training graphs — and ranks (GET /api/models/<id>/search, app/views/search.py).
// This module asks it (the latest query only: an earlier request still under way is aborted;
// recent answers are kept), and says where a result is and where picking it goes. No DOM.
import * as api from "../lib/api.js";
import { formatInteger } from "../lib/format.js";

/** @typedef {{path: string, label: string}} Crumb */
/**
 * @typedef {object} SearchResult
 * @property {"node" | "tensor" | "graph" | "function"} kind
 * @property {string} path graph path of the graph holding it (a graph or function: its own)
 * @property {string} [node] node id (kind "node")
 * @property {string} name
 * @property {string} [op_type]
 * @property {string} [domain]
 * @property {string} [role] a tensor's: "initializer" | "input" | "output" | "value"
 * @property {Crumb[]} breadcrumb from the main graph to `path`
 * @property {string} why what matched: "op type", "name", "attribute perm = [0, 2, 1, 3]", ...
 * @property {number} score
 */
/** @typedef {{query: string, revision: number, results: SearchResult[], total: number, truncated: boolean}} SearchAnswer */

const FIELD_ONLY = /^(op|name|tensor|attr):\s*$/i;
const KEEP = 24; // answers kept per model page

/**
 * Is there something to ask for? Not "", nor a field prefix alone ("op:").
 * @param {string} query
 * @returns {boolean}
 */
export function searchable(query) {
  const q = String(query || "").trim();
  return q !== "" && !FIELD_ONLY.test(q);
}

/** Searches of one model: one request at a time, recent answers cached by revision, graph and query. */
export class ModelSearch {
  /**
   * @param {string} modelId
   * @param {typeof api.searchModel} [load] the API call (tests may pass another)
   */
  constructor(modelId, load = api.searchModel) {
    this.modelId = modelId;
    this.load = load;
    /** @type {Map<string, SearchAnswer>} */
    this.answers = new Map();
    /** @type {AbortController | null} */
    this.controller = null;
  }

  /**
   * The answer for `query` in `revision`, the graph on screen (`near`) first at equal rank.
   * Resolves to null when a later find() made this one moot; rejects with the server's ApiError.
   * @param {string} query
   * @param {{revision: number, near: string}} where
   * @returns {Promise<SearchAnswer | null>}
   */
  async find(query, { revision, near }) {
    const q = String(query || "").trim();
    const key = `${revision}\u0000${near}\u0000${q}`;
    if (this.controller) this.controller.abort();
    this.controller = null;
    const known = this.answers.get(key);
    if (known) return known;
    const controller = new AbortController();
    this.controller = controller;
    try {
      const answer = /** @type {SearchAnswer} */ (await this.load(this.modelId, q, { revision, near, signal: controller.signal }));
      if (controller.signal.aborted) return null;
      this.answers.set(key, answer);
      if (this.answers.size > KEEP) this.answers.delete(this.answers.keys().next().value);
      return answer;
    } catch (err) {
      if (controller.signal.aborted) return null;
      throw err;
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }
}

/**
 * Where picking a result goes: a graph path and what to select there.
 * @param {SearchResult} result
 * @returns {{path: string, selection: {kind: string, id: string} | null}}
 */
export function targetOf(result) {
  if (result.kind === "node") return { path: result.path, selection: { kind: "node", id: result.node || "" } };
  if (result.kind === "tensor") return { path: result.path, selection: { kind: "tensor", id: result.name } };
  return { path: result.path, selection: null };
}

/**
 * The labels of the graphs from the main graph to the one holding a result
 * ("main › If If_0 · then_branch › Loop Loop_3 · body"); a graph or function result ends at its parent.
 * @param {SearchResult} result
 * @returns {string[]}
 */
export function placeOf(result) {
  const crumbs = (result.breadcrumb || []).map((c) => c.label);
  return result.kind === "graph" || result.kind === "function" ? crumbs.slice(0, -1) : crumbs;
}

/**
 * The status line under the search field.
 * @param {string} query
 * @param {SearchAnswer | null} answer
 * @returns {string}
 */
export function statusText(query, answer) {
  if (!searchable(query)) return "Type an op type, a node or tensor name, or an attribute value: the whole model is searched.";
  if (!answer) return "Searching…";
  const { total, results } = answer;
  if (total === 0) return "Nothing found.";
  if (total > results.length) return `${formatInteger(total)} found — the first ${results.length} shown`;
  return `${total} found`;
}
