"""What the helper process runs (offload.py): each job calls onnx's C++ on one model, read from a
file of the store or handed over as bytes, and answers plain data (dicts, bytes, text)."""

from __future__ import annotations


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


def infer_at_dims(path: str, dims: dict[str, int]) -> bytes:
    """The weightless stand-in with its input dims fixed, after shape inference, serialized."""
    from .inference import shapes_at_dims
    from .light import light_copy
    from .load import parse_model_file

    return light_copy(shapes_at_dims(parse_model_file(path), dims)).SerializeToString()


def print_text(data: bytes) -> str:
    """onnx.printer's text of a serialized model; a ValueError carrying the printer's words."""
    import onnx

    from .text_fields import readable_strings

    model = onnx.ModelProto.FromString(data)
    readable_strings(model)  # invalid UTF-8 strings printed with replacement characters
    try:
        return onnx.printer.to_text(model)
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
    ValueError carrying onnx's words when it refuses the model."""
    import onnx

    try:
        return onnx.shape_inference.infer_shapes(onnx.ModelProto.FromString(data), **options).SerializeToString()
    except Exception as exc:
        raise ValueError(str(exc)) from None


def convert(data: bytes, version: int) -> bytes:
    """onnx.version_converter's model at `version`, serialized; a ValueError with its words."""
    import onnx

    try:
        return onnx.version_converter.convert_version(onnx.ModelProto.FromString(data), version).SerializeToString()
    except Exception as exc:
        raise ValueError(str(exc)) from None


def quantize(data: bytes, options: dict) -> bytes:
    """onnxruntime's dynamic int8 quantization of a serialized model (weights inside), serialized;
    a ValueError with its words. It works on files: a private folder, gone after."""
    import logging
    import tempfile
    from pathlib import Path

    from onnxruntime.quantization import QuantType, quantize_dynamic

    # its advice ("consider pre-processing") goes to logging's root: without a handler there,
    # logging.warning() would print it on the server's stderr, amid its log lines
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())

    with tempfile.TemporaryDirectory(prefix="studio-quantize-") as folder:
        src, dst = Path(folder) / "in.onnx", Path(folder) / "out.onnx"
        src.write_bytes(data)
        del data
        try:
            quantize_dynamic(
                src,
                dst,
                weight_type=QuantType[options["weight_type"]],
                op_types_to_quantize=options.get("op_types") or None,
                nodes_to_exclude=options.get("nodes_to_exclude") or None,
                per_channel=options.get("per_channel", False),
                reduce_range=options.get("reduce_range", False),
            )
        except Exception as exc:
            raise ValueError(str(exc) or type(exc).__name__) from None
        return dst.read_bytes()
