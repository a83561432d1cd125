// Node addresses as links write them (docs/api.md "Addresses", app/onnx_io/address.py): a node
// is named by `@<name>` where its name is unique in its graph, else by its position `n<i>`.
// Positions change when a node before it is deleted; names don't, so links use names.

const POSITION = /^n\d+$/;

/** A node name as an address segment, percent-encoded exactly as the server's encode_attr. */
export function nameSegment(name) {
  return `@${encodeURIComponent(name).replace(/%(2[046BC]|3[BD]|40)/g, (m) => decodeURIComponent(m))}`;
}

/** @type {WeakMap<object, Set<string>>} graph JSON -> names held by exactly one of its nodes */
const uniqueNames = new WeakMap();

function uniqueIn(graph) {
  let names = uniqueNames.get(graph);
  if (!names) {
    const seen = new Set();
    names = new Set();
    for (const n of graph.nodes || []) {
      if (!n.name) continue;
      if (seen.has(n.name)) names.delete(n.name);
      else { seen.add(n.name); names.add(n.name); }
    }
    uniqueNames.set(graph, names);
  }
  return names;
}

/** The address a link gives `node` of `graph` (graph JSON): the graph's address, then the node
 * by name where that is unique in the graph, else by position. */
export function nodeAddress(graph, node) {
  const seg = node.name && uniqueIn(graph).has(node.name) ? nameSegment(node.name) : node.id.slice(node.id.lastIndexOf("/") + 1);
  const base = graph.address ?? graph.path;
  return base ? `${base}/${seg}` : seg;
}

/** An address as a page's link writes it: a node's name with its "/" and other characters as
 * they are (`@/model/h.1/MatMul`, which nodeIdIn reads back by the whole name) rather than
 * percent-encoded, which the link's own encoding would double (`@%252Fmodel...`). A name holding
 * "%" keeps the encoded form: decoded, it could read back as another name. */
export function linkAddress(address) {
  const cut = address.lastIndexOf("/") + 1;
  const seg = address.slice(cut);
  if (!seg.startsWith("@")) return address;
  let name;
  try { name = decodeURIComponent(seg.slice(1)); } catch { return address; }
  return name.includes("%") ? address : `${address.slice(0, cut)}@${name}`;
}

/** A link's node address (linkAddress: a name's "/" left as it is) in `path`, as the API takes
 * it: the name percent-encoded (nameSegment). Other addresses are returned as they are. */
export function apiAddress(path, address) {
  const base = path ? `${path}/` : "";
  if (!address.startsWith(`${base}@`)) return address;
  const name = address.slice(base.length + 1);
  let raw = name;
  // one holding "%" was kept encoded (linkAddress), and then has no "/"
  if (!name.includes("/")) { try { raw = decodeURIComponent(name); } catch { return address; } }
  return base + nameSegment(raw);
}

/** The graph path a node id or address is in: "n2/then_branch/n5" -> "n2/then_branch", "n3" -> "". */
export function graphPathOf(address) {
  const cut = address.lastIndexOf("/");
  return cut < 0 ? "" : address.slice(0, cut);
}

/** The node id and the ids of the nodes holding it ("n1/then_branch/n4" -> ["n1/then_branch/n4",
 * "n1"]): marked, the node shows in its body's drawing and its If in the main graph's. */
export function withHolders(address) {
  const out = [address];
  for (let node = address; graphPathOf(node);) {
    node = graphPathOf(graphPathOf(node));
    out.push(node);
  }
  return out;
}

/** The name of the body a node id is in, as its holder calls it ("n0/else_branch/n26" ->
 * "else_branch"), or "" for a node of the main graph: both branches of a merged decoder name
 * their nodes alike, so a list of them says which. */
export function bodyOf(address) {
  const graph = graphPathOf(address);
  return graph.slice(graph.lastIndexOf("/") + 1);
}

/** The id of the node of `graph` that `address` (either form) names, or null when the address
 * is of another graph or names no node of this one. */
export function nodeIdIn(graph, address) {
  const whole = wholeName(graph, address);
  if (whole !== null) return whole;
  const parent = graphPathOf(address);
  const seg = address.slice(address.lastIndexOf("/") + 1);
  if (parent !== graph.path && parent !== graph.address) return null;
  let id = null;
  if (POSITION.test(seg)) id = graph.path ? `${graph.path}/${seg}` : seg;
  else if (seg.startsWith("@")) {
    let name;
    try { name = decodeURIComponent(seg.slice(1)); } catch { return null; }
    if (!uniqueIn(graph).has(name)) return null;
    id = graph.nodes.find((n) => n.name === name).id;
  }
  return id;
}

/** A link names a node whose name holds "/" with it left as it is (a torch export's
 * "@/model/h.1/MatMul", as the page's own links write it: linkAddress): the id of the
 * node of `graph` whose whole name follows the graph's address and "@", else null. */
function wholeName(graph, address) {
  const base = graph.address ?? graph.path;
  const rest = !base ? address : address.startsWith(`${base}/`) ? address.slice(base.length + 1) : null;
  if (!rest || !rest.startsWith("@") || !rest.includes("/")) return null;
  let name = rest.slice(1);
  if (!uniqueIn(graph).has(name)) {
    try { name = decodeURIComponent(name); } catch { return null; }
    if (!uniqueIn(graph).has(name)) return null;
  }
  return graph.nodes.find((n) => n.name === name).id;
}

/** Does an address name a node by position anywhere along it? Such an address means what it
 * says only in the revision it was written in. */
export function hasPositions(address) {
  return String(address || "").split("/").some((s) => POSITION.test(s));
}

/** An address in words: names without their "@" and percent-encoding ("@while/body" -> "while/body"). */
export function addressWords(address) {
  return String(address || "").split("/").map((seg) => {
    if (!seg.startsWith("@")) return seg;
    try { return decodeURIComponent(seg.slice(1)); } catch { return seg.slice(1); }
  }).join("/");
}
