"""Edit ops: one small module per kind, registered by JSON op name."""

from . import (  # noqa: F401  (registers the ops)
    attributes,
    compose,
    fixed_dims,
    graph_io,
    initializers,
    metadata,
    names,
    nodes,
    precision,
    rename_dim,
    simplify,
    unroll,
    weight_only,
    whole_model,
    wiring,
    write_out,
)
from .apply import apply_edits
from .registry import REGISTRY, describe

__all__ = ["REGISTRY", "apply_edits", "describe"]
