// What a screen reader says when the selection in the drawing moves (QA41 #1: arrow keys moved
// from node to node in silence, the drawing being one image): the selected box in a sentence —
// what it is, what it reads and what reads it — and, on entering a subgraph, where one is.

const LISTED = 3; // names said before "and N more"

/** "A, B and 2 more" */
function some(names) {
  if (names.length <= LISTED) return names.join(", ");
  return `${names.slice(0, LISTED).join(", ")} and ${names.length - LISTED} more`;
}

/** A box as words: "Conv n0 conv1", "input x", "output y". */
function boxWords(model, id) {
  const box = model.boxes.get(id);
  if (!box) return id;
  if (box.kind === "node") return `${box.node.op_type} ${box.id}${box.node.name ? ` ${box.node.name}` : ""}`;
  if (box.kind === "input") return `input ${box.name}`;
  if (box.kind === "output") return `output ${box.name}`;
  return box.name || id;
}

function readersOf(model, tensors) {
  const ids = [...new Set(tensors.flatMap((t) => model.consumers.get(t) || []))];
  return ids.map((id) => boxWords(model, id));
}

function makersOf(model, tensors) {
  const ids = [...new Set(tensors.map((t) => model.producer.get(t)).filter(Boolean))];
  return ids.map((id) => boxWords(model, id));
}

/**
 * The sentence for a selection ({kind, id}) in the graph model on screen; "" for none.
 * @param {{kind: string, id: string} | null} selection
 * @param {any} model the graph model (boxes, producer, consumers)
 * @param {{groupWords?: (id: string) => string}} [more]
 */
export function selectionWords(selection, model, more = {}) {
  if (!selection || !model) return "";
  if (selection.kind === "group") return more.groupWords ? more.groupWords(selection.id) : `group ${selection.id}`;
  if (selection.kind === "tensor") {
    const made = makersOf(model, [selection.id]);
    const read = readersOf(model, [selection.id]);
    return `value ${selection.id}${made.length ? `, made by ${some(made)}` : ""}${read.length ? `, read by ${some(read)}` : ""}`;
  }
  const id = selection.kind === "input" ? `input:${selection.id}` : selection.kind === "output" ? `output:${selection.id}` : selection.id;
  const box = model.boxes.get(id);
  if (!box) return "";
  const parts = [boxWords(model, id)];
  if (box.kind === "node") {
    const node = box.node;
    const reads = (node.inputs || []).filter(Boolean);
    if (reads.length) parts.push(`reads ${some(reads)}`);
    const readers = readersOf(model, (node.outputs || []).filter(Boolean));
    parts.push(readers.length ? `read by ${some(readers)}` : "its outputs read by nothing here");
    if ((node.subgraphs || []).length) parts.push("Enter opens its subgraph");
  } else if (box.kind === "input") {
    const readers = readersOf(model, [box.name]);
    if (readers.length) parts.push(`read by ${some(readers)}`);
  } else if (box.kind === "output") {
    const made = makersOf(model, [box.name]);
    if (made.length) parts.push(`made by ${some(made)}`);
  }
  return parts.join("; ");
}
