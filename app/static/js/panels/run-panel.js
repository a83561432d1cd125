// The run panel (toolbar "Run"): run the revision on screen with onnxruntime (POST .../run) on
// random or uploaded inputs, with the symbolic dims' sizes, any intermediate tensors as extra
// outputs (the selected node's by default), and "compare with revision N": the other revision on
// the very same input values, each output's largest difference said at once, and each node's
// error against it; each node's time by onnxruntime's profiler; the drawing coloured by either.
import { el, clear } from "../widgets/dom.js";
import { formatBytes, formatInteger, formatMeasure, formatShape, formatValueType, nodeLabel } from "../lib/format.js";
import { tensorView } from "./tensor-view.js";
import { formatValue } from "../lib/tensor-format.js";
import { breakable, fieldError, mono, plural, runInline, section } from "../widgets/ui.js";
import { formatMetric } from "../pipeline/heat.js";
import { declaredMismatch } from "./declared-shape.js";
import { followFirstAxes } from "../lib/dim-fields.js";
import { inputDims, randomElement, sizesFrom, symbolicDims } from "../lib/input-dims.js";
import { buildNpy, npyProblem, npyShape, saveBytes } from "../lib/npy.js";
import { npyFilename } from "../editing/tensor-edit.js";
import { FITS, SCALINGS, defaultFit, defaultScaling, exportHints, imageInput, imageLayout } from "../lib/image-input.js";
import { expectedFromFiles, fromTestDataSet, inputsFromNpz } from "../lib/arrays-upload.js";
import { revisionChoice, standing } from "./history-panel.js";
import { modelOption, twinsOf } from "../widgets/model-options.js";
import { rowsWords } from "../lib/reference-words.js";
import { graphPathOf } from "../lib/address.js";
import { announce } from "../lib/announce.js";
import { blobUrl } from "../lib/api.js";

/** A run's preview as tensor-view.js loads one: its values are all the answer holds. */
function previewLoader(preview) {
  return (_ref, offset, count) => Promise.resolve({
    ...preview, offset, count: Math.max(0, Math.min(count, preview.values.length - offset)),
    values: preview.values.slice(offset, offset + count),
  });
}

/** What typing an input's values in looks like for its type, as JSON (the field's placeholder):
 * float[?, 4] → [[0.5, 0.5, 0.5, 0.5]], map(string, float) → {"key": 1.5}. */
function valuesExample(type) {
  if (!type || type.kind === "unknown") return "[…]";
  if (type.kind === "map") return `{${type.key === "STRING" ? '"key"' : '"7"'}: ${valuesExample(type.value).replace(/^\[+|\]+$/g, "")}}`;
  if (type.kind === "sequence") return `[${valuesExample(type.elem)}]`;
  if (type.kind === "optional") return `null (empty), or ${valuesExample(type.elem)}`; // null: no value
  const dtype = type.dtype || "";
  const leaf = dtype === "STRING" ? '"text"' : dtype === "BOOL" ? "true" : /INT/.test(dtype) ? "1" : "1.5";
  const shape = Array.isArray(type.shape) ? type.shape : [null];
  if (shape.length > 3) return "nested lists, as numpy.array takes them";
  return shape.reduceRight((inner, d) => {
    const n = typeof d === "number" && d > 0 ? d : 1;
    return `[${Array.from({ length: Math.min(n, 4) }, () => inner).join(", ")}${n > 4 ? ", …" : ""}]`;
  }, leaf);
}

/** @param {import("../lib/image-input.js").ExportHints} hints what the model's metadata says of its images */
function inputRow(input, hints) {
  const seed = el("input", { type: "number", min: "0", step: "1", value: "0", class: "run-seed", "aria-label": `seed of ${input.name}` });
  const file = el("input", { type: "file", accept: ".npy,.pb", class: "run-npy", "aria-label": `.npy or .pb for ${input.name}` });
  const kind = input.type && input.type.kind;
  // a sequence, optional or map input: random tensors when their shape is declared, a map's
  // keys when a lookup node names them (the server says when none does), else a test data
  // set's .pb; any input's values typed in
  const notTensor = kind && kind !== "tensor" && kind !== "unknown";
  const element = randomElement(input.type);
  const count = element && element.many
    ? el("input", { type: "number", min: "0", max: "256", step: "1", value: "2", class: "run-count", "aria-label": `tensors in ${input.name}` })
    : null;
  if (notTensor) {
    file.setAttribute("accept", ".pb");
    file.setAttribute("aria-label", `.pb for ${input.name}`);
  }
  const random = notTensor && !element && kind !== "map" ? null
    : el("label", {}, "random, seed ", seed, count ? [" × ", count, " tensors"] : "");
  const typed = input.type && input.type.kind ? input.type : { kind: "tensor", dtype: input.dtype, shape: input.shape };
  const values = /** @type {HTMLInputElement} */ (el("input", {
    type: "text", class: "run-values", spellcheck: "false", autocomplete: "off",
    placeholder: valuesExample(typed), "aria-label": `values of ${input.name}`,
    title: "The input's values as JSON: nested lists for a tensor, an object for a map",
  }));
  const image = notTensor ? null : imageControls(input, file, hints);
  const row = el("li", { class: "run-input", "data-name": input.name },
    el("div", {}, mono(input.name), " ", el("span", { class: "muted" }, formatValueType(input) || "type not declared")),
    notTensor
      ? el("div", { class: "ed-row run-not-tensor" }, random,
        el("label", {}, random ? "or a .pb " : `a ${kind} from a test data set's .pb `, file))
      : el("div", { class: "ed-row" }, random, el("label", {}, "or .npy/.pb ", file)),
    image ? image.row : null,
    el("label", { class: "run-values-label" }, "or values ", values));
  return { row, seed, count, file, values, image, name: input.name };
}

/**
 * "or an image" for an input an image fits (lib/image-input.js imageLayout): the file, how its
 * pixels are scaled (the likeliest for the input's type first), how it is fitted to the size,
 * RGB or BGR, and once picked, what will be fed (its size, and the picture as resized). Picking
 * an image or a .npy clears the other: one source an input. `hints`: an Ultralytics export's
 * metadata (its imgsz, its stride) sizes an image for an input of free size as its predictor does.
 */
function imageControls(input, npyFile, hints) {
  const layout = imageLayout(input);
  if (!layout) return null;
  const file = el("input", { type: "file", accept: "image/*", class: "run-image", "aria-label": `an image for ${input.name}` });
  const scaling = el("select", { class: "run-image-scaling", "aria-label": `pixel scaling of ${input.name}` },
    Object.entries(SCALINGS).map(([key, s]) => el("option", { value: key, selected: key === defaultScaling(input, hints) }, s.label)));
  const fit = el("select", { class: "run-image-fit", "aria-label": `how the image of ${input.name} fits its size` },
    Object.entries(FITS).map(([key, words]) => el("option", { value: key, selected: key === defaultFit(input, hints) }, words)));
  const bgr = el("input", { type: "checkbox", class: "run-image-bgr" });
  const channels = layout.channels === 3
    ? el("label", { title: "OpenCV and Caffe models read blue, green, red" }, bgr, "BGR")
    : el("span", { class: "muted" }, "grey (luminance)");
  const shown = el("div", { class: "run-image-fed muted" });
  const options = el("div", { class: "ed-row run-image-options" }, el("label", {}, "pixels ", scaling), el("label", {}, "fitted ", fit), channels);
  options.hidden = true;
  const how = () => ({ scaling: scaling.value, bgr: bgr.checked, fit: fit.value });
  let made = null; // the last image made from the choices: {bytes, shape, height, width, preview, name}
  const make = async () => {
    const f = file.files && file.files[0];
    made = null;
    clear(shown);
    options.hidden = !f;
    if (!f) return null;
    try {
      made = { ...(await imageInput(f, input, layout, how(), hints)), name: f.name };
    } catch (err) {
      shown.append(el("span", { class: "field-error", role: "alert" }, err.message));
      return null;
    }
    shown.append(el("img", { src: made.preview, alt: `${f.name} as fed`, class: "run-image-preview" }),
      el("span", { class: "run-image-words" }, `${f.name} → ${made.width}×${made.height} ${layout.layout}, ${SCALINGS[scaling.value].label}${bgr.checked ? ", BGR" : ""}`));
    return made;
  };
  file.addEventListener("change", () => { if (file.files && file.files.length) npyFile.value = ""; });
  npyFile.addEventListener("change", () => { if (npyFile.files && npyFile.files.length) { file.value = ""; make(); } });
  for (const control of [scaling, fit, bgr]) control.addEventListener("change", () => make());
  const row = el("div", { class: "run-image-row" }, el("label", {}, "or an image ", file), options, shown);
  return { row, file, make, current: () => made, picked: () => Boolean(file.files && file.files.length) };
}

/** An input's values typed in (JSON), or undefined when its field is empty. */
function typedValues(r) {
  const text = r.values.value.trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`The values of ${r.name} are not JSON: ${err.message}`, { cause: err });
  }
}

/** "shape ⟨1×8⟩ ≠ ⟨1×4⟩" when a comparison's two tensors differ in shape (no value to measure), else null. */
function shapesDiffer(c) {
  return c.shape && Array.isArray(c.shape[0]) ? `shape ${formatShape(c.shape[0])} ≠ ${formatShape(c.shape[1])}` : null;
}

function divergence(d, compare, ctx) {
  if (!("diverges" in compare)) return null;
  if (!d) return el("p", { class: "run-diverges run-matches", id: "run-diverges" }, `Every node's output matches ${otherWords(compare)} (within rounding).`);
  // every output within tolerance (a float16 conversion's rounding): where it starts is news, not an alarm
  const within = Object.values(compare.outputs || {}).every((c) => c.close);
  const lead = within ? [`Every output is close to ${otherWords(compare)}'s; the first node whose output moves: `]
    : [`First node whose output differs from ${otherWords(compare)}: `];
  // an earlier node whose output moved within rounding (an edited epsilon): where it starts, said
  // too — the first past the threshold alone pointed a person at the wrong node (QA40 #10)
  const nodes = compare.nodes || [];
  const at = nodes.findIndex((n) => n.node === d.node);
  const before = nodes.slice(0, Math.max(at, 0)).find((n) => n.max_abs);
  const earlier = before ? [" It moves first, within rounding, at ",
    el("a", { href: ctx.nodeHref(graphPathOf(before.node), before.node), "data-node": before.node, class: "run-moves-first" }, nodeLabel(before.name, before.node)),
    " ", mono(before.op_type), ` (max |Δ| ${maxAbs(before.max_abs)}).`] : [];
  return el("p", { class: `run-diverges${within ? " run-within" : ""}`, id: "run-diverges" }, ...lead,
    el("a", { href: ctx.nodeHref(graphPathOf(d.node), d.node), "data-node": d.node }, nodeLabel(d.name, d.node)), " ", mono(d.op_type),
    ` — ${d.tensor}: ${shapesDiffer(d) || `max |Δ| ${maxAbs(d.max_abs)}`}. Outlined on the drawing.`, ...earlier);
}

const WORST = 8;
const db = (v) => (v === null || v === undefined ? "—" : `${v.toFixed(1)} dB`);

/** "Leave in float" checkboxes: each stands for one or more nodes (a node of the error table,
 * the owners of a quantization point) and is ticked while all of them are; the requantize offer
 * reads the nodes ticked. */
class Ticks {
  constructor() {
    /** @type {Set<string>} */
    this.names = new Set();
    /** @type {Array<{box: HTMLInputElement, names: string[]}>} */
    this.boxes = [];
  }
  /** A checkbox for the nodes `names`, with what it leaves in float in words. */
  box(names, what) {
    const box = /** @type {HTMLInputElement} */ (el("input", { type: "checkbox", "aria-label": `Leave ${what} in float`, title: `Leave ${names.join(", ")} in float when quantizing again` }));
    this.boxes.push({ box, names });
    box.checked = names.every((n) => this.names.has(n));
    box.indeterminate = !box.checked && names.some((n) => this.names.has(n));
    box.addEventListener("change", () => this.set(names, box.checked));
    return box;
  }
  set(names, checked) {
    for (const n of names) { if (checked) this.names.add(n); else this.names.delete(n); }
    for (const b of this.boxes) {
      b.box.checked = b.names.every((n) => this.names.has(n));
      b.box.indeterminate = !b.box.checked && b.names.some((n) => this.names.has(n)); // some of its nodes ticked elsewhere
    }
  }
  ticked() { return [...this.names]; }
}

/** Whether a node can be left out of a quantization (nodes_to_exclude names it). */
const excludable = (n) => Boolean(n.name) && n.op_type !== "QuantizeLinear" && n.op_type !== "DequantizeLinear";

/** The node of the revision quantized that an error row stands for: the one writing the same
 * tensor there (a dynamic quantization's Conv output is written by an Add it made). */
const baseNode = (n) => (n.other_name !== undefined ? { name: n.other_name, op_type: n.other_op } : n);

/** Whether a dynamic quantization rewrote the node of an error row: its tensor is written by
 * another node there (a MatMul's by the Mul after its MatMulInteger). A Reshape or Add it left
 * as it was has nothing to leave in float (QA45 re-test: each had a tick box). */
const rewritten = (n) => n.other_name !== undefined && (n.other_name !== n.name || n.other_op !== n.op_type);

const NON_FINITE_WHY = "a value infinite or NaN on one side where the other's is finite (float16 overflows to ∞ past 65,504): no error measures it, so it is listed first";

/** "∞/NaN here", "∞/NaN there (3)": what an output's non_finite says (the server's compare),
 * short enough for the error column. */
function nonFiniteWords(nf) {
  const count = (n) => (n > 1 ? ` (${formatInteger(n)})` : "");
  if (nf.here) return `∞/NaN here${count(nf.here)}`;
  if (nf.there) return `∞/NaN there${count(nf.there)}`;
  return `other ∞/NaN${count(nf.both)}`;
}

/** A table of nodes with their error and SQNR; `addRows` appends rows, each with a cell for its
 * checkbox handed to `onRow(node, cell)`. */
function errorTable(ctx, cls, onRow) {
  const body = el("tbody");
  const table = el("table", { class: `run-compare ${cls}` },
    el("thead", {}, el("tr", {}, [["", "run-tick"], ["node", ""], ["error", "num"], ["SQNR", "num"]].map(([h, c]) => el("th", { class: c }, h)))),
    body);
  const addRows = (rows) => {
    for (const n of rows) {
      const cell = el("td", { class: "run-tick" });
      body.append(el("tr", { "data-node": n.node },
        cell,
        el("td", { class: "cost-name", title: nodeLabel(n.name, n.node) }, el("a", { href: ctx.nodeHref(graphPathOf(n.node), n.node), class: "cost-node" }, breakable(nodeLabel(n.name, n.node))),
          el("div", { class: "muted run-op" }, mono(n.op_type))),
        ...(n.non_finite ? [el("td", { class: "num run-non-finite", colspan: "2", title: NON_FINITE_WHY }, nonFiniteWords(n.non_finite))]
          : shapesDiffer(n) ? [el("td", { class: "num run-shape-differs", colspan: "2" }, shapesDiffer(n))]
          : outputVerdict(n) === "reordered" ? [el("td", { class: "num run-reordered-node", colspan: "2", title: rowsWords(n.rows) }, "reordered")]
            : [el("td", { class: "num" }, formatMetric("rel_error", n.rel_error)), el("td", { class: "num" }, db(n.sqnr_db))])));
      onRow(n, cell);
    }
  };
  return { table, addRows };
}

/** "5 off beyond rounding", "1 off beyond rounding, 1 reordered": rows in another order are no
 * error of values (an NMS after the node whose weights changed). */
function offWords(off) {
  const reordered = off.filter((n) => outputVerdict(n) === "reordered").length;
  return `${off.length - reordered} off beyond rounding${reordered ? `, ${reordered} reordered` : ""}`;
}

/** How far each node's output is from the other revision's (the run's "locate"): the nodes
 * furthest off listed, and the drawing coloured by it on request. When the revision on screen
 * is a quantization of that one: what each node costs alone (POST .../sensitivity, on the run's
 * inputs), and quantizing again with the ticked nodes left in float. */
function nodeErrors(compare, ctx, body) {
  const nodes = compare.nodes || [];
  const off = nodes.filter((n) => !n.equal);
  const ranked = [...off].sort((a, b) => (b.rel_error ?? Infinity) - (a.rel_error ?? Infinity));
  const colour = el("button", { type: "button", class: "btn btn-small", id: "run-error-heat" }, "Colour the drawing by error");
  colour.addEventListener("click", () => ctx.actions.showHeat("rel_error", { nodes }));
  const ticks = new Ticks();
  /** @type {[any, HTMLElement][]} */
  const shown = [];
  let tickRow = null; // once the revision is known to be a quantization: a row's checkbox
  const { table, addRows } = errorTable(ctx, "run-errors", (n, cell) => { shown.push([n, cell]); if (tickRow) tickRow(n, cell); });
  addRows(ranked.slice(0, WORST));
  // the furthest off first; the rest on a click (a quantized BERT has hundreds off)
  const more = ranked.length > WORST ? el("button", { type: "button", class: "linklike", id: "run-errors-all" }, `Show all ${ranked.length} nodes off`) : null;
  if (more) more.addEventListener("click", () => { more.remove(); addRows(ranked.slice(WORST)); });
  const offer = el("div", { class: "run-requantize", id: "run-requantize", hidden: true });
  const root = section(`Error of each node against ${otherWords(compare)}`, el("div", { id: "run-errors" },
    el("p", { class: "muted" }, `${plural(nodes.length, "node")} compared ${(compare.other_inputs || []).length ? "on other values for some inputs" : "on the same inputs"}, ${offWords(off)}. `,
      // (QA30: 24 % here beside "all quantized: 1.9 %" below and 3.5 % of range above, unexplained)
      "Error: ‖Δ‖ ÷ ‖value‖ of the node's own output (SQNR in dB: higher is closer) — not of the model's outputs, which the table above measures against their range: an early node's error may shrink or grow on the way there. ",
      // (QA25 #7: 0.025 % above, 0.078 % here for the node writing that output)
      "Measured in runs that keep every node's output, where onnxruntime fuses less: an output's figures here can differ from the table above, which is of the plain runs."),
    paddedNodes(compare.padding),
    float16Limit(nodes),
    ranked.length ? table : null,
    off.length ? el("div", { class: "ed-row" }, colour, more) : null,
    offer));
  // a revision of this model made by quantizing the one compared with: offered again, nodes left out
  (compare.model ? Promise.resolve(null) : quantizedFrom(compare.revision, ctx)).then((op) => {
    if (!op) return;
    tickRow = (n, cell) => {
      const base = baseNode(n);
      if (!excludable(base) || (op.op === "quantize_dynamic" && !rewritten(n))) return;
      cell.append(ticks.box([base.name], base.name));
      // the quantized node's name isn't the one left out: say which is
      if (base.name !== n.name) cell.nextElementSibling.append(el("div", { class: "muted run-of" }, "of ", mono(base.name), ` (${base.op_type})`));
    };
    for (const [n, cell] of shown) tickRow(n, cell);
    const again = el("button", { type: "button", class: "btn btn-small", id: "run-requantize-go" }, `Quantize revision ${compare.revision} again, ticked nodes in float`);
    again.addEventListener("click", () => requantize(op, ticks.ticked(), compare.revision, ctx, offer));
    const qdq = op.op === "quantize_static" && (op.quant_format || "QDQ") === "QDQ";
    offer.append(...[el("p", { class: "muted" }, `This revision is ${op.op === "quantize_static" ? "a static" : "a dynamic"} quantization of revision ${compare.revision}: `,
      qdq ? "an error grows along the graph, so measure what each quantized tensor costs by itself, then " : "",
      "tick the nodes that lose the most to quantize it again without them."),
    qdq ? costAlone(compare.revision, ctx, body, ticks, op.calibration) : null,
    el("div", { class: "ed-row" }, again)].filter(Boolean)); // (DOM append writes a null as "null")
    offer.hidden = false;
  }).catch(() => {});
  return root;
}

/** Float inputs the run made up (normal values around 0): the error measured on them may not be
 * the error on the model's real inputs (QA23: a float16 UNet 0.07 % off at N(0,1) timesteps,
 * 0.42 % at real ones of 500–999). */
function madeUpFloats(answer) {
  const made = Object.entries(answer.inputs || {})
    .filter(([, p]) => p.random && !p.random.role && /FLOAT|DOUBLE/.test(p.dtype || ""))
    .map(([name]) => name);
  if (!made.length) return null;
  return el("p", { class: "muted run-made-up", id: "run-made-up" },
    `${made.join(", ")} ${made.length === 1 ? "was" : "were"} made up: normal values around 0. `,
    "A model whose inputs live elsewhere (a diffusion timestep of 0–999, audio in ±1) may differ more on them: type or upload real values to measure that.");
}

/** "2 padded positions (attention_mask = 0)": a mask's 0s as the page names them. */
const paddedWords = (p) => `${plural(p.positions, "padded position")} (${p.input} = 0)`;
const maxAbs = (v) => (v === null || v === undefined ? "?" : formatMeasure(v));

/** The positions a fed attention mask pads, left out of the outputs' comparison (the API's
 * compare.padding, expected.padding): what they hold means nothing, the model masks them. */
function paddedOutputs(padding, id = "run-padding") {
  const said = (padding || []).filter((p) => p.outputs);
  if (!said.length) return null;
  return el("p", { class: "muted run-padding", id }, said.map((p) =>
    `${paddedWords(p)} left out: their values differ by up to ${maxAbs(p.max_abs)}; they are masked in the model. `),
  "The numbers above are of the other positions.");
}

/** The same positions left out of each node's error. */
function paddedNodes(padding) {
  const said = (padding || []).filter((p) => p.nodes);
  if (!said.length) return null;
  return el("p", { class: "muted run-padding", id: "run-padding-nodes" }, said.map((p) =>
    `${paddedWords(p)} left out of each node's error too: ${plural(p.nodes, "node")} hold values there, masked in the model, that differ by up to ${maxAbs(p.nodes_max_abs)}. `));
}

/** The nodes whose values past float16's range one side holds at its limit (a mask's −3.4e38 as
 * −65504): said once, since they are counted as the same values, not as errors. */
function float16Limit(nodes) {
  const held = nodes.filter((n) => n.float16_limit);
  if (!held.length) return null;
  const names = held.slice(0, 3).map((n) => nodeLabel(n.name, n.node)).join(", ");
  return el("p", { class: "muted", id: "run-float16-limit" },
    `${plural(held.length, "node")} (${names}${held.length > 3 ? ", …" : ""}) hold values past float16's range, as a mask's −3.4e38, at its limit ±65504: `,
    "both sides mask alike, so those values count as the same, not as an error.");
}

const COSTLIEST = 10;
const TICK_FIRST = 5; // leaving the few costliest in float recovers the most (bench/sensitivity.py)

/** A node as a link to it. */
const nodeLink = (n, ctx) => el("a", { href: ctx.nodeHref(graphPathOf(n.node), n.node), class: "cost-node" }, breakable(nodeLabel(n.name, n.node)));

/** The costliest quantization points: what each is (an activation tensor, a node's weights),
 * the nodes to leave out to turn it float, its error and SQNR, a checkbox for those nodes. */
function pointTable(points, ctx, ticks) {
  return el("table", { class: "run-compare run-sensitivity" },
    el("thead", {}, el("tr", {}, [["", "run-tick"], ["quantized", ""], ["error", "num"], ["SQNR", "num"]].map(([h, c]) => el("th", { class: c }, h)))),
    el("tbody", {}, points.map((p) => {
      const owners = p.owners.filter(excludable);
      const what = p.kind === "weights" ? `the weights of ${nodeLabel(p.of.name, p.of.node)}` : p.tensors[0];
      const tick = el("td", { class: "run-tick" }, owners.length === p.owners.length ? ticks.box(owners.map((n) => n.name), what) : null);
      return el("tr", { "data-kind": p.kind },
        tick,
        el("td", { class: "cost-name" },
          p.kind === "weights" ? el("div", {}, "weights of ", nodeLink(p.of, ctx), el("span", { class: "muted" }, ` · ${p.dtype}`))
            : el("div", {}, mono(breakable(p.tensors[0])), el("span", { class: "muted" }, ` · ${p.dtype}`)),
          el("div", { class: "muted run-owners" }, "leave out ", ...owners.flatMap((n, k) => (k ? [", ", nodeLink(n, ctx)] : [nodeLink(n, ctx)])))),
        el("td", { class: "num" }, formatMetric("rel_error", p.rel_error)),
        el("td", { class: "num" }, db(p.sqnr_db)));
    })));
}

/** Each node's cost for the heat map: the most any point it owns costs. */
function costOfNodes(points) {
  const cost = new Map();
  for (const p of points) {
    for (const n of p.owners) cost.set(n.node, Math.max(cost.get(n.node) ?? 0, p.rel_error ?? 0));
  }
  return [...cost].map(([node, quant_cost]) => ({ node, quant_cost }));
}

const SWEEP_SAMPLES = 8; // the server's MAX_SAMPLES

/** The sweep's "plan": the fewest nodes to leave out for the target, and a button ticking them. */
/** An error next to the target it is held to, with the digits that tell them apart (1.04 % over
 * a 1 % target reads "1 %" at the usual two). */
function besideGoal(value, target) {
  const text = formatMetric("rel_error", value);
  return value !== null && value !== target && text === formatMetric("rel_error", target) ? `${(100 * value).toPrecision(3)} %` : text;
}

function planNote(plan, all, ticks) {
  const goal = formatMetric("rel_error", plan.target);
  const names = plan.nodes.map((n) => n.name);
  const box = el("div", { class: "run-plan", id: "run-sensitivity-plan", "data-reached": String(plan.reached) });
  if (plan.reached && !names.length) {
    box.append(el("p", {}, `The whole quantization is already within ${goal}: ${besideGoal(all.rel_error, plan.target)}, simulated. Nothing needs leaving out.`));
    return box;
  }
  const tick = el("button", { type: "button", class: "btn btn-small", id: "run-sensitivity-plan-tick" }, `Tick ${names.length === 1 ? "it" : `these ${names.length}`}`);
  tick.addEventListener("click", () => ticks.set(names, true));
  const list = mono(breakable(names.join(", ")));
  if (!plan.reached) {
    box.append(el("p", {}, `No nodes that can be left out bring the error within ${goal}: leaving out all ${plural(names.length, "node")} that can (`, list,
      `) gets it to ${besideGoal(plan.rel_error, plan.target)}, simulated; the rest are quantized by nodes without a name.`), names.length ? tick : null);
    return box;
  }
  box.append(el("p", {}, `Leaving out ${plural(names.length, "node")} — `, list, ` — brings the error within ${goal}: `,
    `${besideGoal(all.rel_error, plan.target)} → ${besideGoal(plan.rel_error, plan.target)} (${db(plan.sqnr_db)}), simulated, `,
    `with ${plural(plan.float, "quantized tensor")} turned float (${plan.runs} more runs to find them).`), tick);
  return box;
}

/** "What each quantized tensor costs alone": the sweep on the run's inputs (or the quantization's
 * calibration samples), its costliest points listed with checkboxes, the drawing coloured by it
 * on request. */
function costAlone(base, ctx, body, ticks, calibration) {
  const go = el("button", { type: "button", class: "btn btn-small", id: "run-sensitivity-go" }, "Measure what each quantized tensor costs alone");
  const onSamples = el("input", { type: "checkbox", id: "run-sensitivity-samples" });
  const samplesLabel = calibration ? el("label", { class: "run-sensitivity-samples", title: `Each tensor measured on the first ${SWEEP_SAMPLES} samples the quantization was calibrated on: a steadier ranking, ${SWEEP_SAMPLES}× the runs` },
    onSamples, `on its first ${SWEEP_SAMPLES} calibration samples instead of the run's inputs`) : null;
  const target = el("input", { type: "number", min: "0.001", step: "any", id: "run-sensitivity-target", placeholder: "1", class: "run-target", "aria-label": "Target error in %" });
  const targetLabel = el("label", { class: "run-sensitivity-target", title: "After measuring, the switched model runs a few more times to find the fewest nodes whose leaving out brings the whole quantization within this error" },
    "Target error ", target, " % ", el("span", { class: "muted" }, "Optional: also find the fewest nodes to leave out to stay within it."));
  const out = el("div", { id: "run-sensitivity" });
  go.addEventListener("click", async () => {
    const percent = target.value === "" ? null : Number(target.value);
    if (percent !== null && !(percent > 0)) {
      clear(out);
      out.append(el("div", { class: "field-error" }, "The target error is a percentage above 0 (1 for 1 %)."));
      return;
    }
    go.disabled = onSamples.disabled = target.disabled = true;
    clear(out);
    const started = Date.now();
    const waiting = "Running the model once per quantized tensor…";
    const note = el("div", { class: "muted", id: "run-sensitivity-progress" }, waiting);
    out.append(note);
    // the sweep's token: the server counts its runs under it, and this polls the count
    const token = `s${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    let runs = "";
    const timer = setInterval(() => {
      note.textContent = `${waiting} ${runs}${Math.round((Date.now() - started) / 1000)} s`;
      ctx.actions.sweepProgress(token).then((p) => { runs = `${formatInteger(p.done)} of ${formatInteger(p.total)} runs, `; }).catch(() => {});
    }, 1000);
    try {
      const where = calibration && onSamples.checked ? { samples: calibration } : { inputs: body.inputs, dims: body.dims };
      const answer = await ctx.actions.sensitivity({ base, progress: token, ...where, ...(percent === null ? {} : { target: percent / 100 }) });
      clear(out);
      const rows = answer.points.slice(0, COSTLIEST);
      const pick = rows.filter((p) => p.owners.every(excludable)).slice(0, TICK_FIRST);
      const tickFirst = el("button", { type: "button", class: "btn btn-small", id: "run-sensitivity-tick" }, `Tick the ${pick.length} costliest`);
      tickFirst.addEventListener("click", () => { for (const p of pick) ticks.set(p.owners.map((n) => n.name), true); });
      const colour = el("button", { type: "button", class: "btn btn-small", id: "run-sensitivity-heat" }, "Colour the drawing by cost");
      colour.addEventListener("click", () => ctx.actions.showHeat("quant_cost", { nodes: costOfNodes(answer.points) }));
      out.append(
        el("p", { class: "muted" }, `${plural(answer.points.length, "quantized tensor")} (activations, and each node's weights), each quantized alone with the rest in float (${answer.runs} runs${answer.samples > 1 ? ` on ${answer.samples} samples` : ""}, ${answer.seconds.toFixed(1)} s): `,
          `the error it leaves in ${answer.outputs.length === 1 ? "the output" : "the output furthest off"} (‖Δ‖ ÷ ‖value‖ of the model's output, not of a node's). All quantized: ${formatMetric("rel_error", answer.all.rel_error)} (${db(answer.all.sqnr_db)}, simulated). `,
          "Leaving out the nodes listed under one (they then read float values) turns it float."),
        answer.plan ? planNote(answer.plan, answer.all, ticks) : "",
        pointTable(rows, ctx, ticks), el("div", { class: "ed-row" }, pick.length ? tickFirst : null, colour));
      out.dataset.ready = "true";
    } catch (err) {
      clear(out);
      out.append(el("div", { class: "field-error", role: "alert" }, err.message || String(err)));
    } finally {
      clearInterval(timer);
      go.disabled = onSamples.disabled = target.disabled = false;
    }
  });
  return el("div", { class: "run-sensitivity-box" }, el("div", { class: "ed-row" }, go), samplesLabel, targetLabel, out);
}

/** The quantize op that made the revision on screen from revision `base`, when it is the head
 * and was made by that op alone; else null. */
async function quantizedFrom(base, ctx) {
  const data = await ctx.actions.loadRevisions();
  const here = data.revisions.find((r) => r.revision === ctx.summary.revision);
  if (!here || data.head !== here.revision || here.parent !== base || (here.ops || []).length !== 1) return null;
  const op = here.ops[0];
  return op.op === "quantize_static" || op.op === "quantize_dynamic" ? op : null;
}

/** Undo the quantization and make it again from its base with `names` left in float; then the
 * Run panel again, set to compare with the base. */
async function requantize(op, names, base, ctx, box) {
  const error = box.querySelector(".field-error") || box.appendChild(el("div", { class: "field-error", hidden: true }));
  if (!names.length) {
    error.hidden = false;
    error.textContent = "Tick the nodes to leave in float first.";
    return;
  }
  await ctx.actions.undo();
  if (ctx.actions.revisionNow() !== base) return; // changed elsewhere meanwhile: the page says so
  const exclude = [...new Set([...(op.nodes_to_exclude || []), ...names])];
  try {
    await ctx.actions.edit([{ ...op, nodes_to_exclude: exclude }]);
  } catch (err) { // refused: the model stays at its base
    ctx.actions.toast(`Quantizing again failed — the model is back at revision ${base}, Redo returns to the quantized one: ${err.message || err}`);
    return;
  }
  ctx.actions.openRun(base);
}

// a model past this size runs a comparison without measuring each node unless asked (a ResNet-50,
// 98 MB, batch 2: 0.7 s for the comparison, 3 s measuring its 175 nodes' outputs, 75 M values)
const LOCATE_BY_DEFAULT = 32 * 1024 * 1024;

const PROFILE_NOTE = "graph optimisations off: each node runs and is timed as the model has it (fused in a real run, some cost less); the median of 3 runs after one to warm up";
const SLOWEST = 10;

/** Each node's time (the run's "profile"): the slowest listed with their share, and the drawing
 * coloured by time on request. */
function nodeTimes(profile, ctx) {
  const nodes = profile.nodes || [];
  const total = nodes.reduce((a, n) => a + n.time_us, 0) || 1;
  const slowest = [...nodes].sort((a, b) => b.time_us - a.time_us).slice(0, SLOWEST);
  const inside = profile.subgraph_nodes || [];
  const colour = el("button", { type: "button", class: "btn btn-small", id: "run-time-heat" }, "Colour the drawing by time, optimisations off");
  colour.addEventListener("click", () => ctx.actions.showHeat("time_us", { nodes: [...nodes, ...inside] }));
  return section("Time per node", el("div", { id: "run-times" },
    el("p", { class: "muted" }, `${plural(nodes.length, "node")} timed, ${formatMetric("time_us", total)} in all`,
      profile.ms ? ` (a run ${formatMetric("time_us", profile.ms * 1000)})` : "", ` — ${PROFILE_NOTE}.`),
    el("table", { class: "run-compare run-times" },
      el("thead", {}, el("tr", {}, [["node", ""], ["op", ""], ["time", "num"], ["share", "num"]].map(([h, cls]) => el("th", { class: cls }, h)))),
      el("tbody", {}, slowest.map((n) => el("tr", { "data-node": n.node },
        el("td", { class: "cost-name", title: nodeLabel(n.name, n.node) }, el("a", { href: ctx.nodeHref("", n.node), class: "cost-node" }, breakable(nodeLabel(n.name, n.node)))),
        el("td", {}, mono(n.op_type)),
        el("td", { class: "num" }, formatMetric("time_us", n.time_us)),
        el("td", { class: "num" }, `${((100 * n.time_us) / total).toFixed(1)} %`))))),
    byOperator(opTotals(nodes), total, "run-by-op"),
    inside.length ? subgraphTimes(inside, nodes, ctx) : null,
    optimizedRun(profile.optimized_run, profile.ms, ctx),
    el("div", { class: "ed-row" }, colour)));
}

/** The slowest nodes inside If/Loop/Scan bodies, each with the share of its control-flow node's
 * time it takes (a Loop's body summed over its iterations). */
function subgraphTimes(inside, nodes, ctx) {
  const holder = new Map(nodes.map((n) => [n.node, n]));
  const graphOf = (id) => id.slice(0, id.lastIndexOf("/"));
  return el("div", { id: "run-subgraph-times" },
    el("p", { class: "muted" }, `Inside subgraphs: ${plural(inside.length, "node")} timed, within their If, Loop or Scan node's time.`),
    el("table", { class: "run-compare run-times" },
      el("thead", {}, el("tr", {}, [["node", ""], ["within", ""], ["time", "num"], ["of it", "num"]].map(([h, cls]) => el("th", { class: cls }, h)))),
      el("tbody", {}, inside.slice(0, SLOWEST).map((n) => {
        const parent = holder.get(n.within);
        return el("tr", { "data-node": n.node },
          el("td", { class: "cost-name", title: nodeLabel(n.name, n.node) }, el("a", { href: ctx.nodeHref(graphOf(n.node), n.node), class: "cost-node" }, breakable(nodeLabel(n.name, n.node))),
            el("div", { class: "muted run-op" }, mono(n.op_type))),
          el("td", {}, parent ? el("a", { href: ctx.nodeHref("", parent.node), class: "cost-node" }, breakable(nodeLabel(parent.name, parent.node))) : mono(n.within)),
          el("td", { class: "num" }, formatMetric("time_us", n.time_us)),
          el("td", { class: "num" }, parent && parent.time_us ? `${((100 * n.time_us) / parent.time_us).toFixed(1)} %` : "—"));
      }))));
}

/** "Conv 61 % · LRN 39 % · …": where the time goes by operator, the biggest shares first.
 * @param {[string, number][]} sums operator and µs @param {number} total @param {string} id */
function byOperator(sums, total, id, lead = "By operator: ") {
  const top = [...sums].sort((a, b) => b[1] - a[1]).slice(0, 6);
  return el("p", { class: "run-by-op", id }, el("span", { class: "muted" }, lead),
    top.map(([op, us], i) => [i ? " · " : "", mono(op), ` ${((100 * us) / total).toFixed(0)} %`]),
    sums.length > top.length ? el("span", { class: "muted" }, ` · ${sums.length - top.length} more`) : "");
}

/** The model's nodes' times summed by their operator. */
function opTotals(nodes) {
  const sums = new Map();
  for (const n of nodes) sums.set(n.op_type, (sums.get(n.op_type) || 0) + n.time_us);
  return [...sums];
}

/** The same runs as onnxruntime makes them by default (graph optimised: nodes fused, reordered
 * for the CPU): its operators' shares, and how the run's time compares. */
function optimizedRun(run, plainMs, ctx) {
  if (run && run.error) return el("p", { class: "muted", id: "run-optimized" }, `The run as onnxruntime optimises it could not be profiled: ${run.error}`);
  if (!run || !run.ms || !run.ops || !run.ops.length) return null;
  const total = run.ops.reduce((a, o) => a + o.time_us, 0) || 1;
  const against = plainMs ? `, against ${formatMetric("time_us", plainMs * 1000)} with optimisations off` : "";
  return el("div", { class: "run-optimized", id: "run-optimized" },
    el("p", { class: "muted" }, `As onnxruntime runs it by default, its graph optimised into ${plural(run.nodes, "node")} of its own (fused, reordered): a run ${formatMetric("time_us", run.ms * 1000)}${against}.`),
    byOperator(run.ops.map((o) => [o.op_type, o.time_us]), total, "run-by-op-optimized", "Its operators: "),
    run.by_node ? deployedNodes(run, total, ctx) : null);
}

/** The optimised run's kernels on the model's nodes (GET .../run "by_node"): the slowest, each
 * with the operator it ran as and the nodes fused into it, and the drawing coloured by them. */
function deployedNodes(run, total, ctx) {
  const timed = run.by_node.filter((n) => n.time_us > 0).sort((a, b) => b.time_us - a.time_us);
  const fused = run.by_node.length - timed.length;
  const own = (run.other || []).reduce((a, o) => a + o.time_us, 0);
  const colour = el("button", { type: "button", class: "btn btn-small", id: "run-deployed-heat" }, "Colour the drawing by time as deployed");
  colour.addEventListener("click", () => ctx.actions.showHeat("time_us", { nodes: run.by_node }));
  const ranAs = (n) => [mono(n.kernel_op), n.fused ? el("span", { class: "muted" }, ` +${n.fused.length} fused`) : ""];
  return el("div", { id: "run-deployed" },
    el("p", { class: "muted" }, `On the model's nodes: ${plural(timed.length, "node")} with a kernel of their own, ${fused} fused into one of them`,
      own ? `; ${formatMetric("time_us", own)} in onnxruntime's own nodes (layout reorders…).` : "."),
    el("table", { class: "run-compare run-times" },
      el("thead", {}, el("tr", {}, [["node", ""], ["ran as", ""], ["time", "num"], ["share", "num"]].map(([h, cls]) => el("th", { class: cls }, h)))),
      el("tbody", {}, timed.slice(0, SLOWEST).map((n) => el("tr", { "data-node": n.node },
        el("td", { class: "cost-name", title: nodeLabel(n.name, n.node) }, el("a", { href: ctx.nodeHref("", n.node), class: "cost-node" }, breakable(nodeLabel(n.name, n.node)))),
        el("td", {}, ranAs(n)),
        el("td", { class: "num" }, formatMetric("time_us", n.time_us)),
        el("td", { class: "num" }, `${((100 * n.time_us) / total).toFixed(1)} %`))))),
    el("div", { class: "ed-row" }, colour));
}

/** Each output against another run's or the expected values ({close_tolerance, outputs:
 * {NAME: {equal, close, max_abs, max_rel_to_range, max_rel}}}): identical, close, reordered or differs. */
function comparisonTable(compared, id) {
  const was = compared.renamed || {}; // output -> its name in the other revision
  const close = `${100 * (compared.close_tolerance ?? 0.001)} %`;
  return el("table", { class: "run-compare run-outputs", id },
    el("thead", {}, el("tr", {}, [["output", ""], ["same?", `close: every value within ${close} of itself plus ${close} of the output's largest magnitude`],
      ["max |Δ|", ""], ["÷\u00a0range", "max |Δ| ÷ the output's largest magnitude"], ["max rel", "max |Δ| ÷ |value|, element by element, where the other run's value isn't 0 (large where values are near 0)"]]
      .map(([h, title]) => el("th", { title }, h)))),
    el("tbody", {}, Object.entries(compared.outputs).map(([name, c]) => {
      const verdict = outputVerdict(c);
      // rows in another order (output_compare): each measured against the row it matched
      const matched = c.rows && !shapesDiffer(c) ? "measured row by row, each against the row it matched" : null;
      return el("tr", { "data-output": name, class: `run-${verdict === "identical" ? "equal" : verdict}` },
        el("td", {}, mono(breakable(name)), was[name] ? el("span", { class: "muted run-was" }, ` (was ${was[name]})`) : ""),
        el("td", {}, shapesDiffer(c) ? el("span", { class: "run-verdict run-shapes" }, `differs: ${shapesDiffer(c)}`) : el("span", { class: "run-verdict" }, verdict), c.rows ? el("div", { class: "muted run-rows" }, rowsWords(c.rows)) : "",
          c.keys ? el("div", { class: "muted run-keys" }, keysWords(c.keys)) : ""),
        ...["max_abs", "max_rel_to_range", "max_rel"].map((k) => {
          const none = c[k] === null || c[k] === undefined;
          // a max rel left out where every differing value's reference is 0 (x ÷ 0 says nothing)
          const why = none && k === "max_rel" && c.max_abs ? "every value that differs is 0 in the other run: no relative error" : matched;
          return el("td", { class: "num", title: why }, none ? "—" : formatMeasure(c[k]));
        }));
    })));
}

/** Maps whose keys differ (class labels renamed): which, the values compared in key order. */
function keysWords([here, there]) {
  const list = (keys) => keys.map((k) => JSON.stringify(k)).join(", ");
  return `its keys differ: ${list(here)} here, ${list(there)} there (the values compared in their order)`;
}

/** One output's verdict against the other run: identical, close, reordered (the same rows,
 * all of them, in another order: a detector's boxes) or differs. */
function outputVerdict(c) {
  if (c.equal) return "identical";
  if (c.close) return "close";
  const { here, there, matched } = c.rows || {};
  return here !== undefined && here === there && matched === here ? "reordered" : "differs";
}

/** The outputs one side has and the other lacks (added or removed since, another tensor asked
 * for): said, not compared (the server's `only_in`). */
function notCompared(answer) {
  const { here = [], there = [] } = answer.compare.only_in || {};
  const line = (names, side, cls) => names.length ? el("p", { class: `muted ${cls}` }, `${names.join(", ")}: only in ${side}, not compared.`) : null;
  const self = answer.compare.model ? `this model (revision ${answer.revision})` : `revision ${answer.revision}`;
  return here.length || there.length ? el("div", { id: "run-not-compared" },
    line(here, self, "run-only-here"), line(there, otherWords(answer.compare), "run-only-there")) : null;
}

/** "Keep as a reference case": these inputs (and the test data's outputs, or this run's) are
 * kept with the model, and every revision is checked against them. */
function keepAsReference(ctx, body) {
  const errorBox = fieldError();
  const keep = el("button", { type: "button", class: "btn btn-small", id: "run-keep-reference",
    title: "Keep these inputs and outputs with the model: every revision is then run on them and held to these outputs (Model panel, Validation)" },
  "Keep as a reference case");
  const row = el("div", { class: "ed-row run-keep" }, keep,
    el("span", { class: "muted ed-hint" }, body.expected ? "the test data's outputs become the ones every revision must give" : "this run's outputs become the ones every revision must give"), errorBox);
  keep.addEventListener("click", () => runInline(row, errorBox, async () => {
    const kept = await ctx.actions.reference.add({ inputs: body.inputs, dims: body.dims, ...(body.expected ? { expected: body.expected } : {}) });
    keep.replaceWith(el("span", { class: "run-kept", id: "run-kept" }, `Kept as “${kept.case.name}”: every revision is checked against it.`));
  }));
  return row;
}

/** What a screen reader is told when a run ends: its summary line and the verdicts under it. */
function resultWords(root) {
  const said = ["#run-summary", "#run-expected-verdict", ".run-compare-refused", ".run-diverges"]
    .map((q) => root.querySelector(q)).filter(Boolean).map((e) => e.textContent.replace(/\s+/g, " ").trim());
  return said.join(" ");
}

function results(root, answer, ctx, body, fromCase = false) {
  clear(root);
  // a revision that can't take this run's inputs is said, and this run's outputs shown alone
  const refused = answer.compare && answer.compare.refused;
  const compare = refused ? null : answer.compare;
  // the runs' times are onnxruntime's; loading a big model's sessions (and a comparison's node
  // outputs) can take far longer, which the page waited for too (QA40: "3435 ms" after 56 s)
  const runsTook = ((answer.ms || 0) + ((compare && compare.ms) || 0)) / 1000;
  const whole = answer.elapsed && answer.elapsed > 2 * runsTook + 1 ? ` The whole took ${formatMeasure(answer.elapsed)} s, loading the model${compare ? "s" : ""} included.` : "";
  root.append(el("p", { class: "run-summary", id: "run-summary" },
    `Ran revision ${answer.revision} in ${answer.ms.toFixed(1)} ms (onnxruntime ${answer.onnxruntime || "?"})`,
    compare ? `; ${otherWords(compare)} in ${compare.ms.toFixed(1)} ms ${inputsWords(compare)}.` : ".", whole));
  if (refused) root.append(el("p", { class: "field-error run-compare-refused", role: "alert" }, `Not compared: ${refused}.`));
  const ran = branchesRan(answer.branches, ctx);
  if (ran) root.append(ran);
  if (ctx.actions.reference && !fromCase) root.append(keepAsReference(ctx, body));
  if (answer.expected) {
    const all = Object.values(answer.expected.outputs);
    const verdict = all.every((c) => c.equal) ? "every output as expected, exactly" : all.every((c) => c.close) ? "every output close to the expected values" : `${all.filter((c) => !c.close).length} of ${all.length} output(s) differ from the expected values`;
    root.append(section("Against the expected outputs", el("p", { class: "muted", id: "run-expected-verdict" }, `${fromCase ? "The case's kept outputs" : body.expectedWords || "The test data's outputs"}: ${verdict}.`),
      comparisonTable(answer.expected, "run-expected"), paddedOutputs(answer.expected.padding, "run-expected-padding")));
  }
  if (compare) {
    const d = divergence(compare.diverges, compare, ctx);
    if (d) root.append(d);
    root.append(section(`Compared with ${otherWords(compare)}`, comparisonTable(compare, "run-compare"), paddedOutputs(compare.padding), notCompared(answer), madeUpFloats(answer)));
  }
  if (compare && compare.nodes) root.append(nodeErrors(compare, ctx, body));
  if (answer.profile) root.append(nodeTimes(answer.profile, ctx));
  const mismatched = new Map((answer.declared_mismatches || []).map((m) => [m.output, m]));
  const sizes = fedSizes(ctx.graph, answer.inputs || {});
  for (const [name, preview] of Object.entries(answer.outputs)) {
    const mismatch = mismatched.get(name);
    root.append(section(["Output ", el("span", { class: "h3-name" }, name)], mismatch ? declaredMismatch(mismatch, ctx, { sizes }) : null, ...valueViews(`run:${name}`, preview), saveNpy(name, preview)));
  }
  const fed = inputsFed(answer.inputs || {});
  if (fed) root.append(fed);
}

/** "optimum::if ran then_branch (use_cache_branch = true)": the branch each If took, where the
 * inputs fed tell (the API's "branches": its condition a graph input or a constant). */
function branchesRan(branches, ctx) {
  if (!branches || !branches.length) return null;
  const fed = (b) => (b.inputs ? Object.entries(b.inputs).map(([k, v]) => `${k} = ${v}`).join(", ") : `${b.input} = ${b.value}`);
  const why = (b) => (b.input === undefined && !b.inputs ? `its condition is the constant ${b.value}`
    : b.negated ? `not ${b.input}, and ${fed(b)}`
      : b.through ? `its condition comes from ${fed(b)} through ${b.through.join(", ")}` : fed(b));
  return el("div", { class: "run-branches", id: "run-branches" }, branches.map((b) => el("p", { class: "run-branch", "data-node": b.node },
    el("a", { href: ctx.nodeHref(graphPathOf(b.node), b.node), "data-node": b.node }, nodeLabel(b.name, b.node)), ` ran ${b.ran} (${why(b)})`)));
}

/** "Save .npy" for an output: the server's copy of the file onnxruntime gave (the preview's
 * "npy", kept a while after the run: every value, as they were), else one built in the page from
 * the values the answer holds, when it holds them all; else why there is none. */
function saveNpy(name, preview) {
  if (preview.kind || !Array.isArray(preview.shape) || !Array.isArray(preview.values)) return null; // a sequence, map, optional
  const filename = npyFilename(name);
  if (preview.npy) {
    const widened = preview.converted_from ? ` (its ${preview.converted_from} values widened to float32)` : "";
    return el("div", { class: "run-save-npy-row" }, el("a", {
      class: "linklike run-save-npy", href: blobUrl(preview.npy, filename), download: filename,
      title: `${filename}: every value of this run's output${widened}; kept on the server for a while after the run`,
    }, "Save .npy"));
  }
  const whole = (preview.offset || 0) === 0 && preview.values.length === preview.size;
  // JSON's numbers keep integers exact only up to 2^53
  const inexact = /INT/.test(preview.dtype) && preview.values.some((v) => !Number.isSafeInteger(v));
  const problem = !whole ? `No .npy: a run answers an output's first ${formatInteger(preview.values.length)} values, and this one has ${formatInteger(preview.size)} — more than the server keeps of one run.`
    : inexact ? "No .npy from the page: its integers past 2^53 don't come through JSON exactly."
      : npyProblem(preview.dtype, preview.size);
  if (problem) return el("p", { class: "muted run-save-npy-note" }, problem);
  const save = el("button", { type: "button", class: "linklike run-save-npy", title: `${filename}: numpy.load reads it` }, "Save .npy");
  save.addEventListener("click", () => saveBytes(buildNpy(preview.dtype, preview.shape, preview.values), filename));
  return el("div", { class: "run-save-npy-row" }, save);
}

/** {dim name: size} of the graph's inputs' named dims in this run (what it fed them). */
function fedSizes(graph, inputs) {
  const sizes = {};
  for (const v of (graph && graph.inputs) || []) {
    const fed = inputs[v.name] && inputs[v.name].shape;
    if (!fed || !v.shape || v.shape.length !== fed.length) continue;
    v.shape.forEach((d, i) => { if (typeof d === "string" && d) sizes[d] = fed[i]; });
  }
  return sizes;
}

/** How the run made an input it was not given (the API's "random": {seed, role}). */
function madeWords(preview) {
  const made = preview.random;
  if (!made) return "as given";
  if (made.role === "mask") return "made: ones (an attention mask: every position attended)";
  if (made.role === "positions") {
    const from = made.from ?? 0; // past the cached positions a longer mask covers
    return `made: positions ${from}, ${from + 1}, ${from + 2}…${from ? ` (after a past of ${from})` : ""}`;
  }
  return `made: random, seed ${made.seed}`;
}

/** The inputs the run was fed, folded: what the outputs were computed from. */
function inputsFed(inputs) {
  const names = Object.keys(inputs);
  if (!names.length) return null;
  return el("details", { class: "run-inputs-fed", id: "run-inputs-fed" },
    el("summary", {}, `Inputs fed (${names.length})`),
    ...names.map((name) => el("div", { class: "run-input-fed", "data-name": name },
      el("div", { class: "run-input-fed-head" }, mono(name), " ", el("span", { class: "muted" }, madeWords(inputs[name]))),
      ...valueViews(`run-input:${name}`, inputs[name]))));
}

const MAP_ROWS = 50;

/**
 * A run's value as the page shows it: a tensor in the tensor viewer; a sequence as its count,
 * then each of its tensors (or maps) previewed in turn; a map (a ZipMap's probabilities) as a
 * key → value table; an empty optional said so.
 */
function valueViews(ref, preview) {
  if (preview.kind === "optional") return [el("div", { class: "muted run-value-kind" }, "an empty optional: no value")];
  if (preview.kind === "map") {
    const keys = preview.keys.values;
    const values = preview.values.values;
    const rows = keys.slice(0, MAP_ROWS).map((k, i) => el("tr", {}, el("td", {}, mono(String(k))), el("td", { class: "num" }, formatValue(values[i], preview.values.dtype))));
    const more = preview.count > rows.length ? el("div", { class: "muted" }, `first ${rows.length} of ${formatInteger(preview.count)} entries`) : null;
    return [el("div", { class: "muted run-value-kind" }, `map of ${plural(preview.count, "entry", "entries")}: ${preview.keys.dtype} → ${preview.values.dtype}`),
      el("table", { class: "run-map" }, el("thead", {}, el("tr", {}, el("th", {}, "key"), el("th", {}, "value"))), el("tbody", {}, ...rows)), more];
  }
  if (preview.kind === "sequence") {
    const shown = preview.items.length;
    const parts = [el("div", { class: "muted run-value-kind" }, `sequence of ${plural(preview.count, "item")}${shown < preview.count ? `, the first ${shown} shown` : ""}`)];
    preview.items.forEach((item, k) => {
      parts.push(el("div", { class: "run-seq-item" }, el("div", { class: "run-seq-index mono" }, `[${k}]`), ...valueViews(`${ref}[${k}]`, item)));
    });
    return parts;
  }
  return [el("div", { class: "muted" }, `${preview.dtype} ${formatShape(preview.shape)}`), preview.top ? topValues(preview) : null,
    tensorView(ref, previewLoader(preview), { wide: false })];
}

/** An output's largest values along its last axis (a classifier's top classes, a language
 * model's likeliest tokens), for its first rows and its last: "k → value", the largest first. */
function topValues(preview) {
  const { rows, of } = preview.top;
  const last = preview.shape[preview.shape.length - 1];
  const shownRows = rows.length < of ? ` (rows ${rows.slice(0, -1).map((r) => r.index[r.index.length - 1]).join(", ")} and the last of ${formatInteger(of)})` : "";
  return el("div", { class: "run-top" },
    el("div", { class: "muted" }, `Largest along the last axis (of ${formatInteger(last)})${shownRows}:`),
    el("table", { class: "run-top-table" }, el("tbody", {}, rows.map((r) => el("tr", {},
      of > 1 ? el("td", { class: "mono muted" }, `[${r.index.join(",")}]`) : null,
      el("td", {}, r.top.flatMap(([k, v], i) => [i ? " · " : "", el("span", { class: "run-top-item mono", title: `index ${k} along the last axis` },
        el("strong", {}, String(k)), ` → ${formatValue(v, preview.dtype)}`)]))))))); // a line breaks between pairs
}

/** How the compared revision was fed: "on the same inputs", their old names said, or which
 * of its inputs could not take this run's values (made up for it: the outputs can't be compared as like for like). */
/** What a run was compared with: "revision 2", or another model's "cnn_fp32.onnx (revision 0)". */
function otherWords(compare) {
  return compare.model ? `${compare.model.name} (revision ${compare.revision})` : `revision ${compare.revision}`;
}

function inputsWords(compare) {
  const renamed = Object.entries(compare.inputs_renamed || {}).map(([mine, old]) => `${mine} as ${old}`);
  const other = compare.other_inputs || [];
  if (other.length) return `on other values for ${other.join(", ")} (it can't take this run's: its inputs differ), so its outputs differ for that too`;
  return `on the same inputs${renamed.length ? ` (${renamed.join(", ")})` : ""}`;
}

/** A refused run in the server's words, with a link to the node it failed at (the error's
 * `node`, as the Validation panel gives one). */
function runFailure(err, graph, ctx, body = {}) {
  const message = err.message || String(err);
  // out of memory: what needs less (QA40: a 1.5 GiB model at 64×64 keeping every node's output)
  const less = /ran out of memory/.test(message)
    ? `${/[.!?]$/.test(message) ? "" : "."} Smaller sizes for its dims need less${body.locate ? ", and so does a comparison without every node's error" : ""}.` : "";
  const box = el("div", { class: "run-failure", id: "run-failure" }, el("div", { class: "field-error", role: "alert" }, message + less));
  if (err.node) {
    const node = (graph.nodes || []).find((n) => n.id === err.node);
    const label = node ? `${node.op_type} ${nodeLabel(node.name, node.id)}` : "Show the node";
    box.append(el("a", { class: "inference-link run-failure-node", href: ctx.nodeHref(graphPathOf(err.node), err.node), "data-node": err.node },
      `${label} ›`));
  }
  return box;
}

/** Fill `root` (the sidebar) with the run panel. */
export function renderRunPanel(root, ctx) {
  clear(root);
  const graph = ctx.mainGraph;
  if (!graph) {
    root.append(el("header", { class: "panel-head" }, el("div", { class: "panel-kicker" }, "Run"), el("h2", { class: "panel-title" }, "Run the model")),
      el("section", { class: "panel-section" }, el("p", { class: "muted" }, "Runs feed the main graph: open it (the breadcrumb's first step) to run the model.")));
    return;
  }
  const inputs = (graph.inputs || []).filter((i) => !(graph.initializers || []).some((t) => t.name === i.name));
  const hints = exportHints(ctx.summary && ctx.summary.metadata_props);
  const rows = inputs.map((input) => inputRow(input, hints));
  const npz = el("input", { type: "file", accept: ".npz", id: "run-npz", "aria-label": "One .npz for every input" });
  const dataset = el("input", { type: "file", accept: ".pb", multiple: true, id: "run-dataset", "aria-label": "A test data set: input_k.pb and output_k.pb files" });
  // what the outputs should be, as a framework saves them (np.save(f"{name}.npy", torch_out))
  const expectedFiles = el("input", { type: "file", accept: ".npy,.npz", multiple: true, id: "run-expected-files", "aria-label": "The outputs expected: <output>.npy files or one .npz" });
  const expressions = graph.dim_expressions || {};
  const dimNames = symbolicDims(inputs, expressions);
  const known = ctx.dimSizes ? ctx.dimSizes() : {};
  // else the sizes onnxruntime ran it at (the smoke run's, or a run's): a speech model takes no 1 sample
  const runtime = (ctx.summary && ctx.summary.validation && ctx.summary.validation.runtime) || {};
  const ran = runtime.status === "ok" ? runtime.sizes || {} : {};
  const dims = dimNames.map((d) => ({ name: d, field: el("input", { type: "number", min: "0", step: "1", value: String(known[d] ?? ran[d] ?? 1), "aria-label": d, class: "run-dim" }) }));
  followFirstAxes(dims.map((d) => d.field));
  // a size only inputs given by values or a file have is theirs: its field greys out; no values
  // at all ("[]": an empty cache) say no size, the field gives the 0
  const sized = (text) => text.trim() !== "" && !/^[\s[\]]*$/.test(text);
  const ownValues = (r) => sized(r.values.value) || (r.file.files && r.file.files.length) || (r.image && r.image.picked());
  const fromSet = new Map(); // input -> the shape the picked test data set gives it
  const fromNpz = new Map(); // input -> the shape the picked .npz gives it (fed before the set's)
  const syncDims = () => {
    const given = new Set(rows.filter((r) => ownValues(r) || fromSet.has(r.name) || fromNpz.has(r.name)).map((r) => r.name));
    for (const d of dims) {
      const idle = inputs.filter((i) => inputDims(i, expressions).includes(d.name)).every((i) => given.has(i.name));
      d.field.disabled = idle;
      d.field.title = idle ? "Taken from the values given" : "";
    }
  };
  // the sizes values of `shape` give `input` shown in the fields they take over
  const takeSizes = (input, shape) => {
    const sizes = sizesFrom(input, shape, expressions);
    for (const d of dims) if (d.name in sizes) d.field.value = String(sizes[d.name]);
  };
  // a .npy picked: the sizes it gives shown in the fields it takes over
  const showSizes = async (r) => {
    const f = r.file.files && r.file.files[0];
    const shape = f ? await npyShape(f).catch(() => null) : null;
    const input = inputs.find((i) => i.name === r.name);
    const misfit = r.row.querySelector(".run-npy-misfit");
    if (misfit) misfit.remove();
    if (!shape || !input) return;
    const declared = input.shape || [];
    if (!randomElement(input.type) && declared.length && shape.length !== declared.length) {
      // said at once, not as onnxruntime's "Invalid rank" after the run
      r.row.append(el("div", { class: "field-error run-npy-misfit", role: "alert" },
        `${f.name} holds ${formatShape(shape)} (rank ${shape.length}); ${input.name} takes rank ${declared.length} (${formatShape(declared)})`));
      return;
    }
    takeSizes(input, shape);
  };
  // an image picked: the sizes it is fed at fill the fields of the dims it gives
  const imageSizes = async (r) => {
    const made = await r.image.make();
    const input = inputs.find((i) => i.name === r.name);
    if (!made || !input) return;
    takeSizes(input, made.shape);
  };
  // the sizes a picked .npz's or test data set's arrays give the inputs without values of their own
  const takeGivenSizes = () => {
    for (const r of rows) {
      const input = inputs.find((i) => i.name === r.name);
      const shape = fromNpz.get(r.name) || fromSet.get(r.name);
      if (input && shape && !ownValues(r)) takeSizes(input, shape);
    }
    syncDims();
  };
  // an .npz picked: uploaded at once (the run reuses its arrays), each input's sizes taken as a
  // .npy's are (QA45 #1: the fields kept 1, and the run was refused)
  let npzPicked = null; // Promise of inputsFromNpz's {input: blob}
  const npzNote = el("div", { class: "run-dataset-note", id: "run-npz-note" });
  npz.addEventListener("change", () => {
    const f = npz.files && npz.files[0];
    const shapes = new Map();
    fromNpz.clear();
    clear(npzNote);
    syncDims();
    npzPicked = f ? inputsFromNpz(ctx.actions.uploadBlob, f, rows.map((r) => r.name), shapes) : null;
    const picked = npzPicked;
    if (!picked) return;
    npzNote.append(el("span", { class: "muted" }, `Reading ${f.name}…`));
    picked.then((arrays) => {
      if (picked !== npzPicked) return; // another picked since
      for (const [name, shape] of shapes) fromNpz.set(name, shape);
      takeGivenSizes();
      clear(npzNote);
      const named = Object.keys(arrays);
      const left = rows.filter((r) => !(r.name in arrays)).map((r) => r.name);
      npzNote.append(el("span", { class: "muted" }, `${f.name} feeds ${named.map((n) => `${n} ${formatShape(fromNpz.get(n))}`).join(", ")}`,
        left.length ? `; not ${left.join(", ")} (their own fields feed them).` : "."));
    }).catch((err) => {
      if (picked !== npzPicked) return;
      clear(npzNote);
      npzNote.append(el("div", { class: "field-error", role: "alert" }, err.message || String(err)));
    });
  });
  // a test data set picked: its files uploaded at once (the run reuses them), each input's sizes
  // taken as a .npy's are (QA31 #9: the fields kept 1, and the run was refused)
  let setPicked = null; // Promise of fromTestDataSet's {inputs, expected}
  const setNote = el("div", { class: "run-dataset-note", id: "run-dataset-note" });
  dataset.addEventListener("change", () => {
    const files = [...(dataset.files || [])];
    const shapes = new Map(); // blob -> shape
    const keepShape = async (f) => {
      const answer = await ctx.actions.uploadBlob(f);
      if (Array.isArray(answer.shape)) shapes.set(answer.blob, answer.shape);
      return answer;
    };
    fromSet.clear();
    clear(setNote);
    syncDims();
    setPicked = files.length ? fromTestDataSet(keepShape, files, rows.map((r) => r.name), (graph.outputs || []).map((o) => o.name)) : null;
    const picked = setPicked;
    if (!picked) return;
    setNote.append(el("span", { class: "muted" }, "Reading the test data set…"));
    picked.then((set) => {
      if (picked !== setPicked) return; // another set picked since
      for (const [name, blob] of Object.entries(set.inputs)) if (shapes.has(blob)) fromSet.set(name, shapes.get(blob));
      takeGivenSizes(); // a row's own file or values feed it instead
      clear(setNote);
      const named = Object.keys(set.inputs);
      setNote.append(el("span", { class: "muted" }, `The set feeds ${named.length ? named.map((n) => `${n}${fromSet.has(n) ? ` ${formatShape(fromSet.get(n))}` : ""}`).join(", ") : "no input"}`,
        Object.keys(set.expected).length ? `, and gives the outputs expected of ${Object.keys(set.expected).join(", ")}.` : "."));
    }).catch((err) => {
      if (picked !== setPicked) return;
      clear(setNote);
      setNote.append(el("div", { class: "field-error", role: "alert" }, err.message || String(err)));
    });
  });
  for (const r of rows) {
    r.values.addEventListener("input", syncDims);
    r.file.addEventListener("change", () => { syncDims(); showSizes(r); });
    if (r.image) r.image.file.addEventListener("change", () => { syncDims(); imageSizes(r); });
  }
  const extra = el("input", { type: "text", id: "run-extra", placeholder: "tensor names, comma-separated", value: (ctx.selectedOutputs || []).join(", ") });
  const compare = el("select", { id: "run-compare-to" }, el("option", { value: "" }, "no comparison"));
  // measuring each node runs both revisions again keeping every node's output: ticked by
  // default for a model up to LOCATE_BY_DEFAULT bytes, or when a tool's "Compare its outputs"
  // opened the panel (the node table is what it is for); a tick of the person's own stays
  const big = (ctx.summary.size || 0) > LOCATE_BY_DEFAULT;
  const locate = el("input", { type: "checkbox", id: "run-locate" });
  let locateTouched = false;
  locate.addEventListener("change", () => { locateTouched = true; });
  const profile = el("input", { type: "checkbox", id: "run-profile" });
  const preset = ctx.runCompareTo ? ctx.runCompareTo() : null;
  locate.checked = !big || preset !== null;
  let kept = ctx.runInputs ? ctx.runInputs() : null; // a reference case's inputs (and expected outputs)
  const go = ctx.runGo ? ctx.runGo() : false;
  // the model's own revisions, then the other stored models (an export quantized or converted
  // elsewhere, against its float source: the same inputs, node by node)
  Promise.all([ctx.actions.loadRevisions(), ctx.actions.listModels ? ctx.actions.listModels().catch(() => ({ models: [] })) : { models: [] }]).then(([data, listed]) => {
    const stands = standing(data.revisions, ctx.summary.head ?? ctx.summary.revision);
    const revisions = [...data.revisions].sort((a, b) => b.revision - a.revision).filter((r) => r.revision !== ctx.summary.revision)
      .map((r) => {
        const { text, title } = revisionChoice(r, stands.get(r.revision));
        return el("option", { value: String(r.revision), selected: r.revision === preset, title }, text);
      });
    const stored = (listed.models || []).filter((m) => (m.kind || "model") === "model");
    const others = stored.filter((m) => m.id !== ctx.modelId);
    const twins = twinsOf(stored); // a name two stored models have: their ids tell them apart (QA27)
    if (others.length) {
      compare.append(el("optgroup", { label: "Revisions of this model" }, revisions),
        el("optgroup", { label: "Other models (their latest revision)" }, others.map((m) => modelOption(m, twins))));
    } else compare.append(...revisions);
    syncLocate();
    if (go && form.isConnected) form.requestSubmit(); // once the revision to compare with is chosen
  }).catch(() => { compare.title = "The revisions could not be listed"; }); // no comparison then
  const out = el("div", { id: "run-results", class: "run-results" });
  const button = el("button", { type: "submit", class: "btn btn-primary", id: "run-go" }, "Run");
  const own = el("div", { class: "run-own-inputs" },
    el("ol", { class: "run-inputs" }, rows.map((r) => r.row)),
    rows.length > 1 ? el("label", { class: "run-npz-label", title: "numpy.savez(path, name=array, …): an array per input, named after it" }, "or every input from one .npz ", npz) : null,
    rows.length > 1 ? npzNote : null,
    el("label", { class: "run-npz-label", title: "The TensorProto files of an ONNX test data set (test_data_set_0/): its inputs feed the run, its outputs are the values the outputs should have" },
      "or a test data set (input_k.pb, output_k.pb) ", dataset),
    setNote,
    el("label", { class: "run-npz-label", title: "The values each output should have, as your framework gave them: numpy.save(\"logits.npy\", out) per output, or one numpy.savez(path, logits=…)" },
      "Expected outputs (<output>.npy, or an .npz) ", expectedFiles),
    dims.length ? el("div", { class: "run-dims" }, el("div", { class: "muted" }, "Sizes of the dynamic dims"),
      el("div", { class: "ed-row" }, dims.map((d) => el("label", {}, mono(d.name), " = ", d.field)))) : null);
  const other = el("button", { type: "button", class: "linklike", id: "run-own-inputs" }, "use other inputs");
  const caseNote = kept ? el("p", { class: "run-case", id: "run-case" }, `On the inputs of reference case “${kept.label}”, held to its kept outputs — `, other) : null;
  other.addEventListener("click", () => { kept = null; caseNote.remove(); own.hidden = false; });
  own.hidden = !!kept;
  // measuring each node's output is part of a comparison: off (and greyed) without one
  const locateLabel = el("label", { class: "run-locate-label", title: "Both revisions run a second time keeping every intermediate tensor they share, and each is compared" },
    locate, el("span", {}, "and measure each node's output: the first that differs, the furthest off ",
      el("span", { class: "muted run-locate-cost", id: "run-locate-cost" },
        `(slower: runs both revisions again keeping every node's output${big ? `; off by default past ${formatBytes(LOCATE_BY_DEFAULT)}` : ""})`)));
  const syncLocate = () => {
    locate.disabled = compare.value === "";
    locateLabel.classList.toggle("muted", locate.disabled);
  };
  compare.addEventListener("change", () => {
    if (!locateTouched) locate.checked = !big;
    syncLocate();
  });
  syncLocate();
  const form = el("form", { class: "run-form", id: "run-form" },
    caseNote, own,
    el("label", { class: "run-extra-label" }, "Also return these intermediate tensors", extra),
    el("label", { class: "run-compare-label" }, "Compare with ", compare),
    locateLabel,
    el("label", { title: `onnxruntime's profiler, ${PROFILE_NOTE}` }, profile, "Time each node"),
    el("div", { class: "ed-row" }, button, el("span", { class: "muted" }, "onnxruntime (CPU) on the server; the model is not changed")));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    button.disabled = true;
    clear(out);
    const pair = compare.value.startsWith("model:")
      ? `revision ${ctx.summary.revision} and ${compare.selectedOptions[0] ? compare.selectedOptions[0].textContent : "the other model"}`
      : `revisions ${ctx.summary.revision} and ${compare.value}`;
    const waiting = compare.value === "" ? "Running…"
      : !locate.checked ? `Running ${pair} on the same inputs…`
        : `Running ${pair} on the same inputs, then both again keeping every node's output to compare them node by node…`;
    const note = el("div", { class: "muted run-progress", id: "run-progress", role: "status" }, waiting);
    out.append(note);
    const started = Date.now();
    const ticking = setInterval(() => { note.textContent = `${waiting} ${Math.round((Date.now() - started) / 1000)} s`; }, 1000);
    let sent = {};
    try {
      const body = { inputs: {}, dims: {} };
      const npzInputs = npzPicked ? await npzPicked : {}; // uploaded when picked
      const set = setPicked ? await setPicked : { inputs: {}, expected: {} }; // uploaded when picked
      for (const r of rows) {
        const f = r.file.files && r.file.files[0];
        const picture = !f && r.image && r.image.picked() ? (r.image.current() || await r.image.make()) : null;
        if (r.image && r.image.picked() && !picture) throw new Error(`The image for ${r.name} could not be read`);
        const values = f || picture ? undefined : typedValues(r);
        const given = f ? (await ctx.actions.uploadBlob(f)).blob
          : picture ? (await ctx.actions.uploadBlob(new File([picture.bytes], `${picture.name}.npy`))).blob
            : values === undefined && (npzInputs[r.name] || set.inputs[r.name]);
        body.inputs[r.name] = given ? { npy: given } : values !== undefined ? { values }
          : { random: { seed: Number(r.seed.value || 0), ...(r.count ? { count: Number(r.count.value || 0) } : {}) } };
      }
      const outputNames = (graph.outputs || []).map((o) => o.name);
      const fromFiles = expectedFiles.files && expectedFiles.files.length
        ? await expectedFromFiles(ctx.actions.uploadBlob, [...expectedFiles.files], outputNames) : {};
      const expected = { ...set.expected, ...fromFiles };
      if (Object.keys(expected).length) body.expected = Object.fromEntries(Object.entries(expected).map(([name, blob]) => [name, { npy: blob }]));
      // a size the values given have is theirs (the server refuses a field that disagrees)
      for (const d of dims) if (!d.field.disabled) body.dims[d.name] = Number(d.field.value || 1);
      if (kept) Object.assign(body, { inputs: kept.inputs, dims: kept.dims, expected: kept.expected });
      if (dims.length && ctx.actions.rememberDimSizes) ctx.actions.rememberDimSizes(body.dims);
      const wanted = extra.value.split(",").map((s) => s.trim()).filter(Boolean);
      if (wanted.length) body.outputs = [...new Set([...(graph.outputs || []).map((o) => o.name), ...wanted])];
      if (compare.value.startsWith("model:")) { // another stored model: its head
        body.compare_model = compare.value.slice("model:".length);
        body.locate = locate.checked;
      } else if (compare.value !== "") {
        body.compare_to = Number(compare.value);
        body.locate = locate.checked;
      }
      if (profile.checked) body.profile = true;
      sent = body;
      const answer = await ctx.actions.run(body);
      answer.elapsed = (Date.now() - started) / 1000; // the whole request: loading the models too
      // the verdict names where the expected values came from (not sent: the API takes no such field)
      results(out, answer, ctx, { ...body, expectedWords: Object.keys(fromFiles).length ? "The outputs given" : "" }, !!kept);
      const diverges = answer.compare && answer.compare.diverges;
      ctx.actions.markDivergence(diverges ? diverges.node : null, Object.values((answer.compare && answer.compare.outputs) || {}).every((c) => c.close));
      out.dataset.ready = "true";
      out.scrollIntoView({ block: "nearest" }); // below the fold on a model of several inputs
      announce(resultWords(out));
    } catch (err) {
      clear(out);
      out.append(runFailure(err, graph, ctx, sent));
      out.scrollIntoView({ block: "nearest" });
      announce(`The run failed: ${out.textContent.replace(/\s+/g, " ").trim().slice(0, 300)}`);
    } finally {
      clearInterval(ticking);
      button.disabled = false;
      // a disabled button loses focus to the page (QA41 #5): back where the person was
      if (document.activeElement === document.body && button.isConnected) button.focus({ preventScroll: true });
    }
  });
  root.append(
    el("header", { class: "panel-head" },
      el("div", { class: "panel-kicker" }, "Run"),
      el("h2", { class: "panel-title" }, "Run the model"),
      el("div", { class: "panel-subtitle" }, `revision ${ctx.summary.revision} with onnxruntime`)),
    // a model without inputs runs too: it computes its outputs from its constants
    el("section", { class: "panel-section" }, inputs.length ? null : el("p", { class: "muted run-no-inputs" }, "The model has no inputs to feed: a run computes its outputs from its constants."), form, out));
}
