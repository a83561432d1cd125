"""Independent walkers over ModelProto used by tests to count what the API must show."""

from __future__ import annotations

import onnx


def subgraphs_of(node: onnx.NodeProto):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.name, None, a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            for k, g in enumerate(a.graphs):
                yield a.name, k, g


def graph_paths(model: onnx.ModelProto):
    """(path, GraphProto|FunctionProto) for every graph in the model, by the API's path grammar."""
    from urllib.parse import quote

    roots = [("", model.graph)] + [(f"fn[{k}]", f) for k, f in enumerate(model.functions)]
    for k, t in enumerate(model.training_info):
        if t.HasField("initialization"):
            roots.append((f"train[{k}].init", t.initialization))
        if t.HasField("algorithm"):
            roots.append((f"train[{k}].algo", t.algorithm))
    stack = list(reversed(roots))
    while stack:
        path, g = stack.pop()
        yield path, g
        for i, n in enumerate(g.node):
            nid = f"{path}/n{i}" if path else f"n{i}"
            for name, k, sub in subgraphs_of(n):
                seg = quote(name, safe="!$&'()*+,;=@-._~ ") + (f"[{k}]" if k is not None else "")
                stack.append((f"{nid}/{seg}", sub))
