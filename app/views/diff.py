"""A computed diff of two models (two revisions of one, or two models): GET .../diff.

Nodes are matched by name where the name is unique in both graphs, then by structure: the same
op with the same inputs, then with the same outputs, then the k-th remaining node of an op to the
k-th remaining one of that op (reading order). Tensors (initializers, tensor attributes) are
matched by name and compared by what they hold, not by how it is written (tensor_content.py):
the same values in raw_data and in float_data, or in a blob of the store and in an external data
file, are no change. Every field takes part: a node's op, domain,
inputs, outputs, attributes of every type (subgraphs diffed recursively, their changes named by
path), doc strings and metadata; the graphs' inputs, outputs and value_info; the model's fields,
opsets, metadata and functions. Model-local functions match by (domain, name, overload); a body
is diffed as a graph is (its nodes listed with ids under "fn[k]", each side's own k), and a
function's own fields (inputs, outputs, attributes and their defaults, opsets, doc string,
metadata, value_info) are named.

Tensors are compared through a correspondence of names (tensor_names.py): a tensor renamed
between the two sides (a re-export's fresh intermediate names, a constant renamed with its
content unchanged) is listed once as renamed, and a node reading or writing it is not changed for
that; a node reading another producer's tensor is.

An attribute written at the default its operator's schema gives it (at the node's opset, in its
domain) is the same as the attribute left out: torch's legacy exporter leaves `auto_pad` and
`axis` out where its dynamo exporter writes `auto_pad = 'NOTSET'` and `axis = 1`, and no node is
changed for that. One at another value, against one left out, is a change.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import Message
from onnx import AttributeProto, numpy_helper

from ..onnx_io.address import node_id, subgraph_path
from ..onnx_io.schema_defaults import at_default, default_of
from ..onnx_io.traverse import op_schema, opset_version, standard_domain
from ..words import plural
from .io_pairs import paired, same_shapes
from .node_pairs import pair_nodes
from .tensor_content import encoding, sparse_change, tensor_change
from .tensor_names import TensorNames, correspond, io_names, used_names
from .tree_words import forest_changes
from .value_text import format_type
from .values import type_json

MAX_VALUE = 80  # characters of a value shown in a change line
MAX_RENAMED = 200  # renamed tensors listed (all counted): a re-export renames thousands
LONG_LIST = 16  # items of a list attribute past which its change says which items differ
ITEMS_SHOWN = 3  # differing items of a long list named in its change line


def _short(value: Any) -> str:
    if isinstance(value, Message):
        text = " ".join(str(value).split())
    elif isinstance(value, bytes):
        text = repr(value.decode("utf-8", "replace"))
    elif isinstance(value, str):
        text = repr(value)
    else:
        text = str(value)
    return _clip(text)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def _attr_differs(x: AttributeProto, y: AttributeProto, reads) -> bool:
    """Whether two attributes of one name differ (graphs are diffed as graphs, elsewhere);
    tensors by what they hold (a Constant's value in raw_data or float_data is the same value)."""
    if x.type != y.type:
        return True
    if x.ref_attr_name or y.ref_attr_name:  # a function's `@name`: no value of its own to compare
        return x.ref_attr_name != y.ref_attr_name
    if x.type == AttributeProto.TENSOR:
        return tensor_change(x.t, y.t, reads) is not None
    if x.type == AttributeProto.SPARSE_TENSOR:
        return sparse_change(x.sparse_tensor, y.sparse_tensor, reads)
    if x.type == AttributeProto.TENSORS:
        return len(x.tensors) != len(y.tensors) or any(
            tensor_change(a, b, reads) is not None for a, b in zip(x.tensors, y.tensors, strict=True)
        )
    if x.type == AttributeProto.SPARSE_TENSORS:
        return len(x.sparse_tensors) != len(y.sparse_tensors) or any(
            sparse_change(a, b, reads) for a, b in zip(x.sparse_tensors, y.sparse_tensors, strict=True)
        )
    if x.type in (AttributeProto.FLOATS, AttributeProto.INTS):  # a forest's million: numpy, not lists
        a, b = _list_items(x), _list_items(y)
        return a is None or b is None or not np.array_equal(a[0], b[0], equal_nan=a[0].dtype.kind == "f")
    if x.type == AttributeProto.STRINGS:
        return list(x.strings) != list(y.strings)
    return onnx.helper.get_attribute_value(x) != onnx.helper.get_attribute_value(y)


def _attr_words(a: AttributeProto | None) -> str:
    if a is None:
        return "(none)"
    if a.ref_attr_name:
        return f"@{a.ref_attr_name}"
    if a.type == AttributeProto.TENSOR:
        return f"tensor {list(a.t.dims)} {onnx.TensorProto.DataType.Name(a.t.data_type)}"
    if a.type == AttributeProto.FLOAT:  # float32: its shortest form, not a double's digits
        return f"{a.f:.7g}"
    if a.type == AttributeProto.FLOATS:  # (the items cut to fit are not written at all)
        return _clip("[" + ", ".join(f"{v:.7g}" for v in a.floats[:MAX_VALUE]) + _more(a.floats))
    if a.type == AttributeProto.INTS:
        return _clip("[" + ", ".join(str(v) for v in a.ints[:MAX_VALUE]) + _more(a.ints))
    if a.type == AttributeProto.STRINGS:  # text, not Python's b'…'
        return _clip(
            "[" + ", ".join(repr(v.decode("utf-8", "replace")) for v in a.strings[:MAX_VALUE]) + _more(a.strings)
        )
    return _short(onnx.helper.get_attribute_value(a))


def _more(items) -> str:
    return ", …]" if len(items) > MAX_VALUE else "]"


def _attr_change(name: str, x: AttributeProto | None, y: AttributeProto | None) -> str:
    """An attribute's change line: "attribute alpha: 0.1 → 0.3"; a long list's (or one whose
    words would be cut) says how many items differ and names the first few by position,
    "attribute nodes_values: 1 of 911,203 values differs — [500000] 0.52 → 0.61" (QA21 F3)."""
    xs, ys = _list_items(x), _list_items(y)
    if xs is not None and ys is not None and xs[1] == ys[1]:
        (old, unit), (new, _) = xs, ys
        if max(len(old), len(new)) > LONG_LIST:
            return f"attribute {name}: {_items_words(old, new, unit)}"
        before, after = _attr_words(x), _attr_words(y)
        if before.endswith("…") or after.endswith("…"):  # cut: before and after may read alike
            return f"attribute {name}: {_items_words(old, new, unit)}"
        return f"attribute {name}: {before} → {after}"
    return f"attribute {name}: {_attr_words(x)} → {_attr_words(y)}"


def _list_items(a: AttributeProto | None) -> tuple[np.ndarray, str] | None:
    """A list attribute's items as one numpy array (a million in a few ms), and what they are
    ("values", "strings"); a TENSOR's too, when its data is in the model. None for any other."""
    if a is None or a.ref_attr_name:
        return None
    if a.type == AttributeProto.FLOATS:
        return np.array(a.floats, np.float32), "values"
    if a.type == AttributeProto.INTS:
        return np.array(a.ints, np.int64), "values"
    if a.type == AttributeProto.STRINGS:
        return np.array(list(a.strings), object), "strings"
    if a.type == AttributeProto.TENSOR and encoding(a.t) not in ("store", "file"):
        try:
            values = numpy_helper.to_array(a.t).reshape(-1)
        except (ValueError, TypeError):
            return None
        if values.dtype.kind in "biuf":
            return values, f"{onnx.TensorProto.DataType.Name(a.t.data_type)} values"
    return None


def _item_words(v: Any) -> str:
    if isinstance(v, bytes):
        return repr(v.decode("utf-8", "replace"))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.7g}"
    return str(v)


def _items_words(old: np.ndarray, new: np.ndarray, unit: str) -> str:
    """ "3 of 911,203 values differ — [500000] 0.52 → 0.61, [500001] …", or with another
    length "7,700 values, was 7,636; 12 of the first 7,636 differ — …" (the items past the
    shorter list named as added or removed): numpy compares, no loop over the items."""
    common = min(len(old), len(new))
    a, b = old[:common], new[:common]
    differs = a != b
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        differs &= ~(np.isnan(a) & np.isnan(b))  # NaN in both places: no change
    at = np.flatnonzero(differs)
    count = len(at)
    verb = "differs" if count == 1 else "differ"
    if len(old) == len(new):
        head = f"{count:,} of {common:,} {unit} {verb}" if count else f"no item of {common:,} {unit} differs"
    else:
        head = f"{len(new):,} {unit}, was {len(old):,}; " + (
            f"{count:,} of the first {common:,} {verb}" if count else f"the first {common:,} the same"
        )
    shown = [f"[{k}] {_item_words(a[k])} → {_item_words(b[k])}" for k in at[:ITEMS_SHOWN].tolist()]
    room = ITEMS_SHOWN - len(shown)
    if room > 0 and len(old) != len(new):
        longer, what = (new, "added") if len(new) > len(old) else (old, "removed")
        shown += [f"[{k}] {_item_words(longer[k])} {what}" for k in range(common, min(len(longer), common + room))]
    hidden = count + abs(len(new) - len(old)) - len(shown)
    return head + (f" — {', '.join(shown)}" if shown else "") + (", …" if hidden > 0 else "")


class _Diff:
    def __init__(self, reads, old: onnx.ModelProto | None = None, new: onnx.ModelProto | None = None) -> None:
        self.nodes: dict[str, list] = {"added": [], "removed": [], "changed": []}
        self.reads = reads  # each side's reader of the tensors kept outside its graph
        self.renamed: list[dict[str, str]] = []  # tensors renamed, in every graph and body
        self.models = (old, new)
        # each side's container whose opset imports the nodes diffed run at: the model's main
        # graph (its subgraphs too), or the function whose body (and its subgraphs) is diffed
        self.scopes: tuple[Any, Any] = (old.graph if old else None, new.graph if new else None)
        self._schemas: dict[tuple[str, str, int | None], onnx.defs.OpSchema | None] = {}

    # ---------------------------------------------------------------- nodes
    def graphs(
        self, old: onnx.GraphProto, new: onnx.GraphProto, old_path: str, new_path: str, outer: TensorNames | None = None
    ) -> tuple[list[str], TensorNames]:
        """Diff two graphs' nodes into self.nodes; answer the graph-level field changes and the
        graphs' tensor correspondence. outer: the enclosing graph's, for a subgraph."""
        _, names = self.body(old, new, old_path, new_path, outer)
        changes = []
        for field in ("name", "doc_string"):
            if getattr(old, field) != getattr(new, field):
                changes.append(f"{field}: {_short(getattr(old, field))} → {_short(getattr(new, field))}")
        changes += [f"value_info {c}" for c in _named_changes(old.value_info, new.value_info, names)]
        changes += [f"metadata {c}" for c in _props_changes(old.metadata_props, new.metadata_props)]
        return changes, names

    def body(
        self,
        old: onnx.GraphProto | onnx.FunctionProto,
        new: onnx.GraphProto | onnx.FunctionProto,
        old_path: str,
        new_path: str,
        outer: TensorNames | None = None,
    ) -> tuple[dict[str, int], TensorNames]:
        """Diff the nodes of two graphs or function bodies into self.nodes (their ids under the
        paths given, each side's own); answer how many were added, removed and changed there,
        inside their subgraphs included, and the bodies' tensor correspondence."""
        before = {k: len(v) for k, v in self.nodes.items()}
        old_nodes, new_nodes = old.node, new.node
        pairs, removed, added = pair_nodes(old_nodes, new_nodes, _weights(old), _weights(new))
        # equal bytes: the common case, and the quick way to see it
        alike = [old_nodes[i].SerializeToString() == new_nodes[j].SerializeToString() for i, j in pairs]
        differing = [p for p, same in zip(pairs, alike, strict=True) if not same]
        names = correspond(old, new, differing, self.reads, outer)
        # the main graph's and a function's own inputs and outputs are listed as such elsewhere
        self.note_renamed(names, new_path, io_names(old) if outer is None else set())
        for i in removed:
            n = old_nodes[i]
            self.nodes["removed"].append({"node": node_id(old_path, i), "name": n.name, "op_type": n.op_type})
        for j in added:
            n = new_nodes[j]
            self.nodes["added"].append({"node": node_id(new_path, j), "name": n.name, "op_type": n.op_type})
        for i, j in _pairs_to_compare(old_nodes, pairs, alike, names):
            if _only_renamed(old_nodes[i], new_nodes[j], names):
                continue  # a re-export's every node: told quicker than field by field
            fields = self.node_fields(old_nodes[i], new_nodes[j], node_id(old_path, i), node_id(new_path, j), names)
            if fields:
                n = new_nodes[j]
                self.nodes["changed"].append(
                    {
                        "node": node_id(new_path, j),
                        "other": node_id(old_path, i),
                        "name": n.name,
                        "op_type": n.op_type,
                        "fields": fields,
                    }
                )
        return {k: len(v) - before[k] for k, v in self.nodes.items()}, names

    def note_renamed(self, names: TensorNames, path: str, listed_elsewhere: set[str]) -> None:
        """Keep the tensors renamed in one graph or body, with its path when not the main graph."""
        where = {"graph": path} if path else {}
        self.renamed += [{"from": x, "to": y, **where} for x, y in names.renamed if x not in listed_elsewhere]

    def functions(self, old: onnx.ModelProto, new: onnx.ModelProto) -> dict:
        """The model-local functions added, removed (by name) and changed, matched by (domain,
        name, overload): each changed one's body diffed as a graph's is (its nodes into
        self.nodes, with ids under "fn[k]", each side's own index) and its own fields named."""
        old_at = _function_indices(old)
        new_at = _function_indices(new)
        changed = []
        for key, j in new_at.items():
            i = old_at.get(key)
            if i is None:
                continue
            f, g = old.functions[i], new.functions[j]
            if f.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True):
                continue
            outside, self.scopes = self.scopes, (f, g)  # the body's nodes run at its own opsets
            try:
                nodes, names = self.body(f, g, f"fn[{i}]", f"fn[{j}]")
            finally:
                self.scopes = outside
            fields = _function_fields(f, g, self.reads, names)
            if fields or any(nodes.values()):
                changed.append(
                    {
                        "function": _function_label(key),
                        "path": f"fn[{j}]",
                        "other": f"fn[{i}]",
                        "fields": fields,
                        "nodes": nodes,
                    }
                )
        return {
            "added": [_function_label(k) for k in new_at if k not in old_at],
            "removed": [_function_label(k) for k in old_at if k not in new_at],
            "changed": changed,
        }

    def node_fields(self, a: onnx.NodeProto, b: onnx.NodeProto, a_id: str, b_id: str, names: TensorNames) -> list[str]:
        fields = []
        for f in ("name", "op_type", "domain", "overload", "doc_string"):
            if getattr(a, f) != getattr(b, f):
                fields.append(f"{f}: {_short(getattr(a, f))} → {_short(getattr(b, f))}")
        for f in ("input", "output"):
            olds, news = list(getattr(a, f)), list(getattr(b, f))
            if not names.same_list(olds, news):  # a tensor only renamed is the same tensor
                fields.append(f"{f}s: {olds} → {news}{_taken_over_words(olds, news, names)}")
        old_attrs = {x.name: x for x in a.attribute}
        new_attrs = {x.name: x for x in b.attribute}
        for name in [*old_attrs, *(n for n in new_attrs if n not in old_attrs)]:
            x, y = old_attrs.get(name), new_attrs.get(name)
            if x is not None and y is not None and x.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
                fields += self.attr_graphs(name, x, y, a_id, b_id, names)
            elif x is None and y is not None and self.written_as_left_out(name, y, (b, 1), (a, 0)):
                continue  # written at its default on one side, left out on the other: the same
            elif y is None and x is not None and self.written_as_left_out(name, x, (a, 0), (b, 1)):
                continue
            elif x is None or y is None or _attr_differs(x, y, self.reads):
                fields.append(_attr_change(name, x, y))
        if any(f.startswith("attribute ") for f in fields):
            fields = forest_changes(a, b) + fields  # a tree ensemble's trees, compared one by one
        fields += [f"metadata {c}" for c in _props_changes(a.metadata_props, b.metadata_props)]
        if [d.SerializeToString() for d in a.device_configurations] != [
            d.SerializeToString() for d in b.device_configurations
        ]:
            fields.append("device configurations changed")
        return fields

    def written_as_left_out(
        self, name: str, written: AttributeProto, at: tuple[onnx.NodeProto, int], other: tuple[onnx.NodeProto, int]
    ) -> bool:
        """Whether attribute `written`, of the node `at` (node, side: 0 old, 1 new), holds what
        the `other` node, which leaves it out, takes: the default its schema gives it — or, where
        that schema has no such attribute (an opset since or before: ReduceMean's
        noop_with_empty_axes, 18 against 17), the default the written side's schema gives it."""
        schema = self.schema(*other)
        if schema is not None and name in schema.attributes:
            return at_default(written, default_of(schema, name))
        return at_default(written, default_of(self.schema(*at), name))

    def schema(self, node: onnx.NodeProto, side: int) -> onnx.defs.OpSchema | None:
        """The schema of a node of one side (0 old, 1 new) at the opset it runs at, or None."""
        model, container = self.models[side], self.scopes[side]
        if model is None:
            return None
        key = (standard_domain(node.domain), node.op_type, opset_version(model, container, node.domain))
        if key not in self._schemas:
            self._schemas[key] = op_schema(model, container, node)
        return self._schemas[key]

    def _counted_words(self, before: dict[str, int], old_path: str, new_path: str) -> str:
        """ "1 node changed, 2 more in its bodies": the nodes of one body listed since `before`,
        its own (a nested If changed because its branch did is one of them) apart from those of
        bodies inside it (a single attribute two levels down read "2 node(s) added, removed or
        changed", QA20 F13)."""
        own: list[str] = []
        deeper = 0
        for kind in ("added", "removed", "changed"):
            listed = self.nodes[kind][before[kind] :]
            path = old_path if kind == "removed" else new_path
            mine = sum(1 for e in listed if _graph_of(e["node"]) == path)
            deeper += len(listed) - mine
            if mine:
                own.append(f"{plural(mine, 'node')} {kind}")
        if deeper:
            own.append(f"{deeper} more in {'its' if own else 'the'} bodies")
        return ", ".join(own)

    def training(self, old: onnx.ModelProto, new: onnx.ModelProto, main: TensorNames) -> list[str]:
        """What differs in the training_info entries, a line each ("0 algorithm: 1 node changed",
        "0 update_binding W: W_new → W_next"); their graphs' nodes go to self.nodes under
        "train[k].init|algo". They read and update the main graph's tensors by name: `main` is
        the main graph's correspondence."""
        a, b = old.training_info, new.training_info
        lines = [f"{len(a)} → {len(b)} entries"] if len(a) != len(b) else []
        for k, (x, y) in enumerate(zip(a, b, strict=False)):
            if x.SerializeToString(deterministic=True) == y.SerializeToString(deterministic=True):
                continue
            for field, which in (("initialization", "init"), ("algorithm", "algo")):
                if x.HasField(field) != y.HasField(field):
                    lines.append(f"{k} {field} graph {'added' if y.HasField(field) else 'removed'}")
                    continue
                g, h = getattr(x, field), getattr(y, field)
                if g.SerializeToString(deterministic=True) == h.SerializeToString(deterministic=True):
                    continue
                path = f"train[{k}].{which}"
                before = {kind: len(v) for kind, v in self.nodes.items()}
                changes, names = self.graphs(g, h, path, path, main)
                changes += _io_words(g, h, names)
                changes += [
                    f"initializer {c}" for c in _tensor_changes(g.initializer, h.initializer, self.reads, names)
                ]
                counted = self._counted_words(before, path, path)
                lines += [f"{k} {field}: {c}" for c in ([counted] if counted else []) + changes]
            for field in ("initialization_binding", "update_binding"):
                lines += [f"{k} {field} {c}" for c in _props_changes(getattr(x, field), getattr(y, field))]
        return lines or (["changed"] if a != b else [])

    def attr_graphs(
        self, name: str, x: AttributeProto, y: AttributeProto, a_id: str, b_id: str, outer: TensorNames
    ) -> list[str]:
        olds = [x.g] if x.type == AttributeProto.GRAPH else list(x.graphs)
        news = [y.g] if y.type == AttributeProto.GRAPH else list(y.graphs)
        if x.type != y.type or len(olds) != len(news):
            return [f"attribute {name}: {len(olds)} graph(s) → {len(news)} graph(s)"]
        fields = []
        for k, (g, h) in enumerate(zip(olds, news, strict=True)):
            item = None if x.type == AttributeProto.GRAPH else k
            before = {kind: len(v) for kind, v in self.nodes.items()}
            old_path, new_path = subgraph_path(a_id, name, item), subgraph_path(b_id, name, item)
            graph_changes, names = self.graphs(g, h, old_path, new_path, outer)
            graph_changes += _io_words(g, h, names)
            graph_changes += [
                f"initializer {c}" for c in _tensor_changes(g.initializer, h.initializer, self.reads, names)
            ]
            label = name if item is None else f"{name}[{k}]"
            counted = self._counted_words(before, old_path, new_path)
            if counted:
                fields.append(f"subgraph {label}: {counted}")
            fields += [f"subgraph {label}: {c}" for c in graph_changes]
        return fields


def _joined(dense: dict, sparse: dict) -> dict:
    return {k: dense[k] + sparse[k] for k in dense}


def _graph_of(node: str) -> str:
    return node.rpartition("/")[0]


def _taken_over_words(olds: list[str], news: list[str], names: TensorNames) -> str:
    """ " ('p1' now names another tensor; the old one is 'p1_pre')" for the names spelled alike on
    both sides that are not the same tensor (a node inserted after its producer took it over):
    the line would read "['p1'] → ['p1']" else."""
    notes = []
    for x, y in zip(olds, news, strict=False):
        if x == y and not names.same(x, y):
            now = names.to_new.get(x)
            notes.append(f"{x!r} now names another tensor" + (f"; the old one is {now!r}" if now else ""))
    return f" ({', '.join(notes)})" if notes else ""


def _only_renamed(a: onnx.NodeProto, b: onnx.NodeProto, names: TensorNames) -> bool:
    """Whether two nodes differ in nothing but the spelling of tensors that correspond: their
    bytes without inputs and outputs equal. Not for a node holding subgraphs (what they read
    from outside is spelled inside them)."""
    if any(x.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for x in a.attribute):
        return False
    if not (names.same_list(a.input, b.input) and names.same_list(a.output, b.output)):
        return False
    bare = []
    for node in (a, b):
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        del copy.input[:]
        del copy.output[:]
        bare.append(copy.SerializeToString())
    return bare[0] == bare[1]


def _pairs_to_compare(old_nodes, pairs: list[tuple[int, int]], alike: list[bool], names: TensorNames):
    """The matched pairs whose fields are compared: those whose bytes differ, and those written
    alike that use a name a rename moved (an inserted node took over the name its reader reads)."""
    if not names.any_moved():
        return [p for p, same in zip(pairs, alike, strict=True) if not same]
    return [
        (i, j)
        for (i, j), same in zip(pairs, alike, strict=True)
        if not same or names.touches_moved(used_names(old_nodes[i]))
    ]


def _function_indices(model: onnx.ModelProto) -> dict[tuple[str, str, str], int]:
    """(domain, name, overload) -> the index of the function defining it (the first, if twice)."""
    at: dict[tuple[str, str, str], int] = {}
    for k, f in enumerate(model.functions):
        at.setdefault((f.domain, f.name, f.overload), k)
    return at


def _function_label(key: tuple[str, str, str]) -> str:
    """How the diff names a function: "local.fns.Block", with its overload "local.fns.Block:fp16"."""
    domain, name, overload = key
    return ".".join(filter(None, (domain, name))) + (f":{overload}" if overload else "")


def _default_words(a: AttributeProto | None, declared: bool) -> str:
    if a is not None:
        return f"default {_attr_words(a)}"
    return "no default" if declared else "(none)"


def _function_fields(f: onnx.FunctionProto, g: onnx.FunctionProto, reads, names: TensorNames) -> list[str]:
    """A function's own fields that changed, a line each: its inputs, outputs, attributes (each
    one declared, with or without a default, and its default's value), opsets, doc string,
    metadata and value_info. Its body's nodes are diffed as nodes, elsewhere."""
    fields = []
    for field in ("input", "output"):
        if list(getattr(f, field)) != list(getattr(g, field)):
            fields.append(f"{field}s: {list(getattr(f, field))} → {list(getattr(g, field))}")
    old_defaults = {a.name: a for a in f.attribute_proto}
    new_defaults = {a.name: a for a in g.attribute_proto}
    old_names = [*f.attribute, *(n for n in old_defaults if n not in f.attribute)]
    new_names = [*g.attribute, *(n for n in new_defaults if n not in g.attribute)]
    for name in [*old_names, *(n for n in new_names if n not in old_names)]:
        x, y = old_defaults.get(name), new_defaults.get(name)
        if x is not None and y is not None:
            differs = _attr_differs(x, y, reads)
        else:  # declared on one side only, or a default on one side only
            differs = x is not y or (name in old_names) != (name in new_names)
        if differs:
            before = _default_words(x, name in old_names)
            after = _default_words(y, name in new_names)
            fields.append(f"attribute {name}: {before} → {after}")
    old_ops = {o.domain: o.version for o in f.opset_import}
    new_ops = {o.domain: o.version for o in g.opset_import}
    for domain in [*old_ops, *(d for d in new_ops if d not in old_ops)]:
        if old_ops.get(domain) != new_ops.get(domain):
            before, after = (str(v) if v is not None else "(none)" for v in (old_ops.get(domain), new_ops.get(domain)))
            fields.append(f"opset {domain or 'ai.onnx'}: {before} → {after}")
    if f.doc_string != g.doc_string:
        fields.append(f"doc_string: {_short(f.doc_string)} → {_short(g.doc_string)}")
    fields += [f"metadata {c}" for c in _props_changes(f.metadata_props, g.metadata_props)]
    fields += [f"value_info {c}" for c in _named_changes(f.value_info, g.value_info, names)]
    return fields


def _weights(g: onnx.GraphProto | onnx.FunctionProto) -> set[str]:
    """The names of a graph's weights (a function body has none)."""
    if not isinstance(g, onnx.GraphProto):
        return set()
    return {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}


def _type_words(vi: onnx.ValueInfoProto) -> str:
    """A value's type as the page writes it: "FLOAT ⟨batch×sequence×64⟩", "seq(tensor(float))"."""
    return format_type(type_json(vi.type)) if vi.HasField("type") else "no type"


def _value_change(x: onnx.ValueInfoProto, y: onnx.ValueInfoProto) -> str:
    """What changed in a named value besides its name: its type in words, else its other fields."""
    if x.type != y.type:
        return f"{_type_words(x)} → {_type_words(y)}"
    fields = [f.name for f in onnx.ValueInfoProto.DESCRIPTOR.fields if f.name not in ("name", "type")]
    return ", ".join(f"{f} changed" for f in fields if getattr(x, f) != getattr(y, f))


def _named_changes(old, new, names: TensorNames) -> list[str]:
    """Changes between two lists of named protos (value_info, inputs, outputs): an old one looked
    for under its new name (a value renamed with its tensor is no change)."""
    moved = names.any_moved()  # none: no need to translate 30k names
    a = {names.new_name(x.name) if moved else x.name: x for x in old}
    b = {x.name: x for x in new}
    out = [f"{_short(a[n].name)} removed" for n in a if n not in b]
    out += [f"{_short(n)} added" for n in b if n not in a]
    out += [
        f"{_short(n)}: {change}"
        for n in a
        if n in b and a[n] != b[n] and (change := _value_change(a[n], b[n]))  # "": only the name differs
    ]
    return out


def _io_words(old: onnx.GraphProto, new: onnx.GraphProto, names: TensorNames) -> list[str]:
    """A body's inputs and outputs, by position (what its holder feeds and takes is positional):
    an output whose producer changed keeps its place (an Identity inserted before a branch's
    output read "output 'then_tok' removed" and "output 'then_tok' added", QA20 F13)."""
    return [f"input {c}" for c in _positional_changes(old.input, new.input, names)] + [
        f"output {c}" for c in _positional_changes(old.output, new.output, names)
    ]


def _positional_changes(old, new, names: TensorNames) -> list[str]:
    out = []
    for k, (x, y) in enumerate(zip(old, new, strict=False)):
        if x.name != y.name and not names.same(x.name, y.name):
            out.append(f"{k} {_short(x.name)} → {_short(y.name)}")
        elif x != y and (change := _value_change(x, y)):
            out.append(f"{_short(y.name)}: {change}")
    out += [f"{_short(x.name)} removed" for x in old[len(new) :]]
    out += [f"{_short(y.name)} added" for y in new[len(old) :]]
    return out


def _props_changes(old, new) -> list[str]:
    a = {p.key: p.value for p in old}
    b = {p.key: p.value for p in new}
    out = [f"{_short(k)} removed" for k in a if k not in b]
    out += [f"{_short(k)} = {_short(b[k])} added" for k in b if k not in a]
    out += [f"{_short(k)}: {_short(a[k])} → {_short(b[k])}" for k in a if k in b and a[k] != b[k]]
    return out


def _tensor_changes(old, new, reads, names: TensorNames) -> list[str]:
    d = tensor_diff(old, new, names, reads)
    return (
        [f"{t['name']} {t['change']}" for t in d["changed"]]
        + [f"{n} added" for n in d["added"]]
        + [f"{n} removed" for n in d["removed"]]
    )


def tensor_diff(old, new, names: TensorNames, reads=(None, None)) -> dict:
    """Initializers added, removed and changed: each paired with its match (tensor_names: by
    name, or renamed with the same content, which is neither added nor removed), a change in
    words, by what they hold."""
    a = {t.name: t for t in old}
    b = {t.name: t for t in new}
    changed = []
    for name in a:
        other = names.to_new.get(name)  # the new side may have given its name to another tensor
        if other in b and (words := tensor_change(a[name], b[other], reads)) is not None:
            changed.append({"name": name, "change": words})
    return {
        "added": [n for n in b if names.to_old.get(n) not in a],
        "removed": [n for n in a if names.to_new.get(n) not in b],
        "changed": changed,
    }


def sparse_diff(old, new, names: TensorNames, reads=(None, None)) -> dict:
    """Sparse initializers added, removed and changed, by their values' names, paired as
    tensor_names pairs them (by name, or renamed with the same content)."""
    a = {t.values.name: t for t in old}
    b = {t.values.name: t for t in new}
    changed = []
    for name in a:
        other = names.to_new.get(name)
        if other in b and sparse_change(a[name], b[other], reads):
            changed.append({"name": name, "change": _sparse_words(a[name], b[other])})
    return {
        "added": [n for n in b if names.to_old.get(n) not in a],
        "removed": [n for n in a if names.to_new.get(n) not in b],
        "changed": changed,
    }


def _sparse_words(x: onnx.SparseTensorProto, y: onnx.SparseTensorProto) -> str:
    """ "sparse [4, 4] → [8, 4]", "sparse, 3 → 5 values set", or "sparse values changed"."""
    if list(x.dims) != list(y.dims):
        return f"sparse {list(x.dims)} → {list(y.dims)}"
    held = (math.prod(x.values.dims), math.prod(y.values.dims))
    if held[0] != held[1]:
        return f"sparse, {held[0]} → {held[1]} values set"
    return "sparse values changed"


def _renamed_part(renamed: list[dict[str, str]]) -> dict:
    """The tensors renamed, the first MAX_RENAMED listed, all counted."""
    return {"renamed": renamed[:MAX_RENAMED], "renamed_count": len(renamed)}


def _io_diff(old: onnx.GraphProto, new: onnx.GraphProto, field: str) -> dict:
    """The graphs' inputs or outputs added, removed, renamed (in place: io_pairs) and changed."""
    a = {x.name: x for x in getattr(old, field)}
    b = {x.name: x for x in getattr(new, field)}
    renamed = [(x, y) for x, y in paired(old, new, field) if x != y]
    was, now = {x for x, _ in renamed}, {y for _, y in renamed}
    return {
        "added": [n for n in b if n not in a and n not in now],
        "removed": [n for n in a if n not in b and n not in was],
        "renamed": [
            {
                "from": x,
                "to": y,
                **({"type": _value_change(a[x], b[y])} if a[x].type != b[y].type else {}),
            }
            for x, y in renamed
        ],
        "changed": [
            {"name": n, "from": _type_words(a[n]), "to": _type_words(b[n]), "change": _value_change(a[n], b[n])}
            for n in a
            if n in b and a[n] != b[n]
        ],
    }


MODEL_FIELDS = ("ir_version", "producer_name", "producer_version", "domain", "model_version", "doc_string")


def model_diff(old: onnx.ModelProto, new: onnx.ModelProto, reads=(None, None)) -> dict:
    """The diff of `old` to `new` (what GET .../diff answers, besides which models they are).
    reads: each side's reader of its tensors kept outside the graph (external.ExternalFiles):
    without one, such a tensor equals only one with the same reference."""
    d = _Diff(reads, old, new)
    graph_changes, names = d.graphs(old.graph, new.graph, "", "")
    model: dict[str, Any] = {
        f: [getattr(old, f), getattr(new, f)] for f in MODEL_FIELDS if getattr(old, f) != getattr(new, f)
    }
    opsets = ({o.domain: o.version for o in old.opset_import}, {o.domain: o.version for o in new.opset_import})
    if opsets[0] != opsets[1]:
        model["opset_import"] = list(opsets)
    if graph_changes:
        model["graph"] = graph_changes
    functions = d.functions(old, new)
    training = d.training(old, new, names)
    if training:
        model["training_info"] = training
    if [c.SerializeToString() for c in old.configuration] != [c.SerializeToString() for c in new.configuration]:
        model["configuration"] = "changed"
    metadata = {
        "added": {p.key: p.value for p in new.metadata_props if p.key not in {q.key for q in old.metadata_props}},
        "removed": {p.key: p.value for p in old.metadata_props if p.key not in {q.key for q in new.metadata_props}},
        "changed": {
            k: [v, w]
            for k, v in ((p.key, p.value) for p in old.metadata_props)
            for w in [next((q.value for q in new.metadata_props if q.key == k), v)]
            if w != v
        },
    }
    counts = {k: len(v) for k, v in d.nodes.items()}
    parts = {
        "tensors": {
            **_joined(
                tensor_diff(list(old.graph.initializer), list(new.graph.initializer), names, reads),
                sparse_diff(list(old.graph.sparse_initializer), list(new.graph.sparse_initializer), names, reads),
            ),
            **_renamed_part(d.renamed),
        },
        "inputs": _io_diff(old.graph, new.graph, "input"),
        "outputs": _io_diff(old.graph, new.graph, "output"),
        "metadata": metadata,
        "functions": functions,
    }
    # nothing a person can see differs: the bytes may still (raw_data vs float_data, embedded vs
    # external), which "same" tells apart
    alike = not any(counts.values()) and not model and not any(v for p in parts.values() for v in p.values())
    return {
        "nodes": d.nodes,
        **parts,
        "model": model,
        "counts": counts,
        # what to count both at for costs of the same input shapes (Compare's costs)
        "same_shapes": same_shapes(old, new),
        "same": alike and old.SerializeToString() == new.SerializeToString(),
        "same_content": alike,
    }
