"""The type of a value in any graph of a model (the main graph or a body), declared there or
inferred; and a graph output re-declared from what now writes it (a node inserted before it, a
node deleted from before it)."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io.address import resolve_graph
from ..onnx_io.inference import infer_isolated
from ..onnx_io.light import light_copy
from ..onnx_io.traverse import standard_domain
from ..onnx_io.type_rules import rules
from ..views.value_text import format_tensor, format_type
from ..views.values import shape_json, type_json


def declared_type(g: onnx.GraphProto, name: str) -> onnx.TypeProto | None:
    """What graph `g` itself says of value `name`: value_info, inputs, outputs, initializers."""
    for v in [*g.value_info, *g.input, *g.output]:
        if v.name == name and v.type.WhichOneof("value"):
            return v.type
    for t in g.initializer:
        if t.name == name:
            return onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
    return None


def inferred_type(model: onnx.ModelProto, path: str, name: str, forget: bool = False) -> onnx.TypeProto | None:
    """Value `name` of the graph at `path` as shape inference types it (in the helper process;
    onnxruntime's and ai.onnx.ml's operators by their rules). forget: what that graph declares of
    it is left out first (a graph output whose writer changed), and onnx's own sizes go first
    (onnxruntime's naming of dims replaces a Flatten's 1 with a name of its own). None when
    inference can't tell."""
    trial = light_copy(model)
    if forget:
        if trial is model:
            trial = onnx.ModelProto()
            trial.CopyFrom(model)
        g = resolve_graph(trial, path).container
        assert isinstance(g, onnx.GraphProto)  # the callers' graphs are graph_at's
        for v in g.output:
            if v.name == name:
                v.ClearField("type")
        for i in reversed(range(len(g.value_info))):
            if g.value_info[i].name == name:
                del g.value_info[i]
    for name_dims in (False, True) if forget else (True,):
        try:
            inferred = infer_isolated(trial, name_dims=name_dims)
        except (ValueError, StudioError):
            return None
        g = resolve_graph(inferred, path).container
        found = next((v.type for v in [*g.value_info, *g.output] if v.name == name and _known(v.type)), None)
        if found is not None:
            return found
    return None


def value_type(model: onnx.ModelProto, path: str, name: str) -> onnx.TypeProto | None:
    """Value `name` of the graph at `path`: declared there, else inferred; None when neither says."""
    g = resolve_graph(model, path).container
    if not isinstance(g, onnx.GraphProto):
        return None
    return declared_type(g, name) or inferred_type(model, path, name)


def ruled_type(model: onnx.ModelProto, path: str, name: str) -> tuple[onnx.TypeProto, onnx.NodeProto] | None:
    """Value `name` of the graph at `path` as its operator's definition shapes it, where onnx's
    inference gives it an element type at most (opset-23 Attention's present_key): (the type,
    the node writing it), or None when no rule here tells its rank."""
    g = resolve_graph(model, path).container
    node = next((n for n in getattr(g, "node", []) if name in n.output), None)
    rule = rules().get((standard_domain(node.domain), node.op_type)) if node is not None else None
    if node is None or rule is None:
        return None
    ins = _types_of(model, path, list(node.input))
    found = rule(node, [ins.get(x) if x else None for x in node.input])
    k = list(node.output).index(name)
    typed = found[k] if k < len(found) else None
    return (typed, node) if typed is not None else None


def _types_of(model: onnx.ModelProto, path: str, names: list[str]) -> dict[str, onnx.TypeProto]:
    """The types of values of the graph at `path`: as declared there, the rest from one run of
    shape inference."""
    g = resolve_graph(model, path).container
    assert isinstance(g, onnx.GraphProto)  # ruled_type's graph holds the node
    found = {x: t for x in names if x and (t := declared_type(g, x)) is not None}
    if all(x in found for x in names if x):
        return found
    try:
        inferred = resolve_graph(infer_isolated(light_copy(model), name_dims=True), path).container
    except (ValueError, StudioError):
        return found
    for v in [*inferred.value_info, *inferred.output]:
        if v.name in names and v.name not in found and _known(v.type):
            found[v.name] = v.type
    return found


def _known(t: onnx.TypeProto) -> bool:
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        return bool(t.tensor_type.elem_type)
    return kind is not None


def type_words(t: onnx.TypeProto) -> str:
    """ "FLOAT ⟨1×10⟩", "INT64 of unknown shape"; other kinds as the page writes them
    ("seq(map(int64, tensor(float)))": onnx's printer said "Unknown type sequence_type", QA21 F13)."""
    if t.WhichOneof("value") != "tensor_type":
        return format_type(type_json(t))
    tt = t.tensor_type
    elem = onnx.TensorProto.DataType.Name(tt.elem_type) if tt.elem_type else "of unknown type"
    if not tt.HasField("shape"):
        return f"{elem} of unknown shape"
    return format_tensor(elem, shape_json(tt.shape))


def _kind(t: onnx.TypeProto) -> tuple:
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        return kind, t.tensor_type.elem_type
    if kind == "sparse_tensor_type":
        return kind, t.sparse_tensor_type.elem_type
    return kind, t.SerializeToString(deterministic=True)


def _dims(t: onnx.TypeProto) -> list | None:
    if t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
        return None
    return list(t.tensor_type.shape.dim)


def agrees(declared: onnx.TypeProto, now: onnx.TypeProto) -> bool:
    """Does `declared` still fit a value of type `now`: the same kind and element type, and,
    where both know the shape, the same rank and each size `now` gives declared alike (a dim
    `now` can't size fits whatever is declared: a deleted Identity keeps "batch")."""
    if _kind(declared) != _kind(now):
        return False
    old, new = _dims(declared), _dims(now)
    if old is None or new is None:
        return True
    if len(old) != len(new):
        return False
    return all(
        not b.HasField("dim_value") or (a.HasField("dim_value") and a.dim_value == b.dim_value)
        for a, b in zip(old, new, strict=True)
    )


def retype_output(g: onnx.GraphProto, name: str, now: onnx.TypeProto | None, main: bool = True) -> str:
    """Re-declare graph output `name` as type `now` (what now writes it) where its declared type
    no longer fits (agrees): the change said, "; graph output 'probs' is now INT64 ⟨1⟩ (was
    FLOAT ⟨1×10⟩)", else "". A dim keeps the model's own name for it where `now` gives no
    size there (a deleted Identity keeps "batch"); names only inference gave (onnx's unk__3) go.
    `now` None (nothing could type it): the element type stays, and a body's output is left of
    unknown shape; the main graph's keeps its declaration (the checker wants a shape there)."""
    out = next((v for v in g.output if v.name == name), None)
    if out is None or not out.type.WhichOneof("value"):
        return ""
    if now is None:
        if main or _dims(out.type) is None:
            return ""
        was = type_words(out.type)
        out.type.tensor_type.ClearField("shape")
        return f"; graph output {name!r} now has an unknown shape (was {was}): its new shape couldn't be inferred"
    if agrees(out.type, now):
        return ""
    own = {d.dim_param for v in [*g.input, *g.output, *g.value_info] for d in _dims(v.type) or [] if d.dim_param}
    was_type = onnx.TypeProto()
    was_type.CopyFrom(out.type)
    old = _dims(was_type) or []
    out.type.CopyFrom(now)
    new = _dims(out.type) or []
    for k, d in enumerate(new):
        if d.HasField("dim_value") or (d.dim_param and d.dim_param in own):
            continue
        d.ClearField("dim_param")
        if len(old) == len(new) and old[k].dim_param:
            d.dim_param = old[k].dim_param  # the model's name for a dim inference can't size
    return f"; graph output {name!r} is now {type_words(out.type)} (was {type_words(was_type)})"
