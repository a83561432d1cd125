// The one-line descriptions a pointer gets over the drawing: SVG <title>s and the canvas's
// tooltip say the same thing.

export function nodeTitle(box) {
  const subgraphs = box.node.subgraphs || [];
  const open = subgraphs.length ? `. Double-click (or Enter) to open ${subgraphs.length > 1 ? "a subgraph" : "its subgraph"}.` : "";
  return `${box.node.op_type}${box.node.name ? ` · ${box.node.name}` : ""}${open}`;
}

export function ioTitle(lines) {
  return lines.map((l) => l.text).join("\n");
}

export function groupTitle(group, collapsed) {
  return `${group.scope || group.label} — ${group.nodeCount} ops. Double-click (or ${collapsed ? "+" : "−"}) to ${collapsed ? "expand" : "collapse"}.`;
}

export function edgeTitle(edge) {
  const label = edge.fullLabel || edge.label;
  const text = label ? `${edge.tensor}: ${label}` : edge.tensor;
  return edge.implicit ? `${text} (read inside its subgraphs)` : text;
}
