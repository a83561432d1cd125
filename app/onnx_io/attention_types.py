"""Types of what onnx's inference leaves without a shape among the standard operators: the
opset-23 Attention's present_key and present_value (a decoder's KV cache written back), which
a main graph's output must declare, and which the drawing, the costs and add_output need.
A rule per operator (type_rules.Rule): the node and its inputs' types -> its outputs' types."""

from __future__ import annotations

import onnx

from .type_rules import dims_of, elem_of, is_known, tensor_type


def attention(node: onnx.NodeProto, ins: list) -> list[onnx.TypeProto | None]:
    """Attention (opset 23): present_key and present_value are [batch, kv_num_heads, past +
    new sequence, head size] by the spec, from K (V) — 4-D, or 3-D [batch, sequence, heads ×
    head size] with kv_num_heads — and past_key (past_value). onnx's inference gives them an
    element type only, and a main graph's output must declare a shape."""
    heads = next((a.i for a in node.attribute if a.name == "kv_num_heads"), 0)

    def present(new: onnx.TypeProto | None, past: onnx.TypeProto | None) -> onnx.TypeProto | None:
        b, h, s, d = _heads_view(dims_of(new), heads)
        before = dims_of(past)
        if before is not None and len(before) == 4:
            b, h, d = (x if is_known(x) else y for x, y in ((before[0], b), (before[1], h), (before[3], d)))
            s = _sum(before[2], s)
        return tensor_type(elem_of(past) or elem_of(new), [b, h, s, d])

    at = lambda k: ins[k] if k < len(ins) else None  # noqa: E731 (optional inputs left out)
    return [None, present(at(1), at(4)), present(at(2), at(5))]


def _heads_view(dims: list | None, heads: int) -> list:
    """[batch, heads, sequence, head size] of K or V as Attention reads it (None: unknown)."""
    if dims is not None and len(dims) == 4:
        return [d if is_known(d) else None for d in dims]
    if dims is None or len(dims) != 3:
        return [None] * 4
    hidden = dims[2]
    size = hidden // heads if isinstance(hidden, int) and heads and hidden % heads == 0 else None
    return [dims[0] if is_known(dims[0]) else None, heads or None, dims[1] if is_known(dims[1]) else None, size]


def _sum(past, new):
    """A sequence of `past` then `new`: a size, an expression of two names ("past_seq + seq",
    as optimum names a present's length), or None."""
    if isinstance(past, int) and isinstance(new, int):
        return past + new
    if past == 0 or new == 0:
        return new if past == 0 else past
    names = [x for x in (past, new) if isinstance(x, str)]
    parts = [str(x) for x in (past, new) if is_known(x)]
    if len(parts) == 2 and all(n.isidentifier() for n in names):
        return " + ".join(parts)
    return None


RULES = {"Attention": attention}
