"""The positions a run's attention mask leaves out, and which values of a tensor are at them: a
batch of token sequences of other lengths is padded, and the mask's 0s mark the padding. A
padded position's row of attention is fully masked, so what the model computes there means
nothing (in torch too): a float16 conversion holds the mask's -3.4e38 as -65504, which turns
those rows from a uniform softmax into another one, and their logits differed by 0.165 while
the real tokens' differed by 1.9e-3 (the QA's left-padded LLaMA). Comparing two revisions
leaves them out, and says how far they differ apart (output_compare, api/run.py).

The rule, in one place: a mask is a fed graph input that input_roles calls one (an integer or
boolean tensor named ..._mask, but not a padding mask: torch's key_padding_mask is True at the
padding, the other way round), of two axes [batch, seq], holding 0s and not only 0s. A tensor
whose first axis is the batch has the mask's positions along each axis shape inference names
as the sequence (the mask's length dim, or the token ids' beside it: an export may name them
apart), of the mask's length: [batch, seq, ...] (hidden states, logits), [batch, heads, seq,
...] (queries, keys, values), [batch, heads, seq, seq] (attention scores: both the query's and
the key's position), keys transposed [batch, heads, dim, seq]. Where no dim is named so (an
export without value_info), by position: its second axis, or, of four axes, its third (and
fourth) of that length; a fixed dim where the mask's length is not (a number of heads) is no
sequence. A value at a padded position along any of those axes is left out; a tensor whose
axes can't be told apart (as many heads as tokens, no names) is compared whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx

from . import saved_values
from .input_roles import MASK, input_roles

Dim = int | str | None


@dataclass(frozen=True)
class Mask:
    input: str
    attended: np.ndarray  # bool [batch, seq]: False at the padded positions
    seq: Dim  # the mask's declared length: a number, a dim's name, or unknown
    names: frozenset[str]  # the dims' names that are its length (its own, the token ids')

    @property
    def padded(self) -> int:
        return int((~self.attended).sum())


@dataclass(frozen=True)
class Padding:
    masks: tuple[Mask, ...]
    declared: dict[str, list[Dim]]  # each tensor's dims as shape inference gives them

    def attended(self, tensor: str) -> Callable[[tuple[int, ...]], tuple[Mask, np.ndarray] | None]:
        """For `tensor`: of a value's shape, the mask it is read by and which of its elements
        are at attended positions (a bool array of that shape), or None when no mask fits it."""
        return lambda shape: self.of(tensor, tuple(shape))

    def of(self, tensor: str, shape: tuple[int, ...]) -> tuple[Mask, np.ndarray] | None:
        fits = [(m, axes) for m in self.masks if (axes := position_axes(shape, self.declared.get(tensor), m))]
        if not fits or any(not np.array_equal(m.attended, fits[0][0].attended) for m, _ in fits[1:]):
            return None  # no mask, or masks that disagree about it
        mask, axes = fits[0]
        kept = np.ones(shape, bool)
        for axis in axes:
            view = [1] * len(shape)
            view[0], view[axis] = mask.attended.shape
            kept &= mask.attended.reshape(view)
        return mask, kept


def position_axes(shape: tuple[int, ...], declared: list[Dim] | None, mask: Mask) -> list[int]:
    """The axes of a tensor of `shape` (its dims `declared` by shape inference, where known)
    along which it has `mask`'s positions (the module's rule); [] when none, or when they can't
    be told apart from other axes of the mask's length."""
    batch, seq = mask.attended.shape
    if len(shape) < 2 or shape[0] != batch:
        return []
    dims = list(declared) if declared and len(declared) == len(shape) else [None] * len(shape)
    named, maybe = [], []
    for axis in range(1, len(shape)):
        d = dims[axis]
        if shape[axis] != seq:
            continue
        if isinstance(d, str) and d in mask.names:
            named.append(axis)
        elif d is None or (isinstance(d, int) and isinstance(mask.seq, int)):
            maybe.append(axis)  # unknown, or fixed where the mask's length is fixed too
        # else a fixed dim where the mask's length is not (a number of heads), or another dim
    if named:
        return named
    if 1 in maybe:  # [batch, seq, ...], unless [batch, seq, seq, x] or as many heads as tokens
        return [1] if not (len(shape) == 4 and 2 in maybe) else []
    if len(shape) == 4 and 2 in maybe:  # [batch, heads, seq, ...] and [batch, heads, seq, seq]
        return [2, 3] if 3 in maybe else [2]
    return []


def padding_of(
    model: onnx.ModelProto, fed: dict[str, str], typed: Callable[[], onnx.ModelProto | None]
) -> Padding | None:
    """The masks among a run's inputs `fed` ({input: its saved value}) that hold padded positions,
    with `typed()` (the model after shape inference) declaring its tensors' dims; None when none."""
    roles = input_roles(model.graph, set(fed))
    declared_inputs = {vi.name: _dims(vi) for vi in model.graph.input}
    values = {name: _whole_2d(fed[name]) for name in fed if len(declared_inputs.get(name) or [None, None]) == 2}
    masks = []
    for name, value in values.items():
        if roles.get(name) != MASK or "padding" in name.lower() or value is None:
            continue
        attended = value != 0
        if attended.all() or not attended.any():  # nothing padded, or nothing left
            continue
        dims = declared_inputs.get(name) or [None, None]
        # the token ids' length may be named apart (torch's Dim.AUTO: s53 for the mask, s70 the ids)
        names = {dims[1]} | {
            (declared_inputs.get(other) or [None, None])[1]
            for other, v in values.items()
            if v is not None and v.shape == value.shape
        }
        masks.append(Mask(name, attended, dims[1], frozenset(n for n in names if isinstance(n, str))))
    if not masks:
        return None
    declared = {}
    for vi in [*(typed() or model).graph.value_info, *model.graph.output, *model.graph.input]:
        declared[vi.name] = _dims(vi)
    return Padding(tuple(masks), declared)


def _whole_2d(path: str) -> np.ndarray | None:
    """A fed value that is a tensor of whole numbers or booleans of two axes, else None."""
    value = saved_values.load(path)
    return value if isinstance(value, np.ndarray) and value.ndim == 2 and value.dtype.kind in "biu" else None


def _dims(vi: onnx.ValueInfoProto) -> list[Dim]:
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return []
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in vi.type.tensor_type.shape.dim]


def left_out(padding: Padding, outputs: dict[str, dict], nodes: list[dict] | None) -> list[dict]:
    """What a comparison left out, mask by mask: [{"input", "positions": its 0s, "outputs": how
    many outputs had values there, "max_abs": the most they differ by there (None: no output
    had), and with `nodes` (the node-by-node errors) "nodes", "nodes_max_abs" likewise}]; only
    masks some tensor was read by."""
    said = []
    for m in padding.masks:
        outs = [c["padded"]["max_abs"] for c in outputs.values() if c.get("padded", {}).get("input") == m.input]
        rows = [n["padded"]["max_abs"] for n in nodes or [] if n.get("padded", {}).get("input") == m.input]
        if not outs and not rows:
            continue
        entry = {"input": m.input, "positions": m.padded, "outputs": len(outs), "max_abs": max(outs, default=None)}
        if nodes is not None:
            entry.update(nodes=len(rows), nodes_max_abs=max(rows, default=None))
        said.append(entry)
    return said
