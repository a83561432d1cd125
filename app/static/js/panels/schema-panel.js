// The operator's documentation in the node panel, from GET /api/models/<id>/schema?node=<id>:
// the summary doc (Markdown), inputs/outputs with their type constraints, every attribute with
// its default (marking the ones this node sets), since_version; or, for a model-local function,
// a link into it; or, for an operator no schema knows, the problem.
import { el } from "../widgets/dom.js";
import { formatNumber } from "../lib/format.js";
import { attributeValueView } from "./attribute-view.js";
import { markdownBlock, markdownInline } from "../lib/markdown.js";
import { graphLink, mono, section, tag } from "../widgets/ui.js";

function domainName(domain) {
  return domain && domain !== "ai.onnx" ? domain : "ai.onnx";
}

/** The node's tensor names bound to each formal parameter (the last one may be variadic). */
function bindings(formals, actual) {
  const out = formals.map(() => []);
  (actual || []).forEach((name, i) => {
    const k = Math.min(i, formals.length - 1);
    if (k >= 0 && (i < formals.length || formals[k].option === "variadic")) out[k].push(name);
  });
  return out;
}

function formalList(formals, actual, arrow) {
  if (!formals.length) return el("p", { class: "muted" }, "none");
  const bound = bindings(formals, actual);
  return el("ul", { class: "schema-list" }, formals.map((p, k) => el("li", { "data-formal": p.name },
    el("div", { class: "schema-item-head" },
      mono(p.name, "schema-name"), " ", el("span", { class: "schema-type mono" }, p.type),
      p.option !== "single" ? [" ", tag(p.option)] : null,
      bound[k].filter(Boolean).length ? el("span", { class: "schema-bound muted" }, ` ${arrow} `,
        bound[k].filter(Boolean).map((n, i) => [i ? ", " : "", mono(n)])) : null),
    p.description ? description(p.description) : null)));
}

function attributeList(schema, node, ctx) {
  const set = new Map((node.attributes || []).map((a) => [a.name, a]));
  if (!schema.attributes.length) return el("p", { class: "muted" }, "This operator has no attributes.");
  return el("ul", { class: "schema-list" }, schema.attributes.map((a) => {
    const mine = set.get(a.name);
    let status;
    if (mine) status = [tag("set on this node", "tag-set"), " ", mine.ref_attr_name ? mono(`@${mine.ref_attr_name}`) : attributeValueView(mine, ctx, null, node)];
    else if (a.required) status = tag("required · missing", "tag-bad");
    else if (a.default !== null && a.default !== undefined) status = el("span", { class: "muted" }, "default ", attributeValueView({ name: a.name, type: a.type, value: a.default }, ctx, null, node));
    else status = el("span", { class: "muted" }, "optional, no default");
    return el("li", { "data-schema-attr": a.name, class: mine ? "is-set" : null },
      el("div", { class: "schema-item-head" }, mono(a.name, "schema-name"), " ", el("span", { class: "attr-type" }, a.type),
        a.required ? [" ", tag("required")] : null, " ", status),
      a.description ? description(a.description) : null);
  }));
}

/** A description cut to a few lines; a click shows it all. */
function description(text) {
  const box = el("div", { class: "schema-desc", title: "Click to show all" }, markdownInline(text, { trusted: true }));
  if (text.length > 180) {
    box.classList.add("clamped");
    box.addEventListener("click", (e) => {
      if (e.target.closest("a")) return;
      box.classList.toggle("clamped");
    });
  } else box.removeAttribute("title");
  return box;
}

function collapsible(content, long) {
  if (!long) return content;
  const box = el("div", { class: "collapsible collapsed" }, content);
  const toggle = el("button", { type: "button", class: "linklike collapse-toggle" }, "Show all");
  toggle.addEventListener("click", () => {
    const collapsed = box.classList.toggle("collapsed");
    toggle.textContent = collapsed ? "Show all" : "Show less";
  });
  return [box, toggle];
}

function schemaBody(schema, node, ctx) {
  const since = `since opset ${formatNumber(schema.since_version)}`;
  const imports = schema.opset_version !== null && schema.opset_version !== undefined
    ? ` · opset ${formatNumber(schema.opset_version)} in use` : "";
  const range = (min, max) => (min === max ? `${min}` : max > 1e6 ? `${min} or more` : `${min} to ${max}`);
  return [
    el("div", { class: "schema-summary" }, mono(`${domainName(schema.domain)}.${schema.op_type}`), el("span", { class: "muted" }, ` · ${since}${imports}`),
      schema.deprecated ? [" ", tag("deprecated", "tag-bad")] : null,
      schema.source === "onnxruntime" ? [" ", tag("onnxruntime operator")] : null),
    schema.source === "onnxruntime"
      ? el("p", { class: "muted schema-source" }, "Defined by onnxruntime, not by the ONNX standard: other runtimes may not run it.")
      : null,
    schema.doc ? collapsible(markdownBlock(schema.doc, { trusted: true, cls: "doc schema-doc" }), schema.doc.length > 500) : null,
    el("h4", {}, `Inputs (${range(schema.min_inputs, schema.max_inputs)})`),
    formalList(schema.inputs || [], node.inputs, "←"),
    el("h4", {}, `Outputs (${range(schema.min_outputs, schema.max_outputs)})`),
    formalList(schema.outputs || [], node.outputs, "→"),
    el("h4", {}, `Attributes (${(schema.attributes || []).length})`),
    attributeList(schema, node, ctx),
    (schema.type_constraints || []).length ? [el("h4", {}, "Type constraints"), el("ul", { class: "schema-list" },
      schema.type_constraints.map((c) => el("li", { "data-constraint": c.name },
        el("div", { class: "schema-item-head" }, mono(c.name, "schema-name"), el("span", { class: "muted" }, " ∈ "),
          el("span", { class: "mono constraint-types" }, c.allowed.join(", "))),
        c.description ? description(c.description) : null)))] : null,
  ];
}

/**
 * The "Operator" section of a node; fetches the schema and calls onSchema(schema) once it is
 * known (the node panel flags unknown operators and attributes with it).
 * @param {any} node
 * @param {any} ctx
 * @param {(schema: any) => void} [onSchema]
 */
export function schemaSection(node, ctx, onSchema = () => {}) {
  const body = el("div", { class: "schema-body" }, el("div", { class: "muted" }, "Loading the operator's documentation…"));
  const root = section("Operator documentation", body);
  root.classList.add("schema-section");
  root.dataset.schema = "loading";
  ctx.actions.loadSchema(node.id).then((schema) => {
    body.replaceChildren();
    root.dataset.schema = schema.kind;
    if (schema.kind === "schema") {
      body.append(...schemaBody(schema, node, ctx).flat(Infinity).filter(Boolean));
    } else if (schema.kind === "function") {
      body.append(el("p", {}, mono(node.op_type), " is a function defined in this model, not an operator of a standard opset. "),
        graphLink(ctx, schema.function, `Open the function ${node.op_type} ›`));
    } else {
      body.append(el("p", { class: "schema-unknown" }, "No documentation: ", schema.problem || "no schema describes this operator", "."),
        el("p", { class: "muted" }, "A runtime that does not implement it (as a custom operator or a kernel of its own) will refuse the model."));
    }
    onSchema(schema);
  }).catch((err) => {
    root.dataset.schema = "error";
    body.replaceChildren(el("div", { class: "muted" }, `The operator's documentation could not be loaded: ${err.message || err}`));
  });
  return root;
}
