"""Deleting nodes."""
from __future__ import annotations

import onnx

from ..errors import StudioError
from .locate import find_node
from .names import rename_in_graph
from .registry import edit_op


@edit_op("delete_node", required=("node",), optional=("reconnect",))
def delete_node(model: onnx.ModelProto, op: dict) -> str:
    """Delete a node. With reconnect=true its first input takes the place of its first output
    everywhere that output was read (consumers, graph outputs), so a pass-through node such as
    Identity, Dropout or Cast goes away cleanly. Without it, readers of its outputs are left
    dangling and the batch is refused if that breaks a model that passed the checker."""
    ref, idx, node, nid = find_node(model, op.get("node"))
    reconnect = op.get("reconnect", False)
    if not isinstance(reconnect, bool):
        raise StudioError("bad_field", "delete_node: reconnect must be true or false")
    g = ref.container
    desc = f"deleted {node.op_type} node {nid}" + (f" ({node.name!r})" if node.name else "")
    if reconnect:
        src = next((x for x in node.input if x), None)
        dst = node.output[0] if node.output else ""
        if src is None or not dst:
            raise StudioError("cannot_reconnect", f"delete_node: {node.op_type} node {nid} has no input to reconnect its consumers to")
        del g.node[idx]
        if isinstance(g, onnx.FunctionProto):
            _rename_in_function(g, dst, src)
            return desc + f"; readers of {dst!r} now read {src!r}"
        output_names = {v.name for v in g.output}
        made_by_node = any(src in n.output for n in g.node)
        if dst in output_names and made_by_node and src not in output_names:
            # keep the graph output's name: src's producer now writes dst directly
            _drop_value_info(g, src)
            rename_in_graph(g, src, dst)
            return desc + f"; {src!r} is now written as {dst!r}"
        _drop_value_info(g, dst)
        rename_in_graph(g, dst, src)
        return desc + f"; readers of {dst!r} now read {src!r}"
    del g.node[idx]
    return desc


def _drop_value_info(g: onnx.GraphProto, name: str) -> None:
    for i in reversed(range(len(g.value_info))):
        if g.value_info[i].name == name:
            del g.value_info[i]


def _rename_in_function(f: onnx.FunctionProto, old: str, new: str) -> None:
    for n in f.node:
        for i, x in enumerate(n.input):
            if x == old:
                n.input[i] = new
    for i, x in enumerate(f.output):
        if x == old:
            f.output[i] = new
