"""The text form of a model: onnx.printer's ONNX text, completed where the parser reads more.

onnx.printer (1.23) prints a function's attribute names but not their defaults
(FunctionProto.attribute_proto), nor its doc_string or value_info: the text then reads `@beta`
in a body whose header never declares beta, and parsed again it is another, broken model. The
parser reads all three (`F <a, b: float = 0.5> (X) => (Y) <float[N] T> {...}`, `doc_string:` in
the header), so each function's text is completed from the proto.

What the text syntax has no place for is named, counted, in a comment at the top, so a text
edited and uploaded again is known to lack it (left_out): training graphs and their bindings,
sparse initializers, device configurations (the model's, and nodes' sharding), quantization
annotations, doc strings and metadata of nodes, graphs, values, tensors and attributes, type
denotations, tensor segments, a function's metadata, and the values of attributes holding lists
of tensors, graphs or types (printed, but the parser reads such lists empty). What the printer
writes in a form the parser refuses is said in a first comment line (not_parsed): a sparse tensor
attribute (a Constant's sparse_value) prints empty, a tensor of int4, complex64 and a few other
element types prints as `...`, an initializer without a name has nothing to be declared by; any
other text the parser refuses is said with the parser's own words. Found by printing models that
hold each field of ModelProto and comparing onnx.parser's reading of the text with them."""

from __future__ import annotations

import functools
import re
from collections import Counter

import onnx
from onnx import helper

from .traverse import walk_graphs

_A = onnx.AttributeProto
_LISTS = {_A.TENSORS: "tensors", _A.GRAPHS: "graphs", _A.TYPE_PROTOS: "type_protos"}
_SPARSE = (_A.SPARSE_TENSOR, _A.SPARSE_TENSORS)
_TOP_LEFT_OUT = "# Not in this text (ONNX text has no syntax for them): "
_TOP_NOT_PARSED = "# This text does not parse back: "


def model_text(model: onnx.ModelProto) -> str:
    """onnx.printer's text of `model`, its functions with their defaults, doc strings and
    value_info, after comments naming what the text leaves out and, when the parser would refuse
    the text, why."""
    missing = left_out(model)
    head = f"{_TOP_LEFT_OUT}{'; '.join(missing)}.\n" if missing else ""
    body = _printed(model)
    broken = not_parsed(model)
    if not broken:  # what the known causes miss: the parser's own words, at the text's own lines
        broken = _parse_problem("#\n" + head + body)
    top = f"{_TOP_NOT_PARSED}{'; '.join(broken)}.\n" if broken else ""
    return top + head + body


def _printed(model: onnx.ModelProto) -> str:
    if not any(f.attribute_proto or f.doc_string or f.value_info for f in model.functions):
        return onnx.printer.to_text(model)
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.functions[:]
    parts = [onnx.printer.to_text(bare).rstrip("\n")]
    parts += [function_text(f).rstrip("\n") for f in model.functions]
    return "\n".join(parts) + "\n"


def _printed_graphs(model: onnx.ModelProto):
    """The graphs and functions the text prints (training graphs it doesn't)."""
    return (ref.container for ref in walk_graphs(model) if not ref.path.startswith("train"))


def left_out(model: onnx.ModelProto) -> list[str]:
    """What of `model` its ONNX text can't hold, in words ("doc strings of 3 nodes")."""
    c: Counter[str] = Counter()
    for g in _printed_graphs(model):
        for n in g.node:
            c["node doc"] += bool(n.doc_string)
            c["node meta"] += bool(n.metadata_props)
            c["node devices"] += bool(n.device_configurations)
            for a in n.attribute:
                _tally_attribute(a, c)
        for v in g.value_info:
            _tally_value(v, c)
        if isinstance(g, onnx.GraphProto):
            c["graph doc"] += bool(g.doc_string)
            c["graph meta"] += bool(g.metadata_props)
            c["sparse"] += len(g.sparse_initializer)
            c["annotations"] += len(g.quantization_annotation)
            for v in (*g.input, *g.output):
                _tally_value(v, c)
            for t in g.initializer:
                _tally_tensor(t, c)
        else:  # a function: its attributes' defaults
            for a in g.attribute_proto:
                _tally_attribute(a, c)
    fn_meta = [f.name for f in model.functions if f.metadata_props]
    lists = [f"{n} attribute{_s(n)} of type {kind}" for kind, n in c.items() if kind in _LISTS.values()]
    said = [
        _training(model),
        _count(c["sparse"], "sparse initializer"),
        f"the model's {_count(len(model.configuration), 'device configuration')}" if model.configuration else "",
        _of(c["node devices"], "device configurations", "node"),
        _count(c["annotations"], "quantization annotation"),
        _of(c["node doc"], "doc strings", "node"),
        _of(c["node meta"], "metadata", "node"),
        _of(c["graph doc"], "doc strings", "graph"),
        _of(c["graph meta"], "metadata", "graph"),
        _of(c["value doc"], "doc strings", "value"),
        _of(c["value meta"], "metadata", "value"),
        _of(c["denoted"], "denotations", "type"),
        _of(c["tensor doc"], "doc strings", "tensor"),
        _of(c["tensor meta"], "metadata", "tensor"),
        _of(c["segment"], "segments", "tensor"),
        _of(c["attribute doc"], "doc strings", "attribute"),
        f"values of {', '.join(lists)} (the parser reads such lists empty)" if lists else "",
        f"metadata of function{'s' if len(fn_meta) > 1 else ''} {', '.join(fn_meta)}" if fn_meta else "",
    ]
    return [s for s in said if s]


def not_parsed(model: onnx.ModelProto) -> list[str]:
    """What of `model` onnx.printer writes in a form onnx.parser refuses, in words."""
    constants = other_sparse = unnamed = 0
    odd: Counter[str] = Counter()
    for g in _printed_graphs(model):
        attributes = [a for n in g.node for a in n.attribute]
        for n in g.node:
            for a in n.attribute:
                if a.type in _SPARSE and n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
                    constants += 1
                elif a.type in _SPARSE:
                    other_sparse += 1
        tensors = [t for a in attributes for t in _attribute_tensors(a)]
        if isinstance(g, onnx.GraphProto):
            unnamed += sum(1 for t in g.initializer if not t.name)
            tensors += g.initializer
        else:
            other_sparse += sum(1 for a in g.attribute_proto if a.type in _SPARSE)
            tensors += [t for a in g.attribute_proto for t in _attribute_tensors(a)]
        for t in tensors:
            if t.data_location != onnx.TensorProto.EXTERNAL and t.data_type in _printed_as_dots(t.HasField("raw_data")):
                odd[onnx.TensorProto.DataType.Name(t.data_type).lower()] += 1
    n_odd = sum(odd.values())
    said = [
        f"sparse values of {_count(constants, 'Constant node')}, printed empty" if constants else "",
        f"sparse tensors of {_count(other_sparse, 'attribute')}, printed empty" if other_sparse else "",
        f'values of {n_odd} {"/".join(sorted(odd))} tensor{_s(n_odd)}, printed as "..."' if odd else "",
        _count(unnamed, "initializer") + " without a name" if unnamed else "",
    ]
    return [s for s in said if s]


def _parse_problem(text: str) -> list[str]:
    """[] when onnx.parser reads `text`, else its complaint on one line."""
    try:
        onnx.parser.parse_model(text)
    except Exception as exc:
        words = str(exc).replace("\\n", "\n")
        at = re.search(r"line: (\d+) column: (\d+)", words)
        last = [x.strip() for x in words.strip("'\" \n").split("\n") if x.strip()][-1:] or ["(no message)"]
        where = f"at line {at.group(1)}, column {at.group(2)}: " if at else ""
        return [f"onnx.parser stops {where}{last[0][:200].rstrip('.')}"]
    return []


@functools.cache
def _printed_as_dots(raw: bool) -> frozenset[int]:
    """The element types whose values onnx.printer writes as `...` (which the parser refuses),
    from raw_data or from the typed fields: asked of the installed printer, once."""
    dots = set()
    for dt in onnx.TensorProto.DataType.values():
        t = onnx.TensorProto(data_type=dt, dims=[0], name="t")
        if raw:
            t.raw_data = b""
        if "..." in onnx.printer.to_text(helper.make_graph([], "g", [], [], [t])):
            dots.add(dt)
    return frozenset(dots)


def _attribute_tensors(a: onnx.AttributeProto) -> list[onnx.TensorProto]:
    return ([a.t] if a.HasField("t") else []) + list(a.tensors)


def _tally_attribute(a: onnx.AttributeProto, c: Counter[str]) -> None:
    c["attribute doc"] += bool(a.doc_string)
    if a.type in _LISTS and (a.tensors or a.graphs or a.type_protos):
        c[_LISTS[a.type]] += 1
    for t in _attribute_tensors(a):
        _tally_tensor(t, c)
    types = ([a.tp] if a.HasField("tp") else []) + list(a.type_protos)
    c["denoted"] += sum(1 for tp in types if _denoted(tp))


def _tally_value(v: onnx.ValueInfoProto, c: Counter[str]) -> None:
    c["value doc"] += bool(v.doc_string)
    c["value meta"] += bool(v.metadata_props)
    c["denoted"] += _denoted(v.type)


def _tally_tensor(t: onnx.TensorProto, c: Counter[str]) -> None:
    c["tensor doc"] += bool(t.doc_string)
    c["tensor meta"] += bool(t.metadata_props)
    c["segment"] += t.HasField("segment")


def _denoted(tp: onnx.TypeProto) -> bool:
    """Does the type, or a type or dimension within it, carry a denotation (the text has none)?"""
    if tp.denotation:
        return True
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        return any(d.denotation for d in getattr(tp, kind).shape.dim)
    if kind in ("sequence_type", "optional_type"):
        return _denoted(getattr(tp, kind).elem_type)
    if kind == "map_type":
        return _denoted(tp.map_type.value_type)
    return False


def _training(model: onnx.ModelProto) -> str:
    if not model.training_info:
        return ""
    graphs = sum(t.HasField("initialization") + t.HasField("algorithm") for t in model.training_info)
    bindings = sum(len(t.initialization_binding) + len(t.update_binding) for t in model.training_info)
    if not graphs:
        return _count(len(model.training_info), "empty training_info entry", "empty training_info entries")
    their = "its" if graphs == 1 else "their"
    return _count(graphs, "training graph") + (f" and {their} {_count(bindings, 'binding')}" if bindings else "")


def _s(n: int) -> str:
    return "s" if n != 1 else ""


def _count(n: int, one: str, many: str = "") -> str:
    """ "3 things", "1 thing"; "" for none."""
    return f"{n} {one if n == 1 else (many or one + 's')}" if n else ""


def _of(n: int, what: str, holder: str) -> str:
    return f"{what} of {_count(n, holder)}" if n else ""


def function_text(f: onnx.FunctionProto) -> str:
    text = onnx.printer.to_text(f)
    if not (f.attribute_proto or f.doc_string or f.value_info):
        return text
    lines = text.split("\n")
    close = lines.index(">")  # the header's end: the signature follows
    if f.doc_string:
        lines[close - 1] += ","
        lines.insert(close, f"  doc_string: {_quoted(f.doc_string)}")
        close += 1
    signature = lines[close + 1]
    names = [*f.attribute, *(_attribute_text(a) for a in f.attribute_proto)]
    attrs = f"<{', '.join(names)}>" if names else ""
    # printed as `Name <a, b>(X) => (Y)` or `Name (X) => (Y)`: attribute names hold no '>'
    signature = re.sub(
        r"^(\S+) ?(?:<[^>]*>)?(?=\()",
        lambda m: f"{m.group(1)} {attrs}" if attrs else f"{m.group(1)} ",
        signature,
        count=1,
    )
    if f.value_info:
        signature += " " + _value_info_text(f.value_info)
    lines[close + 1] = signature
    return "\n".join(lines)


def _quoted(s: str) -> str:
    # the parser takes the character after a backslash as it is; newlines may stand in a string
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _attribute_text(a: onnx.AttributeProto) -> str:
    """`name: type = value` as the printer writes a node's attribute."""
    node = onnx.NodeProto(op_type="Holder")
    node.attribute.append(a)
    text = onnx.printer.to_text(helper.make_graph([node], "g", [], []))
    line = next(x for x in text.split("\n") if "Holder <" in x)
    return line[line.index("Holder <") + len("Holder <") : line.rindex("> ()")]


def _value_info_text(values) -> str:
    """`<float[N,4] M, ...>` as the printer writes a graph's value_info."""
    text = onnx.printer.to_text(helper.make_graph([], "g", [], [], value_info=list(values)))
    line = next(x.strip() for x in text.split("\n") if x.strip().startswith("<"))
    return line
