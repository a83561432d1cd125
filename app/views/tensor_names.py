"""Which tensor of one graph is which of another's, once the diff (diff.py) has matched their
nodes: a re-export spells its intermediate tensors anew ("/h.0/attn/MatMul_output_0" →
"/h.0/attn/MatMul_out0", "onnx::Const_12" → "onnx::Const_112"), and a node whose inputs and
outputs are only spelled otherwise is no change.

The correspondence, first found kept (one-to-one): the graph's inputs (by name, else renamed in
place: io_pairs; a function's by position, as they are passed), the k-th output of each matched
node to the k-th of its match (a node written alike on both sides needs no entry), the graph's
outputs, then the initializers: two of one content a
matched node reads at the same place, then two of one name (whatever they hold: a weight
changed), then the k-th of one content to the k-th. Who reads a constant goes before its name
because exporters number constants ("onnx::Const_102" is another constant in a re-export with
one more before it). A subgraph's correspondence extends its outer graph's (it reads the outer
tensors by name).
"""

from __future__ import annotations

import hashlib
from collections import ChainMap, defaultdict
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from typing import Any

import numpy as np
import onnx

from ..errors import StudioError
from ..onnx_io.external import TENSOR_PREFIX
from .io_pairs import fits_in_place, graph_values, paired_names
from .tensor_content import encoding, sparse_change, tensor_change
from .tensors import tensor_array

Body = onnx.GraphProto | onnx.FunctionProto


class TensorNames:
    """A one-to-one correspondence of old tensor names to new ones, over an outer scope's."""

    def __init__(self, outer: TensorNames | None = None) -> None:
        self.to_new: MutableMapping[str, str] = {} if outer is None else ChainMap({}, outer.to_new)
        self.to_old: MutableMapping[str, str] = {} if outer is None else ChainMap({}, outer.to_old)
        self.renamed: list[tuple[str, str]] = []  # this scope's own, in the order found
        self.moved: set[str] = set()  # names on either side of this scope's renames
        self.outer = outer

    def pair(self, old: str, new: str) -> None:
        """Record that `old` is `new`, unless either is empty (an optional input left out) or
        already paired: the first source of the correspondence wins."""
        if not old or not new or old in self.to_new or new in self.to_old:
            return
        self.to_new[old] = new
        self.to_old[new] = old
        if old != new:
            self.renamed.append((old, new))
            self.moved.update((old, new))

    def same(self, old: str, new: str) -> bool:
        """Whether `old` and `new` name the same tensor: paired, or one name neither side paired
        elsewhere (a name read from nowhere on both sides)."""
        paired_with = self.to_new.get(old)
        if paired_with is not None:
            return paired_with == new
        return old == new and new not in self.to_old

    def same_list(self, old: Sequence[str], new: Sequence[str]) -> bool:
        return len(old) == len(new) and all(self.same(x, y) for x, y in zip(old, new, strict=True))

    def any_moved(self) -> bool:
        """Whether a tensor was renamed here or in an outer scope."""
        scope: TensorNames | None = self
        while scope is not None:
            if scope.moved:
                return True
            scope = scope.outer
        return False

    def touches_moved(self, tensor_names: Iterable[str]) -> bool:
        """Whether any of these names is on either side of a rename (here or outer): a node
        written alike on both sides may then read another tensor under the same name."""
        names = set(tensor_names)
        scope: TensorNames | None = self
        while scope is not None:
            if not scope.moved.isdisjoint(names):
                return True
            scope = scope.outer
        return False

    def new_name(self, old: str) -> str:
        return self.to_new.get(old, old)

    def old_name(self, new: str) -> str:
        return self.to_old.get(new, new)


def correspond(
    old: Body,
    new: Body,
    differing: list[tuple[int, int]],
    reads=(None, None),
    outer: TensorNames | None = None,
) -> TensorNames:
    """The tensor correspondence of two graphs (or function bodies). differing: the matched node
    pairs (indices into old.node, new.node) whose bytes differ. The others write their outputs
    under the same names and need no entry: a name paired with nothing is itself (`same`), and
    where each tensor has one writer nothing else pairs it with another name."""
    names = TensorNames(outer)
    inputs, outputs = _io_pairs(old, new)
    for x, y in inputs:
        names.pair(x, y)
    old_nodes, new_nodes = old.node, new.node
    for i, j in differing:
        for x, y in zip(old_nodes[i].output, new_nodes[j].output, strict=False):
            names.pair(x, y)
    for x, y in outputs:
        names.pair(x, y)
    _pair_initializers(names, old, new, _read_pairs(old_nodes, new_nodes, differing), reads)
    _pair_sparse(names, old, new, _read_pairs(old_nodes, new_nodes, differing), reads)
    return names


def used_names(node: onnx.NodeProto) -> Iterator[str]:
    """The tensor names a node reads and writes, those its subgraphs' nodes do included (they
    read outer tensors by name)."""
    yield from node.input
    yield from node.output
    for a in node.attribute:
        graphs = [a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs
        for g in graphs:
            for inner in g.node:
                yield from used_names(inner)


def io_names(body: Body) -> set[str]:
    """The names of a graph's or function's inputs and outputs."""
    return {v if isinstance(v, str) else v.name for v in (*body.input, *body.output)}


def _io_pairs(old: Body, new: Body) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(inputs, outputs) paired: a function's by position (a call passes them so); a graph's by
    name, else renamed in place (what the diff lists as renamed inputs and outputs)."""
    if isinstance(old, onnx.FunctionProto) and isinstance(new, onnx.FunctionProto):
        return list(zip(old.input, new.input, strict=False)), list(zip(old.output, new.output, strict=False))
    assert isinstance(old, onnx.GraphProto) and isinstance(new, onnx.GraphProto)
    a_in, b_in = [v.name for v in old.input], [v.name for v in new.input]
    a_out, b_out = [v.name for v in old.output], [v.name for v in new.output]
    if _none_renamed(a_in, b_in) and _none_renamed(a_out, b_out):  # the common case, without the
        return _kept(a_in, b_in), _kept(a_out, b_out)  # walk over every value of both graphs
    in_old, in_new = graph_values(old), graph_values(new)
    fits = fits_in_place(old, new)
    return paired_names(a_in, b_in, in_old, in_new, fits), paired_names(a_out, b_out, in_old, in_new, fits)


def _none_renamed(a: list[str], b: list[str]) -> bool:
    """Whether every name of one list is in the other: then none was renamed in place."""
    return set(a) <= set(b) or set(b) <= set(a)


def _kept(a: list[str], b: list[str]) -> list[tuple[str, str]]:
    in_b = set(b)
    return [(n, n) for n in a if n in in_b]


def _initializers(body: Body, paired: MutableMapping[str, str]) -> dict[str, onnx.TensorProto]:
    """A graph's initializers not `paired` yet, by name (a function has none)."""
    return {t.name: t for t in getattr(body, "initializer", ()) if t.name not in paired}


def _read_pairs(old_nodes, new_nodes, pairs: list[tuple[int, int]]):
    """(old name, new name) each matched node pair reads at one input position (lazily: only
    walked when initializers were renamed)."""
    for i, j in pairs:
        yield from zip(old_nodes[i].input, new_nodes[j].input, strict=False)


def _pair_initializers(names: TensorNames, old: Body, new: Body, read_pairs, reads) -> None:
    """Pair the graphs' initializers (not paired as inputs): those of one content read at the same
    place by matched nodes, then those of one name, then the k-th of one content with the k-th."""
    old_left = _initializers(old, names.to_new)
    new_left = _initializers(new, names.to_old)
    if old_left.keys() == new_left.keys():
        for name in old_left:  # the common case: no initializer renamed (some maybe changed)
            names.pair(name, name)
        return
    keys = _ContentKeys(reads)
    for x, y in read_pairs:
        unpaired = x in old_left and y in new_left and x not in names.to_new and y not in names.to_old
        if unpaired and keys.same(old_left[x], new_left[y]):
            names.pair(x, y)
    for name in old_left.keys() & new_left.keys():
        names.pair(name, name)
    _pair_by_content(
        names,
        {n: t for n, t in old_left.items() if n not in names.to_new},
        {n: t for n, t in new_left.items() if n not in names.to_old},
        keys,
    )


def _sparse(body: Body, paired: MutableMapping[str, str]) -> dict[str, onnx.SparseTensorProto]:
    """A graph's sparse initializers not `paired` yet, by name (a function has none)."""
    return {t.values.name: t for t in getattr(body, "sparse_initializer", ()) if t.values.name not in paired}


def _pair_sparse(names: TensorNames, old: Body, new: Body, read_pairs, reads) -> None:
    """Pair the graphs' sparse initializers as the dense ones are: of one content read at the
    same place, then of one name, then the k-th of one content with the k-th (a graph holds few:
    compared pair by pair)."""
    old_left, new_left = _sparse(old, names.to_new), _sparse(new, names.to_old)
    if old_left.keys() == new_left.keys():
        for name in old_left:
            names.pair(name, name)
        return
    for x, y in read_pairs:
        if x in old_left and y in new_left and not sparse_change(old_left[x], new_left[y], reads):
            names.pair(x, y)
    for name in old_left.keys() & new_left.keys():
        names.pair(name, name)
    for x, t in old_left.items():
        match = next((y for y, u in new_left.items() if y not in names.to_old and not sparse_change(t, u, reads)), None)
        if x not in names.to_new and match is not None:
            names.pair(x, match)


def _pair_by_content(names: TensorNames, old_left: dict, new_left: dict, keys: _ContentKeys) -> None:
    """Pair the k-th initializer of one content left on the old side with the k-th on the new
    (in each graph's order); only tensors of a dtype and dims found on both sides are hashed."""
    shared = {_shape_key(t) for t in old_left.values()} & {_shape_key(t) for t in new_left.values()}
    waiting: dict[Any, list[str]] = defaultdict(list)
    for n, t in new_left.items():
        if _shape_key(t) in shared:
            waiting[keys.key(t, 1)].append(n)
    for n, t in old_left.items():
        queue = waiting.get(keys.key(t, 0)) if _shape_key(t) in shared else None
        if queue and keys.same(t, new_left[queue[0]]):
            names.pair(n, queue.pop(0))


def _shape_key(t: onnx.TensorProto) -> tuple[int, tuple[int, ...]]:
    return t.data_type, tuple(t.dims)


class _ContentKeys:
    """Tensors' content keys (dtype, dims, digest of the values), each computed once."""

    def __init__(self, reads) -> None:
        self.reads = reads
        self.known: dict[tuple[int, str], Any] = {}

    def key(self, t: onnx.TensorProto, side: int) -> Any:
        """side: 0 for the old graph's tensor, 1 for the new one's (names are unique per side)."""
        at = (side, t.name)
        if at not in self.known:
            self.known[at] = (*_shape_key(t), _digest(t, self.reads[side]))
        return self.known[at]

    def same(self, x: onnx.TensorProto, y: onnx.TensorProto) -> bool:
        """Equal content keys, and nothing else differs (doc string, metadata): tensor_change."""
        kx = self.key(x, 0)
        return kx[2] is not None and kx == self.key(y, 1) and tensor_change(x, y, self.reads) is None


def _digest(t: onnx.TensorProto, read) -> str | None:
    """The sha256 of a tensor's values as little-endian bytes, however they are written: a blob
    of the store is named by it (store/blobs.py), raw_data is those bytes, typed fields and data
    files are decoded to them. None when they can't be read (then it pairs with nothing)."""
    where = encoding(t)
    refs = {e.key: e.value for e in t.external_data}
    if where == "store" and refs.get("offset", "0") == "0":
        return refs["location"][len(TENSOR_PREFIX) :]
    if where == "raw_data":
        return hashlib.sha256(t.raw_data).hexdigest()
    try:
        values = tensor_array(t, read)
    except StudioError:
        return None
    if values.dtype.kind in "OUS":  # strings
        return hashlib.sha256(repr(values.tolist()).encode()).hexdigest()
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()
