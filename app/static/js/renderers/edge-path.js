// The shape of a drawn edge, shared by the SVG and canvas renderers and the SVG export.

/**
 * The SVG path of an edge: straight runs with rounded corners (a corner's radius is at most
 * half of each run beside it, so dagre's short runs come out as a smooth curve and long
 * orthogonal runs — chain links, port joins — stay straight).
 */
export function edgePath(points) {
  if (points.length < 2) return "";
  const f = (n) => Math.round(n * 10) / 10;
  let d = `M${f(points[0][0])},${f(points[0][1])}`;
  for (const [kind, a, b] of edgeSegments(points)) {
    d += kind === "L" ? `L${f(a[0])},${f(a[1])}` : `Q${f(a[0])},${f(a[1])} ${f(b[0])},${f(b[1])}`;
  }
  return d;
}

const CORNER = 40;

/** [["L", point] | ["Q", control, end]] drawing the edge after its first point. */
export function edgeSegments(points) {
  const out = [];
  const n = points.length;
  for (let i = 1; i < n - 1; i += 1) {
    const [px, py] = points[i - 1];
    const [x, y] = points[i];
    const [nx, ny] = points[i + 1];
    const lin = Math.hypot(x - px, y - py);
    const lout = Math.hypot(nx - x, ny - y);
    const r = Math.min(CORNER, lin / 2, lout / 2);
    if (r < 0.5) {
      out.push(["L", [x, y]]);
      continue;
    }
    out.push(["L", [x - ((x - px) / lin) * r, y - ((y - py) / lin) * r]]);
    out.push(["Q", [x, y], [x + ((nx - x) / lout) * r, y + ((ny - y) / lout) * r]]);
  }
  out.push(["L", points[n - 1]]);
  return out;
}
