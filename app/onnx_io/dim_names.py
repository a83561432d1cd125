"""What a person calls the dims of a model's inputs when giving their sizes (to run it, to count
its costs): a symbolic dim by its own name ("batch"), and a dim the model leaves unnamed — no
size and no name (silero VAD's [?, ?]), PaddlePaddle's -1 and its "?" (written for every
unknown dim, not one size shared by all) — by its input and axis, "x[0]".
Imports nothing: onnxruntime's worker loads it by its path."""

from __future__ import annotations

UNNAMED = ("", "?")  # dim names that name nothing


def axis_dim(input_name: str, axis: int) -> str:
    """The name of input `input_name`'s unnamed dim at `axis`."""
    return f"{input_name}[{axis}]"


def is_unnamed(d) -> bool:
    """Whether a dim as JSON or onnxruntime give it (a number, a name, None) has neither a size
    nor a name."""
    return d is None or d in UNNAMED or (isinstance(d, int) and not isinstance(d, bool) and d < 0)


def dim_size(input_name: str, axis: int, d, dims: dict) -> int | None:
    """The size of an input's dim `d` at `axis`: its own, or what `dims` gives for its name (or,
    unnamed, for axis_dim); None when neither says."""
    if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
        return d
    key = axis_dim(input_name, axis) if is_unnamed(d) else d
    return int(dims[key]) if key in dims else None
