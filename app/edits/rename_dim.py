"""rename_dim: a symbolic dim renamed in every declaration of a graph and the bodies it holds
(QA29 F9: "seq" renamed on one input left the other inputs, the outputs and value_info saying
"seq", one size under two names: the Run and Costs panels then asked for both)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import onnx

from ..errors import StudioError
from ..onnx_io.dim_names import evaluate, expression_names
from ..onnx_io.traverse import graphs_within
from ..words import closest, plural, some_names
from .bodies import graph_at, where
from .field_types import BODY_PATH, BOOLEAN, NAME
from .graph_io import DIM_PARAM
from .jsontypes import optional, required
from .registry import edit_op
from .stale_value_info import graphs_of

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@edit_op(
    "rename_dim",
    required("from", NAME, 'the symbolic dim\'s name ("seq")'),
    required("to", NAME, 'its new name ("sequence_length")'),
    optional(
        "graph",
        BODY_PATH,
        'the graph: the main graph with every body in it, or a body ("n3/body") with those in it',
        default="",
    ),
    optional(
        "merge",
        BOOLEAN,
        "allow a `to` the model already names: the two dims become one, of one size",
        False,
    ),
)
def rename_dim(model: onnx.ModelProto, op: dict) -> str:
    """Rename a symbolic dim (a dim_param) in every declaration of the graph that gives it —
    its inputs, outputs and value_info — and of the bodies inside it at any depth (If branches,
    Loop and Scan bodies: within one model a dim's name is one size, and a body's values carry
    the names of the graph around it), in an expression of dims ("past_seq + seq") too. Model
    functions and training graphs keep theirs; node attributes stay (a Reshape's hard-coded
    size is no name). Refused for a name no declaration there gives (the closest one said), for
    the same name, and for a `to` the model already names unless `merge` is true: two names say
    two sizes that may differ, renaming one to the other says they can't."""
    old, new = op["from"], op["to"]
    ref = graph_at(model, op["graph"], "rename_dim")
    if not DIM_PARAM.match(new):
        raise StudioError(
            "bad_value",
            f'rename_dim: "to" must be a dim name like "sequence_length" (a letter or _ first); got {new!r}',
        )
    if old == new:
        raise StudioError("bad_value", "rename_dim: from and to are the same name")
    texts = {t for r in graphs_of(model) for t in _texts(r.container)}
    # a text is an expression of dims only when each name in it is a dim of its own ("batch-size" is one name)
    plain = {t for t in texts if t.isidentifier() or evaluate(t, lambda _n: 1) is None}
    here = list(graphs_within(ref.container))
    named = {n for g in here for t in _texts(g) for n in (t, *(expression_names(t, plain) or []))}
    if old not in named:
        raise StudioError(
            "unknown_dim",
            f"rename_dim: no input, output or value_info of {where(model, ref)} names a dim {old!r}"
            + (
                closest(old, named)
                or (f" (they name {some_names(sorted(named), 8)})" if named else " (they name none)")
            ),
        )
    holders = _declaring(model, new, plain)
    if holders and not op["merge"]:
        raise StudioError(
            "name_taken",
            f"rename_dim: {new!r} is already a dim of {some_names(holders)}; renaming {old!r} to it would say the"
            ' two are one size, which the model doesn\'t say now (give "merge": true if they are)',
            422,
        )
    counts = {"input": 0, "output": 0, "value_info entry": 0}
    bodies = 0
    for g in here:
        hits = {kind: sum(_renamed(v.type, old, new, plain) for v in values) for kind, values in _declarations(g)}
        bodies += g is not ref.container and any(hits.values())
        for kind, n in hits.items():
            counts[kind] += n
    what = ", ".join(
        plural(n, k, "value_info entries" if k.startswith("value") else None) for k, n in counts.items() if n
    )
    inside = f", {plural(bodies, 'body', 'bodies')} inside it included" if bodies else ""
    merged = f"; merged with the {new!r} of {some_names(holders)}" if holders else ""
    return f"dim {old!r} renamed to {new!r} in {where(model, ref)} ({what}{inside}){merged}"


def _declarations(g: onnx.GraphProto) -> list[tuple[str, list[onnx.ValueInfoProto]]]:
    return [("input", list(g.input)), ("output", list(g.output)), ("value_info entry", list(g.value_info))]


def _dims(t: onnx.TypeProto) -> Iterator[onnx.TensorShapeProto.Dimension]:
    if t.HasField("tensor_type"):
        yield from t.tensor_type.shape.dim


def _texts(g: onnx.GraphProto) -> Iterator[str]:
    """The dim texts graph g's declarations give (names, expressions)."""
    for _, values in _declarations(g):
        for v in values:
            yield from (d.dim_param for d in _dims(v.type) if d.dim_param)


def _declaring(model: onnx.ModelProto, name: str, plain: set[str]) -> list[str]:
    """The values of any graph of the model (bodies too) whose declared dims give `name`, alone
    or in an expression."""
    return [
        v.name
        for ref in graphs_of(model)
        for _, values in _declarations(ref.container)
        for v in values
        if any(d.dim_param == name or name in (expression_names(d.dim_param, plain) or []) for d in _dims(v.type))
    ]


def _renamed(t: onnx.TypeProto, old: str, new: str, plain: set[str]) -> bool:
    """Rename dim `old` in a tensor type, as a name or within an expression; whether it did."""
    part = new if new.isidentifier() else f"({new})"  # "past + (a + b)": the expression stays one
    hit = False
    for d in _dims(t):
        if d.dim_param == old:
            d.dim_param = new
            hit = True
        elif old in (expression_names(d.dim_param, plain) or []):
            d.dim_param = _NAME.sub(lambda m: part if m.group() == old else m.group(), d.dim_param)
            hit = True
    return hit
