"""Calls of model-local functions: which function a node calls, and calls made explicit.

onnx's inliner (1.23) drops an attribute a nested call forwards (`beta = @gain`) when the outer
call leaves `gain` to the function's default: the inlined Constant then has no value at all and
inference of the inlined model fails from there. Writing every default a call relies on into the
call first (what the function says it takes anyway) gives the inliner nothing to drop."""

from __future__ import annotations

import onnx

from .traverse import graphs_within, subgraphs, walk_graphs


def function_key(f: onnx.FunctionProto) -> tuple[str, str, str]:
    return (f.domain, f.name, f.overload)


def functions_by_key(model: onnx.ModelProto) -> dict[tuple[str, str, str], onnx.FunctionProto]:
    """(domain, name, overload) -> the model-local function; of two with one key (which the
    checker refuses) the first, in every view and edit alike."""
    out: dict[tuple[str, str, str], onnx.FunctionProto] = {}
    for f in model.functions:
        out.setdefault(function_key(f), f)
    return out


def called_function(functions: dict[tuple[str, str, str], onnx.FunctionProto], node: onnx.NodeProto):
    """The model-local function `node` calls, or None."""
    return functions.get((node.domain, node.op_type, node.overload))


def with_explicit_defaults(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` (changed in place, and returned) with each call of a model-local function, in
    any graph or function body, setting every attribute the function gives a default and the
    call leaves out."""
    functions = functions_by_key(model)
    if not functions:
        return model
    for ref in walk_graphs(model):
        for node in ref.container.node:
            f = called_function(functions, node)
            if f is None:
                continue
            have = {a.name for a in node.attribute}
            for default in f.attribute_proto:
                if default.name not in have:
                    node.attribute.append(default)
    return model


def declared_attributes(f: onnx.FunctionProto) -> list[dict]:
    """A function's attributes as a call sees them: {"name", "type" (AttributeProto type number,
    or None when neither a default nor a reference in the body says it), "default"
    (AttributeProto or None), "used_by": ["LeakyRelu.alpha", ...] (the body's references)}."""
    defaults = {a.name: a for a in f.attribute_proto}
    used: dict[str, list[tuple[int, str]]] = {}
    for g in body_graphs(f):
        for n in g.node:
            for a in n.attribute:
                if a.ref_attr_name:
                    used.setdefault(a.ref_attr_name, []).append((a.type, f"{n.op_type}.{a.name}"))
    out = []
    for name in [*f.attribute, *defaults]:
        default = defaults.get(name)
        refs = used.get(name, [])
        kind = default.type if default is not None else (refs[0][0] if refs else None)
        out.append({"name": name, "type": kind, "default": default, "used_by": [r for _, r in refs]})
    return out


def body_graphs(f: onnx.FunctionProto):
    """The function's body and the graphs its nodes hold (references may sit in an If branch)."""
    yield f
    for n in f.node:
        for g in subgraphs(n):
            yield from graphs_within(g)


def drop_uncalled_functions(model: onnx.ModelProto) -> list[str]:
    """Remove the model-local functions no node of a running graph calls, directly or through
    other functions it calls (their bodies are walked from the calls); the names removed."""
    functions = functions_by_key(model)
    called: set[tuple[str, str, str]] = set()
    # the main graph, the graphs its nodes hold and the training graphs (each walked by
    # walk_graphs), then the body of each function called from there
    todo: list = [ref.container for ref in walk_graphs(model) if not ref.path.startswith("fn[")]
    while todo:
        g = todo.pop()
        for sub in [g] if isinstance(g, onnx.GraphProto) else body_graphs(g):
            for n in sub.node:
                key = (n.domain, n.op_type, n.overload)
                if key in functions and key not in called:
                    called.add(key)
                    todo.append(functions[key])
    gone = [f.name for f in model.functions if function_key(f) not in called]
    keep = [f for f in model.functions if function_key(f) in called]
    if gone:
        del model.functions[:]
        model.functions.extend(keep)
    return gone


def without_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` without its functions: what onnx's version converter and onnxruntime's
    float16 converter are given (they leave bodies as they are, and trip over them: the checker
    the version converter runs refuses a function importing an older opset, the float16
    converter asserts on a body's attribute reference)."""
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.functions[:]
    return bare
