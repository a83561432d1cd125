"""Graph inputs and outputs: their types and shapes; adding and removing them; fixing an input
to a constant."""

from __future__ import annotations

import json
import re

import onnx

from ..errors import NotFound, StudioError
from ..onnx_io.address import node_id, node_words, resolve_graph
from ..onnx_io.dim_names import expression_names
from ..onnx_io.inference import input_dims
from ..onnx_io.limits import MAX_DIM_SIZE
from ..onnx_io.traverse import walk_graphs
from ..onnx_io.type_rules import is_known
from ..views.loop_roles import body_roles
from ..views.value_text import format_tensor
from ..views.values import dim_json, shape_json
from ..words import closest, some_names
from .batch_end import LateLine, at_batch_end
from .bodies import body_of, check_type_kept, defines, enclosing_defines, graph_at, positional_words, where
from .field_types import BODY_PATH, BOOLEAN, DTYPE, NAME, NULL, SHAPE, TENSOR_VALUE
from .jsontypes import optional, required
from .locate import main_graph_value
from .names import fresh_name, rename_in_graph
from .registry import edit_op
from .shape_hints import hard_coded_hint, refresh_types, sized_declarations, stale_hint
from .sources import tensor_from_source
from .stale_value_info import invented
from .unused import live_nodes, newly_dead_words
from .value_types import declared_type, ruled_type, type_words, value_type

# a new symbolic dim (the model's own dims are kept whatever their text)
DIM_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-+*/ ()]*$")


def _fill_shape(op: dict, shape_proto: onnx.TensorShapeProto, shape: list) -> None:
    """Set `shape`; a dim sent as the model already has it stays exactly as it is (a "?" or a
    -1 PaddlePaddle writes, its denotation): only the dims that change are checked."""
    old = list(shape_proto.dim)
    same = lambda d, o: type(d) is type(dim_json(o)) and d == dim_json(o)  # noqa: E731 (True == 1 is not a match)
    dims = []
    for i, d in enumerate(shape):
        # the dim at that index first, else one that moved (a dim removed before it)
        was = old[i] if i < len(old) and same(d, old[i]) else next((o for o in old if same(d, o)), None)
        if was is not None:
            kept = onnx.TensorShapeProto.Dimension()
            kept.CopyFrom(was)
            dims.append(kept)
        elif d is None:
            dims.append(onnx.TensorShapeProto.Dimension())
        elif isinstance(d, int):
            if d < 0:
                raise StudioError("bad_value", f"{op['op']}: dim {i} must be a non-negative integer, got {d}")
            if d > MAX_DIM_SIZE:  # 2^62: no runtime is given it, and the gate would have nothing to run
                raise StudioError(
                    "bad_value", f"{op['op']}: dim {i} is too big a size: {d:.3g} (at most {MAX_DIM_SIZE:.0e})"
                )
            dims.append(onnx.TensorShapeProto.Dimension(dim_value=d))
        elif DIM_PARAM.match(d):
            dims.append(onnx.TensorShapeProto.Dimension(dim_param=d))
        else:
            raise StudioError(
                "bad_value",
                f'{op["op"]}: dim {i} must be a size (a whole number from 0), a symbolic name like "batch", '
                f"or unknown (null; an empty field on the page); got {d!r}",
            )
    shape_proto.Clear()
    shape_proto.dim.extend(dims)


def _retyped(values: list, elem: int | None, shape: list | None, op: dict, name: str) -> str:
    """Give inputs/outputs (one name: the main graph's, or a body's) the element type and shape
    set_io_shape asks; what they now are, in words."""
    for v in values:
        tt = v.type.tensor_type
        if elem is not None:
            tt.elem_type = elem
        elif not tt.elem_type:
            raise StudioError("missing_field", f'set_io_shape: {name!r} has no element type yet; give "dtype"')
        if shape is None:
            tt.ClearField("shape")
        else:
            _fill_shape(op, tt.shape, shape)
    elem_name = onnx.TensorProto.DataType.Name(values[0].type.tensor_type.elem_type)
    return format_tensor(elem_name, shape) if shape is not None else f"{elem_name} of unknown rank"


@edit_op(
    "set_io_shape",
    required("name", NAME, "an input or output of the graph (the main graph's unless `graph` names a body)"),
    required(
        "shape",
        SHAPE,
        "the new shape; null for unknown rank (in a body only: a main graph's inputs and outputs need a shape)",
    ),
    optional("dtype", DTYPE | NULL, "the new element type (null: keep it)"),
    optional(
        "update_types",
        BOOLEAN | NULL,
        "re-infer the value_info of every graph and the outputs' shapes (bodies' too) after; absent or null:"
        " done when an input's new dims leave value_info saying otherwise, or outputs declaring a dim no input"
        " names any more (false: never)",
        None,
    ),
    optional(
        "cast",
        BOOLEAN,
        "with a new dtype: the graph keeps computing in the old one, through a Cast after the input (before the output)",
        False,
    ),
    optional(
        "graph",
        BODY_PATH,
        'the graph: the main graph, or a body ("n3/body", "n2/then_branch") whose input or output takes the shape',
        default="",
    ),
)
def set_io_shape(model: onnx.ModelProto, op: dict) -> str | LateLine:
    """Set the shape (each dim an integer, a symbolic name, or null for unknown; the whole shape
    null for unknown rank) and optionally the element type of a main-graph input or output.
    Dims sent as the model has them stay exactly as they are; its name, doc_string and other
    fields stay. `cast: true` with a new element type keeps the graph as it is inside: a Cast
    from the new type to the old one after an input (uint8 images into a float model, int32
    token ids for TensorRT), from the old to the new before an output (float16 out).
    `update_types: true` re-infers from it the value_info of every graph, the main graph's
    outputs' shapes (dims named as infer_shapes names them) and the If/Loop/Scan bodies' output
    and fed input shapes (an output set here keeps the shape given; the answer says where
    inference still fixes a size). Left out, that is done when an input's new dims leave
    value_info that inference now types otherwise (stale sizes there make onnxruntime's fused
    kernels fail at any other size: a model valid at 1 only), or leave outputs declaring a dim
    no input names any more (batch fixed to 1); with `false`, the answer counts
    the value_info entries that still give the sizes before. A named dim given a size that no
    input names any more is written where outputs and value_info still name it after (as
    fix_dims does); a named dim renamed that other inputs still give is said, with the
    rename_dim op that renames it everywhere. The
    answer names nodes whose constant inputs still hard-code a value it changed. With `graph`, an
    input or output of a Loop's or Scan's body or an If's branch: its shape, and its element type
    only where its node leaves that free (a scan output's); a carried value, a Scan's state or a
    scanned slice keeps the element type of what its node feeds it, the iteration number and the
    condition stay INT64 and BOOL scalars, an If branch's output the other branch's type (no
    `cast` there)."""
    if op.get("graph"):
        return _set_body_io_shape(model, op)
    name = op["name"]
    hits = [v for v in list(model.graph.input) + list(model.graph.output) if v.name == name]
    if not hits:
        io = [v.name for v in list(model.graph.input) + list(model.graph.output)]
        raise NotFound(
            "unknown_io",
            f"set_io_shape: the graph has no input or output named {name!r}{_in_a_body(model, name) or closest(name, io)}",
        )
    elem = onnx.TensorProto.DataType.Value(op["dtype"]) if op.get("dtype") is not None else None
    shape = op["shape"]
    _fits_its_initializer(model, name, shape)
    before = [shape_json(v.type.tensor_type.shape) if v.type.tensor_type.HasField("shape") else None for v in hits]
    was = hits[0].type.tensor_type.elem_type
    named_before = input_dim_names(model)
    for v in hits:
        if v.type.WhichOneof("value") not in (None, "tensor_type"):
            raise StudioError("bad_value", f"set_io_shape: {name!r} is a {v.type.WhichOneof('value')}, not a tensor")
    said = f"{name!r} is now {_retyped(hits, elem, shape, op, name)}"
    if shape is None:
        _shaped_at_batch_end(model, name, "set_io_shape")
    if op.get("cast") and elem is not None and was and elem != was:
        said += _cast_inside(model, name, was, elem, len(hits))
    is_output = any(v.name == name for v in model.graph.output)
    is_input = any(v.name == name for v in model.graph.input)
    sizes = _named_to_sized(before[0], shape) if is_input else {}
    said += typed_again(
        model, named_before, op.get("update_types"), shape != before[0], name if is_output else None, sizes
    )
    said += _still_named(model, name, before[0], shape) if is_input else ""
    if is_input and before[0]:
        # judged on the batch's result: a later op may replace the constant that hard-codes it
        old_dims = before[0]
        return LateLine(lambda: said + hard_coded_hint(model, old_dims, shape or []))
    return said


def _shaped_at_batch_end(model: onnx.ModelProto, name: str, op_name: str) -> None:
    """A main graph's input or output must declare a shape (onnx's checker says "Field 'shape'
    of 'type' is required but missing", naming no value): refused naming it when the batch
    leaves it without one (allow_invalid stores it past, as it does the checker's refusal)."""

    def check() -> None:
        for kind, values in (("input", model.graph.input), ("output", model.graph.output)):
            v = next((v for v in values if v.name == name), None)
            if v is not None and v.type.HasField("tensor_type") and not v.type.tensor_type.HasField("shape"):
                raise StudioError(
                    "invalid_result",
                    f"the edit would make the model invalid: {op_name} leaves {name!r}, an {kind} of the main"
                    " graph, with no shape, and onnx's checker requires one (its rank at least): give its dims,"
                    " null for a size unknown ([null, 3])",
                    422,
                )

    at_batch_end(check)


def _named_to_sized(before: list | None, after: list | None) -> dict[str, int]:
    """The named dims an input's new shape gives a size at their place ("batch" -> 1); a name
    given two sizes is none's."""
    if before is None or after is None or len(before) != len(after):
        return {}
    pairs = [(b, a) for b, a in zip(before, after, strict=True) if isinstance(b, str) and type(a) is int]
    return {b: a for b, a in pairs if all(a2 == a for b2, a2 in pairs if b2 == b)}


def _still_named(model: onnx.ModelProto, name: str, before: list | None, after: list | None) -> str:
    """ "; 'position_ids' still says 'seq' ..." where an input's named dim took another name
    that other inputs still give it: one size, two names (QA29 F9: the Run and Costs panels then
    ask for both). A hint pointing at rename_dim, which renames it everywhere."""
    if before is None or after is None or len(before) != len(after):
        return ""
    said = ""
    for old, new in zip(before, after, strict=True):
        if not (isinstance(old, str) and isinstance(new, str) and old != new and old and new):
            continue
        others = [v.name for v in model.graph.input if v.name != name and old in _dim_names_of(v)]
        if not others:
            continue
        verb = "says" if len(others) == 1 else "say"
        fix = json.dumps({"op": "rename_dim", "from": old, "to": new, "merge": True}, ensure_ascii=False)
        said += (
            f"; {some_names(others)} still {verb} {old!r}, which {name!r} shared:"
            f" rename_dim renames a dim in every input, output and value_info ({fix})"
        )
    return said


def _dim_names_of(v: onnx.ValueInfoProto) -> set[str]:
    if not v.type.HasField("tensor_type"):
        return set()
    return {d.dim_param for d in v.type.tensor_type.shape.dim if d.dim_param}


def typed_again(
    model: onnx.ModelProto,
    named_before: set[str],
    update: bool | None,
    changed: bool,
    output: str | None,
    sizes: dict[str, int] | None = None,
) -> str:
    """After main-graph inputs (or `output`) took new dims: "; " and what re-inferring the types
    did, when asked (`update`) or, left to it (None), when value_info still says the dims before
    or the outputs declare a dim no input names any more; else the hint of what still says them.
    `sizes`: dims the inputs were given a size for (batch = 1); those no input names any more are
    written where outputs and value_info still name them after (sized_declarations), or with
    `update` false said to be still there."""
    sizes = {d: n for d, n in (sizes or {}).items() if d not in input_dim_names(model)}
    if update is False:  # declarations kept as they are: what still names those dims is said
        stale = stale_hint(model) if changed and output is None else ""
        return stale + sized_declarations(model, sizes, reinferred=False, write=False)
    stale = stale_hint(model) if update is not True and changed and output is None else ""
    # a dim no input names any more (batch fixed to 1) left in the outputs' declarations: they
    # are re-inferred too (QA23: a conformer made static still declared [batch, time_sub, 32])
    # and one inference made up (tf2onnx's [unk__313, unk__314, 85]): fixed inputs may size it now
    # (QA43 #2: a detector made static still declared ?×?×85)
    orphaned = (
        update is None
        and output is None
        and (_outputs_name(model, named_before - input_dim_names(model)) or _outputs_invent(model))
    )
    if update or (update is None and (stale or orphaned)):
        return f"; {refresh_types(model, asked=output)}" + sized_declarations(model, sizes, reinferred=True)
    return sized_declarations(model, sizes, reinferred=False) + stale


def input_dim_names(model: onnx.ModelProto) -> set[str]:
    """The symbolic dims the main graph's inputs name."""
    return {
        d.dim_param
        for v in model.graph.input
        if v.type.HasField("tensor_type")
        for d in v.type.tensor_type.shape.dim
        if d.dim_param
    }


def orphaned_output_dims(model: onnx.ModelProto) -> set[str]:
    """The symbolic dims the main graph's outputs declare that no input names: left by a batch
    fixed to 1, or by a model joined on (compose: its `batch`, `anchors` after a static model)."""
    declared = {
        d.dim_param
        for v in model.graph.output
        if v.type.HasField("tensor_type")
        for d in v.type.tensor_type.shape.dim
        if d.dim_param
    }
    return declared - input_dim_names(model)


def _outputs_invent(model: onnx.ModelProto) -> bool:
    """Whether a main-graph output declares a dim by a name inference made up (unk__3)."""
    return any(
        d.HasField("dim_param") and not is_known(d.dim_param)
        for v in model.graph.output
        if v.type.HasField("tensor_type")
        for d in v.type.tensor_type.shape.dim
    )


def _outputs_name(model: onnx.ModelProto, dims: set[str]) -> bool:
    """Whether a main-graph output declares one of `dims`."""
    return bool(dims) and any(
        d.dim_param in dims
        for v in model.graph.output
        if v.type.HasField("tensor_type")
        for d in v.type.tensor_type.shape.dim
    )


def _in_a_body(model: onnx.ModelProto, name: str) -> str:
    """ "; it is an input of while/body: give graph "n2/body"" where a body of the main graph
    has an input or output of that name; else ""."""
    for ref in walk_graphs(model):
        if not ref.path or ref.path.startswith(("fn[", "train[")):
            continue
        g = ref.container
        if not isinstance(g, onnx.GraphProto):
            continue
        ins, outs = {v.name for v in g.input}, {v.name for v in g.output}
        kind = "an input" if name in ins else "an output" if name in outs else ""
        if kind:
            return f'; it is {kind} of {where(model, ref)}: give "graph": "{ref.path}"'
    return ""


def _set_body_io_shape(model: onnx.ModelProto, op: dict) -> str:
    """set_io_shape of an input or output of a body (`graph`): see set_io_shape."""
    name, shape = op["name"], op["shape"]
    ref = graph_at(model, op["graph"], "set_io_shape")
    g: onnx.GraphProto = ref.container  # type: ignore[assignment]  # graph_at refuses functions
    body = body_of(model, ref)
    here = where(model, ref)
    if body is None:
        raise StudioError(
            "bad_value", f"set_io_shape: {here} is no body of a Loop, Scan or If; leave out graph for the main graph"
        )
    places = [(True, k, v) for k, v in enumerate(g.input) if v.name == name]
    places += [(False, k, v) for k, v in enumerate(g.output) if v.name == name]
    if not places:
        raise NotFound("unknown_io", f"set_io_shape: {here} has no input or output named {name!r}")
    if op.get("cast"):
        raise StudioError(
            "bad_value",
            f"set_io_shape: cast works on the main graph's inputs and outputs; {name!r} of {here} is"
            f" {body.holder_words}'s to feed and take",
        )
    elem = onnx.TensorProto.DataType.Value(op["dtype"]) if op.get("dtype") is not None else None
    roles = body_roles(body.holder, body.attr, body.version) or {"inputs": [], "outputs": []}
    for is_input, k, v in places:
        if v.type.WhichOneof("value") not in (None, "tensor_type"):
            raise StudioError("bad_value", f"set_io_shape: {name!r} is a {v.type.WhichOneof('value')}, not a tensor")
        said = roles["inputs" if is_input else "outputs"]
        role = said[k] if k < len(said) else None
        _keeps_contract(model, body, role, v, elem, shape, is_input, k)
    before = [
        shape_json(v.type.tensor_type.shape) if v.type.tensor_type.HasField("shape") else None for _, _, v in places
    ]
    now = _retyped([v for _, _, v in places], elem, shape, op, name)
    is_input, k, _ = places[0]
    role = (roles["inputs" if is_input else "outputs"] + [None] * (k + 1))[k]
    side = "input" if is_input else "output"
    what = (role["tag"] if role["tag"].endswith("output") else f"{role['tag']} {side}") if role else side
    said = f"{name!r} ({what} of {here}) is now {now}"
    only_output = all(not i for i, _, _ in places)
    update = op.get("update_types")
    stale = stale_hint(model) if update is not True and shape != before[0] and not only_output else ""
    if update or (update is None and stale):
        asked = [onnx.TypeProto() for _ in places]
        for t, (_, _, v) in zip(asked, places, strict=True):
            t.CopyFrom(v.type)
        said += f"; {refresh_types(model)}"
        for t, (i, _, v) in zip(asked, places, strict=True):
            if not i:  # a body's output as asked, not as re-inferred
                v.type.CopyFrom(t)
            elif v.type != t:  # re-fitted to what its node feeds it
                said += f"; it takes what {body.holder_words} feeds it: {type_words(v.type)}"
    else:
        said += stale + _partner_hint(g, role if is_input else None, shape)
    return said


def _partner_hint(g: onnx.GraphProto, role: dict | None, shape: list | None) -> str:
    """ "; 's_out', which the next iteration reads as it, still declares ⟨1×4⟩ (update_types
    re-infers it)": a carried input (a Scan's state) given dims its body output doesn't declare."""
    if not role or role["kind"] not in ("carried", "state") or shape is None:
        return ""
    k = role.get("body_output")
    out = g.output[k] if k is not None and k < len(g.output) else None
    if out is None or not out.type.HasField("tensor_type") or not out.type.tensor_type.HasField("shape"):
        return ""
    declared = shape_json(out.type.tensor_type.shape)
    if declared == shape:
        return ""
    return f"; {out.name!r}, which the next iteration reads as it, still declares {type_words(out.type)} (update_types re-infers it)"


_SCALAR_ROLES = {"iteration": onnx.TensorProto.INT64, "condition": onnx.TensorProto.BOOL}


def _keeps_contract(
    model: onnx.ModelProto,
    body,
    role: dict | None,
    v: onnx.ValueInfoProto,
    elem: int | None,
    shape: list | None,
    is_input: bool,
    k: int,
) -> None:
    """Refuse, in one line, a type the body's node doesn't allow at that place: another element
    type than what feeds a carried value, a state or a scanned slice (or the one the contract
    fixes for an output); a Loop's iteration number or condition other than a scalar."""
    name, kind = v.name, role["kind"] if role else None
    type_name = onnx.TensorProto.DataType.Name
    holder = body.holder_words
    if kind in _SCALAR_ROLES:
        want = _SCALAR_ROLES[kind]
        what = "the iteration number" if kind == "iteration" else "the condition"
        if (elem is not None and elem != want) or (shape is not None and shape != []):
            raise StudioError(
                "breaks_body",
                f"set_io_shape: {name!r} is {what} of {holder}: {'an' if kind == 'iteration' else 'a'}"
                f" {type_name(want)} scalar, by the spec",
            )
        return
    if elem is None or elem == v.type.tensor_type.elem_type:
        return
    if not is_input:
        now = onnx.TypeProto()
        now.tensor_type.elem_type = elem
        check_type_kept(body, k, now, "set_io_shape", name)
        return
    at = role.get("node_input") if role else None
    fed = body.holder.input[at] if at is not None and at < len(body.holder.input) else ""
    if not fed:
        return
    t = value_type(model, body.around(model).path, fed)
    have = t.tensor_type.elem_type if t is not None and t.WhichOneof("value") == "tensor_type" else 0
    if have and have != elem:
        words = {"carried": "a carried value", "state": "a Scan's state", "scanned": "a scanned slice"}.get(
            kind or "", "it"
        )
        raise StudioError(
            "breaks_body",
            f"set_io_shape: {name!r} would be {type_name(elem)}, but {words} takes the element type of what"
            f" {holder} feeds it: {fed!r} is {type_name(have)}",
        )


def _fits_its_initializer(model: onnx.ModelProto, name: str, shape: list | None) -> None:
    """An input with an initializer of its name (a weight, listed among the inputs as IR < 4
    models list every weight; or an input's default value) has that tensor's shape: a shape of
    another rank or size is refused saying so, not by shape inference's "Inferred shape and
    existing shape differ in rank: (1) vs (4)"."""
    weight = next((t for t in model.graph.initializer if t.name == name), None)
    if weight is None or shape is None or not any(v.name == name for v in model.graph.input):
        return
    dims = list(weight.dims)
    if len(shape) != len(dims) or any(isinstance(d, int) and d != w for d, w in zip(shape, dims, strict=True)):
        raise StudioError(
            "bad_value",
            f"{name!r} is a weight (an initializer listed among the inputs) of shape"
            f" {format_tensor(onnx.TensorProto.DataType.Name(weight.data_type), dims)}: its shape is its"
            " initializer's (set_initializer changes it)",
        )


def _cast_inside(model: onnx.ModelProto, name: str, was: int, now: int, places: int) -> str:
    """Keep the graph reading (writing) `name` as element type `was`: what read the input now
    reads a Cast of it, or what wrote the output now feeds a Cast to it."""
    g = model.graph
    is_input = any(v.name == name for v in g.input)
    if places > 1:
        raise StudioError(
            "bad_value", f"set_io_shape: {name!r} is both an input and an output: there is no inside to cast"
        )
    producer = next((i for i, n in enumerate(g.node) if name in n.output), None)
    if not is_input and producer is None:
        raise StudioError("bad_value", f"set_io_shape: no node computes output {name!r}, so no Cast can go before it")
    inner = fresh_name(model, f"{name}_{onnx.TensorProto.DataType.Name(was).lower()}")
    rename_in_graph(g, name, inner)  # every reader (subgraphs too), the producer, value_info
    for values in (g.input, g.output):
        for v in values:
            if v.name == inner:  # the graph's own input or output keeps its name
                v.name = name
    for t in g.initializer:
        if t.name == inner:  # an input's default (below IR 4, weights are inputs too)
            t.name = name
    node_name = fresh_name(model, f"{name}_cast", {n.name for n in g.node})
    if is_input:
        cast = onnx.helper.make_node("Cast", [name], [inner], name=node_name, to=was)
        g.node.insert(0, cast)
    else:
        assert producer is not None  # refused above
        cast = onnx.helper.make_node("Cast", [inner], [name], name=node_name, to=now)
        g.node.insert(producer + 1, cast)
    return f"; a Cast {'after' if is_input else 'before'} it keeps the graph in {onnx.TensorProto.DataType.Name(was)} ({inner!r})"


@edit_op(
    "add_output",
    required("tensor", NAME, "the tensor to output"),
    optional("dtype", DTYPE | NULL, "its element type, when it can't be inferred (null: infer it)"),
    optional(
        "shape",
        SHAPE,
        "its shape, when it can't be inferred (null or absent: as inference or its operator's definition gives it;"
        " unknown rank in a body only: a main graph's output must declare one)",
    ),
    optional("graph", BODY_PATH, 'the graph: the main graph, or a body ("n3/then_branch")', default=""),
    optional("replace", NAME | NULL, "an output of that graph the tensor takes the place of (needed in a body)"),
)
def add_output(model: onnx.ModelProto, op: dict) -> str:
    """Make a tensor an output of the main graph or, with `graph`, of a body. Its type comes
    from value_info or shape inference, or from `dtype`/`shape` (either alone) when those can't
    tell. A main graph's output must declare a shape (its rank at least): where inference gives none (the
    present_key/present_value of opset-23 Attention), the shape the operator's definition gives
    from its inputs' (said in the change); refused, naming the node that writes the tensor, when
    nothing tells it (give `dtype` and `shape`, a dim null where its size is unknown). With
    `replace` it takes that output's place (which stops being one; its tensor and producer
    stay). A body's outputs are positional — an If branch gives one per output of the If, a
    Loop body its condition, carried values and scan outputs — so in an If branch an output is
    only replaced, by a value of the body itself (not one it reads from around it) of the
    element type the If or Loop needs there (the other branch's, the carried value's); in a
    Loop or Scan body without `replace` it becomes a new scan output: each iteration's value
    stacked into a new last output of the node (named `<tensor>_all`, said in the change)."""
    tensor = op["tensor"]
    ref = graph_at(model, op["graph"], "add_output")
    g: onnx.GraphProto = ref.container  # type: ignore[assignment]  # graph_at refuses functions
    body = body_of(model, ref)
    here = where(model, ref)
    if any(v.name == tensor for v in g.output):
        said = "a graph output" if not ref.path else f"an output of {here}"
        raise StudioError("already_output", f"add_output: {tensor!r} is already {said}")
    if not defines(g, tensor):
        if body is not None and enclosing_defines(model, ref, tensor):
            raise StudioError(
                "breaks_body",
                f"add_output: {tensor!r} is a value of a graph around {here}; a body gives only its own values"
                " (an Identity in it can pass this one)",
            )
        raise NotFound("unknown_tensor", f"add_output: no node, input or initializer of {here} produces {tensor!r}")
    replace = op.get("replace")
    if replace is None and body is not None and not _scans_out(body):
        raise StudioError(
            "breaks_body",
            f'add_output: {positional_words(model, body)}; give "replace" to make {tensor!r} one of them in place of another',
        )
    k = len(g.output)
    if replace is not None:
        k = next((i for i, v in enumerate(g.output) if v.name == replace), -1)
        if k < 0:
            raise NotFound("unknown_output", f"add_output: {here} has no output named {replace!r}")
    vi = onnx.ValueInfoProto(name=tensor)
    ruled = _output_type(model, ref.path, tensor, op, vi.type)
    if body is not None:
        check_type_kept(body, k, vi.type, "add_output", tensor)
    if replace is None and body is not None:
        return _add_scan_output(model, body, vi)
    if replace is None:
        g.output.append(vi)
        return f"added graph output {tensor!r}{ruled}"
    was_live = live_nodes(model, g)[0]
    g.output[k].CopyFrom(vi)
    role = f" ({body.role(k)})" if body is not None else ""
    return f"{tensor!r} is now an output of {here}{ruled} in place of {replace!r}{role}{newly_dead_words(model, g, was_live)}"


def _output_type(model: onnx.ModelProto, path: str, tensor: str, op: dict, into: onnx.TypeProto) -> str:
    """Write into `into` the type add_output gives `tensor`: "dtype" and "shape" as sent (one
    sent alone: the other as declared or inferred), else as declared or inferred. An output of
    the main graph must declare a shape (onnx's checker: "Field 'shape' of 'type' is required
    but missing", naming nothing): where inference gives none (opset-23 Attention's
    present_key), the shape its operator's definition gives (the words said of it, else "");
    refused naming the tensor and its node when nothing tells."""
    main, dtype, shape = not path, op.get("dtype"), op.get("shape")
    tp = value_type(model, path, tensor) if dtype is None else None
    if tp is not None:
        into.CopyFrom(tp)
    if dtype is not None:
        into.tensor_type.elem_type = onnx.TensorProto.DataType.Value(dtype)
    if shape is not None:
        if into.WhichOneof("value") not in (None, "tensor_type"):
            raise StudioError(
                "bad_value", f"add_output: {tensor!r} is a {into.WhichOneof('value')}: a shape is a tensor's"
            )
        if not into.tensor_type.elem_type:
            raise StudioError("unknown_type", f"add_output: {_untyped(model, path, tensor)}", 422)
        _fill_shape(op, into.tensor_type.shape, shape)
        return ""
    if (dtype is not None or tp is not None) and (not main or _has_shape(into)):
        _drop_invented_dims(model, path, tensor, into)
        return ""
    ruled = ruled_type(model, path, tensor)
    if ruled is None and not into.WhichOneof("value"):
        raise StudioError("unknown_type", f"add_output: {_untyped(model, path, tensor)}", 422)
    if ruled is None:
        raise StudioError("unknown_type", f"add_output: {_unshaped(model, tensor, into)}", 422)
    typed, node = ruled
    elem = into.tensor_type.elem_type or typed.tensor_type.elem_type
    into.CopyFrom(typed)
    into.tensor_type.elem_type = elem
    _drop_invented_dims(model, path, tensor, into)
    return f" as {type_words(into)}, the shape {node.op_type}'s definition gives it (onnx's shape inference gives none)"


def _has_shape(t: onnx.TypeProto) -> bool:
    """A tensor type with a shape, or a type of another kind (a sequence's, a map's)."""
    return t.WhichOneof("value") != "tensor_type" or t.tensor_type.HasField("shape")


def _drop_invented_dims(model: onnx.ModelProto, path: str, tensor: str, t: onnx.TypeProto) -> None:
    """unk__0 is no name of the model's: an output declares none (a model's own names stay,
    num_boxes in its value_info; an expression of the inputs' dims, past_seq + seq, too — but
    where an output of the same node declares a name of its own there, that name: a re-added
    present.2.value says total_seq as present.2.key does, not past_seq + seq, QA30)."""
    g = resolve_graph(model, path).container
    if not t.HasField("tensor_type") or (isinstance(g, onnx.GraphProto) and declared_type(g, tensor) is not None):
        return
    names = input_dims(model)
    siblings = _sibling_dims(g, tensor) if isinstance(g, onnx.GraphProto) else []
    for k, d in enumerate(t.tensor_type.shape.dim):
        if d.HasField("dim_param") and invented(d.dim_param, names):
            d.ClearField("dim_param")
        elif d.HasField("dim_param") and expression_names(d.dim_param, names) is not None:
            own = {s[k] for s in siblings if len(s) == len(t.tensor_type.shape.dim)}
            if len(own) == 1 and (name := own.pop()) and isinstance(name, str) and name not in names:
                d.dim_param = name


def _sibling_dims(g: onnx.GraphProto, tensor: str) -> list[list]:
    """The dims the graph declares for the other outputs of the node writing `tensor`."""
    node = next((n for n in g.node if tensor in n.output), None)
    if node is None:
        return []
    found = (declared_type(g, o) for o in node.output if o and o != tensor)
    return [dims for t in found if t is not None and (dims := shape_json(t.tensor_type.shape)) is not None]


def _writer_words(model: onnx.ModelProto, path: str, tensor: str) -> str:
    """ " (written by node "attn" (Attention))", or "" for a graph's input or initializer."""
    g = resolve_graph(model, path).container
    at = next((k for k, n in enumerate(getattr(g, "node", [])) if tensor in n.output), None)
    if at is None:
        return ""
    n = g.node[at]
    return f" (written by {node_words(n.name, n.op_type, node_id(path, at))})"


def _untyped(model: onnx.ModelProto, path: str, tensor: str) -> str:
    """Why no type could be given: nothing declares or infers one; how to give it."""
    shape = ' and "shape" (null for a dim of unknown size: [null, 4])' if not path else ' (and "shape")'
    return (
        f"the type of {tensor!r}{_writer_words(model, path, tensor)} can't be inferred and nothing declares it;"
        f' give "dtype"{shape}'
    )


def _unshaped(model: onnx.ModelProto, tensor: str, typed: onnx.TypeProto) -> str:
    """Why a main-graph output can't be declared without a shape; how to give one."""
    elem = typed.tensor_type.elem_type if typed.HasField("tensor_type") else 0
    dtype = f'"dtype": "{onnx.TensorProto.DataType.Name(elem)}", ' if elem else '"dtype", '
    return (
        f"onnx's shape inference gives {tensor!r}{_writer_words(model, '', tensor)} no shape, and an output of"
        " the main graph must declare one (its rank at least: onnx's checker refuses it without);"
        f' give {dtype}"shape" (null for a dim of unknown size: [null, 4])'
    )


def _scans_out(body) -> bool:
    """Whether the body's holder stacks its extra outputs (a Loop, a Scan from opset 9)."""
    if body.holder.op_type == "Loop":
        return True
    return body.holder.op_type == "Scan" and not any(a.name == "directions" for a in body.holder.attribute)


def _add_scan_output(model: onnx.ModelProto, body, vi: onnx.ValueInfoProto) -> str:
    """A new last output of a Loop or Scan body: a scan output, each iteration's value stacked
    into a new last output of the holder (a Scan's per-output axes and directions, where it
    lists them, take 0: stacked along a new first axis, first iteration first)."""
    holder, g, name = body.holder, body.graph, vi.name
    outer = fresh_name(model, f"{name}_all")
    through = ""
    if any(v.name == name for v in g.input):
        # onnxruntime (1.2x) stacks zeros for a body output that is the body's own input
        vi.name = fresh_name(model, f"{name}_copy")
        g.node.append(onnx.helper.make_node("Identity", [name], [vi.name], name=vi.name))
        through = f" (through an Identity writing {vi.name!r}: onnxruntime stacks zeros for a body's input given back)"
    g.output.append(vi)
    holder.output.append(outer)
    for a in holder.attribute:
        if a.name in ("scan_output_axes", "scan_output_directions"):
            a.ints.append(0)
    return (
        f"{name!r} is now a scan output of {body.holder_words}: each iteration's {type_words(vi.type)}"
        f" stacked into {outer!r}, a new output of the node{through}"
    )


@edit_op(
    "remove_output",
    required("name", NAME, "the graph output"),
    optional("graph", BODY_PATH, "the graph: the main graph (a body's outputs are only replaced)", default=""),
)
def remove_output(model: onnx.ModelProto, op: dict) -> str:
    """Remove a graph output (the tensor and its producer stay). The last output can't go. A
    body's outputs stand one for one for what its If or Loop gives: none goes alone (add_output
    with `replace` puts another tensor in one's place)."""
    name = op["name"]
    ref = graph_at(model, op["graph"], "remove_output")
    g: onnx.GraphProto = ref.container  # type: ignore[assignment]  # graph_at refuses functions
    i = next((k for k, v in enumerate(g.output) if v.name == name), -1)
    if i < 0:
        raise NotFound("unknown_output", f"the graph has no output named {name!r}")
    body = body_of(model, ref)
    if body is not None:
        raise StudioError(
            "breaks_body",
            f"remove_output: {positional_words(model, body)}, so {name!r} can't go alone;"
            ' add_output with "replace" puts another tensor in its place',
        )
    if len(g.output) == 1:
        raise StudioError("last_output", f"remove_output: {name!r} is the graph's only output; a model needs one")
    was_live = live_nodes(model, g)[0]
    del g.output[i]
    return f"removed graph output {name!r}{newly_dead_words(model, g, was_live)}"


@edit_op(
    "add_input",
    required("name", NAME, "a new name, or an initializer's"),
    required("dtype", DTYPE, "its element type"),
    required("shape", SHAPE, "its shape (null, for unknown rank, is refused: a main graph's input needs a shape)"),
)
def add_input(model: onnx.ModelProto, op: dict) -> str:
    """Add a graph input: a new name, or an existing initializer's name (which then becomes an
    input the caller may override)."""
    name = op["name"]
    g = model.graph
    if any(v.name == name for v in g.input):
        raise StudioError("name_taken", f"add_input: {name!r} is already a graph input")
    if any(name in n.output for n in g.node):
        raise StudioError("name_taken", f"add_input: {name!r} is computed by a node; it can't also be an input")
    vi = onnx.ValueInfoProto(name=name)
    vi.type.tensor_type.elem_type = onnx.TensorProto.DataType.Value(op["dtype"])
    if op["shape"] is not None:
        _fill_shape(op, vi.type.tensor_type.shape, op["shape"])
    else:
        _shaped_at_batch_end(model, name, "add_input")
    g.input.append(vi)
    return f"added graph input {name!r}"


@edit_op("remove_input", required("name", NAME, "the graph input"))
def remove_input(model: onnx.ModelProto, op: dict) -> str:
    """Remove a graph input. Only when nothing reads it, or when an initializer of that name keeps
    supplying the value."""
    from .unused import initializer_names, names_in_use

    name = op["name"]
    field, i = main_graph_value(model, name, "input")
    g = model.graph
    backed = name in initializer_names(g)
    if not backed and name in names_in_use(model, g):
        raise StudioError("in_use", f"remove_input: {name!r} is read by the graph; remove or rewire its readers first")
    del field[i]
    return f"removed graph input {name!r}" + (" (its initializer stays)" if backed else "")


@edit_op(
    "freeze_input",
    required("name", NAME, "a main-graph input no initializer backs"),
    required("value", TENSOR_VALUE, "the value it has from now on (an .npy is cast to the input's element type)"),
)
def freeze_input(model: onnx.ModelProto, op: dict) -> str:
    """Fix a main-graph input to a constant: the value becomes an initializer of that name, so
    every node reading the input reads it, and the input goes (below IR version 4, where every
    initializer is also an input, it stays). The value has the input's element type and fits its
    declared shape: fixed dims as they are, a symbolic or unknown dim any size (a mask's batch,
    a `use_cache_branch` flag). Simplify then folds what the constant makes constant."""
    name = op["name"]
    field, i = main_graph_value(model, name, "input")
    g = model.graph
    if any(t.name == name for t in g.initializer):
        raise StudioError(
            "in_use", f"freeze_input: {name!r} already has an initializer; remove_input leaves that value fixed"
        )
    declared = field[i].type
    if declared.WhichOneof("value") != "tensor_type":
        raise StudioError("bad_value", f"freeze_input: {name!r} is not a tensor input; only tensors can be constants")
    elem = declared.tensor_type.elem_type
    dtype = onnx.TensorProto.DataType.Name(elem) if elem else None  # an .npy of float64 is the usual case
    value = tensor_from_source(op["value"], f"the value of {name!r}", name, dtype)
    _check_fits(name, value, declared.tensor_type)
    g.initializer.append(value)
    kept = model.ir_version < 4
    if not kept:
        del field[i]
    shape = "×".join(str(d) for d in value.dims) or "scalar"
    note = " (it stays an input: below IR version 4 every initializer is one, a default the caller may override)"
    return f"graph input {name!r} fixed to a constant ({onnx.TensorProto.DataType.Name(value.data_type)} {shape})" + (
        note if kept else ""
    )


def _check_fits(name: str, value: onnx.TensorProto, declared: onnx.TypeProto.Tensor) -> None:
    """Refuse a value whose element type or shape the input's declaration rules out."""
    want = declared.elem_type
    if want and value.data_type != want:
        raise StudioError(
            "type_mismatch",
            f"freeze_input: {name!r} is {onnx.TensorProto.DataType.Name(want)}; the value is "
            f"{onnx.TensorProto.DataType.Name(value.data_type)}",
        )
    if not declared.HasField("shape"):
        return
    dims = [dim_json(d) for d in declared.shape.dim]
    fits = len(dims) == len(value.dims) and all(
        not isinstance(d, int) or d < 0 or d == n for d, n in zip(dims, value.dims, strict=True)
    )
    if not fits:
        raise StudioError(
            "shape_mismatch",
            f"freeze_input: {name!r} is declared [{', '.join('?' if d is None else str(d) for d in dims)}]; "
            f"the value's shape is {list(value.dims)}",
        )
