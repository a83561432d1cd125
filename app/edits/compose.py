"""Composing models: another model (an uploaded .onnx) joined to this one, before it (a
pre-processing model feeding its inputs) or after it (a post-processing model reading its
outputs or any tensor it computes), as onnx.compose.merge_models joins two models — but this
model keeps every name, field, opset and metadata entry it has: only the added model's names
change (those this model already uses, or all of them with a prefix), its ai.onnx opset is
converted to this model's when they differ, and its weights go into the store like any edit's.
"""

from __future__ import annotations

import onnx

from ..errors import StudioError
from ..onnx_io import offload, parse_model
from ..onnx_io.ir_needs import needed_ir_version
from ..onnx_io.text_fields import readable_strings
from ..onnx_io.traverse import graphs_within, standard_domain
from .field_types import BOOLEAN, NAME, STRING
from .graph_io import orphaned_output_dims
from .jsontypes import Enum, Map, Object, String, optional, required
from .names import all_names, fresh_name
from .registry import edit_op
from .shape_hints import refresh_types
from .sources import read_blob

ONNX_FILE = Object(
    (required("onnx", String(min_length=1), "the digest POST /api/blobs answered for an uploaded .onnx file"),),
    tag="onnx",
)


def _added_model(value: dict) -> onnx.ModelProto:
    """The uploaded model to add, refused when it can't be joined as it is."""
    digest = value["onnx"]
    other = parse_model(read_blob(digest, "compose"), f"compose: the uploaded model {digest[:12]}")
    copy = onnx.ModelProto()
    copy.CopyFrom(other)
    if readable_strings(copy):
        raise StudioError("bad_value", "compose: the model to add has names that are not valid UTF-8; fix them first")
    if other.training_info:
        raise StudioError(
            "bad_value", "compose: the model to add holds training graphs (training_info): add an inference model"
        )
    for g in graphs_within(other.graph):
        tensors = (
            list(g.initializer) + [s.values for s in g.sparse_initializer] + [s.indices for s in g.sparse_initializer]
        )
        if any(t.data_location == onnx.TensorProto.EXTERNAL for t in tensors):
            raise StudioError(
                "external_data_missing",
                "compose: the model to add keeps tensors in external data files; save it as one .onnx with its weights inside",
                422,
            )
    return other


def _same_opsets(model: onnx.ModelProto, other: onnx.ModelProto) -> list[str]:
    """Bring the added model to this model's opsets (ai.onnx through the version converter, in
    the helper process); add the domains only it imports. What changed, in words."""
    said = []
    mine = {standard_domain(o.domain): o.version for o in model.opset_import}
    theirs = {standard_domain(o.domain): o.version for o in other.opset_import}
    for domain, version in theirs.items():
        if domain not in mine or mine[domain] == version:
            continue
        if domain != "":
            raise StudioError(
                "opset_mismatch",
                f"compose: this model imports {domain} version {mine[domain]}, the model to add version {version}",
                422,
            )
        try:
            converted = offload.convert(other, mine[""])  # C++: in the helper process
        except ValueError as exc:
            raise StudioError(
                "opset_mismatch",
                f"compose: the model to add is at opset {version} and can't be converted to this model's "
                f"{mine['']} ({exc}): convert this model's opset first",
                422,
            ) from None
        other.graph.CopyFrom(converted.graph)
        said.append(f"the added model converted from opset {version} to {mine['']}")
    for o in other.opset_import:
        if standard_domain(o.domain) not in mine:
            model.opset_import.add(domain=o.domain, version=o.version)
            said.append(f"opset {o.domain} {o.version} imported")
    return said


def _rename_everywhere(graph: onnx.GraphProto, names: dict[str, str]) -> None:
    """Rename values by `names` in `graph` and every graph it holds, in one walk. The new names
    are used nowhere in it, so a subgraph's own value renamed with its uses stays consistent."""

    def map_list(values) -> None:
        for i, x in enumerate(values):
            if x in names:
                values[i] = names[x]

    for g in graphs_within(graph):
        for coll in (g.input, g.output, g.value_info):
            for v in coll:
                v.name = names.get(v.name, v.name)
        for t in g.initializer:
            t.name = names.get(t.name, t.name)
        for s in g.sparse_initializer:
            s.values.name = names.get(s.values.name, s.values.name)
            s.indices.name = names.get(s.indices.name, s.indices.name)
        for a in g.quantization_annotation:
            a.tensor_name = names.get(a.tensor_name, a.tensor_name)
        for n in g.node:
            map_list(n.input)
            map_list(n.output)


def _typed(graph: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    return {v.name: v.type for v in list(graph.input) + list(graph.value_info) + list(graph.output)}


def _elem(t: onnx.TypeProto | None) -> int:
    return t.tensor_type.elem_type if t is not None and t.HasField("tensor_type") else 0


@edit_op(
    "compose",
    required("model", ONNX_FILE, 'the model to add: {"onnx": digest of an uploaded .onnx}'),
    required(
        "connect",
        Map(NAME, label="an object: input name -> tensor name"),
        "each input fed, and the tensor feeding it — after: an input of the added model and a tensor of this "
        "model's main graph; before: an input of this model and a tensor of the added model",
    ),
    optional(
        "position",
        Enum(("after", "before"), label='"after" or "before"'),
        "where the added model goes: after this one (reading its tensors) or before it (feeding its inputs)",
        default="after",
    ),
    optional(
        "prefix",
        STRING,
        "put before every name of the added model (absent: only names this model uses change)",
        default="",
    ),
    optional(
        "keep_outputs", BOOLEAN, "keep the graph outputs that now feed the other model as outputs too", default=False
    ),
)
def compose(model: onnx.ModelProto, op: dict) -> str:
    """Join another model (an uploaded .onnx) to this one: `position` "after" puts it after this
    model, each of its inputs named in `connect` reading the tensor of this model given for it (a
    graph output or any tensor the main graph has); "before" puts it in front, each input of this
    model named in `connect` computed by the added model's tensor given for it. The rest of the
    added model's inputs and outputs become the model's. This model's names, fields, opsets,
    metadata and functions stay; the added model's names that this model already uses get a
    suffix (or every name of it `prefix`); its ai.onnx opset is converted to this model's, its
    functions and metadata entries join this model's (this model's value wins a key both have);
    ir_version rises only as far as the joined model needs (its opsets, its data types)."""
    other = _added_model(op["model"])
    connect: dict[str, str] = op["connect"]  # input -> the tensor feeding it
    if not connect:
        raise StudioError("bad_value", "compose: connect names no input: give at least one input the tensor feeding it")
    after = op["position"] == "after"
    said = _same_opsets(model, other)
    g, h = model.graph, other.graph
    mine_typed, theirs_typed = _typed(g), _typed(h)
    computed = {v.name for v in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output}
    their_inputs = {v.name for v in h.input}
    their_values = their_inputs | {t.name for t in h.initializer} | {o for n in h.node for o in n.output}
    my_inputs = {v.name for v in g.input} - {t.name for t in g.initializer}
    for dst, src in connect.items():
        ok_dst, ok_src = (dst in their_inputs, src in computed) if after else (dst in my_inputs, src in their_values)
        if not ok_dst:
            where = "the model to add has no input" if after else "this model has no graph input"
            raise StudioError("unknown_tensor", f"compose: {where} {dst!r}", 404)
        if not ok_src:
            where = "this model's main graph" if after else "the model to add"
            raise StudioError("unknown_tensor", f"compose: {where} has no tensor {src!r}", 404)
        producer, reader = (mine_typed, theirs_typed) if after else (theirs_typed, mine_typed)
        a, b = _elem(producer.get(src)), _elem(reader.get(dst))
        if a and b and a != b:
            dtype = onnx.TensorProto.DataType.Name
            raise StudioError("type_mismatch", f"compose: {src!r} is {dtype(a)} but {dst!r} reads {dtype(b)}", 422)
    # the added model's names: the connected ones become this model's, the rest stay clear of it
    mine = all_names(g)
    taken = mine | all_names(h)
    # after: the added model's inputs take the names of this model's tensors feeding them;
    # before: the added model's tensors take the names of this model's inputs they compute (one
    # name each: a tensor feeding two inputs gets an Identity for the second)
    joined: dict[str, str] = dict(connect) if after else {}
    copies: list[tuple[str, str]] = []
    for dst, src in [] if after else connect.items():
        if src in joined:
            copies.append((joined[src], dst))
        else:
            joined[src] = dst
    names: dict[str, str] = {}
    for name in sorted(all_names(h) - set(joined) - {""}):
        wanted = op["prefix"] + name
        if wanted in mine or (op["prefix"] and wanted in taken):
            wanted = fresh_name(model, wanted, taken)
        if wanted != name:
            names[name] = wanted
            taken.add(wanted)
    renamed = len(names)
    names.update(joined)
    _rename_everywhere(h, names)
    renamed += _unique_node_names(g, h, op["prefix"])
    for first, also in copies:
        h.node.add().CopyFrom(
            onnx.helper.make_node("Identity", [first], [also], name=fresh_name(model, f"{also}_copy", taken))
        )
    added_nodes = len(h.node)
    if after:
        # the added model's connected inputs (and the initializers giving them defaults) are now
        # this model's tensors
        joined_names = set(connect.values())
        outputs = [v for v in g.output if op["keep_outputs"] or v.name not in joined_names]
        typed = [_copy(v) for v in g.output if v not in outputs]  # joined outputs: their types kept
        g.input.extend(v for v in h.input if v.name not in joined_names)
        _replace(g.output, outputs + list(h.output))
        g.node.extend(h.node)
        g.initializer.extend(t for t in h.initializer if t.name not in joined_names)
        g.sparse_initializer.extend(s for s in h.sparse_initializer if s.values.name not in joined_names)
    else:
        produced = set(connect)
        kept = [v for v in h.output if op["keep_outputs"] or v.name not in produced]
        typed = [_copy(v) for v in g.input if v.name in produced]  # this model's inputs now computed
        mine_out = {o.name for o in g.output}
        _replace(g.input, list(h.input) + [v for v in g.input if v.name not in produced])
        g.output.extend(v for v in kept if v.name not in mine_out)
        _replace(g.node, list(h.node) + list(g.node))
        g.initializer.extend(h.initializer)
        g.sparse_initializer.extend(h.sparse_initializer)
    known = {v.name for v in list(g.value_info) + list(g.input) + list(g.output)}
    for v in list(h.value_info) + typed:
        if v.name not in known:
            g.value_info.add().CopyFrom(v)
            known.add(v.name)
    g.quantization_annotation.extend(h.quantization_annotation)
    # the added model's outputs may name dims no input has here (its `batch` after a static
    # model): re-inferred, as set_io_shape does (QA25 #4: ⟨1×3840×4⟩ in, ⟨batch×4×anchors⟩ out)
    orphaned = orphaned_output_dims(model)
    if orphaned:
        said.append(f"outputs naming {', '.join(sorted(orphaned))}, which no input names: {refresh_types(model)}")
    said += _join_functions(model, other)
    said += _join_metadata(model, other)
    # the IR version the joined model needs, not the newest the added one declares
    needed = needed_ir_version(model)
    if needed > model.ir_version:
        said.append(f"ir_version {model.ir_version} -> {needed}, what the added model needs")
        model.ir_version = needed
    pairs = ", ".join(f"{src!r} -> {dst!r}" for dst, src in connect.items())
    return (
        f"added a model of {added_nodes} nodes {op['position']} this one ({pairs})"
        + (f", {renamed} of its names changed to stay unique" if renamed else "")
        + "".join(f"; {s}" for s in said)
    )


def _unique_node_names(g: onnx.GraphProto, h: onnx.GraphProto, prefix: str) -> int:
    """The added graph's node names: `prefix` before each (at every depth), and those of its main
    graph that this model's main graph already has made unique with a suffix (counted)."""
    if prefix:
        for sub in graphs_within(h):
            for n in sub.node:
                if n.name:
                    n.name = prefix + n.name
    have = {n.name for n in g.node if n.name}
    suffixed = 0
    for n in h.node:
        if n.name in have:
            base, k = n.name, 1
            while f"{base}_{k}" in have:
                k += 1
            n.name = f"{base}_{k}"
            suffixed += 1
        if n.name:
            have.add(n.name)
    return suffixed


def _copy(v: onnx.ValueInfoProto) -> onnx.ValueInfoProto:
    out = onnx.ValueInfoProto()
    out.CopyFrom(v)
    return out


def _replace(field, items: list) -> None:
    kept = [type(x)() for x in items]
    for copy, x in zip(kept, items, strict=True):
        copy.CopyFrom(x)
    del field[:]
    field.extend(kept)


def _join_functions(model: onnx.ModelProto, other: onnx.ModelProto) -> list[str]:
    have = {(f.domain, f.name, f.overload): f for f in model.functions}
    added = 0
    for f in other.functions:
        key = (f.domain, f.name, f.overload)
        if key in have:
            if have[key].SerializeToString(deterministic=True) != f.SerializeToString(deterministic=True):
                raise StudioError(
                    "function_clash",
                    f"compose: both models define function {f.domain}:{f.name} differently; rename one first",
                    422,
                )
            continue
        model.functions.add().CopyFrom(f)
        added += 1
    return [f"{added} local function(s) added"] if added else []


def _join_metadata(model: onnx.ModelProto, other: onnx.ModelProto) -> list[str]:
    have = {p.key: p.value for p in model.metadata_props}
    kept = [p.key for p in other.metadata_props if p.key in have and have[p.key] != p.value]
    for p in other.metadata_props:
        if p.key not in have:
            model.metadata_props.add(key=p.key, value=p.value)
            have[p.key] = p.value
    return [f"metadata kept this model's {', '.join(map(repr, kept))}"] if kept else []
