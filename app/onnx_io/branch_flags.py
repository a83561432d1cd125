"""Boolean graph inputs that decide which branch of an If runs, and the values the smoke run
feeds them. Made-up booleans are False (zeros), so a smoke run of an Optimum merged decoder
(its main graph an If on `use_cache_branch`) ran only else_branch, the step without the cache:
an edit that broke then_branch, the step a decoder runs for every token but the first, was
badged "onnxruntime loads and runs it" (QA31 F1); and when else_branch failed, the fills tried
next (counting, ones) made the flag true, so an edit breaking else_branch passed too. Such an
input, reaching an If's condition directly or through nodes that pass a value on (Identity,
Cast, Squeeze, Not, And ...: value_passing.backward), is held at one value through each run, and
the model is run once at each (ort_worker.check: both within the check's limits).
"""

from __future__ import annotations

from collections.abc import Mapping

import onnx

from .loop_counts import Wanted, inputs_for


def branch_cases(graph: onnx.GraphProto, names: list[str]) -> list[dict]:
    """[{"branch": "else_branch", "values": {input: value}}, the same for "then_branch"]: the
    values of the boolean inputs of one value among `names` (graph inputs) that an If's
    condition comes from, in `graph` or a body at any depth, that make those Ifs take that
    branch; [] when there is none."""
    flags = set(names) & {vi.name for vi in graph.input if vi.type.tensor_type.elem_type == onnx.TensorProto.BOOL}

    def values(branch: bool) -> dict[str, bool]:
        def wants(node: onnx.NodeProto) -> list[tuple[str, Wanted]]:
            return [(node.input[0], branch)] if node.op_type == "If" and node.input else []

        return {name: bool(value) for name, value in inputs_for(graph, flags, wants).items()}

    off, on = values(False), values(True)
    if not off and not on:
        return []
    return [{"branch": "else_branch", "values": off}, {"branch": "then_branch", "values": on}, *_mixed(off, on)]


MAX_CROSSED = 3  # flags up to which every combination of their values runs (2**3 runs at most)


def _mixed(off: dict[str, bool], on: dict[str, bool]) -> list[dict]:
    """The cases between all flags off and all on: with two flags (an If nested in another's
    branch, each on its own), the path taken at (true, false) runs only at those values (QA32
    N1: a break there was badged valid). Every combination up to MAX_CROSSED flags, after the
    two whole cases (which run first, the check's limits permitting); no branch hint."""
    names = [n for n in off if n in on and off[n] != on[n]]
    if not 2 <= len(names) <= MAX_CROSSED:
        return []
    out = []
    for mask in range(1, 2 ** len(names) - 1):
        values = {n: (on[n] if mask >> k & 1 else off[n]) for k, n in enumerate(names)}
        out.append({"branch": None, "values": {**off, **values}})
    return out


def case_words(values: Mapping[str, object]) -> str:
    """ "use_cache_branch = true": the values of flags (a run fed, Costs was given), as JSON writes them."""
    return ", ".join(f"{name} = {str(value).lower()}" for name, value in values.items())
