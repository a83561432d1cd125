"""Types of values neither onnx's inference nor onnxruntime's symbolic inference gives well, from
rules of their operators: onnxruntime's quantized operators (runtime_types.py: onnx has no
schema for them, so everything after the first one was untyped) and ai.onnx.ml's classical-ML
operators (ml_types.py: onnx types a TreeEnsembleClassifier's probabilities not at all and a
LinearClassifier's labels as unk__0 where onnxruntime gives the batch).

One walk of the main graph in order: an output gets the type of its operator's rule, or for a
standard operator onnx's inference of that one node on the types the walk has found for its
inputs (its constant inputs' values given: a Reshape's shape), wherever that type says more than
the one it had (more_known): downstream of a batch dim found, each node is inferred again.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from onnx import TypeProto

from .dim_names import UNNAMED
from .traverse import graph_constants, op_schema, standard_domain

Rule = Callable[[onnx.NodeProto, list[TypeProto | None]], list[TypeProto | None]]
MAX_CONSTANT = 64  # elements of an initializer given to a node's inference as its value


def tensor_type(elem_type: int, dims: list | None) -> TypeProto | None:
    """A tensor type of `elem_type` and `dims` (ints, names, None for a dim with neither)."""
    if not elem_type or dims is None:
        return None
    t = onnx.helper.make_tensor_type_proto(elem_type, None)
    shape = t.tensor_type.shape
    for d in dims:
        dim = shape.dim.add()
        if isinstance(d, int):
            dim.dim_value = d
        elif d:
            dim.dim_param = d
    return t


def dims_of(t: TypeProto | None) -> list | None:
    """A tensor type's dims (ints, names, None), or None without a shape."""
    if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in t.tensor_type.shape.dim]


def elem_of(t: TypeProto | None) -> int:
    return t.tensor_type.elem_type if t is not None and t.HasField("tensor_type") else 0


def is_known(d) -> bool:
    """A dim with a size or a name of its own (not onnx's invented unk__N)."""
    if isinstance(d, int):
        return d >= 0
    return isinstance(d, str) and d not in UNNAMED and not d.startswith("unk__")


def shapes_contradict(a: TypeProto.Tensor, b: TypeProto.Tensor) -> bool:
    """Whether two tensor types' shapes can't both hold: other ranks, or an axis fixed to two
    sizes (a type without a shape contradicts none)."""
    if not (a.HasField("shape") and b.HasField("shape")):
        return False
    if len(a.shape.dim) != len(b.shape.dim):
        return True
    return any(
        x.HasField("dim_value") and y.HasField("dim_value") and x.dim_value != y.dim_value
        for x, y in zip(a.shape.dim, b.shape.dim, strict=True)
    )


def more_known(new: TypeProto | None, old: TypeProto | None) -> bool:
    """Whether `new` says more than `old` and contradicts nothing it says: a type where there
    was none, a shape where there was none, or a size or name where a dim had neither."""
    if new is None or not elem_of(new):
        return False
    if old is None or not old.WhichOneof("value"):
        return True
    if not old.HasField("tensor_type") or (elem_of(old) and elem_of(old) != elem_of(new)):
        return False
    theirs, ours = dims_of(old), dims_of(new)
    if ours is None:
        return not elem_of(old)
    if theirs is None:
        return True
    if len(theirs) != len(ours):
        return False
    gained = any(is_known(b) and not is_known(a) for a, b in zip(theirs, ours, strict=True))
    lost = any(is_known(a) and not is_known(b) for a, b in zip(theirs, ours, strict=True))
    return gained and not lost


def _overrides(new: TypeProto | None, old: TypeProto | None) -> bool:
    """Whether a rule's `new` replaces `old`: every size known, of the same element type, not
    the same type."""
    dims = dims_of(new)
    sized = dims is not None and all(isinstance(d, int) for d in dims)
    return sized and old is not None and elem_of(new) == elem_of(old) and new != old


def rules() -> dict[tuple[str, str], Rule]:
    """(domain, op_type) -> rule, every table's."""
    from .attention_types import RULES as ATTENTION
    from .ml_types import RULES as ML
    from .ml_types import TEXT_RULES as TEXT
    from .runtime_types import RULES as RUNTIME

    return {
        **{("com.microsoft", k): r for k, r in RUNTIME.items()},
        **{("ai.onnx.ml", k): r for k, r in ML.items()},
        **{("", k): r for k, r in {**TEXT, **ATTENTION}.items()},
    }


def has_ruled_nodes(g: onnx.GraphProto, table: dict[tuple[str, str], Rule]) -> bool:
    return any((standard_domain(n.domain), n.op_type) in table for n in g.node)


def fill_rule_types(inferred: onnx.ModelProto) -> int:
    """Type, in place, the main graph's values the rules type better than inference did, and
    those after them (value_info added or made more precise, outputs made more precise): how
    many. Only where a node with a rule is."""
    table = rules()
    g = inferred.graph
    if not has_ruled_nodes(g, table):
        return 0
    declared: dict[str, list[onnx.ValueInfoProto]] = {}  # a graph output may be in value_info too
    types: dict[str, TypeProto] = {}
    for v in [*g.input, *g.value_info, *g.output]:
        declared.setdefault(v.name, []).append(v)
        if v.type.WhichOneof("value"):
            types.setdefault(v.name, v.type)
    constants = graph_constants(g, MAX_CONSTANT)  # given to a node's inference: a Reshape's shape
    for init in g.initializer:
        types.setdefault(init.name, onnx.helper.make_tensor_type_proto(init.data_type, list(init.dims)))
    changed: set[str] = set()
    for node in g.node:
        rule = table.get((standard_domain(node.domain), node.op_type))
        # a node whose outputs inference typed but gave no shape is tried again: its input may be
        # one a rule typed before (the Add after a MatMulNBits whose type onnxruntime's symbolic
        # inference gave when it stopped further on, QA24 #7)
        settled = all(x in types and dims_of(types[x]) is not None for x in node.output if x)
        if rule is None and not any(x in changed for x in node.input) and settled:
            continue
        ins = [types.get(x) if x else None for x in node.input]
        try:
            outs = rule(node, ins) if rule else _inferred(inferred, g, node, ins, constants)
        except Exception:  # a node onnx can't infer on these types: its outputs stay as they were
            continue
        for name, typed in zip(node.output, outs, strict=False):
            # a rule is onnxruntime's kernel: every size it gives stands over inference's guesses
            # (onnxruntime's symbolic inference has ArrayFeatureExtractor of a 1-D X transposed)
            old = types.get(name)
            if typed is not None and name and (more_known(typed, old) or (rule is not None and _overrides(typed, old))):
                types[name] = typed
                changed.add(name)
    for name in changed:
        for v in declared.get(name, []):
            v.type.CopyFrom(types[name])
        if name not in declared:
            g.value_info.append(onnx.helper.make_value_info(name, types[name]))
    return len(changed)


def _inferred(model, g, node, ins, constants) -> list[TypeProto | None]:
    """onnx's inference of one standard node on the types found for its inputs."""
    domain = standard_domain(node.domain)
    if domain not in ("", "ai.onnx.ml") or any(t is None for t, x in zip(ins, node.input, strict=True) if x):
        return []
    schema = op_schema(model, g, node)  # None past an opset onnx's C++ takes, or for no operator there
    if schema is None:
        return []
    given = {x: t for x, t in zip(node.input, ins, strict=True) if x and t is not None}
    data = {x: constants[x] for x in node.input if x in constants}
    out = onnx.shape_inference.infer_node_outputs(schema, node, given, data, opset_imports=list(model.opset_import))
    return [out.get(x) for x in node.output]
