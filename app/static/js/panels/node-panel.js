// The node panel: properties, documentation, editable attributes, inputs/outputs, metadata,
// device configurations, and the operator's schema (with flags for unknown operators and for
// attributes the schema does not define). Editing: rename, attributes (change, add, delete),
// insert a node before/after, change the operator, delete (node-edit.js), outputs as graph
// outputs, node metadata. Its line of the model's costs; a tree ensemble's trees, a linear
// model's weights, an encoder's lookup table.
import { el, clear } from "../widgets/dom.js";
import { attributeRow, attributeValueView } from "./attribute-view.js";
import { nodeDeviceConfigurations } from "./device-config.js";
import { canEdit, disclosure } from "../editing/edit-forms.js";
import { markdownBlock } from "../lib/markdown.js";
import { metadataEditor } from "../editing/metadata-editor.js";
import { addAttributeForm, addOutputButton, nodeActions, renameNodeForm } from "../editing/node-edit.js";
import { schemaSection } from "./schema-panel.js";
import { HEAT_METRICS, formatMetric } from "../pipeline/heat.js";
import { formatInteger, nodePlace } from "../lib/format.js";
import { heldCost, nodeFormula } from "./costs-section.js";
import { tensorRow } from "./tensor-rows.js";
import { isTreeEnsemble, treesSection } from "./trees-section.js";
import { coefficientsSection, isLinearModel } from "./coefficients-section.js";
import { lookupOf, lookupSection } from "./lookup-section.js";
import { breakableFormula, callout, foldedValue, graphLink, keyValueList, mono, propertyList, section, tag } from "../widgets/ui.js";

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

/**
 * The node's metadata_props, editable (set_metadata with target = the node id). The graph JSON
 * only counts them (torch writes kilobytes a node: stack traces, FX dumps, scopes), so the node
 * is fetched whole when it has any.
 */
function nodeMetadataSection(node, ctx, count, editing) {
  const s = section(`Metadata (${count})`);
  s.id = "node-metadata-section";
  const opts = { target: node.id, idPrefix: "node-metadata" };
  if (!count) {
    s.append(el("p", { class: "muted" }, "None."));
    if (editing) s.append(disclosure("Add…", () => metadataEditor([], ctx, opts), { cls: "ed-node-meta-toggle" }));
    return s;
  }
  const holder = el("div", { class: "muted" }, "Loading the node's metadata…");
  s.append(holder);
  ctx.actions.loadNode(node.id).then((full) => {
    const props = full.metadata_props || [];
    holder.replaceWith(keyValueList(props, { cls: "node-metadata", formatValue: foldedValue }));
    if (editing) s.append(disclosure("Edit…", () => metadataEditor(props, ctx, opts), { cls: "ed-node-meta-toggle" }));
  }).catch((err) => {
    holder.className = "field-error";
    holder.textContent = `The node's metadata could not be loaded: ${err.message || err}`;
  });
  return s;
}

/** The node's line of the model's costs (GET .../stats, counted once per revision and sizes):
 * filled when they arrive, gone if they can't be counted or don't list the node. */
/** The module the node belongs to, where its name doesn't say it: a torch dynamo export names
 * nodes node_MatMul_12 and keeps the module (…self_attn.q_proj) in metadata (QA19). */
function moduleRow(node) {
  const scope = (node.scope || []).at(-1);
  if (!scope || (node.name || "").includes(scope)) return null;
  // wraps after its dots only: "…self_attn." / "q_proj", not inside a module's name
  const parts = scope.split(".").flatMap((part, i, all) => (i < all.length - 1 ? [`${part}.`, el("wbr")] : [part]));
  return ["Module", el("span", { class: "mono module-path" }, ...parts)];
}

function nodeCostsSection(node, ctx) {
  const body = el("div", { class: "muted node-costs", id: "node-costs" }, "Counting…");
  const sec = section("Costs", body);
  const time = ctx.actions.nodeTime ? ctx.actions.nodeTime(node.id) : null;
  ctx.actions.currentStats().then((stats) => {
    const n = stats && stats.nodes.find((x) => x.node === node.id);
    if (!n) { sec.remove(); return; }
    const shown = (metric) => {
      if (n[metric] !== null) return formatMetric(metric, n[metric]);
      const formula = nodeFormula(n, metric);
      return formula ? el("span", { class: "cost-formula", title: "For any sizes of the inputs' dims: give them in the model panel's Costs to count" }, breakableFormula(formula))
        : el("span", { class: "muted" }, "unknown");
    };
    clear(body);
    body.classList.remove("muted");
    const runs = n.runs !== undefined && n.flops !== null
      ? el("span", { class: "muted" }, n.runs === null ? "" : ` · over ${formatInteger(n.runs)} runs of its graph`) : "";
    body.append(propertyList([
      // a Loop's, Scan's or If's own count is 0: what its bodies hold said under it (QA20 F18)
      [HEAT_METRICS.flops, [shown("flops"), runs, heldCost(stats, n, "flops")]],
      [HEAT_METRICS.params, [shown("params"), heldCost(stats, n, "params")]],
      // a Reshape's output is its input's buffer (onnxruntime hands it on): no bytes written
      [HEAT_METRICS.output_bytes, n.view_of ? [shown("output_bytes"), el("span", { class: "muted", title: "onnxruntime hands on the input's buffer: this node writes no memory of its own" }, ` · a view of ${n.view_of}`)] : shown("output_bytes")],
      // the main graph's nodes only: a subgraph's run is not laid out in the main graph's order
      n.live_bytes === null || n.live_bytes === undefined ? null
        : [el("span", { title: "Activations alive as this node writes its outputs, when the graph runs in its order" }, HEAT_METRICS.live_bytes),
          [formatMetric("live_bytes", n.live_bytes), stats.totals.peak_node === node.id ? el("span", { class: "muted" }, " · the model's peak") : ""]],
      time && time.time_us !== null ? [el("span", { title: "Measured by the last run with \"Time each node\" on this revision, graph optimisations off" }, "Time"),
        [formatMetric("time_us", time.time_us), el("span", { class: "muted" }, ` · ${(100 * time.share).toFixed(1)} % of the run`)]] : null,
      time && time.deployed ? [el("span", { title: "The same run as onnxruntime makes it by default (nodes fused)" }, "As deployed"), deployedTime(time.deployed, ctx)] : null,
    ]));
  }).catch(() => sec.remove());
  return sec;
}

/** A node's part in onnxruntime's optimised run: its kernel's time (and what was fused into
 * it), or the node it was fused into. */
function deployedTime(d, ctx) {
  if (d.fused_into) {
    const into = ctx.actions.nodeTime ? ctx.actions.nodeTime(d.fused_into) : null;
    const name = (into && into.deployed && into.deployed.name) || d.fused_into;
    return ["fused into ", el("a", { href: ctx.nodeHref("", d.fused_into), class: "cost-node" }, name)];
  }
  return [formatMetric("time_us", d.time_us), el("span", { class: "muted" },
    ` as ${d.kernel_op}${d.fused ? ` with ${d.fused.length} fused` : ""} · ${(100 * d.share).toFixed(1)} % of the run`)];
}

/** A call's attributes it leaves to the function: each default it computes with, and those
 * without one, which leave what refers to them unset. */
function functionDefaults(node, ctx) {
  const box = el("div", { class: "fn-call-defaults", hidden: true });
  const set = new Set((node.attributes || []).map((a) => a.name));
  ctx.actions.loadSchema(node.id).then((s) => {
    const left = (s.kind === "function" ? s.attributes || [] : []).filter((a) => !set.has(a.name));
    if (!left.length) return;
    box.append(el("div", { class: "muted fn-call-defaults-head" }, "Left to the function:"),
      el("ul", { class: "fn-call-defaults-list" }, left.map((a) => el("li", { "data-fn-attr": a.name }, mono(a.name, "attr-name"), " ",
        a.default !== null && a.default !== undefined
          ? ["= ", attributeValueView({ name: a.name, type: a.type, value: a.default }, ctx, null), el("span", { class: "muted" }, " · its default")]
          : el("span", { class: "muted" }, "not set, no default: what reads it takes its operator's default")))));
    box.hidden = false;
  }).catch(() => {});
  return box;
}

/** A Loop's, Scan's or If's input or output row with the part it plays (the graph JSON's
 * `roles`, loop_roles.py): "carried → final_hidden: the body's hidden_in on the first
 * iteration", "scan output stacked per iteration: the body's tok_scan, …". */
function withRole(li, role) {
  if (!role) return li;
  li.classList.add("has-role");
  li.dataset.role = role.kind;
  const line = el("div", { class: "io-role" }, tag(role.tag, `tag-role role-${role.kind}`), " ", el("span", { class: "io-role-text" }, role.text));
  const links = li.querySelector(".tensor-links"); // under its name and type, before where it comes from
  if (links) li.insertBefore(line, links);
  else li.append(line);
  return li;
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

  const editing = canEdit(ctx);
  root.append(section("Properties", propertyList([
    ["Name", editing ? renameNodeForm(node, c) : node.name ? mono(node.name) : ""],
    ["Operator", mono(node.op_type)],
    ["Domain", node.domain ? mono(node.domain) : mono("ai.onnx (default)")],
    node.overload ? ["Overload", mono(node.overload)] : null,
    fn ? ["Defined by", graphLink(ctx, fn.path, `model function ${fn.name} ›`)] : null,
    moduleRow(node),
    // the API's id (n422) reads like a name some exporters give (n15): the page says where it is
    ["Position", el("span", { title: `its id in the API: ${node.id}` }, `${nodePlace(node.id)} in its graph`)],
  ])));
  if (editing) {
    const edit = section("Edit node", nodeActions(node, c));
    edit.classList.add("ed-section");
    edit.id = "node-edit";
    root.append(edit);
  }
  if (node.doc_string) root.append(section("Documentation", markdownBlock(node.doc_string, { cls: "doc" })));

  const attrs = node.attributes || [];
  const attrSection = section(`Attributes (${attrs.length})`,
    attrs.length ? el("div", { class: "attrs" }, attrs.map((a) => attributeRow(a, node, c)))
      : el("p", { class: "muted" }, "This node sets no attributes."));
  if (fn) attrSection.append(functionDefaults(node, ctx));
  if (editing) {
    const add = disclosure("+ Add attribute…", () => addAttributeForm(node, c), { cls: "ed-add-attr-toggle" });
    attrSection.append(add);
    ctx.actions.loadSchema(node.id).then((s) => { // an operator whose attributes are all set (or has none)
      const set = new Set(attrs.map((a) => a.name));
      if ((s.kind === "schema" || s.kind === "function") && !(s.attributes || []).some((a) => !set.has(a.name))) add.hidden = true;
    }).catch(() => {});
  }
  attrSection.id = "node-attributes";
  if (isTreeEnsemble(node) && ctx.actions && ctx.actions.loadTrees) root.append(treesSection(node, ctx));
  if (isLinearModel(node) && ctx.actions && ctx.actions.loadCoefficients) root.append(coefficientsSection(node, ctx));
  const lookup = lookupOf(node);
  if (lookup) root.append(lookupSection(lookup));
  root.append(attrSection);
  const ins = node.inputs || [];
  const outs = node.outputs || [];
  const roles = node.roles || { inputs: [], outputs: [] };
  root.append(section(`Inputs (${ins.length})`, ins.length
    ? el("ol", { class: "tensor-list" }, ins.map((n, i) => withRole(tensorRow(n, c, { from: true }), roles.inputs[i])))
    : el("p", { class: "muted" }, "This node reads no inputs.")));
  const outputRow = (n, i) => {
    const li = withRole(tensorRow(n, c), roles.outputs[i]);
    const add = editing && n ? addOutputButton(n, c) : null;
    if (add) li.append(el("div", { class: "ed-output-action" }, add));
    return li;
  };
  root.append(section(`Outputs (${outs.length})`, outs.length
    ? el("ol", { class: "tensor-list" }, outs.map(outputRow))
    : el("p", { class: "muted" }, "This node has no outputs.")));

  if (ctx.actions && ctx.actions.currentStats) root.append(nodeCostsSection(node, ctx));

  const count = node.metadata_count || 0;
  if (editing || count) root.append(nodeMetadataSection(node, c, count, editing));
  if ((node.device_configurations || []).length) {
    root.append(section("Device configuration", nodeDeviceConfigurations(node.device_configurations)));
  }
  const schema = schemaSection(node, c, (s) => {
    if (schema.isConnected) flagSchema(root, flags, s);
  });
  root.append(schema);
}
