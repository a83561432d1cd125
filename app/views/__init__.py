"""ModelProto -> plain JSON-ready dicts for the front end and API clients. No Flask here."""

from .graph import graph_view
from .schema import node_schema
from .summary import model_summary
from .tensors import tensor_preview

__all__ = ["graph_view", "model_summary", "node_schema", "tensor_preview"]
