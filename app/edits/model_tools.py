"""Running onnxruntime's model tools (float16 conversion, dynamic quantization, graph
optimization) on a model being edited: in the helper process (onnx's shape inference runs inside
them, and a big model's conversion takes gigabytes: the helper's memory limit bounds it, the
server's memory is not spent). The model is written to a scratch folder with the tensors kept
outside its graph hard-linked beside it, the tool writes its result there, and the server reads
that back and keeps the model's own fields, metadata and value_info."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx

from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.external import TENSOR_PREFIX
from ..onnx_io.kept_fields import restore_graph_fields
from ..onnx_io.sizes import size_text
from ..onnx_io.traverse import constant_value, running_graphs, walk_graphs
from ..onnx_io.traverse import tensors as all_tensors
from .missing_kernels import no_kernel_words
from .names import fresh_name
from .sources import inline_tensor, tensor_files
from .wiring import keep_topological_order

# the weights a conversion takes on: the helper holds them a few times over (its memory limit is
# 8 GiB); its result's weights go to a file beside it, streamed into the store
MAX_WEIGHT_BYTES = 3 << 30

FLOAT, FLOAT16 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16


def initializers(ref):
    return [] if isinstance(ref.container, onnx.FunctionProto) else ref.container.initializer


def data_size(t: onnx.TensorProto) -> int:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in t.external_data}
        return int(info["length"]) if info.get("length", "").isdigit() else 0
    return len(t.raw_data) or 4 * len(t.float_data) or 2 * len(t.int32_data)


def weights(model: onnx.ModelProto, dtype: int | None = None) -> list[onnx.TensorProto]:
    """The initializers and Constant values (of `dtype`) of the graphs the tools walk: a
    PaddlePaddle export holds every weight in a Constant node."""
    found = [t for ref in running_graphs(model) for t in initializers(ref)]
    found += [v for ref in running_graphs(model) for n in ref.container.node if (v := constant_value(n)) is not None]
    return [t for t in found if dtype is None or t.data_type == dtype]


FLOAT_TYPES = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE)


def constants_to_initializers(model: onnx.ModelProto) -> str:
    """Make the main graph's Constant nodes holding float tensors (more than one value) initializers of their outputs'
    names (the same values, read the same way): onnxruntime's quantizers take weights from
    initializers only ("Expected conv2d_394.w_0 to be an initializer" on a PaddlePaddle export,
    whose every weight is a Constant). Below IR version 4 an initializer is also a graph input,
    which they refuse as much: left alone there. Returns the note for the edit's summary."""
    g = model.graph
    if model.ir_version < 4:
        return ""
    outputs = {o.name for o in g.output}
    moved = []
    for i, n in enumerate(g.node):
        value = constant_value(n)
        # a scalar (an eps, a mask's -3.4e38, a 2.0) is no weight a quantizer reads: left alone
        if value is None or int(np.prod(value.dims)) <= 1:
            continue
        if value.data_type in FLOAT_TYPES and n.output[0] not in outputs:
            init = g.initializer.add()
            init.CopyFrom(value)
            init.name = n.output[0]
            moved.append(i)
    for i in reversed(moved):
        del g.node[i]
    if not moved:
        return ""
    return f"; {len(moved)} Constant node(s) holding float weights first made initializers, which the quantizer reads"


def check_size(model: onnx.ModelProto, what: str) -> int:
    size = sum(data_size(t) for t in all_tensors(model))
    if size > MAX_WEIGHT_BYTES:
        raise StudioError(
            "too_big",
            f"{what}: the model's tensors take {size_text(size)}, more than the {size_text(MAX_WEIGHT_BYTES)} converted here",
            422,
        )
    return size


def write_beside(model: onnx.ModelProto, folder: Path) -> dict[str, str]:
    """`model` as folder/model.onnx: each file its tensors are kept in outside the graph (the
    store's tensor blobs, external data files) hard-linked beside it and named there; a tensor
    whose file can't be linked (another file system) is read into the graph instead. The links
    made: their name -> the location they stand for."""
    bound = tensor_files()
    files = bound.files if bound is not None else None
    links: dict[str, str | None] = {}
    # what onnxruntime reads with onnx's own loader, which refuses a hard-linked file as a
    # possible attack, goes in the graph: node attributes' tensors (a Constant's value) and
    # subgraphs' initializers — every tensor but the main graph's initializers
    for t in all_tensors(model, main_initializers=False):
        if t.data_location == onnx.TensorProto.EXTERNAL:
            inline_tensor(t, f"tensor {t.name!r}")
    for t in all_tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        entry = next((e for e in t.external_data if e.key == "location"), None)
        if entry is None or files is None:
            inline_tensor(t, f"tensor {t.name!r}")
            continue
        if entry.value not in links:
            target = folder / f"weights{len(links)}.bin"
            try:
                os.link(files.path(entry.value), target)
                links[entry.value] = target.name
            except OSError:
                links[entry.value] = None
        linked = links[entry.value]
        if linked is None:
            inline_tensor(t, f"tensor {t.name!r}")
        else:
            entry.value = linked
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    return {link: location for location, link in links.items() if link is not None}


def _settle_external(result: onnx.ModelProto, folder: Path, links: dict[str, str]) -> None:
    """A tool's result may still name the weight files linked beside its input (onnxruntime
    saves the initializers it left alone as they were): point them back at what they stand for
    (the same blobs: no copy). The tensors it wrote to files of its own are streamed into the
    store's blobs where one is bound (never whole in memory: a 1.3 GiB model's float16 result
    was read in whole, and copied once more), else read in before the folder goes."""
    bound = tensor_files()
    for t in all_tensors(result):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        name = info.get("location", "")
        if name in links:
            for e in t.external_data:
                if e.key == "location":
                    e.value = links[name]
            continue
        path = folder / name
        if "/" in name or name.startswith(".") or not path.is_file():
            raise StudioError("conversion_failed", f"the tool's result names data {name!r} it did not write", 422)
        offset = int(info.get("offset", 0))
        length = int(info["length"]) if "length" in info else path.stat().st_size - offset
        del t.external_data[:]
        if bound is not None and bound.put is not None and length >= bound.min_bytes:
            digest = bound.put(_segment(path, offset, length))
            bound.added.add(digest)
            bound.files.add(TENSOR_PREFIX + digest, digest)  # a later tool of the batch links it
            t.external_data.add(key="location", value=TENSOR_PREFIX + digest)
            t.external_data.add(key="length", value=str(length))
            continue
        with open(path, "rb") as f:
            f.seek(offset)
            t.raw_data = f.read(length)
        # as if it had never been out (save.py does the same): the server's download and a
        # recipe replayed by the CLI write the same bytes
        t.ClearField("data_location")


def _segment(path: Path, offset: int, length: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    """`length` bytes of a file from `offset`, a chunk at a time."""
    with open(path, "rb") as f:
        f.seek(offset)
        while length > 0:
            data = f.read(min(chunk, length))
            if not data:
                raise StudioError("conversion_failed", "the tool's result names data past the end of its file", 422)
            length -= len(data)
            yield data


def in_helper(
    model: onnx.ModelProto, job: str, options: dict, what: str, arrays: dict[str, np.ndarray] | None = None
) -> onnx.ModelProto:
    """offload_jobs.<job>(model file, result file, options) on `model`; the result, parsed, its
    tensors kept outside the graph naming the store's files again. `arrays` are saved beside the
    model as <name>.npy (what determines them must be in `options`: failures are remembered by
    the model and the options)."""
    bound = tensor_files()
    # what a failure is remembered under: the graph (its tensors named by their blobs' digests)
    key = f"{offload.content_key(model.SerializeToString())}:{sorted(options.items())}"
    with tempfile.TemporaryDirectory(prefix=f"studio-{job}-", dir=bound.scratch if bound else None) as tmp:
        links = write_beside(model, Path(tmp))
        for name, arr in (arrays or {}).items():
            np.save(Path(tmp) / f"{name}.npy", arr, allow_pickle=False)
        dst = Path(tmp) / "result.onnx"
        try:
            offload.run(job, key, str(Path(tmp) / "model.onnx"), str(dst), options)
        except ValueError as exc:
            raise StudioError("conversion_failed", f"{what}: {exc}{_way_out(model, str(exc))}", 422) from None
        result = onnx.ModelProto.FromString(dst.read_bytes())
        _settle_external(result, Path(tmp), links)
        return result


_NOT_AN_INITIALIZER = re.compile(r"Expected (\S+) to be an initializer")


def _way_out(model: onnx.ModelProto, error: str) -> str:
    """What to do about a tool's failure, where its words don't say: onnxruntime's quantizers
    want weights stored as initializers, and some exports compute them (the wheel's light models
    from ConstantOfShape)."""
    missing = no_kernel_words(model, error)  # an old export's operator version, or a type (QA38 #6)
    if missing:
        return missing
    found = _NOT_AN_INITIALIZER.search(error)
    if found is None:
        return ""
    name = found.group(1)
    producer = next((n for ref in running_graphs(model) for n in ref.container.node if name in n.output), None)
    made = f"is computed by a {producer.op_type} node" if producer is not None else "is not stored in the model"
    return f" (the weight {name!r} {made}: simplify folds such weights into initializers first)"


def keep(model: onnx.ModelProto, result: onnx.ModelProto) -> str:
    """Put `result` in `model`'s place, with the model's own fields, metadata and value_info (the
    tools sign the model as theirs, drop metadata and store the types inference found); the
    ir_version only goes up, and to 4 where the tool made initializers that aren't graph inputs
    (IR < 4 forbids them). A note of that change ("; ir_version 3 -> 4"), or ""."""
    fields = ("ir_version", "producer_name", "producer_version", "domain", "model_version", "doc_string")
    kept = {f: getattr(model, f) for f in fields}
    metadata = list(model.metadata_props)
    graph_doc, graph_metadata = model.graph.doc_string, list(model.graph.metadata_props)
    had = [{v.name for v in ref.container.value_info} for ref in running_graphs(model)]
    declared = _declared_types(model)
    nodes = _nodes_by_name(model)
    unnamed = _unnamed_nodes(model)
    graph_before = onnx.GraphProto()
    graph_before.CopyFrom(model.graph)  # its weights are references in the store: a copy of the graph alone
    model.CopyFrom(result)
    _restore_shapes(model, declared)
    for f, v in kept.items():
        setattr(model, f, max(v, model.ir_version) if f == "ir_version" else v)
    del model.metadata_props[:]
    model.metadata_props.extend(metadata)
    model.graph.doc_string = graph_doc
    del model.graph.metadata_props[:]
    model.graph.metadata_props.extend(graph_metadata)
    for ref, names in zip(running_graphs(model), had, strict=False):
        vi = ref.container.value_info
        for i in reversed(range(len(vi))):
            if vi[i].name not in names:
                del vi[i]
        # an entry for an initializer says what the initializer is: onnxruntime's float16
        # converter retypes some to float16 and leaves their float32 initializer (silero VAD)
        dtypes = {t.name: t.data_type for t in ref.container.initializer}
        for v in vi:
            if v.name in dtypes and v.type.HasField("tensor_type"):
                v.type.tensor_type.elem_type = dtypes[v.name]
    # onnxruntime's optimizer drops every node's metadata (a torch export's scopes and stack
    # traces): each node it kept, by name, has its own back, and its doc_string
    # (an empty doc_string written where the node had none is no change: left out, as before —
    # onnxruntime's quantizer writes one on every node, so every proto would differ otherwise)
    for ref in walk_graphs(model):
        for n in ref.container.node:
            if n.name in nodes:
                metadata_props, doc = nodes[n.name]
                del n.metadata_props[:]
                n.metadata_props.extend(metadata_props)
                if doc is None:
                    n.ClearField("doc_string")
                else:
                    n.doc_string = doc
            elif n.HasField("doc_string") and not n.doc_string:
                n.ClearField("doc_string")
    # what the tools drop of no business of theirs: the values' and tensors' doc strings and
    # metadata, quantization annotations, nodes' device configurations (QA22 m1)
    restore_graph_fields(graph_before, model.graph)
    _name_new_nodes(model, unnamed)
    inputs = {v.name for v in model.graph.input}
    if model.ir_version < 4 and any(t.name not in inputs for t in model.graph.initializer):
        model.ir_version = 4
    return f"; ir_version {kept['ir_version']} -> {model.ir_version}" if model.ir_version != kept["ir_version"] else ""


def _declared_types(model: onnx.ModelProto) -> dict[str, dict[str, onnx.TypeProto]]:
    """graph path -> name -> the declared type of each input, output and value_info entry."""
    found: dict[str, dict[str, onnx.TypeProto]] = {}
    for ref in running_graphs(model):
        kept = found.setdefault(ref.path, {})
        for v in (*ref.container.input, *ref.container.output, *ref.container.value_info):
            kept[v.name] = onnx.TypeProto()
            kept[v.name].CopyFrom(v.type)  # a copy: the model is overwritten next
    return found


def _restore_shapes(model: onnx.ModelProto, declared: dict[str, dict[str, onnx.TypeProto]]) -> None:
    """The shapes the model declared, back where the tool's shape inference rewrote them (a
    quantizer after batch was fixed to 1 at the input wrote 1 over the outputs' `batch`). The
    element type stays the tool's (float16 retypes what it converts); a rank the tool changed
    stays changed."""
    for ref in running_graphs(model):
        before = declared.get(ref.path, {})
        for v in (*ref.container.input, *ref.container.output, *ref.container.value_info):
            old = before.get(v.name)
            if old is None or not (old.HasField("tensor_type") and v.type.HasField("tensor_type")):
                continue
            was, now = old.tensor_type, v.type.tensor_type
            if was.HasField("shape") and now.HasField("shape") and len(was.shape.dim) != len(now.shape.dim):
                continue
            if was.HasField("shape"):
                now.shape.CopyFrom(was.shape)
            else:
                now.ClearField("shape")


def _nodes_by_name(model: onnx.ModelProto) -> dict[str, tuple[list, str | None]]:
    """name -> (metadata_props, doc_string or None when it has none) of every node whose name is
    unique in the model."""
    seen: dict[str, tuple[list, str | None] | None] = {}
    for ref in walk_graphs(model):
        for n in ref.container.node:
            if n.name:
                doc = n.doc_string if n.HasField("doc_string") else None
                seen[n.name] = None if n.name in seen else (list(n.metadata_props), doc)
    return {name: kept for name, kept in seen.items() if kept is not None}


def _unnamed_nodes(model: onnx.ModelProto) -> dict[tuple[str, str], list[str]]:
    """(graph path, operator) -> the first output of each node the model holds without a name."""
    found: dict[tuple[str, str], list[str]] = {}
    for ref in walk_graphs(model):
        for n in ref.container.node:
            if not n.name:
                found.setdefault((ref.path, n.op_type), []).append(n.output[0] if n.output else "")
    return found


def _name_new_nodes(model: onnx.ModelProto, unnamed: dict[tuple[str, str], list[str]]) -> None:
    """A node a tool made without a name (onnxruntime's dynamic quantizer's bias Reshape) is named
    after what it writes, so tables and links read "c1_bias_reshape", not "#1 (unnamed)" (QA27);
    the model's own unnamed nodes stay unnamed (what the person did not touch is not changed).
    The tools rename what they write (a quantized output's producer writes
    "y_QuantizeLinear_Input"), so the model's own are counted by graph and operator: as many as
    it had stay unnamed, those writing what one of them wrote (or a name made from it) first."""
    taken = {n.name for ref in walk_graphs(model) for n in ref.container.node if n.name}
    for ref in walk_graphs(model):
        groups: dict[str, list[onnx.NodeProto]] = {}
        for n in ref.container.node:
            if not n.name and n.output:
                groups.setdefault(n.op_type, []).append(n)
        for op, nodes in groups.items():
            wrote = unnamed.get((ref.path, op), [])

            def own(n: onnx.NodeProto, wrote: list[str] = wrote) -> bool:
                return any(w and (n.output[0] == w or n.output[0].startswith(f"{w}_")) for w in wrote)

            for n in sorted(nodes, key=lambda n: not own(n))[len(wrote) :]:
                n.name = fresh_name(model, n.output[0].removesuffix("_output") or n.op_type, taken)
                taken.add(n.name)


def reorder(model: onnx.ModelProto) -> None:
    """The tools append their Cast and quantizing nodes to a graph: each put where it is read."""
    for ref in walk_graphs(model):
        keep_topological_order(ref.container)
