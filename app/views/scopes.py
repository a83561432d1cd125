"""A node's name scope, for grouping big graphs: from torch's node metadata when present
(`pkg.torch.onnx.name_scopes`, `namespace`), else from a path-like node name
(`/model/layers.3/self_attn/q_proj/MatMul`, TensorFlow's `model/conv2d_3/Conv2D`); in a graph
whose nodes say none (Caffe2 exports, much of the model zoo: nodes unnamed or named `n193`),
from the path-like name of a weight a node reads (`inception_4a/double3x3b_w_0`: inception_4a),
else the scope its inputs' producers share (scope_by_weights).

A scope is the list of its nested levels, each a full path, outermost first:
["/model", "/model/layers.3", "/model/layers.3/self_attn"] or ["layers.0", "layers.0.lin"].
"""

from __future__ import annotations

import re

import onnx

MAX_SCOPE_LEVELS = 32  # name-scope levels kept per node (not graph nesting: that is limits.MAX_GRAPH_DEPTH)
NAME_SCOPES = "pkg.torch.onnx.name_scopes"
NAMESPACE = "namespace"

_ITEM = re.compile(r"'([^'\\]*)'")
_PLAIN_LAST = re.compile(r" ?'[^',\\]*'\]")


# the scope torch's dynamo exporter gives nodes of no module (the inputs' Shape and sym_size ops):
# a placeholder, not a part of the model
NO_MODULE = "_empty_nn_module_stack_from_metadata_hook"


def _from_name_scopes(value: str) -> list[str] | None:
    """torch writes a Python list of plain strings: "['', 'model', 'model.layers.0', 'linear']".
    Parsed by pattern (ast.literal_eval costs 100 us a node, seconds on a 40k-node graph)."""
    if not (value.startswith("[") and value.endswith("]")):
        return None
    scopes = _ITEM.findall(value)
    levels = [s for s in scopes[:-1] if s and s != NO_MODULE]  # drop the root '' and the op itself
    return levels[:MAX_SCOPE_LEVELS]


def _from_namespace(value: str) -> list[str]:
    parts = [p.split(":", 1)[0].strip() for p in value.split("/")]
    return [p for p in parts[1:-1] if p and p != NO_MODULE][:MAX_SCOPE_LEVELS]


def _from_name(name: str) -> list[str]:
    """The levels of a path-like name: torch's "/a/b/Op" -> ["/a", "/a/b"], TensorFlow's (and a
    weight's) "a/b/Op" -> ["a", "a/b"]. Decided by the text before its last "/" alone (the
    table caches by it)."""
    if name.startswith("/"):
        if name.count("/") < 2:
            return []
        parts = name.split("/")[1:-1]
        return ["/" + "/".join(parts[: i + 1]) for i in range(min(len(parts), MAX_SCOPE_LEVELS))]
    parts = name.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(min(len(parts), MAX_SCOPE_LEVELS))]


def scope_of(name: str, name_scopes: str | None, namespace: str | None) -> list[str]:
    """The scope levels from a node's name and its torch metadata values (None when absent)."""
    if name_scopes is not None:
        levels = _from_name_scopes(name_scopes)
        if levels is not None:
            return levels
    if namespace is not None:
        return _from_namespace(namespace)
    return _from_name(name)


def nested_metadata(node: onnx.NodeProto, part: onnx.NodeProto) -> list[tuple[str, str]]:
    """The metadata_props for `part`, one of the nodes `node` is written out as: `node`'s own
    (its module, class, stack trace: where this computation came from), with its scope one
    level deeper, `node` itself as that level (a full path, as torch writes the others), so
    the parts draw as one group inside `node`'s module, as a path-like name nests them."""
    out = []
    for p in node.metadata_props:
        value = p.value
        if p.key == NAME_SCOPES and (items := _ITEM.findall(value)) and value.startswith("["):
            value = repr([*items[:-1], _full(items[-2] if len(items) > 1 else "", items[-1]), part.op_type])
        elif p.key == NAMESPACE and "/" in value:
            head, _, last = value.rpartition("/")
            own, sep, target = last.partition(":")
            parent = head.rpartition("/")[2].split(":", 1)[0].strip()
            value = f"{head}/{_full(parent, own.strip())}{sep}{target}/{part.op_type}: {part.op_type}"
        out.append((p.key, value))
    return out


def _full(parent: str, own: str) -> str:
    return f"{parent}.{own}" if parent and not own.startswith(parent + ".") else own


def node_scope(node: onnx.NodeProto) -> list[str]:
    meta = {p.key: p.value for p in node.metadata_props if p.key in (NAME_SCOPES, NAMESPACE)}
    return scope_of(node.name, meta.get(NAME_SCOPES), meta.get(NAMESPACE))


class ScopeTable:
    """Distinct scopes of one graph, numbered in order of first use: nodes of a 40k-node graph
    share a few thousand scopes, so the graph JSON lists each once and nodes name its index.
    Parses are cached by everything but each value's last item (the op's own name)."""

    def __init__(self):
        self.scopes: list[list[str]] = []
        self._index: dict[tuple, int] = {}
        # parses by kind of source, each keyed by the part of the value that decides the scope
        self._by_scopes: dict[str, int | None] = {}
        self._by_namespace: dict[str, int | None] = {}
        self._by_name: dict[str, int | None] = {}
        self.hint = 0  # where the last node kept its name_scopes entry
        self._last_value: str | None = None  # that entry's well-formed value, and its index
        self._last_index: int | None = None

    def of_node(self, node, meta) -> int | None:
        """The table index of a node's scope from its name and metadata_props (`meta`, which
        the caller has read already). Hot path: once per node, the name read only if needed.
        Exporters write the keys in the same order on every node, so the position of the last
        name_scopes hit is tried first (a node listing the key twice, which no exporter does,
        may get its scope from either entry)."""
        at = self.hint
        if at < len(meta):
            p = meta[at]
            if p.key == NAME_SCOPES:
                value = p.value
                if value == self._last_value:  # 70% of a torch export's nodes: one FX op, several nodes
                    return self._last_index
                if value.startswith("[") and value.endswith("]"):  # well formed: the scope is read from it alone
                    hit = self.index(node.name, value, None)
                    self._last_value, self._last_index = value, hit
                    return hit
        if not meta:
            return self.index(node.name, None, None)
        name_scopes = namespace = None
        for k, p in enumerate(meta):
            key = p.key
            if key == NAME_SCOPES and name_scopes is None:
                name_scopes = p.value
                self.hint = k
            elif key == NAMESPACE and namespace is None:
                namespace = p.value
        return self.index(node.name, name_scopes, namespace)

    def index(self, name: str, name_scopes: str | None, namespace: str | None) -> int | None:
        """The table index of a node's scope, or None when it has none."""
        if name_scopes is not None and not (name_scopes.startswith("[") and name_scopes.endswith("]")):
            name_scopes = None  # unreadable: the scope comes from the namespace or the name
        if name_scopes is not None:
            head, _, last = name_scopes.rpartition(",")
            # only a plain last item can be ignored; anything odd is parsed whole
            cache, key = self._by_scopes, (head if _PLAIN_LAST.fullmatch(last) else "\0" + name_scopes)
        elif namespace is not None:
            cache, key = self._by_namespace, namespace.rpartition("/")[0]
        else:
            cache, key = self._by_name, name.rpartition("/")[0]
        hit = cache.get(key, -1)
        if hit != -1:
            return hit
        found = self.intern(scope_of(name, name_scopes, namespace))
        cache[key] = found
        return found

    def intern(self, levels: list[str]) -> int | None:
        """The table index of a scope (added when new), None for no scope."""
        if not levels:
            return None
        t = tuple(levels)
        found = self._index.get(t)
        if found is None:
            found = self._index[t] = len(self.scopes)
            self.scopes.append(list(levels))
        return found

    def shared(self, indexes: list[int | None]) -> int | None:
        """The scope the given ones share (their longest common prefix), None for none."""
        common: list[str] | None = None
        for k in indexes:
            if k is None:
                continue
            levels = self.scopes[k]
            if common is None:
                common = levels
                continue
            n = 0
            while n < len(common) and n < len(levels) and common[n] == levels[n]:
                n += 1
            common = common[:n]
            if not common:
                return None
        return self.intern(common) if common else None


# nodes whose outputs are weights when their inputs are (how the onnx wheel's light models and
# some converters write them)
_WEIGHT_MAKERS = ("Constant", "ConstantOfShape")


def initializer_names(g) -> frozenset[str]:
    """A graph's initializers' names (a function body has none)."""
    names = {t.name for t in getattr(g, "initializer", ())}
    names.update(sp.values.name for sp in getattr(g, "sparse_initializer", ()))
    return frozenset(names)


def _names_a_block(name: str) -> bool:
    """A weight's name that says which block reads it (inception_4a/1x1_w_0, TensorFlow's
    model/conv2d/kernel:0) — not torch's "/"-led Constant outputs, whose nodes' names say it."""
    return "/" in name and not name.startswith("/")


def scope_by_weights(nodes: list[dict], g, table: ScopeTable) -> None:
    """In a graph whose weights name blocks, give each node of the graph JSON (`nodes`, in the
    graph's order: producers first) that has no scope of its own the block of the first weight
    it reads (a Constant: of what it writes), else — a node whose name is no path (n193, or
    none) and that reads no weight naming no block — the scope its inputs' producers share: a
    Relu or a Concat between a block's weighted nodes is in that block. In place; activations never name a block. A pass after
    the hot one: a torch graph pays only the look for block-naming weights."""
    initializers = initializer_names(g)
    constants = {
        o
        for j in nodes
        if j["op_type"] in _WEIGHT_MAKERS and not j["domain"]
        for o in j["outputs"]
        if _names_a_block(o)
    }
    if not constants and not any(_names_a_block(w) for w in initializers):
        return
    # weights that name no block (squeezenet's conv10_w_0): of rank 2 or more, or made by a
    # ConstantOfShape (the wheel's light models) — not a Reshape's shape
    unblocked = {t.name for t in getattr(g, "initializer", ()) if len(t.dims) >= 2 and not _names_a_block(t.name)}
    unblocked.update(
        o
        for j in nodes
        if j["op_type"] == "ConstantOfShape" and not j["domain"]
        for o in j["outputs"]
        if not _names_a_block(o)
    )
    made: dict[str, int | None] = {}  # tensor -> the scope of the node writing it
    for j in nodes:
        k = j.get("scope")
        if k is None:
            maker = j["op_type"] in _WEIGHT_MAKERS and not j["domain"]
            weight = next(
                (
                    t
                    for t in (j["outputs"] if maker else j["inputs"])
                    if t in constants or (t in initializers and _names_a_block(t))
                ),
                None,
            )
            if weight is not None:
                k = table.index(weight, None, None)
            elif "/" not in j["name"] and not any(t in unblocked for t in j["inputs"]):
                # a node reading a weight that names no block (squeezenet's conv10_w_0 after
                # fire9) is no part of its producers' block: the classifier head is no fire9
                k = table.shared([made.get(t) for t in j["inputs"]])
            if k is not None:
                j["scope"] = k
        for t in j["outputs"]:
            made[t] = k


def scope_in_graph(g, index: int) -> list[str]:
    """The scope the graph JSON gives node `index` of graph `g` (by its weights and producers
    too): the node endpoint says the same. A node with a scope of its own needs no walk."""
    own = node_scope(g.node[index])
    if own:
        return own
    table = ScopeTable()
    nodes = []
    for n in g.node:
        j = {"op_type": n.op_type, "domain": n.domain, "name": n.name, "inputs": n.input[:], "outputs": n.output[:]}
        k = table.of_node(n, n.metadata_props)
        if k is not None:
            j["scope"] = k
        nodes.append(j)
    scope_by_weights(nodes, g, table)
    k = nodes[index].get("scope")
    return table.scopes[k] if k is not None else []
