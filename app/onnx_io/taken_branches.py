"""A model with each If whose branch is known to run (if_conditions.branches_ran) replaced by that
branch's nodes, for the runs that save every node's output (Run's "measure each node"):
onnxruntime returns the main graph's tensors only, and a merged decoder computes everything
inside its If — its int8 revision measured one row, the If's, for 818 nodes (QA45 #3).

Pure protobuf: the branch's nodes move to the main graph (they read the outer scope's names as
they did), its initializers with them, and an Identity copies each branch output to the If's. An
If is left as it is where its branch defines a name the graph already has (sibling branches of
two Ifs may reuse names; a main graph may not)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import onnx

from .address import node_id, subgraph_path
from .traverse import standard_domain


@dataclass
class Inlined:
    model: onnx.ModelProto
    ids: list[str | None]  # each main-graph node's address in the model as stored; None: an Identity made here
    names: list[str]  # each node's name in the model as stored (one a branch shares is renamed here)

    @cached_property
    def made(self) -> set[str]:
        """The tensors its nodes write."""
        return {o for n in self.model.graph.node for o in n.output if o}


def inline_taken(model: onnx.ModelProto, ran: Mapping[str, str]) -> Inlined:
    """`model` with the branch `ran` names ({If's address: "then_branch" | "else_branch"}) of
    each such If in its place, at any depth the branches that ran reach. `model` is not changed
    (and is the answer's, uncopied, when no If is taken)."""
    if not ran:
        return Inlined(
            model, [node_id("", i) for i in range(len(model.graph.node))], [n.name for n in model.graph.node]
        )
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    defined = {x for n in g.node for x in n.output if x} | {v.name for v in g.input} | {t.name for t in g.initializer}
    nodes: list[onnx.NodeProto] = []
    ids: list[str | None] = []
    names: list[str] = []
    taken_names: set[str] = set()

    def add(node: onnx.NodeProto, nid: str | None) -> None:
        kept = onnx.NodeProto()
        kept.CopyFrom(node)
        names.append(node.name)
        if kept.name in taken_names:  # onnxruntime refuses two nodes of one name
            kept.name = f"{kept.name}@{nid}"
        taken_names.add(kept.name)
        nodes.append(kept)
        ids.append(nid)

    def put(graph_nodes: Iterable[onnx.NodeProto], path: str) -> None:
        for i, n in enumerate(graph_nodes):
            nid = node_id(path, i)
            branch = _branch(n, ran.get(nid)) if n.op_type == "If" and standard_domain(n.domain) == "" else None
            if branch is None or not _fits(branch, defined):
                add(n, nid)
                continue
            defined.update(_names_defined(branch))
            g.initializer.extend(branch.initializer)
            g.sparse_initializer.extend(branch.sparse_initializer)
            g.value_info.extend(branch.value_info)
            put(branch.node, subgraph_path(nid, ran[nid]))
            for made, wanted in zip(branch.output, n.output, strict=False):
                if wanted:  # the If's output, now a copy of what the branch gave
                    add(onnx.helper.make_node("Identity", [made.name], [wanted], name=f"{wanted}/taken"), None)

    put(list(g.node), "")
    del g.node[:]
    g.node.extend(nodes)
    return Inlined(out, ids, names)


def _branch(node: onnx.NodeProto, taken: str | None) -> onnx.GraphProto | None:
    if taken is None:
        return None
    return next((a.g for a in node.attribute if a.name == taken and a.HasField("g")), None)


def _names_defined(branch: onnx.GraphProto) -> set[str]:
    return {x for n in branch.node for x in n.output if x} | {t.name for t in branch.initializer}


def _fits(branch: onnx.GraphProto, defined: set[str]) -> bool:
    """Whether the branch's names are new to the graph it moves into."""
    return not (_names_defined(branch) & defined)
