"""The values a categorical input can hold, read off the nodes that look them up: a string column
of a scikit-learn pipeline goes to a OneHotEncoder (`cats_strings`), a LabelEncoder (`keys_*`) or
a CategoryMapper; a dict of features to a DictVectorizer (`string_vocabulary`); text, through a
Tokenizer, to a TfIdfVectorizer's `pool_strings`. Random inputs drawn from them exercise the
model's real paths — random strings or zeros only reach its "unknown category" branch, which a
OneHotEncoder with `zeros=0` (skl2onnx's handle_unknown="error") refuses outright. Likewise a
language model's token ids index its embedding table (a Gather of an initializer): random ones
are drawn below its row count (`"below"`), not all 0 (every position the same token).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import onnx
from onnx import numpy_helper

from .scoped_readers import Scope, scope_of
from .traverse import standard_domain

MAX_WORDS = 10_000  # entries of a vocabulary handed to the run (the job is one JSON line)
MAX_HOPS = 64  # nodes followed from an input to the one that looks its values up

# ops that pass an input's values on unchanged (some of them, reordered): the lookup after them
# sees the input's own values; StringNormalizer only changes case, which the lookup's own
# vocabulary already has
PASS_ON = frozenset(
    {
        "Identity",
        "Reshape",
        "Flatten",
        "Squeeze",
        "Unsqueeze",
        "Gather",
        "Slice",
        "Concat",
        "Transpose",
        "Split",
        "Expand",
        "StringNormalizer",
    }
)
SPLITS_WORDS = frozenset({"Tokenizer", "StringSplit"})  # text in, its words out

# op -> attributes holding its vocabulary, strings first (the first one set is taken)
LOOKUPS = {
    "OneHotEncoder": ("cats_strings", "cats_int64s"),
    "LabelEncoder": ("keys_strings", "keys_int64s", "keys_tensor"),
    "CategoryMapper": ("cats_strings", "cats_int64s"),
    "DictVectorizer": ("string_vocabulary", "int64_vocabulary"),
    "TfIdfVectorizer": ("pool_strings", "pool_int64s"),
}


def _words(node: onnx.NodeProto) -> list | None:
    for name in LOOKUPS[node.op_type]:
        a = next((a for a in node.attribute if a.name == name), None)
        if a is None:
            continue
        if a.type == onnx.AttributeProto.TENSOR:
            values = numpy_helper.to_array(a.t).reshape(-1)[:MAX_WORDS]
            if values.dtype.kind in "OSU":
                return [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in values]
            return [int(v) for v in values] if values.dtype.kind in "iu" else None
        if a.strings:
            return [s.decode("utf-8", "replace") for s in a.strings[:MAX_WORDS]]
        if a.ints:
            return [int(v) for v in a.ints[:MAX_WORDS]]
    return None


def input_vocabularies(graph: onnx.GraphProto, names: list[str]) -> dict[str, dict]:
    """{input: {"values": [...], "text": bool}} for each of `names` whose values a lookup node
    reads (through ops that pass them on), in the graph or inside the bodies that read them from
    it (a merged decoder's branches: scoped_readers.py): its vocabulary (strings or integers),
    `text` when a Tokenizer splits the input into the words it holds (a value is then words
    joined by spaces)."""
    root = scope_of(graph)
    found = {}
    for name in names:
        # a value is its name in a scope: sibling branches name theirs alike
        queue, seen, hops = deque([(name, root, False)]), {(name, id(root))}, 0
        while queue and hops < MAX_HOPS:
            value, scope, text = queue.popleft()
            for n, where in scope.readers.get(value, []):
                hops += 1
                domain = standard_domain(n.domain)
                if domain == "ai.onnx.ml" or (domain in ("", "ai.onnx") and n.op_type == "TfIdfVectorizer"):
                    words = _words(n) if n.op_type in LOOKUPS else None
                    if words:
                        found[name] = {"values": words, "text": text}
                        queue.clear()
                        break
                    continue
                rows = _rows_indexed(n, value, where.table) if domain in ("", "ai.onnx") else None
                if rows:
                    found[name] = {"values": [], "below": rows, "text": False}
                    queue.clear()
                    break
                carried = _carried_into(n, value, where)
                if carried is not None and (carried[0], id(carried[1])) not in seen:
                    seen.add((carried[0], id(carried[1])))
                    queue.append((*carried, text))
                passes = n.op_type in PASS_ON and (n.op_type != "Gather" or n.input[0] == value)
                splits = n.op_type in SPLITS_WORDS
                if passes or splits:
                    for out in n.output:
                        if out and (out, id(where)) not in seen:
                            seen.add((out, id(where)))
                            queue.append((out, where, text or splits))
    return found


def _carried_into(node: onnx.NodeProto, value: str, where: Scope) -> tuple[str, Scope] | None:
    """(the body input, the body's scope) a Loop hands `value` to as a carried value's first
    value: a decoding loop's token ids, which its body looks up in the embedding (QA32 N4)."""
    body = where.bodies.get(id(node)) if node.op_type == "Loop" else None
    if body is None:
        return None
    at = next((k for k, x in enumerate(node.input) if k >= 2 and x == value), None)
    if at is None or at >= len(body.graph.input):
        return None
    return body.graph.input[at].name, body


def _rows_indexed(node: onnx.NodeProto, value: str, table: Callable[[str], list[int] | None]) -> int | None:
    """How many rows `value` picks among, when it is the indices of a Gather of an initializer
    (an embedding table: token ids): the table's size along the Gather's axis. `table(name)`:
    the dims of the initializer a name means where the node is (Scope.table), or None."""
    if node.op_type != "Gather" or len(node.input) < 2 or node.input[1] != value:
        return None
    dims = table(node.input[0])
    if dims is None:
        return None
    axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
    if not -len(dims) <= axis < len(dims):
        return None
    rows = dims[axis]
    return rows if rows > 0 else None
