"""GET /api/models/<id>/stats[?revision=&dims=NAME=N,...]: parameters, FLOPs and output bytes,
per node and in all (views/costs.py has the formulas). Symbolic dims are unknown unless given
(and a Loop's count, by its symbol "<name>.iterations": views/loop_costs.py; an input an If's
condition comes from, by its name: "use_cache_branch=1", its branch counted);
the answer's "unknown" names the ones that left something unknown. Given sizes of the inputs'
dims, shapes are inferred again from those numbers (onnx_io/inference.shapes_at_dims), so every
shape that follows from the inputs is known, not only the dims spelled the same way."""

from __future__ import annotations

import re

import onnx
import orjson
from flask import current_app, request

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.inference import input_dims, output_only_dims
from ..onnx_io.limits import MAX_DIM_SIZE
from ..onnx_io.traverse import running_graphs
from ..views.costs import formula_at, model_costs, model_formula, with_node_formulas
from ..words import closest
from . import bp, derived
from .documents import LRU, inferred, inferred_at_dims, inferred_from_inputs, load, revision_number, store

_at_sizes = LRU(32)  # (revision blob, sizes) -> costs at those sizes
_DIM = re.compile(r"^\s*([^=,]+?)\s*=\s*([-+]?[0-9.eE+]+|true|false)\s*$", re.IGNORECASE)
_FLAGS = {"true": "1", "false": "0"}


def parse_dims(raw: str | None) -> dict[str, int]:
    """ "batch=1,seq=128" -> {"batch": 1, "seq": 128}."""
    dims: dict[str, int] = {}
    for part in (raw or "").split(","):
        if not part.strip():
            continue
        m = _DIM.match(part)
        if m is None:
            raise StudioError("bad_dims", f"dims are NAME=N pairs separated by commas; {part.strip()!r} is not one")
        name, text = m.groups()
        text = _FLAGS.get(text.lower(), text)  # a flag deciding an If: use_cache_branch=true
        if not text.isdigit():  # as Run takes them: 0 too (a decoder's first step has no past)
            raise StudioError("bad_dims", f"{name}: a size is a whole number from 0, not {text}")
        if int(text) > MAX_DIM_SIZE:
            raise StudioError("bad_dims", f"{name}: {text} is too big a size (at most {MAX_DIM_SIZE:.0e})")
        dims[name] = int(text)
    return dims


def check_flags(model: onnx.ModelProto, dims: dict[str, int]) -> None:
    """A BOOL input's value is true or false: 2 is a mistake (a size meant for another name),
    refused rather than read as true and echoed back as 2 (QA35)."""
    flags = {vi.name for vi in model.graph.input if vi.type.tensor_type.elem_type == onnx.TensorProto.BOOL}
    for name, value in dims.items():
        if name in flags and value > 1:
            raise StudioError("bad_dims", f"{name} is a flag: true or false (1 or 0), not {value}")


def inlined_calls(revision, model: onnx.ModelProto) -> onnx.ModelProto | None:
    """The revision with its local functions inlined and inferred (in the helper), when a graph
    of it that runs calls one: their bodies' FLOPs are counted on it; None otherwise or when
    onnx can't inline it."""
    local = {(f.domain, f.name, f.overload) for f in model.functions}
    calls = (n for ref in running_graphs(model) for n in ref.container.node)
    if not any((n.domain, n.op_type, n.overload) in local for n in calls):
        return None
    try:
        return offload.inline_functions_file(str(store().blobs.path(revision.blob)), revision.blob)
    except StudioError as exc:
        if exc.code != "onnx_failed":
            raise
        return None  # the calls stay unknown


@bp.get("/models/<model_id>/stats")
def get_stats(model_id):
    dims = parse_dims(request.args.get("dims"))
    _, revision, model = load(model_id, revision_number(request.args.get("revision")))
    check_flags(model, dims)

    def compute() -> dict:
        at = {k: v for k, v in dims.items() if k in input_dims(model)}
        shapes = inferred_at_dims(revision.blob, at) if at else None
        plain = inferred(revision.blob, model)
        costs = model_costs(model, shapes if shapes is not None else plain, dims, inlined_calls(revision, model))
        # each node's formula too while sizes aren't given (given, they are counted)
        skipped = [b["skipped"] for b in costs["branches"]]  # the If branches its totals leave out
        # a decoder's outputs name total_sequence: formulas need it as past_sequence + sequence
        from_inputs = inferred_from_inputs(revision.blob) if output_only_dims(model) else None
        # a Loop's count given (while.iterations=20) is a number in it too
        formula = with_node_formulas(costs, model_formula(model, from_inputs or plain, skipped, dims), attach=not at)
        if formula is not None and at:
            # the sizes given are no symbols any more: batch = 1 leaves a formula in sequence alone
            # (Compare counts both sides at the same shapes: their formulas then read alike)
            formula = formula_at(formula, at)
        return {**costs, "formula": formula}

    def encode(costs: dict) -> bytes:
        # the app's encoder: counts past 64 bits (a hostile [2^62, 2^62] input) fall back to the stdlib's
        return current_app.json.dumps(costs).encode()

    if dims:
        # any sizes a client asks for: kept in this process, bounded, never in the store (a
        # client trying sizes one after another would grow the store without end)
        costs = _at_sizes.get((revision.blob, tuple(sorted(dims.items()))), compute)
    else:
        costs = derived.kept(store(), "costs", revision.blob, compute, encode, orjson.loads)
    # the sizes this revision has a dim for: one fixed by an edit since is no longer a size to give
    # (a Loop's count by its symbol: "while.iterations"; an If's flag by its input's name)
    loops = {loop["symbol"] for loop in costs["loops"] if loop["symbol"]}
    asked = {*costs["input_dims"], *costs["unknown"]["dims_at"], *loops, *costs["branch_inputs"]}
    used = {k: v for k, v in dims.items() if k in asked}
    # the others said, not refused: the page keeps sizes of dims an edit has fixed since, and a
    # script's typo (bacth=2) is told which name it may have meant (QA35 #2)
    ignored = {k: f"no dim of this revision{closest(k, asked)}" for k in dims if k not in asked}
    return current_app.json.response(
        {"revision": revision.rev, "dims": used, **({"ignored": ignored} if ignored else {}), **costs}
    )
