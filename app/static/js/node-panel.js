// The node panel: properties, documentation, editable attributes, inputs/outputs, metadata,
// device configurations, and the operator's schema (with flags for unknown operators and for
// attributes the schema does not define).
import { el, clear } from "./dom.js";
import { attributeRow } from "./attribute-view.js";
import { nodeDeviceConfigurations } from "./device-config.js";
import { markdownBlock } from "./markdown.js";
import { schemaSection } from "./schema-panel.js";
import { tensorRow } from "./tensor-rows.js";
import { callout, graphLink, keyValueList, mono, propertyList, section, tag } from "./ui.js";

function localFunction(node, ctx) {
  if (node.function) return { path: node.function, name: node.op_type };
  return (ctx.functions || []).find((f) => f.name === node.op_type && (f.domain || "") === (node.domain || "")
    && (f.overload || "") === (node.overload || "")) || null;
}

function flagSchema(root, flags, schema) {
  if (schema.kind === "unknown") {
    flags.append(callout("bad", "Unknown operator", el("span", { class: "flag-unknown-op" }, schema.problem)));
  }
  if (schema.deprecated) {
    flags.append(callout("warn", "Deprecated operator", `${schema.op_type} is deprecated at this opset.`));
  }
  const unknown = schema.unknown_attributes || [];
  if (unknown.length) {
    flags.append(callout("warn", "Attributes the schema does not define",
      el("span", { class: "flag-unknown-attrs" }, unknown.map((n, i) => [i ? ", " : "", mono(n)])),
      el("div", { class: "muted" }, "The checker refuses them; runtimes may ignore them or fail.")));
    for (const name of unknown) {
      const head = root.querySelector(`.attr[data-attr="${CSS.escape(name)}"] .attr-head`);
      if (head) head.append(tag("not in schema", "tag-bad"));
    }
  }
}

export function renderNodePanel(root, node, ctx) {
  clear(root);
  const c = { ...ctx, selfId: node.id };
  const fn = localFunction(node, ctx);
  root.append(el("header", { class: "panel-head" },
    el("div", { class: "panel-kicker" }, fn ? "Node · calls a model function" : "Node"),
    el("h2", { class: "panel-title" }, node.op_type),
    node.name ? el("div", { class: "panel-subtitle mono" }, node.name) : null,
    fn ? el("div", { class: "panel-action" }, graphLink(ctx, fn.path, `Enter function ${fn.name} ›`, "subgraph-link enter-function")) : null));
  const flags = el("div", { class: "panel-flags" });
  root.append(flags);

  root.append(section("Properties", propertyList([
    ["Name", node.name ? mono(node.name) : ""],
    ["Operator", mono(node.op_type)],
    ["Domain", node.domain ? mono(node.domain) : mono("ai.onnx (default)")],
    node.overload ? ["Overload", mono(node.overload)] : null,
    fn ? ["Defined by", graphLink(ctx, fn.path, `model function ${fn.name} ›`)] : null,
    ["Node id", mono(node.id)],
  ])));
  if (node.doc_string) root.append(section("Documentation", markdownBlock(node.doc_string, { cls: "doc" })));

  const attrs = node.attributes || [];
  root.append(section(`Attributes (${attrs.length})`,
    attrs.length ? el("div", { class: "attrs" }, attrs.map((a) => attributeRow(a, node, c)))
      : el("p", { class: "muted" }, "This node sets no attributes.")));
  const ins = node.inputs || [];
  const outs = node.outputs || [];
  root.append(section(`Inputs (${ins.length})`, ins.length
    ? el("ol", { class: "tensor-list" }, ins.map((n) => tensorRow(n, c, { from: true })))
    : el("p", { class: "muted" }, "This node reads no inputs.")));
  root.append(section(`Outputs (${outs.length})`, outs.length
    ? el("ol", { class: "tensor-list" }, outs.map((n) => tensorRow(n, c)))
    : el("p", { class: "muted" }, "This node has no outputs.")));

  if ((node.metadata_props || []).length) {
    root.append(section(`Metadata (${node.metadata_props.length})`, keyValueList(node.metadata_props, { cls: "node-metadata" })));
  }
  if ((node.device_configurations || []).length) {
    root.append(section("Device configuration", nodeDeviceConfigurations(node.device_configurations)));
  }
  const schema = schemaSection(node, c, (s) => {
    if (schema.isConnected) flagSchema(root, flags, s);
  });
  root.append(schema);
}
