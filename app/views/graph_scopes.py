"""What each graph of a model sees by name: its own values over those of the graphs enclosing it.
A subgraph reads the enclosing graphs' values by name (outer scope), never a sibling's; an If's
branches may repeat each other's value names with other shapes (an Optimum merged decoder's
/model/decoder/layers.0/self_attn/MatMul_output_0 is [b, 4, seq, past + seq] in then_branch and
[b, 4, seq, seq] in else_branch), so one lookup by name over all of a model's graphs finds a
sibling's value (QA31 #2). Costs (costs.py, loop_costs.py) read shapes through these scopes."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping
from typing import TypeVar

import onnx

from ..onnx_io.traverse import running_graphs

V = TypeVar("V")


def enclosing_graph(path: str) -> str:
    """The path of the graph holding the node that holds graph `path` (nK/attr, each segment
    free of "/"): n2/body/n8/then_branch -> n2/body; the main graph's subgraphs -> ""."""
    return path.rsplit("/", 2)[0] if path.count("/") >= 3 else ""


def typed_graphs(model: onnx.ModelProto, typed: onnx.ModelProto) -> list[tuple[str, onnx.GraphProto]]:
    """Each running graph's path in `model` with the same graph of `typed` (the model after shape
    inference), paired in walk order: the stand-in inference ran on may hold more nodes than the
    model (an outside Constant made a ConstantOfShape: onnx_io/inference.py), so its node ids,
    and the paths of its subgraphs, may differ; by path when the two don't hold as many graphs."""
    mine, theirs = running_graphs(model), running_graphs(typed)
    if len(mine) == len(theirs):
        return [(ref.path, other.container) for ref, other in zip(mine, theirs, strict=True)]
    by_path = {ref.path: ref.container for ref in theirs}
    return [(ref.path, by_path.get(ref.path, ref.container)) for ref in mine]


def scoped(
    model: onnx.ModelProto, typed: onnx.ModelProto, own: Callable[[onnx.GraphProto], dict[str, V]]
) -> dict[str, ChainMap[str, V]]:
    """Graph path -> what its graph sees by name: `own(graph)` of its graph in `typed`, over the
    enclosing graphs' (a write goes to the graph's own map, which its subgraphs see)."""
    scopes: dict[str, ChainMap[str, V]] = {}
    for path, g in typed_graphs(model, typed):
        outer = scopes.get(enclosing_graph(path)) if path else None
        scopes[path] = ChainMap(own(g)) if outer is None else outer.new_child(own(g))
    return scopes


def declared_types(g: onnx.GraphProto) -> dict[str, onnx.ValueInfoProto]:
    """A graph's own declared and inferred value infos by name (inputs, value_info, outputs)."""
    return {vi.name: vi for vi in [*g.input, *g.value_info, *g.output] if vi.name}


def declared_in(model: onnx.ModelProto, typed: onnx.ModelProto) -> Mapping[str, ChainMap[str, onnx.ValueInfoProto]]:
    """Graph path -> the value infos its graph sees (scoped(declared_types))."""
    return scoped(model, typed, declared_types)
