// "Add a model…" (the model panel's Tools): another .onnx joined to this one — after it (post-
// processing reading its outputs: ArgMax, NMS, a decoder) or before it (pre-processing feeding its
// inputs: a cast, a normalisation) — through the compose edit op. The file is uploaded first
// (POST /api/blobs answers its inputs and outputs), then each input to be fed is matched with a
// tensor of the other side; matching names and types are chosen at once.
import { el } from "../widgets/dom.js";
import { checkbox, editForm, field, select, submit, tensorNameList, textInput } from "./edit-forms.js";
import { mono, showError } from "../widgets/ui.js";
import { formatShape } from "../lib/format.js";

const NOT_FED = "";

/** The tensor of `offered` ({name, dtype, shape}[]) to feed `input` with at first: the one of its
 * name, else the only one of its type, else none. */
function guess(input, offered) {
  const same = offered.find((o) => o.name === input.name);
  if (same) return same.name;
  const typed = offered.filter((o) => !input.dtype || !o.dtype || o.dtype === input.dtype);
  return typed.length === 1 ? typed[0].name : NOT_FED;
}

const describe = (v) => el("span", { class: "muted" }, ` ${v.dtype || "?"} ${formatShape(v.shape)}`);

/** One row a fed input: its name and type, and a choice of the tensor feeding it. */
function connectRow(input, offered, chosen) {
  const choice = select(`feed:${input.name}`, [[NOT_FED, "— not fed (stays an input)"], ...offered.map((o) => [o.name, o.name])], chosen,
    { class: "mono", "aria-label": `Tensor feeding ${input.name}` });
  return { input, choice, row: el("li", { class: "compose-row", "data-input": input.name }, el("div", {}, mono(input.name), describe(input)), choice) };
}

/**
 * The form. `graph`: this model's main graph (graph JSON); `run(title, ops)`: runs the op as a
 * tool (its report shown in the panel).
 */
export function composeForm(ctx, graph, run) {
  const file = el("input", { type: "file", accept: ".onnx", id: "compose-file", "aria-label": "The .onnx model to add" });
  const position = select("position", [["after", "After this model — it reads this model's tensors"], ["before", "Before this model — it feeds this model's inputs"]], "after", { id: "compose-position" });
  const prefix = textInput("prefix", "", { class: "mono", placeholder: "none", "aria-label": "Prefix for the added model's names" });
  const rows = el("ol", { class: "compose-rows", id: "compose-rows" });
  const summary = el("p", { class: "muted", id: "compose-added" }, "Choose the .onnx to add: its inputs and outputs are listed here to connect.");
  const inits = new Set((graph.initializers || []).map((t) => t.name));
  const mine = { inputs: (graph.inputs || []).filter((v) => !inits.has(v.name)), outputs: graph.outputs || [] };
  let added = null; // what POST /api/blobs said of the file
  let connections = [];

  const layout = () => {
    rows.replaceChildren();
    connections = [];
    if (!added) return;
    const after = position.value === "after";
    // after: each input of the added model, fed by a tensor of this model (its outputs offered
    // first; any tensor of its main graph typed in); before: each input of this model, fed by
    // an output of the added model
    const fed = after ? added.inputs : mine.inputs;
    const offered = after ? mine.outputs : added.outputs;
    connections = fed.map((input) => connectRow(input, offered, guess(input, offered)));
    if (after) {
      const names = tensorNameList(graph);
      for (const c of connections) {
        const other = textInput(`other:${c.input.name}`, "", { class: "mono compose-other", list: names.id, placeholder: "or any tensor of this model", "aria-label": `Other tensor feeding ${c.input.name}` });
        c.other = other;
        c.row.append(other);
      }
      rows.append(names);
    }
    rows.append(...connections.map((c) => c.row));
  };
  position.addEventListener("change", layout);
  const stored = select("stored", [["", "Loading…"]], "", { id: "compose-stored", "aria-label": "A model stored here" });
  ctx.actions.listModels().then((list) => {
    const others = list.models.filter((m) => m.id !== ctx.modelId && (m.kind || "model") === "model");
    stored.replaceChildren(el("option", { value: "" }, others.length ? "Choose…" : "no other model is stored here"),
      ...others.map((m) => el("option", { value: m.id }, `${m.name} (revision ${m.revision})`)));
  }).catch(() => { stored.replaceChildren(el("option", { value: "" }, "the stored models could not be listed")); });
  /** The model to add: what `fetch()` answers (an uploaded file, a stored model as a blob). */
  const choose = async (label, fetch) => {
    added = null;
    layout();
    showError(error, ""); // a complaint about the model chosen before
    summary.textContent = `Reading ${label}…`;
    try {
      added = await fetch();
      const opsets = (added.opset_import || []).map((o) => `${o.domain || "ai.onnx"} ${o.version}`).join(", ");
      summary.textContent = `${label}: ${added.nodes} nodes (${opsets}); ${added.inputs.length} input(s), ${added.outputs.length} output(s).`;
      layout();
    } catch (err) {
      summary.textContent = err.message || String(err);
    }
  };
  file.addEventListener("change", () => {
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    stored.value = "";
    choose(chosen.name, () => ctx.actions.uploadBlob(chosen));
  });
  stored.addEventListener("change", () => {
    if (!stored.value) return;
    file.value = "";
    choose(stored.selectedOptions[0].textContent || stored.value, () => ctx.actions.modelAsBlob(stored.value));
  });
  const { form, error } = editForm("ed-compose", [
    el("p", { class: "ed-hint muted" }, "Joins another model to this one, like onnx.compose.merge_models: this model keeps every name, field and metadata entry; the added model's ai.onnx opset is converted to this model's, and its names that this model already uses get a suffix. Inputs not fed stay inputs of the model; the added model's outputs become its outputs."),
    field("Model to add", file),
    field("or one stored here", stored),
    summary,
    field("Where", position),
    field("Connect", rows, "Each input fed by the tensor chosen beside it."),
    field("Prefix", prefix, "Put before every name of the added model (its nodes, tensors, inputs and outputs); without one, only the names this model already uses change."),
    checkbox("keep_outputs", "Keep connected outputs", false, "this model's outputs the added model reads stay outputs too"),
    el("div", { class: "ed-actions" }, submit("Add the model")),
  ], async (f) => {
    if (!added) throw new Error("Choose the .onnx model to add first.");
    const after = position.value === "after";
    const connect = {};
    for (const c of connections) {
      const source = (c.other && c.other.value.trim()) || c.choice.value;
      if (source !== NOT_FED) connect[c.input.name] = source; // each input fed -> the tensor feeding it
    }
    if (!Object.keys(connect).length) throw new Error("Connect at least one input.");
    const op = { op: "compose", model: { onnx: added.blob }, connect, position: position.value, keep_outputs: f.elements.keep_outputs.checked };
    if (prefix.value.trim()) op.prefix = prefix.value.trim();
    await run(after ? "Model added after this one" : "Model added before this one", [op]);
  }, { id: "compose" });
  return form;
}
