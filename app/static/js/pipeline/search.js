// Finding things in the graph on screen — node names, op types, tensor names, attribute values
// — over the whole graph, not just what is drawn (a result inside collapsed groups expands
// them when chosen). Pure functions, no DOM.
import { attributeValueName, formatNumber } from "../lib/format.js";

const MAX_RESULTS = 200;

function attrText(a, node) {
  const v = a.value;
  const named = attributeValueName(node, a); // a data type: its name, as the boxes show it, and its number
  if (named) return `${named} (${formatNumber(v)})`;
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.slice(0, 64).map((x) => (typeof x === "object" && x !== null ? "" : formatNumber(x))).join(",");
  if (typeof v === "object") return "";
  return typeof v === "string" ? v : formatNumber(v);
}

/** A search index of a graph-model.js model (built once per model, on first search). */
export function buildSearchIndex(model) {
  const entries = [];
  for (const box of model.boxes.values()) {
    if (box.kind !== "node") continue;
    const n = box.node;
    entries.push({
      id: box.id, node: n,
      name: (n.name || "").toLowerCase(),
      op: `${n.domain && n.domain !== "ai.onnx" ? `${n.domain}.` : ""}${n.op_type}`.toLowerCase(),
      tensors: [...(n.inputs || []), ...(n.outputs || [])].filter(Boolean),
      attrs: (n.attributes || []).map((a) => [a.name, attrText(a, n)]),
    });
  }
  const tensors = new Set();
  for (const [name] of model.producer) tensors.add(name);
  for (const [name] of model.initializers) tensors.add(name);
  for (const [name] of model.consumers || []) tensors.add(name);
  return { entries, tensors: [...tensors] };
}

/**
 * Results for `query` (case-insensitive; "op:Conv", "name:", "tensor:", "attr:" narrow it):
 * [{kind: "node", id, node, why, score} | {kind: "tensor", name, why, score}], best first.
 */
export function search(index, query) {
  let q = String(query || "").trim();
  if (!q) return { results: [], total: 0 };
  let field = null;
  const m = /^(op|name|tensor|attr):\s*(.*)$/i.exec(q);
  if (m) { field = m[1].toLowerCase(); q = m[2]; }
  const needle = q.toLowerCase();
  if (!needle) return { results: [], total: 0 };
  const results = [];
  for (const e of index.entries) {
    let score = 0;
    let why = "";
    if (!field || field === "name") {
      if (e.name === needle) { score = 100; why = "name"; }
      else if (e.name.startsWith(needle)) { score = 80; why = "name"; }
      else if (e.name.includes(needle)) { score = 60; why = "name"; }
    }
    if (!score && (!field || field === "op")) {
      if (e.op === needle || e.op.endsWith(`.${needle}`)) { score = 70; why = "op type"; }
      else if (field === "op" && e.op.includes(needle)) { score = 50; why = "op type"; }
    }
    if (!score && (!field || field === "tensor")) {
      const t = e.tensors.find((x) => x.toLowerCase() === needle) || e.tensors.find((x) => x.toLowerCase().includes(needle));
      if (t) { score = t.toLowerCase() === needle ? 45 : 30; why = `${(e.node.outputs || []).includes(t) ? "output" : "input"} ${t}`; }
    }
    if (!score && (!field || field === "attr")) {
      const a = e.attrs.find(([k, v]) => v.toLowerCase().includes(needle) || (field === "attr" && k.toLowerCase().includes(needle)));
      if (a) { score = 20; why = `${a[0]}=${a[1].length > 40 ? `${a[1].slice(0, 39)}…` : a[1]}`; }
    }
    if (score) results.push({ kind: "node", id: e.id, node: e.node, why, score });
  }
  if (!field || field === "tensor") {
    for (const t of index.tensors) {
      const lower = t.toLowerCase();
      if (lower === needle) results.push({ kind: "tensor", name: t, why: "tensor", score: 90 });
      else if (lower.includes(needle) && field === "tensor") results.push({ kind: "tensor", name: t, why: "tensor", score: 40 });
    }
  }
  results.sort((a, b) => b.score - a.score);
  return { results: results.slice(0, MAX_RESULTS), total: results.length };
}
