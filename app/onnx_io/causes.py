"""onnx's checker and inference messages as causes a person reads: the first real one in one
line naming its node (name or operator and output, and the graph it is in), the rest folded.

Strict inference reports one error per node: the node that is wrong, then "Input 0 expected to
have type but instead is null" for every node downstream of it (~180 lines on a real model).
Those follow from the first: they are folded after the real causes. A node holding subgraphs
(If, Loop, Scan) reports the errors of its bodies nested under its own head, whose reason is
only "Inference error(s):": that head is a wrapper, not a cause, and the nested ones are found
inside its bodies. The checker names only the outermost node ("Bad node spec for node. Name:
loop OpType: Loop") even when the fault is a node of its body: the message's attribute or node
name finds that one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

import onnx

from ..errors import NotFound
from ..words import a_or_an
from .address import named_address, node_id, subgraph_path
from .address import node_words as named_node_words
from .text_fields import shown
from .traverse import node_graphs, op_schema, walk_graphs

# onnx names a failing node as "(op_type:Conv, node name: conv1): [ShapeInferenceError] text",
# a node without a name as "(op_type:Cast): text"
_PART = re.compile(r"\(op_type:([^,)]*)(?:, node name: ([^)]*))?\):\s*")
_TAG = re.compile(r"^\s*(?:\[[A-Za-z]+\]\s*)+")
_CONSEQUENCE = "expected to have type but instead is null"
_WRAPPER = {"", "Inference error(s):"}  # the reason of a node whose bodies' errors follow
# the checker's context line: the node it was checking (the outermost one, for a body's node)
_CONTEXT = re.compile(r"==> Context: Bad node spec for node\. Name: (.*?) OpType: (\S+)")
_ELEM = re.compile(r"Inferred elem type differs from existing elem type: \((\w+)\) vs \((\w+)\)")
_RANK = re.compile(r"Inferred shape and existing shape differ in rank: \((\d+)\) vs \((\d+)\)")
_DIM = re.compile(r"Inferred shape and existing shape differ in dimension (\d+): \((\d+)\) vs \((\d+)\)")
_MISMATCH = re.compile(r"source=(\d+)(;?) target=(\d+)")


@dataclass
class Causes:
    first: str  # one line
    more: list[str] = field(default_factory=list)  # the other causes, one line each
    at: tuple[str, int] | None = None  # the first cause's node: its graph's path and its index there

    def line(self) -> str:
        """The first cause, with how many more there are."""
        return self.first if not self.more else f"{self.first} (+{len(self.more)} more)"


@dataclass(frozen=True)
class _Place:
    """A node found in the model: its graph's positional path, its index there, the node."""

    path: str
    index: int
    node: onnx.NodeProto

    @property
    def nid(self) -> str:
        return node_id(self.path, self.index)


class _Nodes:
    """The model's nodes by (operator, name), each with where it is; built on first need."""

    def __init__(self, model: onnx.ModelProto | None):
        self.model = model
        self._index: dict[tuple[str, str], list[_Place]] | None = None
        self._containers: dict[str, object] = {}

    def index(self) -> dict[tuple[str, str], list[_Place]]:
        if self._index is None:
            self._index = {}
            for ref in walk_graphs(self.model) if self.model is not None else []:
                self._containers[ref.path] = ref.container
                for i, n in enumerate(ref.container.node):
                    self._index.setdefault((n.op_type, n.name), []).append(_Place(ref.path, i, n))
        return self._index

    def container(self, path: str):
        self.index()
        return self._containers.get(path)

    def matches(self, op_type: str, name: str, within: str | None) -> list[_Place]:
        """The nodes of that operator and name in the bodies of node `within` (a node id) at any
        depth, or with within None those of the main graph (else of any graph)."""
        places = self.index().get((op_type, name), [])
        if within is not None:
            return [p for p in places if p.path.startswith(within + "/")]
        return [p for p in places if p.path == ""] or places

    def find(self, op_type: str, name: str, within: str | None) -> _Place | None:
        """The one node matches() gives, None when none or several fit."""
        places = self.matches(op_type, name, within)
        return places[0] if len(places) == 1 else None

    def inside(self, holder: _Place) -> list[_Place]:
        """Every node in the bodies of `holder`, at any depth."""
        prefix = holder.nid + "/"
        return [p for places in self.index().values() for p in places if p.path.startswith(prefix)]


def graph_words(model: onnx.ModelProto | None, path: str) -> str:
    """How people are told which graph: "the main graph", or its path with nodes by name
    ("branch/else_branch": the else_branch of the node named branch; "n3/body" without a name)."""
    if not path:
        return "the main graph"
    try:
        named = named_address(model, path) if model is not None else path
    except NotFound:  # an address the model no longer has: its positional form
        named = path
    words = "/".join(unquote(seg[1:]) if seg.startswith("@") else seg for seg in named.split("/"))
    # a model function by its name ("function GELU", "function GELU/n2/then_branch"), not fn[1]
    first, _, rest = words.partition("/")
    k = _function_index(first)
    if model is not None and k is not None and k < len(model.functions):
        return f"function {shown(model.functions[k].name)}" + (f"/{rest}" if rest else "")
    return words


def _function_index(segment: str) -> int | None:
    if segment.startswith("fn[") and segment.endswith("]") and segment[3:-1].isdigit():
        return int(segment[3:-1])
    return None


def _place_words(model, place: _Place) -> str:
    node = place.node
    if node.name:
        who = named_node_words(node.name, node.op_type)
    else:
        written = next((x for x in node.output if x), None)
        who = f"the {node.op_type} node writing {written!r}" if written else f"{a_or_an(node.op_type)} node"
    return f"{who} in {graph_words(model, place.path)}"


def _node_words(model, op_type: str, name: str) -> str:
    """A node named by a message (operator, name): with its graph where exactly one node fits."""
    place = _Nodes(model).find(op_type, name, None) if model is not None and name else None
    return _place_words(model, place) if place is not None else named_node_words(name, op_type)


def _type_name(code: str) -> str:
    """An element type as onnx's enum names it (FLOAT16), whether onnx wrote its number or name."""
    if code.isdigit():
        try:
            return onnx.TensorProto.DataType.Name(int(code))
        except ValueError:
            return code
    return code


def _said(reason: str, place: _Place | None) -> str:
    """onnx's reason with element types by name, and what it compares made plain where the
    node's output it is about is known ("'probs' is inferred FLOAT16 but declared FLOAT")."""
    outs = [x for x in place.node.output if x] if place is not None else []
    what = f"its output {outs[0]!r}" if len(outs) == 1 else "an output"
    if m := _ELEM.search(reason):
        inferred, declared = _type_name(m.group(1)), _type_name(m.group(2))
        return reason[: m.start()] + f"{what} is inferred {inferred} but declared {declared}" + reason[m.end() :]
    if m := _RANK.search(reason):
        return reason[: m.start()] + f"{what} is inferred of rank {m.group(1)} but declared of rank {m.group(2)}"
    if m := _DIM.search(reason):
        k, inferred, declared = m.groups()
        return reason[: m.start()] + f"{what} is inferred with dim {k} = {inferred} but declared {declared}"
    if m := _MISMATCH.search(reason):
        source, target = _type_name(m.group(1)), _type_name(m.group(3))
        return reason[: m.start()] + f"source={source}{m.group(2)} target={target}" + reason[m.end() :]
    return reason


def causes_of(message: str, model: onnx.ModelProto | None = None) -> Causes:
    """Split an onnx checker/inference message into causes, the real ones first."""
    text = str(message or "")
    heads = list(_PART.finditer(text))
    if not heads:
        return _checker_causes(text, _Nodes(model))
    nodes = _Nodes(model)
    found = []  # (place or None, op_type, name, reason, is_wrapper)
    alike: dict[tuple[str, str], list[_Place]] = {}  # the nodes a name fits when it fits several
    within: list[str] = []  # the node ids whose bodies' errors are being listed, innermost last
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        reason = _TAG.sub("", " ".join(text[m.end() : end].split()))
        op_type, name = m.group(1).strip(), (m.group(2) or "").strip()
        place = None
        if model is not None:
            while within and not nodes.matches(op_type, name, within[-1]):
                within.pop()  # no such node in that node's bodies: its list has ended
            fits = _by_value(nodes.matches(op_type, name, within[-1] if within else None), reason)
            place = fits[0] if len(fits) == 1 else None
            if len(fits) > 1:
                alike[(op_type, name)] = fits
        wrapper = reason in _WRAPPER and i + 1 < len(heads)
        if wrapper and place is not None:
            within.append(place.nid)
        found.append((place, op_type, name, reason, wrapper))
    causes = [c for c in found if not c[4]] or found
    real = [c for c in causes if _CONSEQUENCE not in c[3]] or causes
    follow = [c for c in causes if c not in real]
    if real[0][0] is not None:
        # a consequence follows in the graph of its cause: of a name both branches bear, the
        # node in the first cause's branch (QA32 N7: "in A or B" where the first line said which)
        here = real[0][0].path
        for place, op, name, _, _ in follow:
            near = [p for p in alike.get((op, name), []) if p.path == here]
            if place is None and len(near) == 1:
                alike[(op, name)] = near
    lines = [
        f"{_words(model, place, op, name, alike.get((op, name), []))}: {_said(reason, place)}"
        for place, op, name, reason, _ in real + follow
    ]
    first = real[0][0]
    return Causes(lines[0], lines[1:], (first.path, first.index) if first is not None else None)


# onnx's words for an attribute out of its range: "'axis' must be in [-4 , 3]. Its actual value is: 7"
_ATTRIBUTE_VALUE = re.compile(r"'(\w+)'.*?actual value is:\s*(-?\d+)")


def _by_value(places: list[_Place], reason: str) -> list[_Place]:
    """Of nodes bearing one name, those whose attribute has the value the message quotes (the
    one edited, of two branches' alike nodes), when that tells them apart."""
    m = _ATTRIBUTE_VALUE.search(reason)
    if len(places) < 2 or not m:
        return places
    name, value = m.group(1), int(m.group(2))
    having = [
        p
        for p in places
        if any(a.name == name and a.type == onnx.AttributeProto.INT and a.i == value for a in p.node.attribute)
    ]
    return having or places


def _words(model, place: _Place | None, op_type: str, name: str, alike: list[_Place]) -> str:
    """The node a message names; one whose name several nodes bear (a merged decoder's two
    branches repeat every name: QA31) with the graphs it may be in."""
    if place is not None:
        return _place_words(model, place)
    if len(alike) == 1:
        return _place_words(model, alike[0])
    graphs = list(dict.fromkeys(graph_words(model, p.path) for p in alike))
    where = f" in {' or '.join(graphs)}" if 1 < len(graphs) <= 3 else ""
    return named_node_words(name, op_type) + where


# the checker's words for a node reading a name nothing before it writes (a Constant a branch
# read deleted, a node moved before its producer): said of the name (QA20 F17)
_UNSORTED = re.compile(
    r"Nodes in a graph must be topologically sorted, however input '([^']*)' of node:"
    r"(?:\s*name:\s*(.*?)\s+OpType:\s*(\S+))?.*?"
    r"is not output of any previous nodes\.?",
    re.S,
)


def _plain_checker(sentence: str, named: bool = False) -> str:
    """`named`: the words before it name the node already ("node "add" (Add) in …: it reads")."""
    if m := _UNSORTED.search(sentence):
        # the reader named (QA28: "it reads 'r61'" after deleting a Dropout named no Conv)
        name, op = m.group(2), m.group(3)
        who = "it" if named or not op else named_node_words(name, op)
        return (
            sentence[: m.start()]
            + f"{who} reads {m.group(1)!r}, which nothing before it writes (no node, input or initializer of its"
            " graph or of a graph around it)" + sentence[m.end() :]
        )
    return sentence


def _checker_causes(text: str, nodes: _Nodes) -> Causes:
    """The checker's message: its first line, said of the node it is about (the node of a body
    its words point to, rather than the If or Loop holding it), the context line dropped."""
    lines = _sentences([ln.strip() for ln in text.strip().splitlines() if ln.strip()])
    if not lines:
        return Causes("onnx refused the model")
    context = next((m for ln in lines if (m := _CONTEXT.search(ln))), None)
    if context is None or nodes.model is None:
        return Causes(_plain_checker(lines[0]), [_plain_checker(ln) for ln in lines[1:]])
    first = lines[0]
    rest = [_plain_checker(ln) for ln in lines[1:] if not _CONTEXT.search(ln)]
    holder = nodes.find(context.group(2), context.group(1).strip(), None)
    if holder is None:
        return Causes(
            f"{named_node_words(context.group(1).strip(), context.group(2))}: {_plain_checker(first, True)}", rest
        )
    culprit = _culprit(first, holder, nodes)  # found by the checker's own words
    said = _plain_checker(first, True)
    if isinstance(culprit, str):  # a body itself (its outputs), not a node of it
        return Causes(f"graph {graph_words(nodes.model, culprit)}: {said}", rest)
    place = culprit or holder
    return Causes(f"{_place_words(nodes.model, place)}: {said}", rest, (place.path, place.index))


def _sentences(lines: list[str]) -> list[str]:
    """The checker's lines with a sentence it broke across lines put back together ("input 't'
    of node:" / "Name: OpType: Mul" / "is neither output of ..."): its first line alone named
    no node and said nothing of what was wrong."""
    out: list[str] = []
    for ln in lines:
        # after a colon, and a line going on in lower case ("is neither output of ..."), is the same sentence
        if out and (out[-1].endswith(":") or ln[:1].islower()) and not _CONTEXT.search(ln):
            out[-1] = f"{out[-1]} {ln}"
        else:
            out.append(ln)
    return out


_ATTR = re.compile(r"[Aa]ttribute:? '?([A-Za-z_]\w*)'?")
_OPERATOR = re.compile(r"for operator (\w+)")
_NAMED_NODE = re.compile(r"[Nn]ode \(([^)]*)\)|name: (\S*) OpType: (\S+)")
_GRAPH_OUTPUT = re.compile(r"Graph output '([^']*)'")


def _culprit(line: str, holder: _Place, nodes: _Nodes) -> _Place | str | None:
    """The node (or a body's path, for a body's own fault) in holder's bodies the checker's
    `line` is about, when its words point to exactly one; None: the holder itself, or unknown."""
    inner = nodes.inside(holder)
    if not inner:
        return None
    fits = None
    if m := _ATTR.search(line):
        attr = m.group(1)
        if "missing" in line:
            fits = lambda p: _requires(nodes, p, attr) and not any(a.name == attr for a in p.node.attribute)  # noqa: E731
        else:
            fits = lambda p: any(a.name == attr for a in p.node.attribute)  # noqa: E731
        if fits(holder):
            return None
        if op := _OPERATOR.search(line):
            only = fits
            fits = lambda p: only(p) and p.node.op_type == op.group(1)  # noqa: E731
    elif m := _NAMED_NODE.search(line):
        name = m.group(1) if m.group(1) is not None else m.group(2)
        fits = lambda p: p.node.name == name and (m.group(3) is None or p.node.op_type == m.group(3))  # noqa: E731
    elif m := _GRAPH_OUTPUT.search(line):
        bodies = {p.path for p in inner} | _empty_bodies(holder)
        giving = [path for path in bodies if any(v.name == m.group(1) for v in nodes.container(path).output)]
        return giving[0] if len(giving) == 1 else None
    hits = [p for p in inner if fits(p)] if fits is not None else []
    return hits[0] if len(hits) == 1 else None


def _empty_bodies(holder: _Place) -> set[str]:
    """The paths of holder's own bodies (a branch with no node is found by no node in it)."""
    return {subgraph_path(holder.nid, attr, item) for attr, item, _ in node_graphs(holder.node)}


def _requires(nodes: _Nodes, place: _Place, attr: str) -> bool:
    schema = op_schema(nodes.model, nodes.container(place.path), place.node) if nodes.model is not None else None
    return schema is not None and attr in schema.attributes and schema.attributes[attr].required
