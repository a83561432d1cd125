"""Gemm nodes with a constant weight as MatMul (+ Add of the bias): what onnxruntime's block
quantizer can take. torch exports a Linear or GPT-2's Conv1D as Gemm, which it skips, so a
GPT-2's 96 projections stayed float. Runs where the weights are in memory (the helper)."""

from __future__ import annotations

import onnx
from onnx import numpy_helper

from .traverse import node_reads


def gemms_as_matmuls(model: onnx.ModelProto, exclude: set[str]) -> int:
    """Rewrite each main-graph Gemm (alpha 1, A not transposed, B an initializer, beta 1 or no C)
    not named in `exclude` as MatMul(A, B or Bᵀ) named as the Gemm was, then Add(C) writing
    the Gemm's output; the same values. A transposed weight gets a transposed copy (the original
    stays while anything else reads it). The number rewritten."""
    g = model.graph
    initializers = {t.name: t for t in g.initializer}
    inputs = {v.name for v in g.input}
    readers: dict[str, int] = {}
    for n in g.node:
        for x in node_reads(n):
            readers[x] = readers.get(x, 0) + 1
    names = {x for n in g.node for x in n.output} | set(initializers) | inputs
    rewritten = 0
    nodes = []
    for n in g.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        weight = initializers.get(n.input[1]) if n.op_type == "Gemm" and len(n.input) > 1 else None
        bias = n.input[2] if len(n.input) > 2 else ""
        if (
            weight is None
            or n.domain not in ("", "ai.onnx")
            or n.name in exclude
            or n.input[1] in inputs  # a weight the caller may override
            or attrs.get("alpha", 1.0) != 1.0
            or attrs.get("transA", 0)
            or (bias and attrs.get("beta", 1.0) != 1.0)
            or len(weight.dims) != 2
        ):
            nodes.append(n)
            continue
        b = n.input[1]
        if attrs.get("transB", 0):
            b = _fresh(f"{b}_transposed", names)
            g.initializer.append(numpy_helper.from_array(numpy_helper.to_array(weight).T.copy(), b))
            readers[n.input[1]] -= 1
        out = n.output[0]
        mm_out = _fresh(f"{out}_matmul", names) if bias else out
        nodes.append(onnx.helper.make_node("MatMul", [n.input[0], b], [mm_out], name=n.name))
        if bias:
            nodes.append(
                onnx.helper.make_node("Add", [mm_out, bias], [out], name=_fresh(f"{n.name or out}/bias", set()))
            )
        rewritten += 1
    if rewritten:
        del g.node[:]
        g.node.extend(nodes)
        unread = {name for name, count in readers.items() if count == 0}
        kept = [t for t in g.initializer if t.name not in unread]
        del g.initializer[:]
        g.initializer.extend(kept)
    return rewritten


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name
