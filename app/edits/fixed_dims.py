"""fix_dims: named dims of the main graph's inputs given a size ("batch" -> 1), as a person
means it — the other dims of those inputs stay what they are. Recorded so, a recipe replays it
on the next export at that export's own sizes (a whole shape sent instead set an image input
exported at 64×64 back to the 32×32 of the model it was made on, QA27)."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io.limits import MAX_DIM_SIZE
from ..views.values import shape_json
from ..words import closest
from .batch_end import LateLine
from .field_types import BOOLEAN, NULL
from .graph_io import _fits_its_initializer, _retyped, input_dim_names, typed_again
from .jsontypes import Integer, Map, optional, required
from .registry import edit_op
from .shape_hints import hard_coded_hint

SIZES = Map(Integer(minimum=0), label="an object: dim name -> its size")


@edit_op(
    "fix_dims",
    required("dims", SIZES, 'each symbolic dim of the inputs to fix, with its size: {"batch": 1}'),
    optional(
        "update_types",
        BOOLEAN | NULL,
        "as set_io_shape's: re-infer value_info and the outputs' shapes after (absent or null: when they still"
        " say the dims before)",
        None,
    ),
)
def fix_dims(model: onnx.ModelProto, op: dict) -> str | LateLine:
    """Give symbolic dims of the main graph's inputs a size: every input dim of that name takes
    it, each input's other dims stay as they are, and the graph is typed again as set_io_shape
    does (the outputs' dims of those names too). An output or value_info entry that re-inference
    can't type (opset-23 Attention's present_key) and still names one of those dims takes its
    size too (said in the change): within one model a dim's name is one size (with
    `update_types` false they are kept, and said). Node attributes stay. Refused when no input
    names a dim given."""
    sizes: dict[str, int] = op["dims"]
    if not sizes:
        raise StudioError("bad_value", "fix_dims: give at least one dim and its size")
    big = next((d for d, n in sizes.items() if n > MAX_DIM_SIZE), None)
    if big is not None:
        raise StudioError(
            "bad_value", f"fix_dims: {big!r} is too big a size: {sizes[big]:.3g} (at most {MAX_DIM_SIZE:.0e})"
        )
    named = input_dim_names(model)
    unknown = [d for d in sizes if d not in named]
    if unknown:
        raise StudioError(
            "unknown_dim",
            f"fix_dims: no input of the graph names a dim {unknown[0]!r}"
            + (
                closest(unknown[0], sorted(named))
                or (f" (they name {', '.join(sorted(named))})" if named else " (they name none)")
            ),
        )
    named_before = input_dim_names(model)
    lines, hints = [], []
    for v in model.graph.input:
        if not v.type.HasField("tensor_type") or not v.type.tensor_type.HasField("shape"):
            continue
        before = shape_json(v.type.tensor_type.shape)
        if not any(isinstance(d, str) and d in sizes for d in before):
            continue
        shape = [sizes[d] if isinstance(d, str) and d in sizes else d for d in before]
        _fits_its_initializer(model, v.name, shape)
        hits = [w for w in list(model.graph.input) + list(model.graph.output) if w.name == v.name]
        lines.append(f"{v.name!r} is now {_retyped(hits, None, shape, op, v.name)}")
        hints.append((before, shape))
    said = f"fixed {', '.join(f'{d} = {n}' for d, n in sizes.items())}: " + "; ".join(lines)
    said += typed_again(model, named_before, op.get("update_types"), True, None, sizes)
    # judged on the batch's result: a later op may replace the constant that hard-codes a size
    return LateLine(lambda: said + "".join(hard_coded_hint(model, before, shape) for before, shape in hints))
