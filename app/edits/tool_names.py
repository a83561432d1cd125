"""The node names and operator types a conversion tool is told to leave out (or to take): each
must be one of the model's nodes, or an operator ONNX or onnxruntime defines. The tools
themselves ignore a name they don't find, so a typo ("/fc/Gem") would convert the very node
the person meant to protect, and the recipe would keep the typo."""

from __future__ import annotations

from functools import cache

import onnx

from ..errors import StudioError
from ..onnx_io.runtime_schemas import all_runtime_schemas
from ..onnx_io.traverse import walk_graphs
from ..words import some_names

NODE_FIELDS = ("nodes_to_exclude", "node_block_list")
OP_FIELDS = ("op_types", "op_block_list")
SHOWN = 5  # unknown names quoted in the message


@cache
def operator_names() -> frozenset[str]:
    """Every operator type of every domain onnx and onnxruntime define."""
    return frozenset(s.name for s in [*onnx.defs.get_all_schemas_with_history(), *all_runtime_schemas()])


def check_tool_names(model: onnx.ModelProto, op: dict) -> None:
    """Refuse (400, naming them) node names the model lacks and operator types no one defines."""
    nodes = {n.name for ref in walk_graphs(model) for n in ref.container.node if n.name}
    for field in NODE_FIELDS:
        unknown = [x for x in op.get(field) or [] if x not in nodes]
        if unknown:
            raise StudioError(
                "unknown_node", f"{op['op']}: {field}: the model has no node named {some_names(unknown, SHOWN)}"
            )
    for field in OP_FIELDS:
        unknown = [x for x in op.get(field) or [] if x not in operator_names()]
        if unknown:
            raise StudioError(
                "unknown_operator",
                f"{op['op']}: {field}: {some_names(unknown, SHOWN)} is no operator of ONNX or onnxruntime",
            )
