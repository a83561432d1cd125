// The sizes a run asks for: the dims of a model's inputs that have none (by name, or unnamed by
// input and axis, as the server names them: app/onnx_io/dim_names.py), a dim that is an
// expression of the others as the dims it is made of. The Run panel's size fields and a
// reference case kept on random inputs both ask for these.

/** The tensors a sequence or optional input holds, when random ones can be made (their shape
 * is declared): {shape, many} (many: a sequence of them, whose length the person picks), or null. */
export function randomElement(type) {
  if (!type || (type.kind !== "sequence" && type.kind !== "optional")) return null;
  const inner = type.elem || {};
  if (type.kind === "optional" && inner.kind === "sequence") {
    const items = randomElement(inner);
    return items && { ...items, many: true };
  }
  if (inner.kind !== "tensor" || !Array.isArray(inner.shape)) return null;
  return { shape: inner.shape, many: type.kind === "sequence" };
}

/** The names of an input's dims without a size (those random values need a size for); a dim
 * the server read as an expression of the others (`expressions`: a decoder's mask, "past_sequence
 * + sequence") as the dims it is made of. */
export function inputDims(i, expressions = {}) {
  const names = [];
  const element = randomElement(i.type);
  for (const [axis, d] of ((element ? element.shape : i.shape) || []).entries()) {
    // a dim with no size and no name (silero VAD's [?, ?], PaddlePaddle's -1 and "?"): by
    // input and axis, as the server names it (app/onnx_io/dim_names.py)
    if (d === null || d === "" || d === "?" || (typeof d === "number" && d < 0)) names.push(`${i.name}[${axis}]`);
    else if (typeof d === "string") names.push(...(expressions[d] || [d]));
  }
  return names;
}

/** The sizes values of `shape` given for input `i` mean for its dims without one: {name: size}
 * (an expression's dims are not told apart, so left out). */
export function sizesFrom(i, shape, expressions = {}) {
  /** @type {Record<string, number>} */
  const out = {};
  const declared = i.shape || [];
  if (randomElement(i.type) || declared.length !== shape.length) return out;
  for (const [axis, d] of declared.entries()) {
    if (d === null || d === "" || d === "?" || (typeof d === "number" && d < 0)) out[`${i.name}[${axis}]`] = shape[axis];
    else if (typeof d === "string" && !expressions[d]) out[d] = shape[axis];
  }
  return out;
}

/** Every dim of `inputs` a run needs a size for, once each, in order. */
export function symbolicDims(inputs, expressions) {
  return [...new Set(inputs.flatMap((i) => inputDims(i, expressions)))];
}

/** The ops writing `sizes` ({dim name: size}; an unnamed dim by input and axis, "x[0]") into
 * the main graph's fed inputs naming them: one edit for every input, as an encoder's input_ids
 * and attention_mask must change together (one alone is refused: they no longer fit). Named dims
 * go as one fix_dims, which a recipe replays on the next export at its own other sizes; an
 * input with an unnamed dim given a size takes its whole shape (set_io_shape). */
export function fixedShapeOps(graph, sizes) {
  const weights = new Set((graph.initializers || []).map((t) => t.name));
  const fed = (graph.inputs || []).filter((v) => !weights.has(v.name) && Array.isArray(v.shape));
  const named = {};
  const ops = [];
  for (const v of fed) {
    let unnamedFixed = false;
    const shape = v.shape.map((d, axis) => {
      const unnamed = d === null || d === "" || d === "?" || (typeof d === "number" && d < 0);
      const key = unnamed ? `${v.name}[${axis}]` : typeof d === "string" ? d : null;
      if (key === null || !Number.isSafeInteger(sizes[key])) return d;
      if (unnamed) unnamedFixed = true;
      else named[key] = sizes[key];
      return sizes[key];
    });
    if (unnamedFixed) ops.push({ op: "set_io_shape", name: v.name, shape });
  }
  // the last input set whole re-infers every type after it: an output's dim inferred from an
  // unnamed one (unk__0) names no input dim, so left to itself it stayed open (QA38 #3)
  if (ops.length) ops[ops.length - 1].update_types = true;
  // first: the inputs set whole after it still name their dims as the graph had them
  return Object.keys(named).length ? [{ op: "fix_dims", dims: named }, ...ops] : ops;
}
