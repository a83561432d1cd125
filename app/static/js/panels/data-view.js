// The data view: what the model page shows instead of a graph for a data file (onnx-data.proto's
// TensorProto, SequenceProto, MapProto, OptionalProto, or an OperatorSetProto): the tree of
// sequence items / map entries / optional value, each tensor openable in the tensor view; for an
// operator set, its operators and functions. Plus the sidebar's file panel.
import { el, clear } from "../widgets/dom.js";
import { formatBytes, formatNumber, formatTensor } from "../lib/format.js";
import { markdownBlock } from "../lib/markdown.js";
import { tensorView } from "./tensor-view.js";
import { mono, plural, propertyList, section } from "../widgets/ui.js";

const KIND_TITLE = {
  tensor: "Tensor", sparse_tensor: "Sparse tensor", sequence: "Sequence", map: "Map",
  optional: "Optional", operator_set: "Operator set",
};

const KIND_ABOUT = {
  tensor: "A TensorProto file, like the input_0.pb / output_0.pb files of ONNX test data.",
  sequence: "A SequenceProto file (onnx-data.proto): an ordered list of values.",
  map: "A MapProto file (onnx-data.proto): keys and their values.",
  optional: "An OptionalProto file (onnx-data.proto): a value, or none.",
  operator_set: "An OperatorSetProto file (onnx-operators.proto): operator declarations and functions of one opset.",
};

function label(text) {
  return el("span", { class: "data-label mono" }, text);
}

function describe(node) {
  const elem = node.elem_type && node.elem_type !== "undefined" ? ` ${node.elem_type}` : "";
  switch (node.kind) {
    case "tensor": return formatTensor(node.dtype, node.shape);
    case "sparse_tensor": return `sparse ${formatTensor(node.dtype, node.shape)} · ${formatNumber(node.nnz)} non-zero`;
    case "sequence": return `sequence${elem ? ` of${elem}` : ""} · ${plural(node.length, "item")}`;
    case "map": return `map ${node.key_type} → ${(node.entries && node.entries[0] && node.entries[0].value.kind) || "value"} · ${plural(node.length, "entry", "entries")}`;
    case "optional": return node.has_value ? `optional${elem} · holds a value` : `optional${elem} · empty: it holds no value`;
    default: return node.kind === "truncated" ? "nested too deep to show" : "unknown content";
  }
}

function tensorNode(node, name, ctx, open) {
  const holder = el("div", { class: "data-node data-tensor", "data-ref": node.ref });
  let view = null;
  const toggle = el("button", { type: "button", class: "btn btn-small data-open", "aria-expanded": "false" }, "Show values");
  const show = () => {
    if (view) { view.remove(); view = null; toggle.textContent = "Show values"; toggle.setAttribute("aria-expanded", "false"); return; }
    view = tensorView(node.ref, ctx.loadTensor, { wide: true });
    holder.append(view);
    toggle.textContent = "Hide values";
    toggle.setAttribute("aria-expanded", "true");
  };
  toggle.addEventListener("click", show);
  holder.append(el("div", { class: "data-row" }, name,
    node.name ? mono(node.name, "data-name") : null,
    el("span", { class: "data-type mono" }, describe(node)),
    node.external ? el("span", { class: "tag" }, "external data") : null,
    toggle));
  if (open) show();
  return holder;
}

function nodeView(node, name, ctx, depth, open = false) {
  if (node.kind === "tensor" || node.kind === "sparse_tensor") return tensorNode(node, name, ctx, open);
  const holder = el("div", { class: `data-node data-${node.kind}` });
  holder.append(el("div", { class: "data-row" }, name, node.name ? mono(node.name, "data-name") : null,
    el("span", { class: "data-type" }, describe(node))));
  let children = [];
  if (node.kind === "sequence") children = (node.items || []).map((item, k) => [label(`[${k}]`), item]);
  else if (node.kind === "map") children = (node.entries || []).map((e) => [label(typeof e.key === "string" ? JSON.stringify(e.key) : String(e.key)), e.value]);
  else if (node.kind === "optional" && node.has_value) children = [[label("value"), node.value]];
  if (children.length) {
    const onlyOne = children.length === 1;
    holder.append(el("ul", { class: "data-children" }, children.map(([l, child]) => el("li", {},
      nodeView(child, l, ctx, depth + 1, onlyOne && depth < 2)))));
  }
  const shown = children.length;
  if (typeof node.length === "number" && node.length > shown) {
    holder.append(el("p", { class: "muted" }, `The first ${formatNumber(shown)} of ${formatNumber(node.length)} are listed.`));
  }
  return holder;
}

function operatorSetView(data) {
  const ops = data.operators || [];
  const fns = data.functions || [];
  return el("div", { class: "opset-view" },
    el("div", { class: "data-card" }, propertyList([
      ["Domain", mono(data.domain || "ai.onnx")],
      ["Opset version", mono(formatNumber(data.opset_version))],
      ["IR version", mono(formatNumber(data.ir_version))],
      data.ir_version_prerelease ? ["IR pre-release", mono(data.ir_version_prerelease)] : null,
      data.ir_build_metadata ? ["IR build", mono(data.ir_build_metadata)] : null,
      ["Magic", mono(data.magic)],
    ]), data.doc_string ? markdownBlock(data.doc_string, { cls: "doc" }) : null),
    el("h2", { class: "data-h2" }, `Operators (${ops.length})`),
    ops.length ? el("table", { class: "table opset-ops" },
      el("thead", {}, el("tr", {}, el("th", {}, "Operator"), el("th", { class: "num" }, "Since"), el("th", {}, "Status"), el("th", {}, "Documentation"))),
      el("tbody", {}, ops.map((o) => el("tr", { "data-op": o.op_type },
        el("td", { class: "mono" }, o.op_type), el("td", { class: "num" }, formatNumber(o.since_version)),
        el("td", {}, el("span", { class: `tag ${o.status === "EXPERIMENTAL" ? "tag-warn" : ""}` }, o.status.toLowerCase())),
        el("td", {}, o.doc_string ? markdownBlock(o.doc_string, { cls: "op-doc" }) : el("span", { class: "muted" }, "—"))))))
      : el("p", { class: "muted" }, "No operators."),
    el("h2", { class: "data-h2" }, `Functions (${fns.length})`),
    fns.length ? el("div", { class: "opset-fns" }, fns.map((f) => el("div", { class: "data-card opset-fn", "data-fn": f.name },
      el("div", { class: "fn-signature mono" }, el("strong", {}, `${f.domain ? `${f.domain}.` : ""}${f.name}`),
        ` (${(f.inputs || []).join(", ")}) => (${(f.outputs || []).join(", ")})`),
      el("ol", { class: "fn-nodes mono" }, (f.nodes || []).map((n) => el("li", {},
        `${(n.outputs || []).join(", ")} = ${n.domain ? `${n.domain}.` : ""}${n.op_type}(${(n.inputs || []).join(", ")})`))))))
      : el("p", { class: "muted" }, "No functions."));
}

/** Fill `container` (inside #graph) with the data view of a data-file summary. */
export function renderDataView(container, summary, ctx) {
  clear(container);
  const data = summary.data || { kind: "unknown" };
  const page = el("div", { class: "data-page" },
    el("header", { class: "data-header" },
      el("div", { class: "panel-kicker" }, `${(KIND_TITLE[summary.kind] || summary.kind).toLowerCase()} file`),
      el("h1", {}, summary.name || summary.id),
      el("p", { class: "muted" }, KIND_ABOUT[summary.kind] || ""),
      data.reads_as_optional ? el("p", { class: "muted", id: "data-also-optional" },
        "Or an OptionalProto holding this one value: the two are written alike, byte for byte, and nothing in the file says which was meant. As a run input it fits either.") : null));
  if (data.kind === "operator_set") page.append(operatorSetView(data));
  else page.append(el("div", { class: "data-tree" }, nodeView(data, null, ctx, 0, true)));
  container.append(page);
}

/** The sidebar for a data file. */
export function renderDataPanel(root, summary) {
  clear(root);
  const data = summary.data || {};
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, "Data file"),
    el("h2", { class: "panel-title" }, summary.name || summary.id),
    el("div", { class: "panel-subtitle" }, `${formatBytes(summary.size)} · ${KIND_TITLE[summary.kind] || summary.kind}`)));
  root.append(section("File", propertyList([
    ["Kind", mono(summary.kind)],
    ["Content", data.kind === "operator_set" ? `${plural((data.operators || []).length, "operator")} · ${plural((data.functions || []).length, "function")}` : describe(data)],
    data.name ? ["Name", mono(data.name)] : null,
    ["Size", formatBytes(summary.size)],
    ["Stored as", summary.source === "text" ? "ONNX text" : "binary protobuf"],
  ])));
  root.append(el("p", { class: "muted panel-note" },
    "A data file has no graph and is not edited here; Download gives back the file exactly as it was opened."));
}
