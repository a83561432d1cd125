"""What onnx's version converter keeps and the new opset has no room for: an attribute the
operator's schema at the target opset doesn't define. Its 18 → 17 adapter for ReduceMean (and
ReduceMax, ReduceProd, …) moves `axes` from an input to an attribute but keeps
`noop_with_empty_axes`, which torch's dynamo exporter writes (at its default, 0) on every such
node; the checker then refuses the converted model. At the default the source opset gives it,
leaving it out computes the same: it is dropped. At another value it is refused, by name."""

from __future__ import annotations

from collections import Counter

from onnx import defs

from ..errors import StudioError
from ..onnx_io.schema_defaults import at_default, default_of, value_words
from ..onnx_io.traverse import graphs_within, standard_domain

# (attribute, its value in words) -> how many nodes of each operator it was dropped from
Dropped = dict[tuple[str, str], Counter[str]]


def drop_unknown_defaults(container, source: int, target: int, where: str = "") -> Dropped:
    """In `container` (a graph or a function body, and the graphs its nodes hold), converted from
    ai.onnx opset `source` to `target`: drop from each ai.onnx node every attribute its operator
    at `target` doesn't define that holds the default its operator at `source` gives it. What is
    dropped, counted; StudioError (422) for such an attribute at another value (leaving it out
    would change what the node computes). `where`: " in function F", for the message. An
    attribute neither schema defines, one without a default, a reference to a function's
    attribute: left as they are (the checker says what it says of them)."""
    dropped: Dropped = {}
    for g in graphs_within(container):
        for n in g.node:
            if not n.attribute or standard_domain(n.domain) != "":
                continue
            new, old = _schema(n.op_type, target), _schema(n.op_type, source)
            if new is None or old is None:
                continue
            for k in reversed(range(len(n.attribute))):
                a = n.attribute[k]
                if a.name in new.attributes or a.name not in old.attributes or a.ref_attr_name:
                    continue
                default = default_of(old, a.name)
                if default is None:
                    continue
                if not at_default(a, default):
                    raise StudioError(
                        "conversion_failed",
                        f"convert_opset: opset {source} -> {target} is not possible: node {_label(n)}"
                        f" ({n.op_type}){where} sets"
                        f" {a.name} = {value_words(a)}, which {n.op_type} at opset {target} doesn't have;"
                        f" only its default ({value_words(default)}) can be left out without changing"
                        " what the node computes",
                        422,
                    )
                dropped.setdefault((a.name, value_words(a)), Counter())[n.op_type] += 1
                del n.attribute[k]
    return dropped


def merged(a: Dropped, b: Dropped) -> Dropped:
    """Two counts of what was dropped, as one."""
    out = {key: Counter(ops) for key, ops in a.items()}
    for key, ops in b.items():
        out.setdefault(key, Counter()).update(ops)
    return out


def dropped_words(dropped: Dropped, target: int) -> str:
    """ "; dropped what opset 17 doesn't define, each at its default: noop_with_empty_axes = 0
    (2 ReduceMean, 1 ReduceMax)", or "" when nothing was."""
    if not dropped:
        return ""
    parts = [
        f"{name} = {value} ({', '.join(f'{count} {op}' for op, count in ops.most_common())})"
        for (name, value), ops in dropped.items()
    ]
    return f"; dropped what opset {target} doesn't define, each at its default: {', '.join(parts)}"


def _label(n) -> str:
    if n.name:
        return repr(n.name)
    return f"writing {n.output[0]!r}" if n.output and n.output[0] else "(unnamed)"


def _schema(op_type: str, version: int) -> defs.OpSchema | None:
    try:
        return defs.get_schema(op_type, version, "")
    except defs.SchemaError:
        return None
