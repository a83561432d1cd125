"""Initializers: replace values (JSON or an uploaded .npy), add, delete when unused."""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import numpy_helper

from ..errors import NotFound, StudioError
from ..onnx_io.address import resolve_graph
from ..onnx_io.causes import graph_words
from ..views.tensors import array_stats, tensor_array
from ..words import plural
from .field_types import BOOLEAN, DTYPE, GRAPH_PATH, NAME, NULL, TENSOR_VALUE
from .jsontypes import optional, required
from .registry import edit_op
from .sources import nonfinite_counts, sourced_tensor, tensor_files, tensor_from_source


def _find(g: onnx.GraphProto, name: str) -> int:
    for i, t in enumerate(g.initializer):
        if t.name == name:
            return i
    if any(s.values.name == name for s in g.sparse_initializer):  # not "no initializer named" (QA22 m6)
        raise StudioError(
            "sparse_initializer",
            f"{name!r} is a sparse initializer (values at indices): its values are not set here;"
            " the page shows them densified, and rename_tensor renames it",
            422,
        )
    raise NotFound("unknown_initializer", f"no initializer named {name!r} in that graph")


_GRAPH = optional("graph", GRAPH_PATH, "the graph holding it", default="")


def _graph(model: onnx.ModelProto, op: dict) -> onnx.GraphProto:
    g = resolve_graph(model, op["graph"]).container
    if isinstance(g, onnx.FunctionProto):
        raise StudioError("bad_value", f"{op['op']}: functions have no initializers")
    return g


def _in_graph(model: onnx.ModelProto, op: dict) -> str:
    """ " in while/body" for an initializer of a body (a change line of the main graph's says none)."""
    path = resolve_graph(model, op["graph"]).path if op["graph"] else ""
    return f" in {graph_words(model, path)}" if path else ""


def _dtype_name(t: onnx.TensorProto) -> str:
    return onnx.TensorProto.DataType.Name(t.data_type)


@edit_op(
    "set_initializer",
    required("name", NAME, "the initializer"),
    required("value", TENSOR_VALUE, "its new value"),
    _GRAPH,
    optional("dtype", DTYPE | NULL, "cast an .npy value to this element type"),
    optional("allow_type_change", BOOLEAN, "let the dtype and shape change", default=False),
)
def set_initializer(model: onnx.ModelProto, op: dict) -> str:
    """Replace an initializer's values with `value`: {"npy": <blob digest>} (an uploaded .npy, cast
    to `dtype` if given, else to the initializer's type; refused where a value would change: 1e40
    into FLOAT, 2.5 into INT64) or {"dtype", "shape", "values"}. Its dtype and shape must stay
    unless allow_type_change is true. The name, doc_string and metadata stay; external data is
    inlined. New values holding NaN or ±Inf the old ones did not are stored, with a warning in
    the change line."""
    name = op["name"]
    g = _graph(model, op)
    old = g.initializer[_find(g, name)]
    dtype, allow = op.get("dtype"), op["allow_type_change"]
    if dtype is None and not allow and isinstance(op["value"], dict) and "npy" in op["value"]:
        dtype = _dtype_name(old)  # an .npy of float64 for a FLOAT weight is the usual case: cast
    new, cast_from = sourced_tensor(op["value"], f"initializer {name!r}", name, dtype)
    changed = (new.data_type, list(new.dims)) != (old.data_type, list(old.dims))
    if changed and not allow:
        raise StudioError(
            "shape_mismatch",
            f"initializer {name!r} is {_dtype_name(old)} {list(old.dims)}; the new value is "
            f"{_dtype_name(new)} {list(new.dims)} (set allow_type_change to change it)",
        )
    if not changed:
        new = _kept_nan_bits(old, new, name)
    warning = _nonfinite_warning(old, new, name) + _zero_scale_warning(g, new, name)
    if old.HasField("doc_string"):  # proto2 presence: don't add an empty field the file didn't have
        new.doc_string = old.doc_string
    new.metadata_props.extend(old.metadata_props)
    old.CopyFrom(new)
    if changed:  # its twin among the inputs (IR < 4 lists every weight there) takes the new type
        for v in g.input:
            if v.name == name and v.type.HasField("tensor_type"):
                v.type.tensor_type.elem_type = new.data_type
                v.type.tensor_type.shape.Clear()
                v.type.tensor_type.shape.dim.extend(onnx.TensorShapeProto.Dimension(dim_value=d) for d in new.dims)
    source = f" (converted from the .npy's {cast_from})" if cast_from else ""  # a wrong file shows here
    return (
        f"initializer {name!r}{_in_graph(model, op)} set to {_dtype_name(new)} {list(new.dims)}"
        f"{source}{_value_range(new)}{warning}"
    )


def _kept_nan_bits(old: onnx.TensorProto, new: onnx.TensorProto, name: str) -> onnx.TensorProto:
    """`new` with each NaN where the old values held a NaN keeping the old one's bits: NaN is typed
    as "NaN", one bit pattern, and values submitted as the page showed them must stay the same
    bytes (QA22 p3: an e4m3fn -NaN, 0xFF, came back as 0x7F)."""
    if new.data_type in (onnx.TensorProto.STRING, onnx.TensorProto.BOOL):
        return new
    values = numpy_helper.to_array(new)
    try:
        nan = np.isnan(values)
    except TypeError:  # integers (int4, uint2…): no NaN to keep
        return new
    if not nan.any():
        return new
    try:
        source = tensor_files()
        before = tensor_array(old, source.files if source else None)
    except StudioError:
        return new  # old values that can't be read here: the typed NaN stays
    kept = nan & np.isnan(before)
    if not kept.any() or np.array_equal(values[kept].view(np.uint8), before[kept].view(np.uint8)):
        return new
    values = values.copy()
    values[kept] = before[kept]  # same dtype: the element's bytes are copied
    return numpy_helper.from_array(values, name)


_SCALED = ("QuantizeLinear", "DequantizeLinear")


def _zero_scale_warning(g: onnx.GraphProto, new: onnx.TensorProto, name: str) -> str:
    """The change line's warning when a quantization scale (what a QuantizeLinear or
    DequantizeLinear reads second) now holds a 0: every value quantizes to the zero point there,
    and the model answers the same for any input (QA24 #9), which onnx's checks and onnxruntime
    take without a word; else ""."""
    readers = [n for n in g.node if n.op_type in _SCALED and len(n.input) > 1 and n.input[1] == name]
    if not readers or new.data_type in (onnx.TensorProto.STRING, onnx.TensorProto.BOOL):
        return ""
    values = numpy_helper.to_array(new)
    zeros = int(np.count_nonzero(values.astype(np.float64) == 0))
    if not zeros:
        return ""
    return (
        f"; warning: {name!r} now holds {zeros} zero{'s' if zeros > 1 else ''} of {plural(values.size, 'value')}, "
        f"and is the scale of {plural(len(readers), 'QuantizeLinear/DequantizeLinear node')}: with a scale of 0 "
        "they answer their zero point whatever the input"
    )


def _value_range(t: onnx.TensorProto) -> str:
    """ ", values -0.521 … 0.614 (mean 0.0031)": what tells one revision's new weights from
    another's in the history, and a wrong file at a glance; "" for a tensor without numbers.
    Over the finite values, as the tensor panel's statistics (array_stats) count them."""
    if t.data_type in (onnx.TensorProto.STRING, onnx.TensorProto.BOOL) or not math.prod(t.dims):
        return ""
    values = numpy_helper.to_array(t)
    stats = array_stats(values, histogram=False) if values.dtype.kind in "iuf" else None
    if not stats or stats["min"] is None:
        return ""
    shown = (lambda v: str(int(v))) if values.dtype.kind in "iu" else (lambda v: f"{v:.3g}")
    low, high = shown(stats["min"]), shown(stats["max"])
    if stats["min"] == stats["max"]:
        return f", values {low}"
    mean = f" (mean {stats['mean']:.3g})" if values.dtype.kind == "f" else ""
    return f", values {low} … {high}{mean}"


def _nonfinite_warning(old: onnx.TensorProto, new: onnx.TensorProto, name: str) -> str:
    """The change line's warning when the new values hold more NaN or ±Inf than the old ones did
    ("; warning: 'w' now holds 216 NaN of 216 values": all-NaN weights run "ok" and answer NaN),
    else "". Not a refusal: some weights carry Inf on purpose (attention masks). The old values
    are read only when the new ones hold any."""
    if new.data_type == onnx.TensorProto.STRING:
        return ""
    values = numpy_helper.to_array(new)
    nan, inf = nonfinite_counts(values)
    if not nan and not inf:
        return ""
    was_nan = was_inf = 0
    try:
        source = tensor_files()
        was_nan, was_inf = nonfinite_counts(tensor_array(old, source.files if source else None))
    except StudioError:
        pass  # old values that can't be read here: the new ones' count is said alone
    held = [
        f"{n} {word}" + (f" ({was} before)" if was else "")
        for n, was, word in ((nan, was_nan, "NaN"), (inf, was_inf, "±Inf"))
        if n > was
    ]
    if not held:
        return ""
    return f"; warning: {name!r} now holds {' and '.join(held)} of {plural(values.size, 'value')}"


@edit_op(
    "add_initializer",
    required("name", NAME, "a name no value of the graph has"),
    required("value", TENSOR_VALUE, "its value"),
    _GRAPH,
    optional("dtype", DTYPE | NULL, "cast an .npy value to this element type"),
)
def add_initializer(model: onnx.ModelProto, op: dict) -> str:
    """Add a new initializer (a constant tensor nodes can read) from JSON values or an .npy blob."""
    name = op["name"]
    g = _graph(model, op)
    taken = {t.name for t in g.initializer} | {v.name for v in g.input} | {o for n in g.node for o in n.output}
    if name in taken:
        raise StudioError("name_taken", f"add_initializer: {name!r} already names a value in that graph")
    t = tensor_from_source(op["value"], f"initializer {name!r}", name, op.get("dtype"))
    g.initializer.append(t)
    return f"added initializer {name!r}{_in_graph(model, op)} ({_dtype_name(t)} {list(t.dims)})" + _below_ir4(
        model, g, t, main=not op["graph"]
    )


def _below_ir4(model: onnx.ModelProto, g: onnx.GraphProto, t: onnx.TensorProto, main: bool) -> str:
    """Below IR version 4 every initializer is also a graph input (what the model's exporter
    wrote for each weight): the main graph gets one for `t`, as its other weights have; a
    subgraph can't take one (an If branch has no inputs, a Loop body's are its loop state), so
    the model goes to IR 4, which drops the rule. The note of it, or ""."""
    if model.ir_version >= 4:
        return ""
    if main:
        g.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        return " and its graph input (below IR version 4 every initializer is one)"
    before = model.ir_version
    model.ir_version = 4
    return f"; ir_version {before} -> 4 (below 4 every initializer must be a graph input, which a subgraph's can't be)"


@edit_op("delete_initializer", required("name", NAME, "the initializer"), _GRAPH)
def delete_initializer(model: onnx.ModelProto, op: dict) -> str:
    """Delete an initializer, dense or sparse, that nothing reads (a graph input of the same name
    goes too): no node of its graph (subgraphs included), no graph output, and for the main
    graph no training graph or binding."""
    from .unused import drop_initializers, initializer_names, names_in_use

    name = op["name"]
    g = _graph(model, op)
    if name not in initializer_names(g):
        raise NotFound("unknown_initializer", f"no initializer named {name!r} in that graph")
    if name in names_in_use(model, g):
        raise StudioError(
            "in_use",
            f"delete_initializer: {name!r} is still read (by a node, a graph output or a training graph); "
            "remove its readers first",
        )
    sparse = any(s.values.name == name for s in g.sparse_initializer)
    drop_initializers(g, {name})
    return f"deleted {'sparse ' if sparse else ''}initializer {name!r}{_in_graph(model, op)}"
