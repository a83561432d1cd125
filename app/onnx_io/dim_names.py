"""What a person calls the dims of a model's inputs when giving their sizes (to run it, to count
its costs): a symbolic dim by its own name ("batch"), and a dim the model leaves unnamed — no
size and no name (silero VAD's [?, ?]), PaddlePaddle's -1 and its "?" (written for every
unknown dim, not one size shared by all) — by its input and axis, "x[0]". A dim written as
a sum or product of the others (optimum's attention mask "past_sequence_length + sequence_length")
is no size of its own: it is that expression of theirs.
Imports only the standard library: onnxruntime's worker loads it by its path."""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Mapping
from typing import Any

UNNAMED = ("", "?")  # dim names that name nothing
MAX_EXPRESSION = 64  # a dim's text longer than this is no expression of the others
MAX_POWER = 4  # "(s + 1)**2" is one; a power beyond this is no dim anyone writes


def axis_dim(input_name: str, axis: int) -> str:
    """The name of input `input_name`'s unnamed dim at `axis`."""
    return f"{input_name}[{axis}]"


def is_unnamed(d) -> bool:
    """Whether a dim as JSON or onnxruntime give it (a number, a name, None) has neither a size
    nor a name."""
    return d is None or d in UNNAMED or (isinstance(d, int) and not isinstance(d, bool) and d < 0)


def dim_size(input_name: str, axis: int, d, dims: dict) -> int | None:
    """The size of an input's dim `d` at `axis`: its own, what its expression of the dims in
    `dims` makes it, or what `dims` gives for its name (or, unnamed, for axis_dim); None when
    none of them says."""
    if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
        return d
    if not is_unnamed(d) and expression_names(d, dims.keys() - {d}):
        size = expression_value(d, dims)
        if size is not None and size >= 0:
            return size
    key = axis_dim(input_name, axis) if is_unnamed(d) else d
    return int(dims[key]) if key in dims else None


def evaluate(text: str, name: Callable[[str], Any]) -> Any:
    """A dim's text read as sums, differences and products (and small powers) of whole numbers
    and names, each name given by `name` (a size, a polynomial: anything with + - *); None when
    the text is anything else or `name` refuses one (KeyError, ValueError, TypeError). Parsed,
    never run."""
    if not isinstance(text, str) or len(text) > MAX_EXPRESSION:
        return None
    try:
        return _value(ast.parse(text, mode="eval").body, name)
    except (SyntaxError, ValueError, TypeError, KeyError, RecursionError):
        return None


def _value(node: ast.AST, name: Callable[[str], Any]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        return name(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand, name)
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left, name), _value(node.right, name)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Pow) and type(right) is int and 0 <= right <= MAX_POWER:
            out = 1
            for _ in range(right):
                out = left * out
            return out
    raise ValueError("not a sum or product of dims")


def expression_names(text, plain: Collection[str]) -> list[str] | None:
    """The dims a dim's text is an expression of ("past_sequence + sequence" → past_sequence,
    sequence) when it is one and every name in it is in `plain` (dims the inputs declare by
    name alone, or sizes given); None for a name, and for text whose names aren't all there:
    "batch-size" is a dim of its own unless batch and size are dims too."""
    if not isinstance(text, str) or text in plain or text.isidentifier():
        return None
    seen: dict[str, None] = {}

    def note(n: str) -> int:
        if n not in plain:
            raise KeyError(n)
        seen[n] = None
        return 1

    return list(seen) if evaluate(text, note) is not None and seen else None


def expression_value(text: str, sizes: Mapping[str, int]) -> int | None:
    """The size a dim's expression has at `sizes` (of the names in it); None if one is missing."""
    value = evaluate(text, lambda n: int(sizes[n]))
    return value if type(value) is int else None


def missing_names(text, sizes: Mapping[str, int]) -> list[str]:
    """The names in a dim's expression ("past_sequence + sequence") `sizes` has no size for;
    [] for a name alone, or text that is no expression."""
    if not isinstance(text, str) or text.isidentifier():
        return []
    seen: dict[str, None] = {}

    def note(n: str) -> int:
        seen[n] = None
        return 1

    return [n for n in seen if n not in sizes] if evaluate(text, note) is not None else []


def solved(text: str, sizes: Mapping[str, int], value: int) -> tuple[str, int] | None:
    """The one name of a dim's expression `sizes` lacks, and the size that makes the expression
    `value` (a mask of 5 at sequence 3: past_sequence 2); None when more or none are missing,
    or no whole size >= 0 does."""
    missing = missing_names(text, sizes)
    if len(missing) != 1:
        return None
    name = missing[0]

    def at(v: int) -> int | None:
        return expression_value(text, {**sizes, name: v})

    first, second = at(0), at(1)
    if first is None or second is None or first == second or (value - first) % (second - first):
        return None
    size = (value - first) // (second - first)
    return (name, size) if size >= 0 and at(size) == value else None


def plain_dims(shapes) -> set[str]:
    """The dims that are names alone in `shapes` (inputs' dims as JSON or onnxruntime give
    them), which the others' expressions are in."""
    named = {d for shape in shapes for d in shape or [] if isinstance(d, str) and not is_unnamed(d)}
    return {d for d in named if d.isidentifier() or evaluate(d, lambda _n: 1) is None}


def dim_expressions(shapes) -> dict[str, list[str]]:
    """{dim's text: the dims it is an expression of} for the dims of `shapes` (the fed inputs'
    shapes as JSON) that are expressions of the others: the page asks for those others' sizes."""
    shapes = [shape or [] for shape in shapes]
    plain = plain_dims(shapes)
    found = {d: expression_names(d, plain) for shape in shapes for d in shape if isinstance(d, str)}
    return {d: names for d, names in found.items() if names}
