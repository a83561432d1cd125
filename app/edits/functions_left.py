"""What onnxruntime's quantizers leave of a model's functions: they work on the graphs, not on the
bodies of model-local functions, where an exporter's functions (torch dynamo, onnxscript) hold
most of the MatMuls, reading weights their calls pass in. Said with the result (a partial
quantization looks like a whole one otherwise) and with a refusal when nothing was quantized."""

from __future__ import annotations

from collections.abc import Iterable

import onnx

from ..onnx_io.function_calls import body_graphs, called_function, functions_by_key
from ..onnx_io.sizes import size_text
from ..onnx_io.traverse import standard_domain, walk_graphs
from .model_tools import data_size

QUANTIZED_BY_DEFAULT = ("MatMul", "Gemm", "Conv")


def left_in_functions(model: onnx.ModelProto, op_types: Iterable[str] | None) -> str:
    """ "; left in float: 6 MatMul node(s) in the bodies of model-local functions (MLPBlock), on 12
    weight(s), 385 KiB, their calls pass in: simplify inlines the functions first, then they
    quantize with the rest", or "" when no body holds an operator of `op_types` (None: the
    quantizers' usual ones)."""
    wanted = set(op_types or QUANTIZED_BY_DEFAULT)
    functions = functions_by_key(model)
    holding: dict[str, dict[str, int]] = {}  # function name -> op -> count, in its body
    for f in model.functions:
        for g in body_graphs(f):
            for n in g.node:
                if standard_domain(n.domain) == "" and n.op_type in wanted:
                    counted = holding.setdefault(f.name, {})
                    counted[n.op_type] = counted.get(n.op_type, 0) + 1
    if not holding:
        return ""
    passed = _weights_passed(model, functions, set(holding))
    ops: dict[str, int] = {}
    for counts in holding.values():
        for op, k in counts.items():
            ops[op] = ops.get(op, 0) + k
    nodes = ", ".join(f"{k} {op}" for op, k in ops.items())
    weights = (
        f", on {len(passed)} weight(s), {size_text(sum(map(data_size, passed)))}, their calls pass in" if passed else ""
    )
    return (
        f"; left in float: {nodes} node(s) in the bodies of model-local functions ({', '.join(holding)}){weights}"
        " — onnxruntime's quantizers don't enter functions: simplify inlines them first, then they quantize with the rest"
    )


def _weights_passed(model: onnx.ModelProto, functions: dict, names: set[str]) -> list[onnx.TensorProto]:
    """The initializers the graphs pass to calls of the functions named (each once)."""
    out: dict[str, onnx.TensorProto] = {}
    for ref in walk_graphs(model):
        inits = {t.name: t for t in getattr(ref.container, "initializer", ())}
        for n in ref.container.node:
            f = called_function(functions, n)
            if f is not None and f.name in names:
                out.update({i: inits[i] for i in n.input if i in inits})
    return list(out.values())
