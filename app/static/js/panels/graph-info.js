// What the sidebar says about the graph on screen: the main graph, a subgraph held by a node
// attribute, a training graph, or a model-local function (its attributes and their defaults,
// opset imports, doc_string, metadata). The graph's (or function's) metadata_props can be
// edited (set_metadata with the graph path as target).
import { el } from "../widgets/dom.js";
import { canEdit, disclosure } from "../editing/edit-forms.js";
import { metadataEditor } from "../editing/metadata-editor.js";
import { formatNumber, formatValueType, nodeLabel } from "../lib/format.js";
import { graphPathOf } from "../lib/address.js";
import { attributeValueView } from "./attribute-view.js";
import { markdownBlock } from "../lib/markdown.js";
import { tensorNameLink } from "./tensor-rows.js";
import { breakable, keyValueList, mono, plural, propertyList, section } from "../widgets/ui.js";

export function opsetText(list) {
  return (list || []).map((o) => `${o.domain || "ai.onnx"} v${formatNumber(o.version)}`).join(", ");
}

function names(list, ctx) {
  return (list || []).length ? el("span", {}, list.map((v, i) => [i ? ", " : "", tensorNameLink(v.name, ctx, "")])) : "";
}

function functionAttributes(graph, ctx) {
  const defaults = new Map((graph.attribute_defaults || []).map((a) => [a.name, a]));
  const all = [...(graph.attribute_names || []), ...[...defaults.keys()].filter((n) => !(graph.attribute_names || []).includes(n))];
  if (!all.length) return el("p", { class: "muted" }, "This function takes no attributes.");
  return el("ul", { class: "fn-attrs" }, all.map((name) => {
    const def = defaults.get(name);
    return el("li", { "data-fn-attr": name }, mono(name, "attr-name"), " ",
      def ? [el("span", { class: "attr-type" }, def.type), el("span", { class: "muted" }, " · default "), attributeValueView(def, ctx, null)]
        : el("span", { class: "muted" }, "no default: a call that doesn't set it leaves what reads it unset (its operator's default applies)"));
  }));
}

/** Which call a function body's types are as at (GET .../types' `typed_at`, asked for by the
 * page when a body is opened): a FunctionProto declares none, each call gives its own. */
function typedAtNote(graph, ctx) {
  const at = graph.typed_at;
  if (at === null) {
    return el("p", { class: "muted typed-at" }, "No types: no call of this function has known input types.");
  }
  if (!at) return null;
  const call = el("a", { href: ctx.nodeHref(graphPathOf(at.node), at.node), class: "typed-at-call", "data-node": at.node },
    breakable(nodeLabel(at.name, at.node)));
  return el("p", { class: "muted typed-at" }, "Types as at the call ", call,
    at.differ ? ` (one of ${formatNumber(at.calls)} calls; other calls take other types)` : "");
}

function functionSections(graph, ctx) {
  return [
    section("Function on screen", propertyList([
      ["Name", mono(graph.name)],
      ["Domain", graph.domain ? mono(graph.domain) : ""],
      graph.overload ? ["Overload", mono(graph.overload)] : null,
      ["Inputs", names(graph.inputs, ctx)],
      ["Outputs", names(graph.outputs, ctx)],
      ["Opset imports", opsetText(graph.opset_import)],
      ["Contents", plural((graph.nodes || []).length, "node")],
    ]), typedAtNote(graph, ctx)),
    section("Function attributes", functionAttributes(graph, ctx)),
    graph.doc_string ? section("Function documentation", markdownBlock(graph.doc_string, { cls: "doc" })) : null,
    metadataSection("Function metadata", graph, ctx),
  ];
}

/** The graph's metadata_props, read-only, with an "Edit…" form below when editing is on. */
function metadataSection(title, graph, ctx) {
  const props = graph.metadata_props || [];
  const editing = canEdit(ctx);
  if (!props.length && !editing) return null;
  const s = section(`${title} (${props.length})`,
    props.length ? keyValueList(props, { cls: "graph-metadata" }) : el("p", { class: "muted" }, "None."));
  if (editing) {
    s.append(disclosure(props.length ? "Edit…" : "Add…",
      () => metadataEditor(props, ctx, { target: graph.path || "", idPrefix: "graph-metadata-edit" }), { cls: "ed-graph-meta-toggle" }));
  }
  s.id = "graph-metadata-section";
  return s;
}

function initializerList(graph, ctx) {
  const inits = graph.initializers || [];
  if (!inits.length) return null;
  // the list is made when first opened: a big model has thousands
  const details = el("details", { class: "init-list" },
    el("summary", {}, `${plural(inits.length, "initializer")}${inits.some((t) => t.sparse) ? ` (${inits.filter((t) => t.sparse).length} sparse)` : ""}`));
  details.addEventListener("toggle", () => {
    if (!details.open || details.querySelector("ul")) return;
    details.append(el("ul", { class: "link-list" }, inits.map((t) => el("li", {}, tensorNameLink(t.name, ctx, ""), " ",
      el("span", { class: "tensor-type" }, formatValueType(t))))));
  });
  return details;
}

const NAMES_SHOWN = 24; // a list's first names; the rest behind a button (a body may read hundreds)

/** Tensor names as links, one a line; past NAMES_SHOWN, the rest on a click. */
function nameList(names, ctx) {
  const item = (n) => el("li", {}, tensorNameLink(n, ctx, ""));
  const list = el("ul", { class: "name-list" }, names.slice(0, NAMES_SHOWN).map(item));
  if (names.length > NAMES_SHOWN) {
    const more = el("button", { type: "button", class: "linklike name-list-more" }, `+${names.length - NAMES_SHOWN} more`);
    more.addEventListener("click", () => { more.parentElement.replaceWith(...names.slice(NAMES_SHOWN).map(item)); });
    list.append(el("li", {}, more));
  }
  return list;
}

function graphSections(graph, ctx) {
  const crumbs = graph.breadcrumb || [];
  const parent = crumbs.length > 1 ? crumbs[crumbs.length - 2] : null;
  const outer = graph.outer_scope || [];
  const title = !graph.path ? "Main graph" : graph.path.startsWith("train[") ? "Training graph on screen" : "Subgraph on screen";
  return [
    section(title, propertyList([
      ["Name", graph.name ? mono(graph.name) : ""],
      // where it sits in the words of the breadcrumb (the API's path, n2/then_branch, on hover)
      graph.path ? ["Where", el("span", { class: "graph-where", title: `its path in the API: ${graph.path}` },
        breakable(crumbs.map((c) => c.label).join(" › ") || graph.path))] : null,
      ["Contents", [plural((graph.nodes || []).length, "node"), plural((graph.inputs || []).length, "input"),
        plural((graph.outputs || []).length, "output"),
        (graph.value_info || []).length ? plural(graph.value_info.length, "value_info entry", "value_info entries") : ""].filter(Boolean).join(" · ")],
      outer.length ? ["Reads from outside", nameList(outer, ctx)] : null,
      parent ? ["Back to", el("a", { href: ctx.graphHref(parent.path), "data-path": parent.path }, breakable(parent.label))] : null,
    ]), typedAtNote(graph, ctx), initializerList(graph, ctx)),
    graph.doc_string ? section(graph.path ? "Graph documentation" : "Main graph documentation", markdownBlock(graph.doc_string, { cls: "doc graph-doc" })) : null,
    metadataSection(graph.path ? "Graph metadata" : "Main graph metadata", graph, ctx),
  ];
}

/** Sections describing `graph` (graph JSON); nulls are left out by el(). */
export function graphInfo(graph, ctx) {
  if (!graph) return [];
  return graph.kind === "function" ? functionSections(graph, ctx) : graphSections(graph, ctx);
}
