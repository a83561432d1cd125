"""What the node a refusal names reads, said after onnx's words: "Dimension mismatch in
unification between 10 and 8" means something once the line also says "it reads 'f' FLOAT
⟨1×8⟩, 'fw' FLOAT ⟨10×8⟩". Types the graph declares are taken as they are; the rest come from
one shape inference of the refused model (non-strict: it types what precedes the fault), paid
only on a refusal and only on graphs small enough for it to be quick."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io.address import resolve_graph
from ..onnx_io.inference import infer_isolated
from ..onnx_io.traverse import walk_graphs
from .value_types import declared_type, type_words

MAX_NODES = 20_000  # past this, a refusal's own inference would keep the person waiting


def reads_words(model: onnx.ModelProto, at: tuple[str, int] | None) -> str:
    """ " (it reads 'f' FLOAT ⟨1×8⟩, 'fw' FLOAT ⟨10×8⟩)", or "" when nothing can be told."""
    if at is None:
        return ""
    path, index = at
    try:
        g = resolve_graph(model, path).container
    except StudioError:
        return ""
    if not isinstance(g, onnx.GraphProto) or index >= len(g.node):
        return ""
    names = list(dict.fromkeys(x for x in g.node[index].input if x))
    types = {name: declared_type(g, name) for name in names}
    if any(t is None for t in types.values()) and sum(len(r.container.node) for r in walk_graphs(model)) <= MAX_NODES:
        try:
            inferred = resolve_graph(infer_isolated(model, check_type=False, strict_mode=False), path).container
        except (ValueError, StudioError):
            inferred = None
        if isinstance(inferred, onnx.GraphProto):
            for name in [n for n, t in types.items() if t is None]:
                types[name] = declared_type(inferred, name)
    said = [f"{name!r} {type_words(t)}" for name, t in types.items() if t is not None]
    return f" (it reads {', '.join(said)})" if said else ""
