"""The text form of a model: onnx.printer's ONNX text, completed where the parser reads more.

onnx.printer (1.23) prints a function's attribute names but not their defaults
(FunctionProto.attribute_proto), nor its doc_string or value_info: the text then reads `@beta`
in a body whose header never declares beta, and parsed again it is another, broken model. The
parser reads all three (`F <a, b: float = 0.5> (X) => (Y) <float[N] T> {...}`, `doc_string:` in
the header), so each function's text is completed from the proto. What the text syntax has no
place for (doc strings and metadata of nodes and graphs, a function's metadata) is named in a
comment at the top, so a text edited and uploaded again is known to lack them."""

from __future__ import annotations

import re

import onnx
from onnx import helper

from .traverse import walk_graphs


def model_text(model: onnx.ModelProto) -> str:
    """onnx.printer's text of `model`, its functions with their defaults, doc strings and
    value_info, after a comment naming what the text leaves out."""
    missing = left_out(model)
    head = f"# Not in this text (ONNX text has no syntax for them): {'; '.join(missing)}.\n" if missing else ""
    if not any(f.attribute_proto or f.doc_string or f.value_info for f in model.functions):
        return head + onnx.printer.to_text(model)
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.functions[:]
    parts = [onnx.printer.to_text(bare).rstrip("\n")]
    parts += [function_text(f).rstrip("\n") for f in model.functions]
    return head + "\n".join(parts) + "\n"


def left_out(model: onnx.ModelProto) -> list[str]:
    """What of `model` its ONNX text can't hold, in words ("doc strings of 3 nodes")."""
    node_docs = node_meta = graph_docs = graph_meta = 0
    for ref in walk_graphs(model):
        g = ref.container
        node_docs += sum(1 for n in g.node if n.doc_string)
        node_meta += sum(1 for n in g.node if n.metadata_props)
        if isinstance(g, onnx.GraphProto):
            graph_docs += bool(g.doc_string)
            graph_meta += bool(g.metadata_props)
    fn_meta = [f.name for f in model.functions if f.metadata_props]
    said = [
        _of(node_docs, "doc strings", "node"),
        _of(node_meta, "metadata", "node"),
        _of(graph_docs, "doc strings", "graph"),
        _of(graph_meta, "metadata", "graph"),
        f"metadata of function{'s' if len(fn_meta) > 1 else ''} {', '.join(fn_meta)}" if fn_meta else "",
    ]
    return [s for s in said if s]


def _of(n: int, what: str, holder: str) -> str:
    return f"{what} of {n} {holder}{'s' if n > 1 else ''}" if n else ""


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
