"""How many nodes a model-local function's call stands for once every call in its body is
expanded: what onnx's shape inference and onnxruntime (which inline calls) work through. A few
kilobytes of functions each calling the next ten times stand for 10^10 nodes: the helper spent
10 minutes on one upload while every other upload waited. Counted here in Python, over the
functions alone (a call's cost is its function's, however many calls the graphs hold: those
cost bytes of the file, not an amplification), before any of onnx's C++ runs."""

from __future__ import annotations

import onnx

from ..errors import StudioError
from .function_calls import body_graphs

# the most nodes one call may expand to: a layer function of an LLM export stands for a few
# hundred, a whole decoder for tens of thousands; onnxruntime's inlining of nested calls grows
# faster than the nodes (10^4: 1 s, 10^5: past the smoke run's 60 s)
MAX_EXPANDED_NODES = 100_000


def largest_expansion(model: onnx.ModelProto) -> tuple[int, str]:
    """(the most nodes one call of a model-local function expands to, that function's name);
    (0, "") without functions. A cycle of calls counts once around (the checker names it);
    counts stop growing past MAX_EXPANDED_NODES."""
    keys = {(f.domain, f.name, f.overload): k for k, f in enumerate(model.functions)}
    if not keys:
        return 0, ""
    own: list[int] = []
    calls: list[list[int]] = []
    for f in model.functions:
        nodes = [n for g in body_graphs(f) for n in g.node]
        own.append(len(nodes))
        calls.append([k for n in nodes if (k := keys.get((n.domain, n.op_type, n.overload))) is not None])
    size: dict[int, int] = {}
    for root in range(len(own)):  # iterative post-order: a chain of 20,000 functions is no recursion
        stack = [(root, False)]
        on_path: set[int] = set()
        while stack:
            k, done = stack.pop()
            if done:
                on_path.discard(k)
                total = own[k] + sum(size.get(c, 0) for c in calls[k] if c not in on_path)
                size[k] = min(total, MAX_EXPANDED_NODES + 1)
                continue
            if k in size or k in on_path:
                continue
            on_path.add(k)
            stack.append((k, True))
            stack.extend((c, False) for c in calls[k] if c not in size and c not in on_path)
    k = max(size, key=lambda i: (size[i], -i))  # of those past the limit, the first (an outer one)
    return size[k], model.functions[k].name


def check_expansion(model: onnx.ModelProto, what: str = "the model") -> None:
    """Refuse (422) a model one of whose functions' calls expands past MAX_EXPANDED_NODES."""
    if not model.functions:
        return
    nodes, name = largest_expansion(model)
    if nodes > MAX_EXPANDED_NODES:
        raise StudioError(
            "functions_too_large",
            f"{what}: a call of its model-local function {name!r} expands to more than {MAX_EXPANDED_NODES:,} nodes"
            " (its body's calls of other functions, expanded in turn): more than onnx's shape inference and"
            " onnxruntime can work through",
            422,
        )
