"""Find in the whole model: nodes by op type, name, module scope and attribute value, tensors,
graphs and functions, in every graph at any depth (traverse.walk_graphs), ranked and bounded.

A node's module scope is the one the drawing groups it by (scopes.py): torch's dynamo export
names its nodes node_MatMul_12 and says `model.layers.0.self_attn.q_proj` only in metadata, so
`q_proj` finds that module's nodes there as it finds /model/layers.0/self_attn/q_proj/MatMul by
name in a TorchScript export.

Attribute values are matched in the text the node panel shows them in (panels/attribute-view.js
with lib/format.js: an INTS `[0, 2, 1, 3]`, a FLOAT `0.1`, a STRINGS `["a","b"]`, a Cast's `to` as
`7 (INT64)`); the functions below produce that text from the same JSON the page is sent. No Flask.
"""

from __future__ import annotations

import gc
import heapq
import re
import threading
from dataclasses import dataclass

import onnx

from ..errors import StudioError
from ..onnx_io.address import node_id
from ..onnx_io.text_fields import shown
from ..onnx_io.traverse import standard_domain, walk_graphs
from .scopes import NAME_SCOPES, ScopeTable, initializer_names, scope_by_weights
from .value_text import GRAPH_TYPES, attribute_text, format_number
from .values import dtype_name, few_values

MAX_QUERY = 200  # characters
DEFAULT_LIMIT = 200
MAX_LIMIT = 1000
FIELDS = ("op", "name", "tensor", "attr")  # "op:Conv" etc. narrow a query to one field
_WORD = re.compile(r"(?:\b(" + "|".join(FIELDS) + r"):\s*)?(\S+)", re.IGNORECASE)

# ranks: op type above names above tensors above attributes (docs/api.md lists them)
OP_EXACT, OP_PREFIX = 100, 90
NAME_EXACT, NAME_PREFIX, NAME_PART = 80, 70, 60
# module scope: the node's own module named whole (`q_proj`), a module it is in named whole
# (`layers.0`), part of a module's path (`layers.1` in layers.10); never above NAME_PART, so a
# node whose name holds its scope (a TorchScript export) is found by name as before
SCOPE_MODULE, SCOPE_WITHIN, SCOPE_PART = 60, 58, 56
OP_PART = 55
TENSOR_EXACT, TENSOR_PREFIX, TENSOR_PART = 50, 45, 40
# a node found by a weight it reads (an initializer, a Constant's or ConstantOfShape's output):
# "res3_0_branch2a Conv" finds the Conv reading that block's weight in a Caffe2 export whose
# nodes have no names (QA28), below the tensors themselves;
# not by other tensors, whose names follow their writers' (which the name finds already)
WEIGHT_READER = 38
ATTR_PAIR, ATTR_VALUE_EXACT, ATTR_VALUE, ATTR_NAME = 35, 34, 30, 25
# a tensor by its element type ("float16": which weights are still half, QA29), a node by what its
# exporter wrote on it (a stack trace's file and line, a class) or its doc string: a word's last
# resort ("model" is in every torch export's stack traces), or one word of several
TENSOR_DTYPE = 22
NODE_NOTE = 20

# a node's notes: the metadata a person looks for by text, each with the word `why` names it by
# (name_scopes is the module scope, searched as such)
_NOTE_KEYS = {
    "pkg.torch.onnx.stack_trace": "stack trace",
    "pkg.torch.onnx.class_hierarchy": "class",
    "namespace": "namespace",
}
_SKIPPED_NOTES = frozenset({NAME_SCOPES})
NOTE_SHOWN = 48  # characters of a note quoted in `why`, from the part holding the match
_QUOTE_STARTS = " /\\'\"[(,"  # where a word or a path's part starts
_SEPARATORS = "./"  # between a scope path's parts: torch's model.layers.0, /model/layers.0
_WEIGHT_MAKERS = ("Constant", "ConstantOfShape")  # as scopes.scope_by_weights reads them
_INT = onnx.AttributeProto.INT
_TENSOR_TYPES = (
    onnx.AttributeProto.TENSOR,
    onnx.AttributeProto.SPARSE_TENSOR,
    onnx.AttributeProto.TENSORS,
    onnx.AttributeProto.SPARSE_TENSORS,
)


# ------------------------------------------------------------------ the index


@dataclass
class _Graph:
    path: str
    kind: str  # "graph" | "function"
    name: str
    crumbs: list


@dataclass(frozen=True)
class _NoteHit:
    """A node's note that holds the needle: quoted (SearchIndex._why) only for what is listed."""

    note: int
    needle: str


def _compact(s: str) -> str:
    return "".join(s.split())


class SearchIndex:
    """Everything searchable in one model, in flat columns (no protos kept): built once per
    revision, then searched many times."""

    def __init__(self, model: onnx.ModelProto):
        self.graphs: list[_Graph] = []
        self.ops: dict[tuple[str, str], list[int]] = {}  # (domain, op_type) -> nodes
        # distinct attribute values (name, text as shown) and the nodes carrying them
        self.attr_name: list[str] = []
        self.attr_text: list[str] = []
        # "attribute", or "reads" for a small initializer's values (iou_threshold = 0.45), found
        # on the nodes reading it as a Constant's value is on the Constant
        self.attr_word: list[str] = []
        self.attr_nodes: list[list[int]] = []
        self._attr_keys: dict = {}  # (standard domain?, serialized attribute) -> its index
        self._weight_makers: set[int] = set()  # nodes making a weight (drawn inside their readers)
        # distinct notes on nodes (metadata values, doc strings): word, text, the nodes carrying them,
        # read when a query first needs them (Find's last resort: a dynamo export's three notes a
        # node were 60 % of the index's time, bench/search_index.py --dynamo); the model is kept
        # for it until then (the parsed revision the views read, not copied)
        self.note_word: list[str] = []
        self.note_text: list[str] = []
        self.note_nodes: list[list[int]] = []
        self.note_text_l: list[str] = []
        self._note_keys: dict[tuple[str, str], int] = {}
        self._notes_of: onnx.ModelProto | None = model
        self._notes_ready = False  # set once every note is read (another search may be reading them)
        self._notes_lock = threading.Lock()
        # each node's module scope: an index into one scopes.ScopeTable (graphs share its parses)
        self._scope_table = ScopeTable()
        self._node_scope: list[int | None] = []
        nodes: list[tuple[int, int, str, str, str]] = []  # (graph, index in it, name, op type, domain)
        tensors: list[
            tuple[int, str, str, list[int], str]
        ] = []  # (graph, name, role, nodes reading it, element type or ""), one per name and graph
        # hundreds of thousands of small objects, none in a cycle: the cyclic GC would only rescan them
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            for ref in walk_graphs(model):
                self._add_graph(ref, nodes, tensors)
        finally:
            if gc_was_on:
                gc.enable()
        del self._attr_keys
        # nodes, in walk order
        self.node_graph, self.node_index, self.node_name, self.node_op, self.node_domain = (
            (list(c) for c in zip(*nodes, strict=True)) if nodes else ([], [], [], [], [])
        )
        self.node_name_l = [s.lower() for s in self.node_name]
        self._index_scopes()
        self.attr_name_l = [s.lower() for s in self.attr_name]
        self.attr_text_l = [s.lower() for s in self.attr_text]
        self.attr_compact = [_compact(s) for s in self.attr_text_l]
        # tensors: one per (graph, name), in walk order
        self.tensor_graph, self.tensor_name, self.tensor_role, self.tensor_readers, self.tensor_dtype = (
            (list(c) for c in zip(*tensors, strict=True)) if tensors else ([], [], [], [], [])
        )
        self.tensor_dtype_l = [s.lower() for s in self.tensor_dtype]
        self.tensor_name_l = [s.lower() for s in self.tensor_name]

    def _add_graph(self, ref, nodes: list, tensors: list) -> None:
        g = ref.container
        gi = len(self.graphs)
        is_fn = isinstance(g, onnx.FunctionProto)
        self.graphs.append(_Graph(ref.path, "function" if is_fn else "graph", g.name, ref.crumbs))
        roles: dict[str, str] = {}  # the first role a name has, in this order
        if is_fn:
            for name in g.input:
                roles.setdefault(name, "input")
            for name in g.output:
                roles.setdefault(name, "output")
        else:
            for t in g.initializer:
                roles.setdefault(t.name, "initializer")
            for sp in g.sparse_initializer:
                roles.setdefault(sp.values.name, "initializer")
            for v in g.input:
                roles.setdefault(v.name, "input")
            for v in g.output:
                roles.setdefault(v.name, "output")
        for v in g.value_info:
            roles.setdefault(v.name, "value")
        dtypes = _element_types(g, is_fn)
        ops, keys, attr_nodes = self.ops, self._attr_keys, self.attr_nodes
        of_node = self._scope_table.of_node
        scopes: list[int | None] = []
        block_constants = False  # a Constant writing a block-named weight: see _add_scopes
        k = len(nodes)
        readers: dict[str, list[int]] = {}  # a weight's readers: an initializer's, a Constant's
        makers = self._weight_makers
        weights = {name for name, role in roles.items() if role == "initializer"}
        for i, n in enumerate(g.node):
            op, domain = n.op_type, n.domain
            nodes.append((gi, i, n.name, op, domain))
            meta = n.metadata_props
            # a node with no metadata has its name's scope, which the name finds: read if needed
            scopes.append(of_node(n, meta) if meta else None)
            if op in _WEIGHT_MAKERS and not domain and not block_constants:
                block_constants = any(_names_a_block(o) for o in n.output)
            ops.setdefault((domain, op), []).append(k)
            attrs = n.attribute
            if attrs:
                for a in attrs:
                    t = a.type
                    if t in GRAPH_TYPES:
                        continue
                    # a tensor of weights is not serialized to be compared: shared only when small
                    # (an INT's text depends on its op: Cast's `to` names a data type)
                    small = t not in _TENSOR_TYPES or a.ByteSize() <= 512
                    key = (
                        (domain, op, a.SerializeToString())
                        if t == _INT
                        else (a.SerializeToString(),)
                        if small
                        else None
                    )
                    j = keys.get(key) if key else None
                    if j is None:
                        text = attribute_text(a, domain, op)
                        if text is None:
                            continue
                        j = len(self.attr_name)
                        self.attr_name.append(a.name)
                        self.attr_text.append(text)
                        self.attr_word.append("attribute")
                        attr_nodes.append([])
                        if key:
                            keys[key] = j
                    attr_nodes[j].append(k)
            # drawn inside its readers, not a reader: a Constant, a ConstantOfShape of a weight's shape
            makes_weight = not domain and (
                op == "Constant" or (op == "ConstantOfShape" and all(i in weights for i in n.input))
            )
            for name in n.input if not makes_weight else ():
                if name in weights:
                    readers.setdefault(name, []).append(k)
            for out in n.output:
                roles.setdefault(out, "value")
            if makes_weight:  # the wheel's light models make their weights so
                weights.update(n.output)
                makers.add(k)
            k += 1
        first = len(nodes) - len(g.node)
        if not is_fn:
            self._add_small_initializers(g, first)
        self._add_scopes(g, scopes, block_constants)
        tensors.extend(
            (gi, name, role, readers.get(name, []), dtypes.get(name, "")) for name, role in roles.items() if name
        )

    def read_notes(self) -> None:
        """The notes of every node, numbered as the index's walk numbers them, once (a search
        needing them, or a model's warm-up in the background)."""
        with self._notes_lock:
            model, self._notes_of = self._notes_of, None
            if model is None:  # read by the search before this one
                return
            k = 0
            for ref in walk_graphs(model):
                for n in ref.container.node:
                    if n.metadata_props or n.doc_string:
                        self._add_notes(n, k)
                    k += 1
            self.note_text_l = [s.lower() for s in self.note_text]
            del self._note_keys
            self._notes_ready = True

    def _add_notes(self, n: onnx.NodeProto, k: int) -> None:
        """Node `k`'s metadata values and doc string, each distinct text kept once (a torch
        export's nodes of one FX op share their stack trace)."""
        keys, texts, nodes_of = self._note_keys, self.note_text, self.note_nodes
        for p in (*n.metadata_props, None):
            if p is None:  # last, the doc string
                key, value = "doc", n.doc_string
            else:
                key, value = p.key, p.value
                if key in _SKIPPED_NOTES:
                    continue
            if not value:
                continue
            if isinstance(value, bytes) or isinstance(key, bytes):  # upb's invalid UTF-8: text to look in
                key, value = shown(key), shown(value)
            j = keys.get((key, value))
            if j is None:
                j = keys[(key, value)] = len(texts)
                texts.append(value)
                self.note_word.append(_NOTE_KEYS.get(key, key))
                nodes_of.append([k])
            elif nodes_of[j][-1] != k:
                nodes_of[j].append(k)

    def _add_scopes(self, g, scopes: list[int | None], block_constants: bool) -> None:
        """The scopes of the nodes of `g`, the drawing's (graph.py): their own (`scopes`, from
        metadata; those from names are read here only if needed), else the one scope_by_weights
        gives them. That pass needs every node as a dict: only built when a node lacks a scope
        and the graph has a block-named weight."""
        if None in scopes:
            weights = initializer_names(g)
            if block_constants or any(_names_a_block(w) for w in weights):
                of_node = self._scope_table.of_node
                scopes = [of_node(n, n.metadata_props) if s is None else s for n, s in zip(g.node, scopes, strict=True)]
                js = [
                    {
                        "op_type": n.op_type,
                        "domain": n.domain,
                        "name": n.name,
                        "inputs": n.input[:],
                        "outputs": n.output[:],
                        **({} if s is None else {"scope": s}),
                    }
                    for n, s in zip(g.node, scopes, strict=True)
                ]
                scope_by_weights(js, g, self._scope_table)
                scopes = [j.get("scope") for j in js]
        self._node_scope.extend(scopes)

    def _index_scopes(self) -> None:
        """Each scope's levels as written and lower-cased, the text a needle is looked for in
        first (the innermost level, which holds the others when they nest, as torch's do) and
        its nodes — but not those whose name holds the scope (/model/layers.0/MatMul): their
        name finds them, ranked at least as high (SCOPE_MODULE <= NAME_PART)."""
        self.scope_levels = self._scope_table.scopes
        del self._scope_table
        self.scope_levels_l = [[x.lower() for x in levels] for levels in self.scope_levels]
        # the texts that hold every level's: the innermost alone when they nest, else each
        self.scope_held = held = [
            [levels[-1]] if all(levels[-1].startswith(x) for x in levels) else levels for levels in self.scope_levels_l
        ]
        self.scope_text = ["\n".join(texts) for texts in held]
        self.scope_nodes: list[list[int]] = [[] for _ in self.scope_levels]
        by_scope, names = self.scope_nodes, self.node_name_l
        one = [texts[0] if len(texts) == 1 else None for texts in held]
        for k, s in enumerate(self._node_scope):
            if s is not None:
                text = one[s]
                if (text not in names[k]) if text is not None else not all(x in names[k] for x in held[s]):
                    by_scope[s].append(k)
        del self._node_scope

    def _add_small_initializers(self, g: onnx.GraphProto, first: int) -> None:
        """A few-valued initializer's values (a threshold, an axis list), searchable on the
        nodes of `g` reading it (`first`: the index of g's first node among all)."""
        values = {}
        for t in g.initializer:
            few = few_values(t)
            if few is not None:
                values[t.name] = few[0] if not t.dims and few else few
        if not values:
            return
        readers: dict[str, list[int]] = {}
        for i, n in enumerate(g.node):
            for x in dict.fromkeys(n.input):
                if x in values:
                    readers.setdefault(x, []).append(first + i)
        for name, nodes_reading in readers.items():
            v = values[name]
            self.attr_name.append(name)
            self.attr_text.append(
                "[" + ", ".join(format_number(x) for x in v) + "]" if isinstance(v, list) else format_number(v)
            )
            self.attr_word.append("reads")
            self.attr_nodes.append(nodes_reading)

    # -------------------------------------------------------------- searching

    def search(self, query: str, limit: int = DEFAULT_LIMIT, near: str | None = None) -> dict:
        """{"results": [...] best first, at most `limit`, "total", "truncated"}. `near`: the graph
        path on screen; its results come first among results of equal score. A query of several
        words also finds the nodes (and tensors) that each word finds: "layer.7 MatMul"."""
        field, needle = parse_query(query)
        near_gi = next((gi for gi, g in enumerate(self.graphs) if g.path == near), -1) if near is not None else -1
        nodes, tensors, graphs = self._hits(field, needle)
        if not nodes and field is None:  # a node's notes: when nothing else finds one (NODE_NOTE)
            self._note_hits(needle, nodes)
        words = query_words(query)
        if len(words) > 1:
            self._hits_of_every_word(words, nodes, tensors)

        # best score first; at equal score the graph on screen first, then nodes, graphs, tensors
        # in the walk's order
        ng, tg = self.node_graph, self.tensor_graph
        # a Constant or ConstantOfShape making a weight is drawn inside its reader, not as a box:
        # after the boxes of its score (QA28: "pool_proj" listed 120 hidden weight makers first)
        hidden = self._weight_makers
        keys = [(-s, ng[k] != near_gi, int(k in hidden), k, "n") for k, (s, _) in nodes.items()]
        keys += [(-s, gi != near_gi, 2, gi, "g") for gi, s in graphs.items()]
        keys += [(-s, tg[j] != near_gi, 3, j, "t") for j, s in tensors.items()]
        total = len(keys)
        best = heapq.nsmallest(limit, keys) if total > limit else sorted(keys)
        results = [self._result(kind, i, -neg, nodes) for neg, _, _, i, kind in best]
        return {"results": results, "total": total, "truncated": total > len(results)}

    def _hits(
        self, field: str | None, needle: str
    ) -> tuple[dict[int, tuple[int, str]], dict[int, int], dict[int, int]]:
        """What one needle finds: nodes (index -> (score, why), the best reason), tensors and graphs
        (index -> score)."""
        nodes: dict[int, tuple[int, str]] = {}

        def hit(k: int, score: int, why: str) -> None:
            cur = nodes.get(k)
            if cur is None or score > cur[0]:
                nodes[k] = (score, why)

        if field in (None, "op"):
            for (domain, op), ks in self.ops.items():
                score = _op_score(needle, op, domain, field == "op")
                if score:
                    for k in ks:
                        hit(k, score, "op type")
        if field in (None, "name"):
            names = self.node_name_l
            for k in [k for k, s in enumerate(names) if needle in s]:
                hit(k, _text_score(names[k], needle, NAME_EXACT, NAME_PREFIX, NAME_PART), "name")
            self._scope_hits(needle, nodes)
        if field in (None, "attr"):
            self._attribute_hits(needle, field == "attr", hit)
        tensors: dict[int, int] = {}
        if field in (None, "tensor"):
            tn = self.tensor_name_l
            for j in [j for j, s in enumerate(tn) if needle in s]:
                tensors[j] = _text_score(tn[j], needle, TENSOR_EXACT, TENSOR_PREFIX, TENSOR_PART)
                for k in self.tensor_readers[j]:
                    hit(k, WEIGHT_READER, f"reads {self.tensor_name[j]}")
        if field is None:
            for j in [j for j, d in enumerate(self.tensor_dtype_l) if d == needle and j not in tensors]:
                tensors[j] = TENSOR_DTYPE
        graphs: dict[int, int] = {}
        if field in (None, "name"):
            for gi, g in enumerate(self.graphs):
                s = g.name.lower()
                if g.name and needle in s:
                    graphs[gi] = _text_score(s, needle, NAME_EXACT, NAME_PREFIX, NAME_PART)
        return nodes, tensors, graphs

    def _hits_of_every_word(self, words: list[tuple[str | None, str]], nodes: dict, tensors: dict) -> None:
        """Adds the nodes and tensors that every word finds, each ranked by its weakest word (a
        phrase found whole keeps its own rank when that is higher)."""
        found = [self._hits(field, needle) for field, needle in words]
        for (field, needle), (word_nodes, _, _) in zip(words, found, strict=True):
            if field is None:  # each word narrows: its notes count ("modeling_llama.py line 260")
                self._note_hits(needle, word_nodes)
        for k in set.intersection(*(set(f[0]) for f in found)):
            score = min(f[0][k][0] for f in found)
            why = tuple(dict.fromkeys(f[0][k][1] for f in found))  # joined if listed (_why)
            if k not in nodes or score > nodes[k][0]:
                nodes[k] = (score, why)
        for j in set.intersection(*(set(f[1]) for f in found)):
            tensors[j] = max(tensors.get(j, 0), min(f[1][j] for f in found))

    def _note_hits(self, needle: str, nodes: dict) -> None:
        """Adds to `nodes` those whose notes hold `needle`, below any other reason they have."""
        if not self._notes_ready:
            self.read_notes()
        for j in [j for j, text in enumerate(self.note_text_l) if needle in text]:
            why = _NoteHit(j, needle)  # quoted only if listed: "line" is in every stack trace
            for k in self.note_nodes[j]:
                nodes.setdefault(k, (NODE_NOTE, why))

    def _scope_hits(self, needle: str, nodes: dict[int, tuple[int, str]]) -> None:
        """Adds to `nodes` those of the scopes whose path holds `needle`, `why` naming the
        outermost module that does from the part where `needle` starts ("module layers.0" for
        model.layers.0, "module q_proj"): the page lists the groups around a node beside it.
        Inlined hits: "model" finds every node of a torch export."""
        by_scope, levels_of, texts = self.scope_nodes, self.scope_levels_l, self.scope_text
        for s in [s for s, ks in enumerate(by_scope) if ks and needle in texts[s]]:
            levels = levels_of[s]
            at = next((j for j, x in enumerate(levels) if needle in x), None)
            if at is None:  # across two levels' texts
                continue
            if _aligned(levels[-1], needle, at_end=True):
                score = SCOPE_MODULE
            elif any(_aligned(x, needle) for x in self.scope_held[s]):
                score = SCOPE_WITHIN
            else:
                score = SCOPE_PART
            found = (score, f"module {_from_part(self.scope_levels[s][at], levels[at], needle)}")
            for k in by_scope[s]:
                cur = nodes.get(k)
                if cur is None or score > cur[0]:
                    nodes[k] = found

    def _attribute_hits(self, needle: str, names_too: bool, hit) -> None:
        pair = None
        if "=" in needle:
            left, _, right = needle.partition("=")
            if left.strip() and right.strip():
                pair = (left.strip(), right.strip(), _compact(right))
        compact = _compact(needle)
        for j, text in enumerate(self.attr_text_l):
            name = self.attr_name_l[j]
            if pair and name == pair[0] and (pair[1] in text or pair[2] in self.attr_compact[j]):
                score = ATTR_PAIR
            elif needle in text or (compact and compact in self.attr_compact[j]):
                score = ATTR_VALUE_EXACT if text == needle else ATTR_VALUE
            elif name == needle or (names_too and needle in name):
                score = ATTR_NAME
            else:
                continue
            shown = self.attr_text[j]
            why = f"{self.attr_word[j]} {self.attr_name[j]} = {shown if len(shown) <= 60 else shown[:59] + '…'}"
            for k in self.attr_nodes[j]:
                hit(k, score, why)

    def _why(self, why) -> str:
        """A reason in words: as it is, a note quoted where the needle is, several joined."""
        if isinstance(why, tuple):  # a note several words found in: quoted once, at the first
            first: dict[int, _NoteHit] = {}
            for w in why:
                if isinstance(w, _NoteHit) and (w.note not in first or self._at(w) < self._at(first[w.note])):
                    first[w.note] = w
            parts = [first.get(w.note) if isinstance(w, _NoteHit) else w for w in why]
            return " + ".join(dict.fromkeys(self._why(w) for w in parts))
        if isinstance(why, _NoteHit):
            return f"{self.note_word[why.note]}: {_quoted(self.note_text[why.note], self._at(why), len(why.needle))}"
        return why

    def _at(self, hit: _NoteHit) -> int:
        return max(self.note_text_l[hit.note].find(hit.needle), 0)

    def _result(self, kind: str, i: int, score: int, nodes: dict) -> dict:
        if kind == "n":
            g = self.graphs[self.node_graph[i]]
            return {
                "kind": "node",
                "path": g.path,
                "node": node_id(g.path, self.node_index[i]),
                "name": self.node_name[i],
                "op_type": self.node_op[i],
                "domain": self.node_domain[i],
                "breadcrumb": g.crumbs,
                "why": self._why(nodes[i][1]),
                "score": score,
            }
        if kind == "t":
            g = self.graphs[self.tensor_graph[i]]
            role, dtype = self.tensor_role[i], self.tensor_dtype[i]
            return {
                "kind": "tensor",
                "path": g.path,
                "name": self.tensor_name[i],
                "role": role,
                "breadcrumb": g.crumbs,
                "why": f"{role} · {dtype}" if dtype else role,
                "score": score,
            }
        g = self.graphs[i]
        return {
            "kind": g.kind,
            "path": g.path,
            "name": g.name,
            "breadcrumb": g.crumbs,
            "why": f"{g.kind} name",
            "score": score,
        }


def _element_types(g, is_fn: bool) -> dict[str, str]:
    """The element type a graph states for its tensors by name ("FLOAT16"): its initializers'
    data types, then the types its inputs, outputs and value_info declare."""
    out: dict[str, str] = {}

    def put(name: str, dtype: int) -> None:
        if dtype and name not in out:
            out[name] = dtype_name(dtype)

    if not is_fn:
        for t in g.initializer:
            put(t.name, t.data_type)
        for sp in g.sparse_initializer:
            put(sp.values.name, sp.values.data_type)
    declared = [*g.value_info] if is_fn else [*g.input, *g.output, *g.value_info]
    for v in declared:
        if v.type.HasField("tensor_type"):
            put(v.name, v.type.tensor_type.elem_type)
    return out


def _quoted(text: str, at: int, length: int) -> str:
    """What of `text` shows its match at `at`, in NOTE_SHOWN characters: from the start of the
    word or path part holding it (a results list shows ~30 of them: "…LlamaMLP', 'torch.nn…",
    "…modeling_llama.py", line 260, in forward"), its line alone."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at + length)
    line = text[start : end if end >= 0 else len(text)]
    if len(line.strip()) <= NOTE_SHOWN:
        return line.strip()
    at -= start
    lo = max(0, *(line.rfind(c, 0, at) + 1 for c in _QUOTE_STARTS))  # the part holding it
    lo = lo if at - lo <= NOTE_SHOWN // 2 else at
    head = line[:lo].strip()
    shown = line[lo : lo + NOTE_SHOWN].rstrip()
    return ("…" if head else "") + shown + ("…" if lo + NOTE_SHOWN < len(line.rstrip()) else "")


def _names_a_block(name: str) -> bool:
    """A weight's name that may name the block reading it: scopes.scope_by_weights' test (a "/"
    inside, not torch's "/"-led Constant outputs), asked before building what that pass reads."""
    return "/" in name and not name.startswith("/")


def _from_part(level: str, level_l: str, needle: str) -> str:
    """A scope level from the start of the part holding `needle` on: model.layers.0.self_attn
    with "self_attn" or "attn" -> self_attn, with "layers.0.self" -> layers.0.self_attn."""
    at = level_l.find(needle)
    if needle[0] in _SEPARATORS:
        return level[at + 1 :] or level
    return level[max(level_l.rfind(c, 0, at) for c in _SEPARATORS) + 1 :]


def _aligned(text: str, needle: str, at_end: bool = False) -> bool:
    """Does `needle` occur in the scope path `text` as whole parts ("layers.1" in
    model.layers.1.mlp, not in model.layers.10)? `at_end`: as its last parts (q_proj in
    model.layers.0.self_attn.q_proj)."""
    n = len(needle)
    if at_end:
        return text.endswith(needle) and (len(text) == n or text[-n - 1] in _SEPARATORS)
    at = text.find(needle)
    while at >= 0:
        end = at + n
        if (at == 0 or text[at - 1] in _SEPARATORS or needle[0] in _SEPARATORS) and (
            end == len(text) or text[end] in _SEPARATORS or needle[-1] in _SEPARATORS
        ):
            return True
        at = text.find(needle, at + 1)
    return False


def _text_score(text: str, needle: str, exact: int, prefix: int, part: int) -> int:
    return exact if text == needle else prefix if text.startswith(needle) else part


def _op_score(needle: str, op: str, domain: str, parts: bool) -> int:
    o = op.lower()
    q = f"{domain}.{op}".lower() if standard_domain(domain) else None
    if needle in (o, q):
        return OP_EXACT
    if o.startswith(needle) or (q and q.startswith(needle)):
        return OP_PREFIX
    if needle in o or (parts and q and needle in q):
        return OP_PART
    return 0


def parse_query(query) -> tuple[str | None, str]:
    """(field or None, lower-cased needle) from "Conv", "op:Conv", "attr: perm"; refuses an
    empty or overlong query."""
    q = (query or "").strip()
    if not q:
        raise StudioError("missing_query", "give what to find as ?q=<text> (an op type, a name, a tensor, a value)")
    if len(q) > MAX_QUERY:
        raise StudioError("query_too_long", f"the query is {len(q)} characters long; at most {MAX_QUERY} are searched")
    field = None
    head, sep, rest = q.partition(":")
    if sep and head.strip().lower() in FIELDS:
        field, q = head.strip().lower(), rest.strip()
        if not q:
            raise StudioError("missing_query", f"give what to find after {field}:")
    return field, q.lower()


def query_words(query: str) -> list[tuple[str | None, str]]:
    """A query's words, each with its own field: "op:MatMul layer.7" -> [("op", "matmul"),
    (None, "layer.7")]. A field prefix followed by a space narrows the next word."""
    words: list[tuple[str | None, str]] = []
    for field, word in _WORD.findall((query or "").strip()):
        words.append((field.lower() or None, word.lower()))
    return words


def parse_limit(raw) -> int:
    """The `limit` parameter: DEFAULT_LIMIT when absent, else an integer 1..MAX_LIMIT."""
    if raw is None or raw == "":
        return DEFAULT_LIMIT
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_LIMIT:
        raise StudioError("bad_limit", f"limit must be a whole number from 1 to {MAX_LIMIT}, got {raw!r}")
    return int(text)
