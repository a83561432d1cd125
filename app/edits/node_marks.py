"""What a recipe's node is, beside the name it names it by: its operator and the nodes it reads
from, so that replayed on the next export of a model it edits the same node or none.

A torch export names the operators of no module by a counter (`/LeakyRelu_1`): one more of
them above shifts every name after it, and the name then finds another node (QA27: a recipe's
alpha set on conv1's activation instead of conv2's, every gate passed). A recipe carries each
batch's node marks, read from the batch's base when the recipe is made; replay checks them on
its own base: the node the address finds there is it, or the one node that matches takes its
place (said), or the batch is refused naming both."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

import onnx

from ..errors import StudioError
from ..onnx_io.address import node_id, recorded_address
from ..onnx_io.traverse import walk_graphs
from ..words import quoted
from .locate import find_node
from .registry import REGISTRY
from .stable_ops import node_fields

# a node passing its input on: a re-export adds or drops them, what it reads through them stays
_PASS_ON = frozenset({"Identity"})
_COUNTER = re.compile(r"_\d+$")


def batch_marks(model: onnx.ModelProto, ops: list) -> dict[str, dict]:
    """{address: mark} of every node the batch's ops name that `model` (its base) holds."""
    marks: dict[str, dict] = {}
    for op in ops:
        for address in _addresses(op):
            if address in marks:
                continue
            try:
                ref, index, _node, _ = find_node(model, address)
            except StudioError:
                continue  # a node an earlier op of the batch makes: nothing to check it by
            marks[address] = _mark(ref.container, index)
    return marks


def retarget(model: onnx.ModelProto, ops: list, marks: object) -> tuple[list, list[str]]:
    """The batch's ops with each address whose node `model` holds elsewhere moved to it, and a
    line for each moved; StudioError 422 `recipe_node_moved` when the address finds another
    node and none matches what it was."""
    if not isinstance(marks, dict) or not marks:
        return ops, []
    moved: dict[str, str] = {}
    notes: list[str] = []
    every: list[tuple[Any, int, dict]] | None = None  # read once, when a node is not found as it was
    for address, mark in marks.items():
        if not isinstance(address, str) or not _is_mark(mark):
            continue
        found = _found(model, address)
        if found is not None and _mark(*found) == mark:
            continue
        if every is None:
            every = _all_marks(model)
        matches = [(c, i) for c, i, m in every if m == mark]
        if len(matches) == 1:
            container, index = matches[0]
            node = container.node[index]
            moved[address] = _address_of(model, container, index)
            notes.append(f"the recipe's node {_words(address)} is {_node_words(node)} here ({_what(mark)})")
        elif found is not None and not _weakly(_mark(*found), mark):
            here = _mark(*found)
            raise StudioError(
                "recipe_node_moved",
                f"the recipe's node {_words(address)} was {_what(mark)}; here {_words(address)} is"
                f" {_what(here)}, and {'no node' if not matches else f'{len(matches)} nodes'} here"
                f" {'is' if not matches else 'are'} {_what(mark)}: name the node to edit in the recipe",
                422,
            )
    if not moved:
        return ops, notes
    return [_moved(op, moved) for op in ops], notes


def _addresses(op: object) -> list[str]:
    if not isinstance(op, dict) or op.get("op") not in REGISTRY:
        return []
    out: list[str] = []
    for name, k in node_fields(REGISTRY[op["op"]], op):
        out.append(op[name] if k is None else op[name][k])
    return out


def _moved(op: dict, moved: dict[str, str]) -> dict:
    if op.get("op") not in REGISTRY:
        return op
    out = dict(op)
    for name, k in node_fields(REGISTRY[op["op"]], op):
        if k is None:
            out[name] = moved.get(out[name], out[name])
        else:
            out[name] = [moved.get(v, v) if isinstance(v, str) else v for v in out[name]]
    return out


def _mark(container, index: int, writer: dict | None = None) -> dict:
    """{"op_type", "domain", "after": what each input comes from}: the node writing it (by name,
    else by operator), looked through pass-on nodes, or the tensor itself (a graph input, a
    weight, a value from an outer graph). `writer`: the container's tensor -> node writing it."""
    node = container.node[index]
    if writer is None:
        writer = _writers(container)
    after = []
    for name in node.input:
        source = writer.get(name)
        while source is not None and source.op_type in _PASS_ON and source.input:
            name = source.input[0]
            source = writer.get(name)
        if not name:
            after.append("")
        elif source is None:
            after.append(name)
        else:
            after.append(f"@{source.name}" if source.name else f"<{source.op_type}>")
    return {"op_type": node.op_type, "domain": node.domain, "after": after}


def _writers(container) -> dict[str, onnx.NodeProto]:
    return {o: n for n in container.node for o in n.output if o}


def _weakly(here: dict, mark: dict) -> bool:
    """The same operator reading from the same sources but for their counters: names shifted
    around it (`/Relu_3` now `/Relu_4`), as a re-export shifts them, not another node."""
    if (here["op_type"], here["domain"]) != (mark["op_type"], mark["domain"]) or len(here["after"]) != len(
        mark["after"]
    ):
        return False
    return all(_counterless(a) == _counterless(b) for a, b in zip(here["after"], mark["after"], strict=True))


def _counterless(source: str) -> str:
    """A name without the counter an exporter appends ("/LeakyRelu_3" -> "/LeakyRelu")."""
    return _COUNTER.sub("", source)


def _is_mark(mark: object) -> bool:
    return (
        isinstance(mark, dict)
        and isinstance(mark.get("op_type"), str)
        and isinstance(mark.get("domain", ""), str)
        and isinstance(mark.get("after"), list)
        and all(isinstance(a, str) for a in mark["after"])
    )


def _found(model: onnx.ModelProto, address: str):
    try:
        ref, index, _node, _ = find_node(model, address)
    except StudioError:
        return None
    return ref.container, index


def _all_marks(model: onnx.ModelProto) -> list[tuple[Any, int, dict]]:
    """(container, index, mark) of every node of the model, each graph's writers read once."""
    out: list[tuple[Any, int, dict]] = []
    for ref in walk_graphs(model):
        writer = _writers(ref.container)
        out.extend((ref.container, i, _mark(ref.container, i, writer)) for i in range(len(ref.container.node)))
    return out


def _address_of(model: onnx.ModelProto, container, index: int) -> str:
    ref = next(r for r in walk_graphs(model) if r.container is container)
    return recorded_address(model, node_id(ref.path, index))


def _what(mark: dict) -> str:
    """ "the LeakyRelu after /conv2/Conv" """
    sources = [
        a[1:] if a.startswith("@") else a.strip("<>") if a.startswith("<") else quoted(a) for a in mark["after"] if a
    ]
    return f"the {mark['op_type']}" + (f" after {', '.join(sources)}" if sources else "")


def _words(address: str) -> str:
    """ "@%2FLeakyRelu_1" -> "'/LeakyRelu_1'"; ">y" -> "the node writing 'y'"."""
    last = address.rsplit("/", 1)[-1]
    if last.startswith("@"):
        return quoted(unquote(last[1:]))
    if last.startswith(">"):
        return f"(the node writing {quoted(unquote(last[1:]))})"
    return quoted(address)


def _node_words(node: onnx.NodeProto) -> str:
    return quoted(node.name) if node.name else f"an unnamed {node.op_type}"
