"""What the helper process runs (offload.py): each job calls onnx's C++ on one model, read from a
file of the store or handed over as bytes, and answers plain data (dicts, bytes, text)."""

from __future__ import annotations

from typing import Any


def validate(path: str) -> dict:
    from .load import parse_model_file
    from .validate import full_validation

    return full_validation(parse_model_file(path))


def infer(path: str) -> bytes | None:
    """The weightless stand-in after shape inference, serialized; None when inference can't run."""
    from .inference import inferred_model
    from .light import light_copy
    from .load import parse_model_file

    inferred = inferred_model(parse_model_file(path))
    return None if inferred is None else light_copy(inferred).SerializeToString()


def infer_from_inputs(path: str) -> bytes | None:
    """The weightless stand-in inferred with its outputs' own dim names left out (inference.
    inferred_from_inputs), serialized; None when inference can't run."""
    from .inference import inferred_from_inputs
    from .light import light_copy
    from .load import parse_model_file

    inferred = inferred_from_inputs(parse_model_file(path))
    return None if inferred is None else light_copy(inferred).SerializeToString()


def infer_at_dims(path: str, dims: dict[str, int]) -> bytes:
    """The weightless stand-in with its input dims fixed, after shape inference, serialized."""
    from .inference import shapes_at_dims
    from .light import light_copy
    from .load import parse_model_file

    return light_copy(shapes_at_dims(parse_model_file(path), dims)).SerializeToString()


def inline_functions(path: str) -> bytes | None:
    """The weightless stand-in with its model-local functions inlined (onnx.inliner), then
    shape-inferred, serialized: what a call's body costs is counted on it (views/costs.py).
    None when either can't run."""
    from onnx import inliner

    from .function_calls import with_explicit_defaults
    from .inference import inferred_model
    from .light import light_copy
    from .load import parse_model_file

    try:
        inlined = inliner.inline_local_functions(with_explicit_defaults(light_copy(parse_model_file(path))))
    except Exception:
        return None
    inferred = inferred_model(inlined)
    return None if inferred is None else inferred.SerializeToString()


def print_text(data: bytes) -> str:
    """onnx.printer's text of a serialized model; a ValueError carrying the printer's words."""
    import onnx

    from .text_fields import readable_strings
    from .text_form import model_text

    model = onnx.ModelProto.FromString(data)
    readable_strings(model)  # invalid UTF-8 strings printed with replacement characters
    try:
        return model_text(model)
    except Exception as exc:
        raise ValueError(str(exc)) from None


def parse_text(text: str) -> bytes:
    """onnx.parser's ModelProto for ONNX text, serialized; a ValueError carrying its words."""
    import onnx

    try:
        return onnx.parser.parse_model(text).SerializeToString()
    except Exception as exc:
        raise ValueError(str(exc)) from None


def check(data: bytes, full: bool) -> dict:
    """onnx.checker's verdict on a serialized (weightless) model."""
    import onnx

    from .load import checker_verdict

    return checker_verdict(onnx.ModelProto.FromString(data), full)


def infer_model(data: bytes, options: dict) -> bytes:
    """onnx.shape_inference.infer_shapes(model, **options) on a serialized model, serialized; a
    ValueError carrying onnx's words when it refuses the model. With "name_dims": the dims it
    leaves unk__N named in terms of the inputs' where onnxruntime's symbolic inference can."""
    import contextlib

    import onnx

    from .inference import name_unknown_dims

    options = dict(options)
    name_dims = options.pop("name_dims", False)
    model = onnx.ModelProto.FromString(data)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, **options)
    except Exception as exc:
        raise ValueError(str(exc)) from None
    if name_dims:
        with contextlib.suppress(Exception):  # a nicety: onnx's names stand without it
            name_unknown_dims(model, inferred)
    return inferred.SerializeToString()


def convert(data: bytes, version: int) -> bytes:
    """onnx.version_converter's model at `version`, serialized; a ValueError with its words."""
    import onnx

    try:
        return onnx.version_converter.convert_version(onnx.ModelProto.FromString(data), version).SerializeToString()
    except Exception as exc:
        raise ValueError(str(exc)) from None


def _quiet_logging() -> None:
    """The quantizer's advice ("consider pre-processing") goes to logging's root: without a
    handler there, logging.warning() would print it on the server's stderr, amid its log lines."""
    import logging

    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())


def quantize(src: str, dst: str, options: dict) -> None:
    """onnxruntime's dynamic int8 quantization of the model file `src` (its tensors beside it)
    into `dst`; a ValueError with its words."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    _quiet_logging()
    try:
        quantize_dynamic(
            _load_beside(src),
            dst,
            weight_type=QuantType[options["weight_type"]],
            op_types_to_quantize=options.get("op_types") or None,
            nodes_to_exclude=options.get("nodes_to_exclude") or None,
            per_channel=options.get("per_channel", False),
            reduce_range=options.get("reduce_range", False),
            use_external_data_format=True,  # its weights in a file beside it: the server streams them in
            extra_options={"EnableSubgraph": True},  # the MatMuls of If/Loop bodies too (a merged decoder's all)
        )
    except Exception as exc:
        raise ValueError(str(exc).strip() or type(exc).__name__) from None


def quantize_weights(src: str, dst: str, options: dict) -> None:
    """onnxruntime's block-wise weight-only quantization (MatMulNBits quantizer) of the model file
    `src` (its tensors beside it) into `dst`; a ValueError with its words."""
    from onnxruntime.quantization import QuantFormat
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        HQQWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )

    from .gemm_as_matmul import gemms_as_matmuls

    _quiet_logging()
    fmt = QuantFormat.QOperator if options["format"] == "MatMulNBits" else QuantFormat.QDQ
    ops = ("MatMul", "Gather") if options["embeddings"] else ("MatMul",)
    bits, block, symmetric = options["bits"], options["block_size"], options["symmetric"]
    accuracy = options["accuracy_level"] or None
    try:
        if options["algorithm"] == "HQQ":
            config = HQQWeightOnlyQuantConfig(block_size=block, bits=bits, quant_format=fmt, op_types_to_quantize=ops)
        else:
            config = DefaultWeightOnlyQuantConfig(
                block_size=block,
                is_symmetric=symmetric,
                accuracy_level=accuracy,
                quant_format=fmt,
                op_types_to_quantize=ops,
                bits=bits,
            )
        model = _load_beside(src)
        gemms_as_matmuls(model, set(options["nodes_to_exclude"]))  # it quantizes MatMul, not Gemm
        quantizer = MatMulNBitsQuantizer(
            model,
            bits=bits,
            block_size=block,
            is_symmetric=symmetric,
            accuracy_level=accuracy,
            nodes_to_exclude=options["nodes_to_exclude"] or None,
            quant_format=fmt,
            op_types_to_quantize=ops,
            algo_config=config,
        )
        quantizer.process()
        quantizer.model.save_model_to_file(dst, use_external_data_format=True)  # streamed in by the server
    except Exception as exc:
        raise ValueError(str(exc).strip() or type(exc).__name__) from None


def quantize_static(src: str, dst: str, options: dict) -> None:
    """onnxruntime's static quantization of the model file `src` (its tensors beside it) into
    `dst`: the model runs on each calibration sample (<input>.npy beside it, samples along the
    first axis) to measure every activation's range, then weights and activations are quantized
    (QuantizeLinear/DequantizeLinear pairs, or QLinear operators); a ValueError with its words.
    The nodes left out read float values (qdq_float_nodes.py), not the pairs made for others."""
    import os

    import numpy as np
    import onnxruntime as ort
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
    )
    from onnxruntime.quantization import quantize_static as quantize

    folder = os.path.dirname(src)
    arrays = {
        name: np.load(os.path.join(folder, f"{file}.npy"), mmap_mode="r", allow_pickle=False)
        for name, file in options["calibration_files"].items()
    }
    count = min(len(a) for a in arrays.values())

    class Samples(CalibrationDataReader):
        def __init__(self) -> None:
            self.next = 0

        def get_next(self):
            if self.next >= count:
                return None
            self.next += 1
            return {name: np.require(a[self.next - 1], requirements="C") for name, a in arrays.items()}  # 0-d stays 0-d

    model = _load_beside(src)
    # the model it runs to calibrate has initializers that aren't graph inputs (the axes of the
    # reductions it adds), which IR < 4 forbids: onnxruntime refuses its own augmented model
    model.ir_version = max(model.ir_version, 4)
    _quiet_logging()
    ort.set_default_logger_severity(3)  # the sessions it makes to calibrate warn amid the server's log lines
    try:
        quantize(
            model,
            dst,
            Samples(),
            quant_format=QuantFormat[options["quant_format"]],
            activation_type=QuantType[options["activation_type"]],
            weight_type=QuantType[options["weight_type"]],
            calibrate_method=CalibrationMethod[options["calibrate_method"]],
            op_types_to_quantize=options.get("op_types") or None,
            nodes_to_exclude=options.get("nodes_to_exclude") or None,
            per_channel=options.get("per_channel", False),
            reduce_range=options.get("reduce_range", False),
            # its weights in a file beside it (the server streams them in), and the model it
            # runs to calibrate (the float one with outputs added) too: past 2 GiB as one file
            use_external_data_format=True,
        )
    except Exception as exc:
        raise ValueError(str(exc).strip() or type(exc).__name__) from None
    if options.get("nodes_to_exclude") and options["quant_format"] == "QDQ":
        import onnx

        from .qdq_float_nodes import read_float

        result = onnx.load(dst, load_external_data=False)  # the graph: its weights stay in the file beside
        if read_float(onnx.load(src, load_external_data=False), result, set(options["nodes_to_exclude"])):
            onnx.save(result, dst)


def float16(src: str, dst: str, options: dict) -> None:
    """onnxruntime's float16 converter on the model file `src` (its tensors beside it) into
    `dst`. It places its casts by every value's type: inference's types go in first (on the
    graph without its weights), and out again after, but for the model's own value_info."""
    import os

    import onnx
    from onnxruntime.transformers.float16 import DEFAULT_OP_BLOCK_LIST, convert_float_to_float16

    from .light import light_copy
    from .traverse import graphs_within

    model = onnx.load(src, load_external_data=False)
    had = [{v.name for v in g.value_info} for g in list(graphs_within(model.graph))]
    try:
        typed = onnx.shape_inference.infer_shapes(light_copy(model), check_type=False, strict_mode=False)
    except Exception as exc:
        raise ValueError(f"shape inference failed: {exc}") from None
    for g, t in zip(list(graphs_within(model.graph)), list(graphs_within(typed.graph)), strict=True):
        known = {v.name for v in g.value_info}
        g.value_info.extend(v for v in t.value_info if v.name not in known)
    _read_beside(model, os.path.dirname(src))
    blocked = options.get("op_block_list")
    try:
        model = convert_float_to_float16(
            model,
            keep_io_types=options.get("keep_io_types", True),
            disable_shape_infer=True,
            op_block_list=DEFAULT_OP_BLOCK_LIST if blocked is None else blocked,
            node_block_list=options.get("node_block_list") or [],
        )
    except Exception as exc:  # its assertions and numpy's errors on a model it can't handle
        raise ValueError(str(exc).strip() or type(exc).__name__) from None
    for g, names in zip(list(graphs_within(model.graph)), had, strict=True):
        for i in reversed(range(len(g.value_info))):
            if g.value_info[i].name not in names:
                del g.value_info[i]
    _save_beside(model, dst, "result.bin")


def simplify(src: str, dst: str, options: dict) -> None:
    """onnxruntime's basic graph optimizations (constant folding, redundant nodes removed,
    fusions into standard operators) of the model file `src` saved as `dst`; a ValueError with
    onnxruntime's words when it can't load the model. The main graph's standard operators it
    would write out as their function bodies (it has no kernel for them) are kept whole through
    it (function_ops_kept.py)."""
    import os

    import onnx

    from .function_ops_kept import put_back, set_aside

    aside = set_aside(src)
    again = dst + ".again"
    first = src if aside is None else aside.path
    try:
        _optimized(first, dst)
        result = onnx.load(dst, load_external_data=False)
        if _fusions_wrapped_in_reshapes(onnx.load(first, load_external_data=False), result):
            # a 3-D MatMul+Add made Reshape → Gemm → Reshape: 2 nodes became 3, for a runtime's
            # kernel choice (QA37 #5: +7 Reshape on an encoder bound for an NPU's node budget)
            _optimized(first, dst, disabled=["MatMulAddFusion"])
            result = onnx.load(dst, load_external_data=False)
        # a pass can leave what only the next one finds (a Reshape of a shape it just folded:
        # QA37's encoder took a second Simplify from 60 to 57 nodes): again, while it finds more
        # — where shape computations are left, which is what the next pass folds (a VGG-19's
        # second pass found nothing and doubled the time: 3.8 -> 7.0 s, bench/simplify_passes.py)
        for _ in range(SIMPLIFY_EXTRA_PASSES):
            if any(n.name.startswith(INSERTED_CAST) for n in result.graph.node) or not _has_shape_nodes(result):
                break
            _optimized(dst, again, disabled=["MatMulAddFusion"])
            second = onnx.load(again, load_external_data=False)
            if _node_count(second) >= _node_count(result):
                break
            os.replace(again, dst)
            result = second
    except Exception as exc:
        raise ValueError(str(exc).strip() or type(exc).__name__) from None
    finally:
        if os.path.exists(again):
            os.remove(again)
    # the constants it folded (199 MiB of a GPT-2 medium) are inline in what it saved; the
    # weights it left alone it names by the linked files, and those stay as they are
    if aside is not None:
        put_back(result, aside)
    _save_beside(result, dst, "folded.bin")


SIMPLIFY_EXTRA_PASSES = 2  # each a session load: a third found nothing more on the models we tried
# onnxruntime's CPU provider has no float16 kernel for some operators: at every session it wraps
# them in Casts to float32 and back, named so. They are how this CPU runs the model, not part of
# it (a GPU runs those operators in float16): the saved model goes without them (simplify.py),
# and a model holding them is not optimized again (a second pass merges them with its own Casts)
INSERTED_CAST = "InsertedPrecisionFreeCast_"


def _fusions_wrapped_in_reshapes(source, result) -> bool:
    """Whether onnxruntime fused a MatMul and an Add of more than 2 dims into a Gemm between
    Reshapes: more Reshapes than the model had, beside its MatMulAddFusion Gemms."""

    def count(model, op: str) -> int:
        return sum(n.op_type == op for n in model.graph.node)

    fused = any(n.op_type == "Gemm" and "MatMulAddFusion" in n.name for n in result.graph.node)
    return fused and count(result, "Reshape") > count(source, "Reshape")


def _optimized(src: str, dst: str, disabled: list[str] | None = None) -> None:
    """The model file `src` through onnxruntime's basic optimizations (but those `disabled`),
    saved as `dst`."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = dst
    so.intra_op_num_threads = 1
    so.log_severity_level = 3  # its warnings would land amid the server's log lines
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"], disabled_optimizers=disabled or [])


def _has_shape_nodes(model) -> bool:
    from .traverse import walk_graphs

    return any(n.op_type in ("Shape", "Size") for ref in walk_graphs(model) for n in ref.container.node)


def _node_count(model) -> int:
    from .traverse import walk_graphs

    return sum(len(ref.container.node) for ref in walk_graphs(model))


def _save_beside(model, path: str, location: str) -> None:
    """A tool's result saved as `path`, the tensors it holds inline moved to the file `location`
    beside it: the server parses the graph alone and streams them into its store (and a result
    past 2 GiB is no protobuf limit). Tensors already named outside stay: onnx's converter
    skips tensors without raw_data."""
    import onnx

    onnx.save(
        model, path, save_as_external_data=True, all_tensors_to_one_file=True, location=location, size_threshold=1024
    )


def _load_beside(src: str):
    """The model file `src` with its tensors read in from the files beside it."""
    import os

    import onnx

    model = onnx.load(src, load_external_data=False)
    _read_beside(model, os.path.dirname(src))
    return model


def _read_beside(model, folder: str) -> None:
    """Read each tensor's bytes from the file beside the model its external data names: files
    the server linked there itself (weights<N>.bin), so onnx's loader, which refuses hard-linked
    files as a possible attack, is not the one reading them."""
    import os
    import re

    import onnx

    from .traverse import tensors

    for t in tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        name = info.get("location", "")
        if not re.fullmatch(r"weights\d+\.bin", name):
            raise ValueError(f"tensor {t.name!r} names data {name!r} the server did not put beside it")
        try:
            offset, length = int(info.get("offset", 0)), int(info.get("length", -1))
            with open(os.path.join(folder, name), "rb") as f:
                f.seek(offset)
                t.raw_data = f.read(length)
        except (OSError, ValueError) as exc:
            raise ValueError(f"tensor {t.name!r}: its data can't be read ({exc})") from None
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT


def function_types(data: bytes) -> dict[str, dict]:
    """The types of the values in model-local functions' bodies, each as at one call of it
    (function_types.py), of a serialized weightless model after shape inference: {graph path:
    {"node", "name", "calls", "differ", "value_info": a serialized GraphProto holding them}}."""
    import onnx

    from .function_types import function_types as types_of

    out = {}
    for path, t in types_of(onnx.ModelProto.FromString(data)).items():
        holder = onnx.GraphProto()
        holder.value_info.extend(t.values)
        out[path] = {
            "node": t.node,
            "name": t.name if isinstance(t.name, str) else t.name.decode("utf-8", "replace"),  # upb's bytes
            "calls": t.calls,
            "differ": t.differ,
            "value_info": holder.SerializeToString(),
        }
    return out


def function_bodies(data: bytes, where: list[tuple[str, int]]) -> list[bytes | None]:
    """The function body onnx's definition gives each node at `where` ((graph path, index)) of
    a serialized weightless model, at the opset it runs at, serialized; None where its operator
    defines none. A context-dependent one (LayerNormalization, Gelu, GroupNormalization…) is
    built on the node's input types, from shape inference; each as body_rewrites makes it."""
    import onnx
    from onnx import defs

    from .address import resolve_graph
    from .body_rewrites import rewritten
    from .inference import inferred_model
    from .traverse import opset_version, standard_domain

    model = onnx.ModelProto.FromString(data)
    inferred = inferred_model(model) or model
    typed: dict[str, onnx.TypeProto] = {}
    for g in [inferred.graph]:
        for v in (*g.input, *g.value_info, *g.output):
            if v.type.WhichOneof("value"):
                typed[v.name] = v.type
        for t in g.initializer:
            typed[t.name] = onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
    out: list[bytes | None] = []
    for path, index in where:
        ref = resolve_graph(model, path)
        node = ref.container.node[index]
        version = opset_version(model, ref.container, node.domain) or 0
        try:
            # (onnx's type stubs lack the function-body methods the bindings have)
            schema: Any = defs.get_schema(node.op_type, version, standard_domain(node.domain))
        except defs.SchemaError:
            out.append(None)
            continue
        body = None
        if schema.has_function:
            found = schema.get_function_with_opset_version(_newest_up_to(schema.function_opset_versions, version))
            body = found or schema.function_body
        elif schema.has_context_dependent_function:
            types = [typed.get(x) for x in node.input]
            if all(t is not None for t, x in zip(types, node.input, strict=True) if x):
                found = schema.get_context_dependent_function_with_opset_version(
                    _newest_up_to(schema.context_dependent_function_opset_versions, version),
                    node.SerializeToString(),
                    [t.SerializeToString() if t else b"" for t in types],
                )
                body = found or None
        if isinstance(body, bytes):  # onnx's bindings answer some serialized
            body = onnx.FunctionProto.FromString(body)
        if body is not None:
            elem = {
                f: typed[x].tensor_type.elem_type for f, x in zip(body.input, node.input, strict=False) if x in typed
            }
            body = rewritten(body, node, {f: t for f, t in elem.items() if t})
        out.append(body.SerializeToString() if body is not None and len(body.node) else None)
    return out


def _newest_up_to(versions, version: int) -> int:
    """The opset of the body written for the newest opset up to the node's (else the oldest)."""
    usable = [v for v in versions if v <= version]
    return max(usable) if usable else min(versions, default=version)
