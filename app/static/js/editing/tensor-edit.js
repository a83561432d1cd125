// Editing tensor values and names: replace values from an uploaded .npy or typed JSON (for
// initializers and TENSOR attributes), rename a tensor everywhere, delete an unused initializer,
// save values as a .npy file.
import * as api from "../lib/api.js";
import { el } from "../widgets/dom.js";
import { formatFloat32, formatNumber, formatShape, formatTensor } from "../lib/format.js";
import { checkbox, editForm, field, parseTensorJSON, submit, textInput } from "./edit-forms.js";
import { fetchNpy, npyProblem, saveBytes } from "../lib/npy.js";
import { showError } from "../widgets/ui.js";

const JSON_PREFILL_MAX = 1000; // values typed into the JSON form for tensors up to this size

function shapeWords(dtype, shape) {
  return formatTensor(dtype, shape) || dtype || "?";
}

/** Nested lists of `values` in `shape` (row-major), as JSON text with one innermost row a line. */
function nestedJSON(values, shape, dtype) {
  // -0 written as such (JSON.stringify writes 0): a value left as it was stays itself
  const text = (v) => (typeof v === "bigint" ? v.toString() : Object.is(v, -0) ? "-0"
    : dtype === "FLOAT" && typeof v === "number" ? formatFloat32(v) : JSON.stringify(v));
  if (!shape.length) return text(values[0]);
  const rec = (offset, depth) => {
    const n = Number(shape[depth]);
    const stride = shape.slice(depth + 1).reduce((a, d) => a * Number(d), 1);
    const items = [];
    for (let i = 0; i < n; i += 1) {
      items.push(depth === shape.length - 1 ? text(values[offset + i]) : rec(offset + i * stride, depth + 1));
    }
    if (depth === shape.length - 1) return `[${items.join(", ")}]`;
    const pad = " ".repeat(depth + 1);
    return `[${items.join(`,\n${pad}`)}]`;
  };
  return rec(0, 0);
}

/**
 * The forms that replace a tensor's values: from a .npy file (uploaded with POST /api/blobs)
 * and, for tensors up to JSON_PREFILL_MAX values, from JSON prefilled with the current values.
 * `tensor`: {ref, dtype, shape, size}. `apply(value, {allowTypeChange})` makes the edit.
 * `typeChange`: offer "allow type/shape change". `cast`: send the current dtype with an .npy
 * (so the file's values are converted to it). `fit`: the values are new (a graph input fixed to
 * a constant): their shape must fit `tensor.shape`, whose named dims take any size.
 */
export function tensorValueForms(tensor, ctx, applyEdit, { typeChange = true, cast = false, fit = false, what = "tensor" } = {}) {
  const apply = (value, options) => applyEdit(value, options).catch((err) => {
    // the server names the op's field; the form names its checkbox
    err.message = String(err.message || "").replace(/\s*\(set allow_type_change to change it\)/, typeChange
      ? ": tick \"Allow type/shape change\" to replace the type and shape too." : ".");
    throw err;
  });
  const wrap = el("div", { class: "ed-tensor-forms" });
  const dtype = tensor.dtype;
  const shape = (tensor.shape || []).map(Number);
  const current = shapeWords(dtype, shape);

  // from a .npy file
  const file = el("input", { type: "file", name: "npy", accept: ".npy,application/octet-stream", class: "ed-file" });
  const named = (tensor.shape || []).some((d) => typeof d !== "number");
  const fitShape = tensor.shape && tensor.shape.length ? formatShape(tensor.shape) : "a scalar";
  const intro = fit ? `The values are converted to ${dtype}; their shape must be ${fitShape}${named ? " (a named or unknown dim takes any size)" : ""}.`
    : typeChange ? `The file's shape must be this ${what}'s (${current}); its values are converted to ${dtype}, and refused where that would change one. "Allow type/shape change" keeps the file's own.`
      : `The values are converted to ${dtype}; the shape comes from the file (now ${current}).`;
  const verb = fit ? "Fix to these values" : null;
  const info = el("div", { class: "ed-hint muted ed-file-info" }, intro);
  const allowNpy = typeChange ? checkbox("allow_type_change", "Allow type/shape change", false) : null;
  let uploaded = null; // {file, promise}
  const upload = () => {
    const f = file.files && file.files[0];
    if (!f) return null;
    if (!uploaded || uploaded.file !== f) uploaded = { file: f, promise: ctx.actions.uploadBlob(f) };
    return uploaded.promise;
  };
  const npyForm = editForm("ed-npy", [
    field("Values from a .npy file", file),
    info,
    allowNpy,
    el("div", { class: "ed-actions" }, submit(verb || "Replace values")),
  ], async (form) => {
    const pending = upload();
    if (!pending) throw new Error("Choose a .npy file first.");
    let blob;
    try {
      blob = await pending;
    } catch (err) {
      uploaded = null;
      throw err;
    }
    const value = { npy: blob.blob };
    if (cast) value.dtype = dtype;
    const allowTypeChange = !!(allowNpy && form.elements.allow_type_change.checked);
    await apply(value, { allowTypeChange, fileDtype: onnxDtype(blob.dtype) });
  });
  file.addEventListener("change", () => {
    showError(npyForm.error, "");
    const pending = upload();
    if (!pending) return;
    info.textContent = "Reading the file…";
    pending.then((blob) => {
      const same = JSON.stringify((blob.shape || []).map(Number)) === JSON.stringify(shape);
      const fileType = `${blob.dtype} [${(blob.shape || []).join(", ")}]`;
      let text = `The file holds ${fileType}; this ${what} is ${current}.`;
      if (!typeChange) text += ` Its values are converted to ${dtype}.`;
      else if (same) text += ` Its values are converted to ${dtype} (with "Allow type/shape change", the file's dtype is kept).`;
      else text += " The shapes differ: tick \"Allow type/shape change\" to replace both.";
      info.textContent = text;
      info.classList.toggle("ed-warn", typeChange && !same);
    }).catch((err) => {
      uploaded = null;
      info.textContent = intro;
      showError(npyForm.error, err.message || String(err));
    });
  });
  wrap.append(npyForm.form);

  // from JSON
  const size = Number(tensor.size ?? shape.reduce((a, d) => a * d, 1));
  const area = el("textarea", {
    name: "values", class: "mono ed-json", rows: 4, spellcheck: "false",
    placeholder: `e.g. ${shape.length ? "[[1, 2], [3, 4]]" : "1.5"} or {"dtype": "${dtype || "FLOAT"}", "shape": [2, 2], "values": [1, 2, 3, 4]}`,
  });
  const allowJson = typeChange ? checkbox("allow_type_change", "Allow type/shape change", false) : null;
  const jsonForm = editForm("ed-json-form", [
    field("Values as JSON", area, `A list (nested by dimension) or {"dtype", "shape", "values"}; NaN/Infinity as "NaN", "Infinity".${tensor.ref && size <= JSON_PREFILL_MAX ? " Prefilled with the current values." : ""}`),
    allowJson,
    el("div", { class: "ed-actions" }, submit(verb || "Set values")),
  ], async (form) => {
    const value = parseTensorJSON(area.value, { dtype, shape });
    await apply(value, { allowTypeChange: !!(allowJson && form.elements.allow_type_change.checked) });
  });
  if (size <= JSON_PREFILL_MAX && tensor.ref && size > 0) {
    area.placeholder = "Loading the current values…";
    ctx.actions.loadTensor(tensor.ref, 0, size).then((t) => {
      if (!area.value) area.value = nestedJSON(t.values || [], shape, dtype);
      area.rows = Math.min(10, Math.max(2, area.value.split("\n").length));
    }).catch(() => { area.placeholder = "Type the values as JSON"; });
  }
  wrap.append(jsonForm.form);
  return wrap;
}

const NUMPY_TO_ONNX = {
  float32: "FLOAT", float64: "DOUBLE", float16: "FLOAT16", int8: "INT8", int16: "INT16", int32: "INT32", int64: "INT64",
  uint8: "UINT8", uint16: "UINT16", uint32: "UINT32", uint64: "UINT64", bool: "BOOL", complex64: "COMPLEX64", complex128: "COMPLEX128",
};

/** NumPy's dtype name (as POST /api/blobs reports it) -> the ONNX element type, or null. */
export function onnxDtype(numpyName) {
  const n = String(numpyName || "");
  if (NUMPY_TO_ONNX[n]) return NUMPY_TO_ONNX[n];
  if (/^[<>|=]?U\d+$|^str/.test(n)) return "STRING";
  return null;
}

/** A "Download as .npy" button (the page builds the file), or why it can't. */
export function npyDownload(tensor, ctx, filename) {
  if (tensor.dtype === "STRING" && ctx.modelId && tensor.ref) {
    // the server writes it (numpy's fixed-width text, which set_initializer and Run take back)
    const revision = ctx.viewing ?? (ctx.summary ? ctx.summary.revision : null);
    return el("div", { class: "ed-npy" }, el("div", { class: "ed-row" },
      el("a", { class: "btn btn-small ed-npy-download", href: api.npyUrl(ctx.modelId, tensor.ref, revision), download: filename }, "Download as .npy")));
  }
  const problem = npyProblem(tensor.dtype, Number(tensor.size ?? 0));
  if (problem) return el("div", { class: "ed-hint muted ed-npy-note" }, problem);
  const status = el("span", { class: "muted ed-status", role: "status" });
  const error = el("div", { class: "field-error", role: "alert", hidden: true });
  const btn = el("button", { type: "button", class: "btn btn-small ed-npy-download" }, "Download as .npy");
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    showError(error, "");
    status.textContent = "Fetching values…";
    try {
      const { bytes } = await fetchNpy(tensor.ref, ctx.actions.loadTensor, (f) => {
        status.textContent = `Fetching values… ${Math.round(f * 100)}%`;
      });
      saveBytes(bytes, filename);
      status.textContent = `Saved ${filename} (${formatNumber(bytes.length)} bytes).`;
    } catch (err) {
      status.textContent = "";
      showError(error, err.message || String(err));
    } finally {
      btn.disabled = false;
    }
  });
  return el("div", { class: "ed-npy" }, el("div", { class: "ed-row" }, btn, status), error);
}

/** File name for a tensor's .npy: its name with anything odd replaced. */
export function npyFilename(name) {
  const safe = String(name || "tensor").replace(/[^\w.-]+/g, "_").replace(/^\.+/, "").slice(0, 120) || "tensor";
  return `${safe}.npy`;
}

/** Rename a tensor of the graph on screen (the main graph or a body) everywhere (rename_tensor);
 * `selectionFor(newName)` picks the new selection. */
export function renameTensorForm(name, ctx, selectionFor) {
  const input = textInput("to", name, { class: "mono", "aria-label": `New name for ${name}` });
  const { form } = editForm("ed-inline ed-rename-tensor", [
    el("div", { class: "ed-row" }, input, submit("Rename", "btn btn-small")),
  ], async () => {
    const to = input.value;
    if (!to.trim()) throw new Error("Give the tensor a name.");
    if (to === name) throw new Error("That is already its name.");
    /** @type {{op: string, from: string, to: string, graph?: string}} */
    const op = { op: "rename_tensor", from: name, to };
    const path = (ctx.graph && ctx.graph.path) || "";
    if (path) op.graph = path; // a body's value: renamed there and in the bodies inside it
    await ctx.actions.edit([op], { selection: selectionFor(to) });
  });
  return form;
}
