"""Which graph input (or output) of one model is which of another's: the same name, or renamed in
place (the old name gone, a new one at the same position). Compare lists renamed ones as renamed,
not as one removed and one added; Run compares a renamed output with its old self; a reference
case feeds and checks renamed inputs and outputs; and Compare's costs count both sides at the same
input shapes (`same_shapes`)."""

from __future__ import annotations

from collections.abc import Callable

import onnx

from ..onnx_io.dim_names import axis_dim
from ..onnx_io.inference import unnamed_dim
from ..onnx_io.type_rules import shapes_contradict


def graph_values(g: onnx.GraphProto) -> set[str]:
    """Every value the graph itself holds: inputs, initializers, node outputs."""
    return {v.name for v in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output}


def paired(old: onnx.GraphProto, new: onnx.GraphProto, field: str) -> list[tuple[str, str]]:
    """(old name, new name) of each of the graphs' `field` ("input" or "output") in both, in old's
    order: those of the same name, then those renamed in place (paired_names)."""
    a = [v.name for v in getattr(old, field)]
    b = [v.name for v in getattr(new, field)]
    if set(a) == set(b):  # the common case: no rename to look for, no walk of every node's outputs
        return [(n, n) for n in a]
    return paired_names(a, b, graph_values(old), graph_values(new), fits_in_place(old, new))


def fits_in_place(old: onnx.GraphProto, new: onnx.GraphProto) -> Callable[[str, str], bool]:
    """Whether the new graph's input or output `y` can be the old one's `x` renamed, as far as the
    graphs tell: their declared types agree (could_be), and the node writing `y` (by its name and
    output position) wrote `x` in the old graph, if it was there at all — where it wrote another
    value, `y` is that one renamed (a detector cut before its top-100 and its output0 renamed
    output: [?, ?, 85] agrees with det [batch, 100, 85], and its Concat wrote output0, QA44 #1)."""
    declared = {v.name: v for v in (*old.input, *old.output)}, {v.name: v for v in (*new.input, *new.output)}
    wrote = {(n.name, k): o for n in old.node if n.name for k, o in enumerate(n.output)}
    writer = {o: (n.name, k) for n in new.node if n.name for k, o in enumerate(n.output)}

    def fits(x: str, y: str) -> bool:
        before = wrote.get(writer.get(y, ("", -1)))
        return could_be(declared[0][x], declared[1][y]) and (before is None or before == x)

    return fits


def could_be(old: onnx.ValueInfoProto, new: onnx.ValueInfoProto) -> bool:
    """Whether `new` can be `old` under another name: their declared types don't contradict —
    the same kind of value, of the same rank, no axis fixed to two different sizes. (A detector
    cut before its NMS put [1, 25200, 85] in place of the removed det_boxes [num_det, 4]: QA43
    #1 saw it compared with it as its renamed self.) The element type may differ: a rename and
    a float16 conversion between the two revisions compared."""
    kind = old.type.WhichOneof("value")
    if kind is None or new.type.WhichOneof("value") is None:
        return True  # an undeclared type contradicts nothing
    if kind != new.type.WhichOneof("value"):
        return False
    if kind not in ("tensor_type", "sparse_tensor_type"):
        return True
    return not shapes_contradict(getattr(old.type, kind), getattr(new.type, kind))


def paired_names(
    a: list[str],
    b: list[str],
    in_old: set[str],
    in_new: set[str],
    fits: Callable[[str, str], bool] | None = None,
) -> list[tuple[str, str]]:
    """(old name, new name) of the names of list `a` (an old graph's inputs or outputs) in list
    `b` (the new graph's), in a's order: the same name, then those renamed in place — at the same
    position, the old name gone from the new graph (`in_new`: every value it holds), the new
    one nowhere in the old (`in_old`; an output swapped for another tensor is not a rename), and
    `fits(old, new)` where the caller can tell (could_be: by their declared types)."""
    kept_a, kept_b = set(a), set(b)
    pairs = [(n, n) for n in a if n in kept_b]
    pairs += [
        (x, y)
        for x, y in zip(a, b, strict=False)
        if x not in kept_b and y not in kept_a and x not in in_new and y not in in_old and (fits is None or fits(x, y))
    ]
    return pairs


def _dims(v: onnx.ValueInfoProto) -> list[tuple[str, int | str]] | None:
    """An input's dims as ("size", n) or ("name", what a person calls it), None without a shape."""
    t = v.type.tensor_type if v.type.HasField("tensor_type") else None
    if t is None or not t.HasField("shape"):
        return None
    out: list[tuple[str, int | str]] = []
    for axis, d in enumerate(t.shape.dim):
        if unnamed_dim(d):
            out.append(("name", axis_dim(v.name, axis)))
        elif d.HasField("dim_param"):
            out.append(("name", d.dim_param))
        else:
            out.append(("size", d.dim_value))
    return out


def _fed(g: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    weights = {t.name for t in g.initializer}
    return [v for v in g.input if v.name not in weights]


def same_shapes(old: onnx.ModelProto, new: onnx.ModelProto) -> dict:
    """The sizes that give both models' inputs the same shapes: "to" pins the new model's
    symbolic dims the old one fixes, "from" the old one's the new one fixes, and "names" maps an
    old dim's name to the new one's at the same place ("N" -> "batch"). A dim fixed to different
    sizes at different places can't be pinned and is left out."""
    pins: dict[str, dict[str, set[int]]] = {"from": {}, "to": {}}
    names: dict[str, str] = {}
    old_inputs = {v.name: v for v in _fed(old.graph)}
    new_inputs = {v.name: v for v in _fed(new.graph)}
    for a_name, b_name in paired(old.graph, new.graph, "input"):
        if a_name not in old_inputs or b_name not in new_inputs:
            continue
        a, b = _dims(old_inputs[a_name]), _dims(new_inputs[b_name])
        if a is None or b is None or len(a) != len(b):
            continue
        for (kind_a, x), (kind_b, y) in zip(a, b, strict=True):
            if kind_a == "size" and kind_b == "name":
                pins["to"].setdefault(str(y), set()).add(int(x))
            elif kind_a == "name" and kind_b == "size":
                pins["from"].setdefault(str(x), set()).add(int(y))
            elif kind_a == kind_b == "name" and x != y:
                names.setdefault(str(x), str(y))
    return {
        **{side: {p: next(iter(v)) for p, v in found.items() if len(v) == 1} for side, found in pins.items()},
        "names": names,
    }
