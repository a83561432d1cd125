"""The weights each Conv, Gemm, MatMul, Gather… reads, wherever the node is: the main graph or an
If/Loop/Scan body, which reads the graphs around it by name (an Optimum merged decoder holds
every MatMul in an If's branches, its weights initializers of the main graph). A value a body
defines itself (an input, a node's output, its own initializer) shadows the outer one."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import onnx

from .address import node_id, subgraph_path
from .limits import MAX_GRAPH_DEPTH
from .scoped_readers import defined_names
from .traverse import node_graphs, standard_domain


@dataclass(frozen=True)
class WeightRead:
    """One node reading an initializer as its weights."""

    path: str  # the reading node's graph
    index: int  # its position there
    node: onnx.NodeProto
    tensor: onnx.TensorProto
    owner: str  # the graph holding the initializer: the node's own, or one around it

    @property
    def in_body(self) -> bool:
        """Inside an If/Loop/Scan body (not the main graph)."""
        return bool(self.path)


def weight_reads(model: onnx.ModelProto, inputs: Mapping[str, int]) -> Iterator[WeightRead]:
    """Each node of a standard operator of `inputs` (op type -> which of its inputs holds the
    weights) that reads there an initializer of its graph or of a graph around it, in the graphs
    that run: the main graph, then the bodies its nodes hold, at any depth."""
    stack: list[tuple[str, onnx.GraphProto, dict[str, tuple[str, onnx.TensorProto]], int]] = [("", model.graph, {}, 0)]
    while stack:
        path, g, outer, depth = stack.pop()
        visible = _visible(path, g, outer)
        bodies = []
        for i, n in enumerate(g.node):
            k = inputs.get(n.op_type)
            if k is not None and standard_domain(n.domain) == "" and len(n.input) > k and n.input[k] in visible:
                owner, t = visible[n.input[k]]
                yield WeightRead(path, i, n, t, owner)
            if depth < MAX_GRAPH_DEPTH:
                bodies += [(subgraph_path(node_id(path, i), a, item), sub) for a, item, sub in node_graphs(n)]
        stack.extend((p, sub, visible, depth + 1) for p, sub in reversed(bodies))


def _visible(
    path: str, g: onnx.GraphProto, outer: dict[str, tuple[str, onnx.TensorProto]]
) -> dict[str, tuple[str, onnx.TensorProto]]:
    """name -> (owning graph, initializer) of the initializers g's nodes can read: the outer
    ones g doesn't define again, and its own."""
    own = defined_names(g)  # its own initializers are put in below
    visible = {name: found for name, found in outer.items() if name not in own}
    visible.update((t.name, (path, t)) for t in g.initializer)
    return visible
