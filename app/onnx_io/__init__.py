"""Reading and writing ONNX safely."""
from .load import parse_model, checker_verdict

__all__ = ["parse_model", "checker_verdict"]
