"""Reading and writing ONNX safely."""

from .load import checker_verdict, parse_model

__all__ = ["checker_verdict", "parse_model"]
