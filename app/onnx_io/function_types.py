"""Types of the values in model-local functions' bodies, as at one call of each.

A FunctionProto declares no types: its body is typed by the call that runs it. Each function
is typed at its first call whose input types are known: in the main graph or the graphs its
nodes hold (walk order), else inside the body of a function typed already. The body runs as
a graph of a temporary model: its inputs typed as the call's, every `@name` attribute given
the call's value (the function's default where the call sets none: function_calls.py), the
model's functions and the function's opset imports kept so the calls it makes infer too; onnx's
shape inference on that graph types the rest. Pure: onnx's C++ runs on what it is handed, so
the server calls this in the helper process (offload_jobs.function_types)."""

from __future__ import annotations

from typing import NamedTuple

import onnx

from .address import node_id, subgraph_path
from .function_calls import called_function, functions_by_key, with_explicit_defaults
from .inference import data_propagation_is_bounded
from .limits import MAX_GRAPH_DEPTH
from .traverse import node_graphs, standard_domain

# a call input that is an integer initializer this small (a shape, axes) goes in with its
# values: data propagation carries them through the body's Reshape/Expand/...
_PROPAGATED_ELEMENTS = 64
_INTS = {onnx.TensorProto.INT64, onnx.TensorProto.INT32}
# other ways of calling a function typed to tell whether its types differ among its calls
_COMPARED_CALLS = 8

Types = dict[str, onnx.TypeProto]


class FunctionTypes(NamedTuple):
    """The types of one graph of a function body (the body, "fn[k]", or a graph its nodes hold,
    "fn[k]/n2/then_branch"), as at the call `node` (its id; `name`, its name or "")."""

    node: str
    values: list[onnx.ValueInfoProto]
    calls: int  # calls of the function anywhere in the model (bodies of functions included)
    differ: bool  # another call types the body otherwise than `node` does
    name: str


class _Call(NamedTuple):
    node: onnx.NodeProto
    id: str
    inputs: list[onnx.TypeProto | None] | None  # None: some input's type is unknown


def function_types(model: onnx.ModelProto) -> dict[str, FunctionTypes]:
    """{graph path of a function body or a graph within it: its types as at one call} for each
    model-local function some call of which has known input types. `model`: after shape
    inference (its graphs' value_info typing what the calls read); not changed."""
    if not model.functions:
        return {}
    explicit = onnx.ModelProto()
    explicit.CopyFrom(model)
    with_explicit_defaults(explicit)  # every call sets what the body's `@name`s read
    functions = functions_by_key(explicit)
    index = {id(f): k for k, f in enumerate(explicit.functions)}
    found: dict[int, list[_Call]] = {}

    def record(g: onnx.GraphProto, path: str, types: Types, depth: int = 0) -> None:
        """The calls in `g` and the graphs it holds, with their input types from `types` (the
        enclosing graphs' values) and each graph's own."""
        scope = {**types, **_own_types(g)}
        for i, n in enumerate(g.node):
            f = called_function(functions, n)
            if f is not None:
                found.setdefault(index[id(f)], []).append(_Call(n, node_id(path, i), _input_types(n, scope)))
        if depth >= MAX_GRAPH_DEPTH:
            return
        for i, n in enumerate(g.node):
            for attr, item, sub in node_graphs(n):
                record(sub, subgraph_path(node_id(path, i), attr, item), scope, depth + 1)

    record(explicit.graph, "", {})
    for k, training in enumerate(explicit.training_info):
        for field, which in (("initialization", "init"), ("algorithm", "algo")):
            if training.HasField(field):  # they read the main graph's initializers
                record(getattr(training, field), f"train[{k}].{which}", _own_types(explicit.graph))

    out: dict[str, FunctionTypes] = {}
    typed_at: dict[int, _Call] = {}
    progress = True
    while progress:  # a function called only from bodies is typed once a caller's body is
        progress = False
        for k in sorted(found):
            call = next((c for c in found[k] if c.inputs is not None), None)
            if k in typed_at or call is None:
                continue
            typed_at[k] = call
            progress = True
            body = _typed_body(explicit, explicit.functions[k], call)
            if body is None:
                continue
            for path, (g, scope) in body.items():
                values = _values(g, scope, explicit.functions[k] if not path else None)
                out[f"fn[{k}]" + (f"/{path}" if path else "")] = FunctionTypes(
                    call.id, values, 0, False, call.node.name
                )
            for path, (g, scope) in body.items():
                here = f"fn[{k}]" + (f"/{path}" if path else "")
                for i, n in enumerate(g.node):
                    f = called_function(functions, n)
                    if f is not None:
                        found.setdefault(index[id(f)], []).append(_Call(n, node_id(here, i), _input_types(n, scope)))

    calls = _call_counts(explicit, functions, index)
    differs = {k: _types_differ(explicit, explicit.functions[k], typed_at[k], found.get(k, [])) for k in typed_at}
    result = {}
    for path, t in out.items():
        k = int(path[3 : path.index("]")])
        result[path] = t._replace(calls=calls.get(k, 0), differ=differs[k])
    return result


def _types_differ(model: onnx.ModelProto, f: onnx.FunctionProto, chosen: _Call, calls: list[_Call]) -> bool:
    """Whether some call types the body otherwise than `chosen`: each other way of calling it
    (input types, attribute values, small constants) is typed in turn, up to _COMPARED_CALLS of
    them; past that, any other way counts as differing (we can't tell without typing it)."""
    mine = _signature(model, chosen)
    others: dict[tuple, _Call] = {}
    for c in calls:
        if c.inputs is not None and (s := _signature(model, c)) != mine:
            others.setdefault(s, c)
    if not others:
        return False
    if len(others) > _COMPARED_CALLS:
        return True
    typed = _typed_signature(_typed_body(model, f, chosen), f)
    return any(_typed_signature(_typed_body(model, f, c), f) != typed for c in others.values())


def _typed_signature(body: dict[str, tuple[onnx.GraphProto, Types]] | None, f: onnx.FunctionProto) -> tuple | None:
    """What a typing of the body found, comparable across calls."""
    if body is None:
        return None
    return tuple(
        (path, sorted(v.SerializeToString(deterministic=True) for v in _values(g, scope, f if not path else None)))
        for path, (g, scope) in sorted(body.items())
    )


def _own_types(g: onnx.GraphProto) -> Types:
    """name -> TypeProto of what a graph declares or inference found: initializers, inputs,
    value_info, outputs (a type given later wins over none)."""
    types: Types = {}
    for t in g.initializer:
        types[t.name] = _tensor_type(t.data_type, t.dims)
    for s in g.sparse_initializer:
        types[s.values.name] = _tensor_type(s.values.data_type, s.dims)
    for v in (*g.input, *g.value_info, *g.output):
        if v.HasField("type") and _known(v.type):
            types[v.name] = v.type
    return types


def _tensor_type(dtype: int, dims) -> onnx.TypeProto:
    return onnx.helper.make_tensor_type_proto(dtype, list(dims))


def _known(t: onnx.TypeProto) -> bool:
    which = t.WhichOneof("value")
    if which is None:
        return False
    if which in ("tensor_type", "sparse_tensor_type"):
        return getattr(t, which).elem_type != onnx.TensorProto.UNDEFINED
    return True


def _input_types(node: onnx.NodeProto, scope: Types) -> list[onnx.TypeProto | None] | None:
    """The types of a call's inputs (None for one left out), or None when one given is unknown."""
    out: list[onnx.TypeProto | None] = []
    for name in node.input:
        if not name:
            out.append(None)
        elif name in scope:
            out.append(scope[name])
        else:
            return None
    return out


def _signature(model: onnx.ModelProto, call: _Call) -> tuple:
    """What a body's types can depend on at a call: its input types, its attributes (with the
    function's defaults made explicit) and the small integer constants it passes in."""
    types = tuple(b"" if t is None else t.SerializeToString(deterministic=True) for t in call.inputs or [])
    attrs = tuple(sorted(a.SerializeToString(deterministic=True) for a in call.node.attribute))
    small = tuple(
        sorted((k, t.SerializeToString(deterministic=True)) for k, t in _small_int_constants(model, call).items())
    )
    return types, attrs, small


def _call_counts(model: onnx.ModelProto, functions: dict, index: dict[int, int]) -> dict[int, int]:
    """function index -> how many nodes call it, in every graph and function body."""
    from .traverse import walk_graphs

    counts: dict[int, int] = {}
    for ref in walk_graphs(model):
        for n in ref.container.node:
            f = called_function(functions, n)
            if f is not None:
                counts[index[id(f)]] = counts.get(index[id(f)], 0) + 1
    return counts


def _bound(nodes, values: dict[str, onnx.AttributeProto], depth: int = 0) -> None:
    """Each attribute of `nodes` (and of the graphs they hold) that refers to a function
    attribute (`@name`) given the call's value, in place; one the call doesn't set goes (the
    operator's own default applies, as when it runs)."""
    for n in nodes:
        for i in reversed(range(len(n.attribute))):
            a = n.attribute[i]
            if a.ref_attr_name:
                given = values.get(a.ref_attr_name)
                if given is None:
                    del n.attribute[i]
                    continue
                name = a.name
                a.CopyFrom(given)
                a.name = name
            elif depth < MAX_GRAPH_DEPTH:
                if a.type == onnx.AttributeProto.GRAPH:
                    _bound(a.g.node, values, depth + 1)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        _bound(g.node, values, depth + 1)


def _typed_body(
    model: onnx.ModelProto, f: onnx.FunctionProto, call: _Call
) -> dict[str, tuple[onnx.GraphProto, Types]] | None:
    """{path within the body ("" the body): (its graph after inference, the types in scope
    there)} for function `f` run as at `call`; None when inference refuses it."""
    assert call.inputs is not None
    graph = onnx.GraphProto(name=f.name)
    graph.node.extend(f.node)
    _bound(graph.node, {a.name: a for a in call.node.attribute if not a.ref_attr_name})
    small = _small_int_constants(model, call)
    for k, name in enumerate(f.input):
        t = call.inputs[k] if k < len(call.inputs) else None
        if name in small:
            graph.initializer.append(small[name])
            continue
        v = graph.input.add()
        v.name = name
        if t is not None:
            v.type.CopyFrom(t)
    for name in f.output:
        graph.output.add().name = name
    temp = onnx.ModelProto(ir_version=max(model.ir_version, 8), graph=graph)
    temp.functions.extend(model.functions)
    imports = {standard_domain(o.domain): o.version for o in model.opset_import}
    imports.update({standard_domain(o.domain): o.version for o in f.opset_import})  # the body runs at its own
    temp.opset_import.extend(onnx.helper.make_opsetid(d, v) for d, v in imports.items())
    try:
        inferred = onnx.shape_inference.infer_shapes(
            temp, check_type=False, strict_mode=False, data_prop=data_propagation_is_bounded(temp)
        )
    except Exception:
        return None
    out: dict[str, tuple[onnx.GraphProto, Types]] = {}

    def walk(g: onnx.GraphProto, path: str, types: Types, depth: int) -> None:
        scope = {**types, **_own_types(g)}
        out[path] = (g, scope)
        if depth >= MAX_GRAPH_DEPTH:
            return
        for i, n in enumerate(g.node):
            for attr, item, sub in node_graphs(n):
                walk(sub, subgraph_path(node_id(path, i), attr, item), scope, depth + 1)

    walk(inferred.graph, "", {}, 0)
    return out


def _small_int_constants(model: onnx.ModelProto, call: _Call) -> dict[str, onnx.TensorProto]:
    """Function input name -> the call's small integer initializer it takes (main graph only),
    renamed to the input: its values let data propagation through the body."""
    if "/" in call.id or call.id.startswith("fn["):
        return {}
    f = called_function(functions_by_key(model), call.node)
    inits = {t.name: t for t in model.graph.initializer}
    out = {}
    for name, given in zip(f.input if f else [], call.node.input, strict=False):
        t = inits.get(given)
        if t is None or t.data_type not in _INTS or t.data_location == onnx.TensorProto.EXTERNAL:
            continue
        size = 1
        for d in t.dims:
            size *= d
        if size <= _PROPAGATED_ELEMENTS and (t.raw_data or t.int64_data or t.int32_data or size == 0):
            copy = onnx.TensorProto()
            copy.CopyFrom(t)
            copy.name = name
            out[name] = copy
    return out


def _values(g: onnx.GraphProto, scope: Types, f: onnx.FunctionProto | None) -> list[onnx.ValueInfoProto]:
    """The typed values of a graph of the body: its inputs, what inference found, its outputs,
    and (a graph a body node holds) what it reads from the graphs enclosing it. The body's own
    value_info (FunctionProto.value_info, IR 10) is what the function declares: left out."""
    declared = {v.name for v in f.value_info} if f is not None else set()
    out: dict[str, onnx.ValueInfoProto] = {}
    for v in (*g.input, *g.value_info, *g.output):
        if v.name and v.name not in declared and v.HasField("type") and _known(v.type):
            out[v.name] = v
    for t in g.initializer:  # a small constant input given with its values
        if t.name not in out:
            out[t.name] = onnx.helper.make_value_info(t.name, scope[t.name])
    if f is None:  # what it reads from outside: typed as in the enclosing graphs
        defined = {v.name for v in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output}
        for n in g.node:
            for name in n.input:
                if name and name not in defined and name not in out and name in scope:
                    out[name] = onnx.helper.make_value_info(name, scope[name])
    return list(out.values())
