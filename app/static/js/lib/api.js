// The JSON API client (docs/api.md). Every call resolves to parsed JSON or throws an
// ApiError carrying the server's error.message, HTTP status and error code.

const ROOT = (document.body && document.body.dataset.root) || "";

export class ApiError extends Error {
  /** @param {string} message @param {number} [status] @param {string} [code] @param {string[]} [details] further causes
   * @param {string} [node] the id of the node the message is about, in the revision asked of
   * @param {{label: string, ops: object[]} | null} [fix] a batch of edits the server would take instead */
  constructor(message, status = 0, code = "", details = [], node = "", fix = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.node = node;
    this.fix = fix;
    /** @type {string[]} an uploaded archive's models, one to name as its `member` (several_models) */
    this.models = [];
  }
}

// Integers beyond 2^53 (INT64 attributes such as Slice ends) survive as BigInt when the
// browser passes the number's source text to the reviver; they go back out verbatim.
function reviver(key, value, context) {
  if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value)
      && context && /^-?\d+$/.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
}

// A reviver makes JSON.parse ~5-10x slower (a 30,000-node graph: 0.6-0.9 s instead of 0.1 s).
// Without integer tokens of 16+ digits the plain parse is exact; with them (INT64 Slice ends:
// torch exports have hundreds), those tokens are marked as strings first and turned into
// numbers/BigInt after the parse. A mark that landed inside a JSON string always breaks the
// parse (it closes the string and leaves a backslash outside one): then the reviver does the
// whole text. (The token's left neighbour is matched, not looked behind: 3x faster on 16 MB.)
const LONG_INTEGER = /\d{16}/;
const LONG_INTEGERS = /(^|[:,[\s])(-?\d{16,})(?=$|[,\]}\s])/g;
const MARK = "\u0000int:";

/** Decimal digits (an optional "-" first) -> a number, or a BigInt beyond 2^53 so none is rounded. */
export function exactInteger(digits) {
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : BigInt(digits);
}

function fromMark(v) {
  return exactInteger(v.slice(MARK.length));
}

function unmark(v) {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i += 1) {
      const x = v[i];
      if (typeof x === "object") { if (x !== null) unmark(x); }
      else if (typeof x === "string" && x.charCodeAt(0) === 0 && x.startsWith(MARK)) v[i] = fromMark(x);
    }
  } else {
    for (const k in v) {
      const x = v[k];
      if (typeof x === "object") { if (x !== null) unmark(x); }
      else if (typeof x === "string" && x.charCodeAt(0) === 0 && x.startsWith(MARK)) v[k] = fromMark(x);
    }
  }
  return v;
}

export function parseJSON(text) {
  if (!LONG_INTEGER.test(text)) return JSON.parse(text);
  let marked;
  try {
    marked = JSON.parse(text.replace(LONG_INTEGERS, (m, before, digits) => `${before}"\\u0000int:${digits}"`));
  } catch {
    return JSON.parse(text, reviver);
  }
  if (typeof marked === "string") return marked.startsWith(MARK) ? fromMark(marked) : marked;
  return marked === null || typeof marked !== "object" ? marked : unmark(marked);
}

export function toJSON(value) {
  const raw = typeof JSON.rawJSON === "function";
  return JSON.stringify(value, (key, v) => {
    // -0 as -0.0: JSON.stringify writes 0, and Python reads "-0" as the integer 0
    if (Object.is(v, -0)) return raw ? JSON.rawJSON("-0.0") : v;
    if (typeof v !== "bigint") return v;
    if (raw) return JSON.rawJSON(v.toString());
    return Number(v);
  });
}

// fetch's own words ("Failed to fetch") say nothing to a person: a restart is the usual cause
const UNREACHABLE = "The server could not be reached: it may be restarting. What you typed is kept here: try again in a moment.";

function errorFrom(status, text, statusText) {
  let message = "";
  let code = "";
  let details = [];
  let node = "";
  /** @type {{label: string, ops: object[]} | null} */
  let fix = null;
  /** @type {string[]} */
  let models = [];
  try {
    const body = JSON.parse(text);
    if (body && body.error) {
      message = body.error.message || "";
      code = body.error.code || "";
      if (Array.isArray(body.error.details)) details = body.error.details.map(String);
      if (typeof body.error.node === "string") node = body.error.node;
      const f = body.error.fix;
      if (f && typeof f.label === "string" && Array.isArray(f.ops)) fix = f;
      if (Array.isArray(body.error.models)) models = body.error.models.map(String);
    }
  } catch {
    // not JSON: fall through to the status line
  }
  if (!message) message = `${status} ${statusText || "request failed"}`.trim();
  if (status === 401 && code === "unauthorized") {
    // a browser's session ended (signed out on another tab, a week gone): the page says how back
    message = "You are signed out of this server (the session ended, or Sign out was pressed on another page): "
      + "sign in again in another tab (Sign in, at the top), then try again — this page keeps what you typed.";
    document.dispatchEvent(new CustomEvent("studio:signed-out"));
  }
  if (code === "unknown_model") {
    // a model deleted meanwhile (another page, a teammate): its id says nothing to a person
    const id = (/'([^']*)'/.exec(message) || [])[1] || "";
    message = "This model is no longer stored: it was deleted, on another page or by another user.";
    document.dispatchEvent(new CustomEvent("studio:model-gone", { detail: { id } }));
  }
  const error = new ApiError(message, status, code, details, node, fix);
  error.models = models;
  return error;
}

async function request(method, path, body, signal = undefined) {
  const init = { method, headers: { Accept: "application/json" }, signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = toJSON(body);
  }
  let response;
  try {
    response = await fetch(ROOT + path, init);
  } catch {
    throw new ApiError(UNREACHABLE);
  }
  const text = await response.text();
  if (!response.ok) throw errorFrom(response.status, text, response.statusText);
  if (!text) return null;
  try {
    return parseJSON(text);
  } catch {
    throw new ApiError("The server sent a reply that is not JSON.", response.status);
  }
}

const enc = encodeURIComponent;

export function listModels() {
  return request("GET", "/api/models");
}

/** A stored model's revision (the head unless given) as one .onnx blob, to compose with: answers
 * as uploadBlob does for an .onnx. */
export function modelAsBlob(id, revision = null) {
  return request("POST", `/api/models/${enc(id)}/as-blob${atRevision(revision, "?")}`);
}

/** Rename a model (PATCH): resolves to its summary. */
export function renameModel(id, name) {
  return request("PATCH", `/api/models/${enc(id)}`, { name });
}

/** Delete a model and all its revisions. */
export function deleteModel(id) {
  return request("DELETE", `/api/models/${enc(id)}`);
}

/** Delete a model as the page goes away (the request outlives it: fetch's keepalive). */
export function deleteModelOnLeaving(id) {
  fetch(`${ROOT}/api/models/${enc(id)}`, { method: "DELETE", keepalive: true, headers: { Accept: "application/json" } });
}

/** `&revision=N` for calls about one revision (the one on screen), nothing for the head. */
/** Where the server gives tensor `ref` of a revision as a .npy file (a STRING tensor as numpy's
 * text, which the page's own .npy writer has no codec for). */
export function npyUrl(id, ref, revision = null) {
  return `${ROOT}/api/models/${enc(id)}/npy/${enc(ref)}${atRevision(revision, "?")}`;
}

/** Where the server gives a stored .npy whole (an uploaded array, a run's output: its preview's
 * "npy"), saved as `filename`. */
export function blobUrl(digest, filename) {
  return `${ROOT}/api/blobs/${enc(digest)}?name=${enc(filename)}`;
}

function atRevision(revision, first = "&") {
  return revision === null || revision === undefined ? "" : `${first}revision=${enc(revision)}`;
}

/** The model's summary: of its head, or of `revision`. */
/** {id, name, head}: the model's current revision, from the index alone (an open page polls it). */
export function getHead(id) {
  return request("GET", `/api/models/${enc(id)}/head`);
}

export function getSummary(id, revision = null) {
  return request("GET", `/api/models/${enc(id)}${atRevision(revision, "?")}`);
}

export async function getGraph(id, path = "", revision = null) {
  return withScopeLevels(await request("GET", `/api/models/${enc(id)}/graph?path=${enc(path)}${atRevision(revision)}`));
}

/** Shape inference's types for graph `path` of `revision` (a big model's graph JSON leaves them
 * out, `inferred_types: "deferred"`, to come sooner): waits for the inference. */
export function getTypes(id, path, revision) {
  return request("GET", `/api/models/${enc(id)}/types?path=${enc(path)}&revision=${enc(revision)}`);
}

/** Graph JSON names each node's scope by its index in the graph's `scopes` table: give every
 * node its levels (one shared array per scope). */
export function withScopeLevels(graph) {
  const scopes = graph.scopes || [];
  for (const node of graph.nodes || []) {
    if (typeof node.scope === "number") node.scope = scopes[node.scope] || [];
  }
  return graph;
}

/**
 * Find in the whole model (GET .../search): {query, revision, results, total, truncated}.
 * @param {string} id model id
 * @param {string} query what to find
 * @param {{revision?: number, near?: string, limit?: number, signal?: AbortSignal}} [options]
 *   revision: the one on screen; near: the graph path on screen (its results first at equal rank)
 * @returns {Promise<object>}
 */
export function searchModel(id, query, { revision, near, limit, signal } = {}) {
  const params = new URLSearchParams({ q: query });
  if (revision !== undefined && revision !== null) params.set("revision", String(revision));
  if (near !== undefined && near !== null) params.set("near", near);
  if (limit) params.set("limit", String(limit));
  return request("GET", `/api/models/${enc(id)}/search?${params}`, undefined, signal);
}

export function getTensor(id, ref, offset = 0, count = 100, revision = null) {
  return request("GET", `/api/models/${enc(id)}/tensors/${enc(ref)}?offset=${offset}&count=${count}${atRevision(revision)}`);
}

export function getSchema(id, nodeId, revision = null) {
  return request("GET", `/api/models/${enc(id)}/schema?node=${enc(nodeId)}${atRevision(revision)}`);
}

/** The model (at `revision`, else its head) in ONNX text syntax, as a string. */
export async function getText(id, revision = null) {
  let response;
  try {
    response = await fetch(textUrl(id, { revision }), { headers: { Accept: "text/plain" } });
  } catch {
    throw new ApiError(UNREACHABLE);
  }
  const text = await response.text();
  if (!response.ok) throw errorFrom(response.status, text, response.statusText);
  return text;
}

export function textUrl(id, { download = false, revision = null } = {}) {
  const params = new URLSearchParams();
  if (revision !== null && revision !== undefined) params.set("revision", String(revision));
  if (download) params.set("download", "1");
  const query = params.toString();
  return `${ROOT}/api/models/${enc(id)}/text${query ? `?${query}` : ""}`;
}

/** Run a revision with onnxruntime (POST .../run): body {revision, inputs, dims, outputs, compare_to}. */
export function runModel(id, body) {
  return request("POST", `/api/models/${enc(id)}/run`, body);
}

/** Which quantized nodes cost the most accuracy (POST .../sensitivity). */
export function sensitivity(id, body) {
  return request("POST", `/api/models/${enc(id)}/sensitivity`, body);
}

/** How far a sensitivity sweep sent with {progress: token} is: {done, total} runs. */
export function sweepProgress(token) {
  return request("GET", `/api/sweeps/${enc(token)}`);
}

export function postEdits(id, base, ops) {
  return request("POST", `/api/models/${enc(id)}/edits`, { base, ops });
}

/** What revision `revision` holds made the head again, as a new revision after `base` (the head). */
export function restoreRevision(id, base, revision) {
  return request("POST", `/api/models/${enc(id)}/restore`, { base, revision });
}

/** The revision held to a target's limits ({max_opset, max_nodes, ops, static, no_control_flow, standard}). */
export function checkTarget(id, limits, revision = null) {
  const params = new URLSearchParams();
  if (limits.max_opset) params.set("max_opset", String(limits.max_opset));
  if (limits.max_nodes) params.set("max_nodes", String(limits.max_nodes));
  // commas part the names (spaces around them go): a refusal quotes what was typed, not a rewrite
  if (limits.ops) params.set("ops", limits.ops); // as typed: the server's message quotes it
  if (limits.static) params.set("static", "1");
  if (limits.no_control_flow) params.set("control_flow", "0");
  if (limits.standard) params.set("standard", "1");
  if (revision !== null && revision !== undefined) params.set("revision", String(revision));
  return request("GET", `/api/models/${enc(id)}/target?${params}`);
}

/** Two new models from a revision, cut at tensors `at` (the model itself stays as it is). */
export function splitModel(id, at, revision = null, { dryRun = false } = {}) {
  return request("POST", `/api/models/${enc(id)}/split`, { at, ...(revision === null ? {} : { revision }), ...(dryRun ? { dry_run: true } : {}) });
}

export function undo(id, base, steps = 1) {
  return request("POST", `/api/models/${enc(id)}/undo`, { ...(base === undefined ? {} : { base }), ...(steps > 1 ? { steps } : {}) });
}

export function redo(id, base) {
  return request("POST", `/api/models/${enc(id)}/redo`, base === undefined ? {} : { base });
}

export function downloadUrl(id) {
  return `${ROOT}/api/models/${enc(id)}/download`;
}

export function modelPageUrl(id) {
  return `${ROOT}/models/${enc(id)}`;
}

/**
 * Upload a model (the first file) plus its external data files as multipart `file` parts;
 * `member`: which model of an archive holding several to open (its path inside it).
 * Uses XMLHttpRequest for upload progress: onProgress(fraction 0..1); `signal` (an
 * AbortSignal) stops it, rejecting with an ApiError of code "cancelled".
 */
export function uploadModel(files, onProgress, member = null, signal = null) {
  const form = new FormData();
  for (const file of files) form.append("file", file, file.name);
  if (member !== null) form.append("member", member);
  return sendForm("/api/models", form, onProgress, signal);
}

/** Attach external data files the model's tensors name but that were not uploaded with it:
 * a new revision on `base`; `location`: the missing file one file sent alone stands for, whatever
 * its name. Resolves to {revision, changes, summary}. */
export function attachDataFiles(id, base, files, onProgress, location = null) {
  const form = new FormData();
  form.append("base", String(base));
  if (location !== null) form.append("location", location);
  for (const file of files) form.append("file", file, file.name);
  return sendForm(`/api/models/${enc(id)}/data-files`, form, onProgress);
}

// a multipart POST by XMLHttpRequest, for its upload progress: onProgress(fraction 0..1);
// `signal` aborts it (the server drops what it got of the body: nothing is stored)
function sendForm(path, form, onProgress, signal = null) {
  return new Promise((resolve, reject) => {
    const cancelled = () => new ApiError("The upload was cancelled.", 0, "cancelled");
    if (signal && signal.aborted) {
      reject(cancelled());
      return;
    }
    const xhr = new XMLHttpRequest();
    if (signal) signal.addEventListener("abort", () => xhr.abort(), { once: true });
    xhr.onabort = () => reject(cancelled());
    xhr.open("POST", `${ROOT}${path}`);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (e) => {
      if (onProgress && e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError("The upload failed: the server could not be reached."));
    xhr.onload = () => {
      if (xhr.status < 200 || xhr.status >= 300) {
        reject(errorFrom(xhr.status, xhr.responseText, xhr.statusText));
        return;
      }
      try {
        resolve(parseJSON(xhr.responseText));
      } catch {
        reject(new ApiError("The server sent a reply that is not JSON.", xhr.status));
      }
    };
    xhr.send(form);
  });
}

// ------------------------------------------------------------------ editing (issue 4)

/** A tree ensemble node's trees; with `tree`, that tree's rules too. */
export function getTrees(id, nodeId, tree, revision = null) {
  return request("GET", `/api/models/${enc(id)}/trees?node=${enc(nodeId)}${tree === undefined ? "" : `&tree=${tree}`}${atRevision(revision)}`);
}

/** A linear model node's weights: a row per class or target, the features by weight. */
export function getCoefficients(id, nodeId, revision = null) {
  return request("GET", `/api/models/${enc(id)}/coefficients?node=${enc(nodeId)}${atRevision(revision)}`);
}

/** One node's JSON in full (metadata values and doc_string uncut). */
export function getNode(id, nodeId, revision = null) {
  return request("GET", `/api/models/${enc(id)}/node?id=${enc(nodeId)}${atRevision(revision)}`);
}

/**
 * Where what a link made in revision `from` names is now: {revision, from, path, node}, each
 * positional, null when gone.
 * @param {string} id model id
 * @param {number} from the link's revision
 * @param {{path?: string | null, node?: string | null}} [what] a graph path, a node address (either form)
 * @returns {Promise<any>}
 */
export function locate(id, from, { path, node } = {}) {
  const params = new URLSearchParams({ from: String(from) });
  if (path !== undefined && path !== null) params.set("path", path);
  if (node !== undefined && node !== null) params.set("node", node);
  return request("GET", `/api/models/${enc(id)}/locate?${params}`);
}

/** {revisions: [{revision, parent, ops, changes, created, current}], head} */
/** What differs (GET .../diff): `query` {from, to} revisions, or {other, other_revision, revision}. */
export function getDiff(id, query) {
  const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, String(v)]));
  return request("GET", `/api/models/${enc(id)}/diff?${params}`);
}

/** How each weight tensor survives `bits`-bit quantization, per tensor and per channel. */
/** Who reads value `name` of the graph at `path`, inside the bodies of its nodes too. */
export function getReaders(id, name, path = "", revision = null) {
  const params = new URLSearchParams({ name, path });
  if (revision !== null && revision !== undefined) params.set("revision", String(revision));
  return request("GET", `/api/models/${enc(id)}/readers?${params}`);
}

export function getWeightRanges(id, bits = 8, revision = null) {
  const params = new URLSearchParams({ bits: String(bits) });
  if (revision !== null && revision !== undefined) params.set("revision", String(revision));
  return request("GET", `/api/models/${enc(id)}/weight-ranges?${params}`);
}

/** `value` with every BigInt in it a Number (in place): for answers that are magnitudes. */
function asNumbers(value) {
  if (value === null || typeof value !== "object") return typeof value === "bigint" ? Number(value) : value;
  for (const k of Object.keys(value)) value[k] = asNumbers(value[k]);
  return value;
}

/** Parameters, FLOPs and output bytes per node (GET .../stats); `sizes`: the symbolic dims'
 * sizes, {batch: 1, sequence: 128}. Costs are magnitudes: a count or a size past 2^53 (a dim of
 * 2^62 typed in) comes back a rounded Number, never a BigInt, which the panels' arithmetic
 * refused ("Cannot convert a BigInt value to a number"). */
export function getStats(id, sizes = {}, revision = null) {
  const params = new URLSearchParams();
  const dims = Object.entries(sizes).map(([name, n]) => `${name}=${n}`).join(",");
  if (dims) params.set("dims", dims);
  if (revision !== null && revision !== undefined) params.set("revision", String(revision));
  const query = params.toString();
  return request("GET", `/api/models/${enc(id)}/stats${query ? `?${query}` : ""}`).then(asNumbers);
}

export function getRevisions(id) {
  return request("GET", `/api/models/${enc(id)}/revisions`);
}

/** The edit ops the server knows, with their documentation. */
export function getOps() {
  return request("GET", "/api/ops");
}

/** Download address of a revision (default: the current one) in a layout (as_stored | embedded | external). */
export function downloadHref(id, { revision = null, layout = "", tests = false } = {}) {
  const params = new URLSearchParams();
  if (revision !== null && revision !== undefined) params.set("revision", String(revision));
  if (layout && layout !== "as_stored") params.set("layout", layout);
  if (tests) params.set("tests", "1"); // with a test_data_set_N/ per reference case
  const query = params.toString();
  return `${downloadUrl(id)}${query ? `?${query}` : ""}`;
}

/** Download address of the recipe of the edits from revision `from` to revision `to` (GET .../recipe). */
export function recipeHref(id, { from = 0, to }) {
  const params = new URLSearchParams({ from: String(from), to: String(to), download: "1" });
  return `${ROOT}/api/models/${enc(id)}/recipe?${params}`;
}

/** Replay a recipe file (a .recipe.json from Download recipe) on the head, `base` (POST .../recipe):
 * each batch a new revision, all or nothing. Resolves to the last revision's edit answer with
 * {revisions, batches, skipped}; onProgress(fraction 0..1) follows the upload. */
export function applyRecipe(id, base, file, onProgress) {
  const form = new FormData();
  form.append("base", String(base));
  form.append("recipe", file, file.name);
  return sendForm(`/api/models/${enc(id)}/recipe`, form, onProgress);
}

/** Upload a .npy file: resolves to {blob, dtype, shape}; ops name it as {"npy": blob}. */
export async function uploadBlob(file) {
  const form = new FormData();
  form.append("file", file, file.name || "values.npy");
  let response;
  try {
    response = await fetch(`${ROOT}/api/blobs`, { method: "POST", body: form, headers: { Accept: "application/json" } });
  } catch (err) {
    throw new ApiError(`The upload failed: the server could not be reached (${err.message}).`);
  }
  const text = await response.text();
  if (!response.ok) throw errorFrom(response.status, text, response.statusText);
  return parseJSON(text);
}

export function getValidation(id, revision = null) {
  return request("GET", `/api/models/${enc(id)}/validation${atRevision(revision, "?")}`);
}

/** The model's reference cases: {tolerance, cases}. */
export function getChecks(id) {
  return request("GET", `/api/models/${enc(id)}/checks`);
}

/** Keep a reference case (outputs recorded from a run unless `expected` gives them): {case, verdict}. */
export function addCheck(id, body) {
  return request("POST", `/api/models/${enc(id)}/checks`, body);
}

/** Whether a revision gives its reference cases' outputs (waits for the runs). */
export function getReferenceVerdict(id, revision) {
  return request("GET", `/api/models/${enc(id)}/checks/verdict?revision=${enc(revision)}`);
}

/** Take another model's reference cases (its earlier export's): {kept, skipped}. */
export function copyChecks(id, other) {
  return request("POST", `/api/models/${enc(id)}/checks/copy`, { from: other });
}

export function deleteCheck(id, name) {
  return request("DELETE", `/api/models/${enc(id)}/checks/${enc(name)}`);
}

/** Set the cases' tolerance and whether they gate edits: {tolerance?, gate?} -> {tolerance, gate, cases}. */
export function setChecks(id, settings) {
  return request("PATCH", `/api/models/${enc(id)}/checks`, settings);
}
