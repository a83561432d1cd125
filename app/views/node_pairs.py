"""Which node of one graph is which of another (two revisions, or two exports of a model), for
Compare and for Run's node-by-node comparison.

Names first only where they are stable: an exporter's counter (torch's `/LeakyRelu`,
`/LeakyRelu_1`, … for ops of no module) shifts with one op more above, and pairing by it paired
conv1's activation with conv2's (QA27). So: unique names outside such a counter family pair
first (`/conv2/Conv`), then nodes by what they read — the same operator reading from nodes
already paired (through Identity nodes, which a re-export adds or drops), from the same graph
inputs and from weights — round after round down the graph; then what is left by name, by
inputs, by outputs, by operator."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import onnx

_COUNTER = re.compile(r"_\d+$")
_PASS_ON = frozenset({"Identity"})
MAX_ROUNDS = 64  # rounds of pairing by sources; each pairs at least one node more, or stops


def pair_nodes(
    old: Sequence[onnx.NodeProto],
    new: Sequence[onnx.NodeProto],
    old_weights: Iterable[str] = (),
    new_weights: Iterable[str] = (),
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """(matched (i, j) pairs sorted by j, removed old indices, added new indices)."""
    old_names = [n.name for n in old]  # read once: a field read on a protobuf message is not free
    new_names = [n.name for n in new]
    old_count, new_count = Counter(old_names), Counter(new_names)
    families = {_COUNTER.sub("", n) for n in [*old_names, *new_names] if _COUNTER.search(n)}
    pairs: dict[int, int] = {}  # old -> new
    taken: set[int] = set()
    new_by_name = {name: j for j, name in enumerate(new_names) if name and new_count[name] == 1}
    for i, name in enumerate(old_names):
        j = new_by_name.get(name) if name and old_count[name] == 1 else None
        if j is not None and _COUNTER.sub("", name) not in families:
            pairs[i] = j
            taken.add(j)
    _by_sources(old, new, set(old_weights), set(new_weights), pairs, taken)
    # the rest: by name (a counter's name that its structure did not place), then as before
    for i, name in enumerate(old_names):
        j = new_by_name.get(name) if name and old_count[name] == 1 else None
        if i not in pairs and j is not None and j not in taken:
            pairs[i] = j
            taken.add(j)
    left = [i for i in range(len(old)) if i not in pairs]
    right = [j for j in range(len(new)) if j not in taken]
    for key in (
        lambda n: (n.domain, n.op_type, tuple(n.input)),
        lambda n: (n.domain, n.op_type, tuple(n.output)),
        lambda n: (n.domain, n.op_type),
    ):
        if not left or not right:
            break
        waiting: dict[Any, list[int]] = defaultdict(list)
        for j in right:
            waiting[key(new[j])].append(j)
        still: list[int] = []
        got: set[int] = set()
        for i in left:
            queue = waiting.get(key(old[i]))
            if queue:
                j = queue.pop(0)
                pairs[i] = j
                got.add(j)
            else:
                still.append(i)
        left, right = still, [j for j in right if j not in got]
    return sorted(pairs.items(), key=lambda p: p[1]), left, right


def _by_sources(old, new, old_weights: set[str], new_weights: set[str], pairs: dict[int, int], taken: set[int]) -> None:
    """Pair, round after round, the nodes whose sources are all known — nodes paired already,
    graph inputs by name, weights — where the operator and those sources find one node on each
    side; `pairs` and `taken` grow."""
    old_src = _sources(old, old_weights)
    new_src = _sources(new, new_weights)
    back = {j: i for i, j in pairs.items()}  # new -> old
    for _ in range(MAX_ROUNDS):
        mine = _keys(old, old_src, lambda i: i if i in pairs else None, set(pairs))
        theirs = _keys(new, new_src, lambda j: back.get(j), taken)
        unique_old = {k: i for k, i in _unique(mine).items()}
        found = 0
        for k, j in _unique(theirs).items():
            i = unique_old.get(k)
            if i is not None:
                pairs[i] = j
                back[j] = i
                taken.add(j)
                found += 1
        if not found:
            return


def _sources(nodes: Sequence[onnx.NodeProto], weights: set[str]) -> list[list[tuple]]:
    """Each node's inputs by where they come from: ("n", index) of the node writing it (looked
    through pass-on nodes), ("w",) a weight, ("x", name) anything else (a graph input)."""
    writer = {o: k for k, n in enumerate(nodes) for o in n.output if o}
    out = []
    for n in nodes:
        row = []
        for name in n.input:
            k = writer.get(name)
            while k is not None and nodes[k].op_type in _PASS_ON and nodes[k].input:
                name = nodes[k].input[0]
                k = writer.get(name)
            row.append(("n", k) if k is not None else ("w",) if name in weights else ("x", name))
        out.append(row)
    return out


def _keys(nodes, sources, paired_as, done: set[int]) -> dict[int, tuple]:
    """The key of each node not paired yet whose node sources are all paired (`paired_as`:
    an index -> the old index it is paired with, or None)."""
    keys = {}
    for k, n in enumerate(nodes):
        if k in done or n.op_type in _PASS_ON:
            continue
        row = []
        for s in sources[k]:
            if s[0] == "n":
                mate = paired_as(s[1])
                if mate is None:
                    break
                row.append(("n", mate))
            else:
                row.append(s)
        else:
            keys[k] = (n.domain, n.op_type, tuple(row), tuple(a.name for a in n.attribute if a.type == a.GRAPH))
    return keys


def _unique(keys: dict[int, tuple]) -> dict[tuple, int]:
    count = Counter(keys.values())
    return {key: k for k, key in keys.items() if count[key] == 1}


def tensor_mates(old: onnx.GraphProto, new: onnx.GraphProto) -> dict[str, str | None]:
    """Where Run compares a tensor of `new` with another of `old` than its namesake: each tensor
    a node of `new` writes -> the one its paired node (pair_nodes) writes at that place, where
    the names differ; None for a tensor of a node with no counterpart whose namesake in `old` is
    another node's counterpart (a no-op LeakyRelu added above shifted torch's names: its
    `/LeakyRelu_output_0` is not last week's conv1 activation, QA27)."""
    pairs, _, _ = pair_nodes(
        old.node,
        new.node,
        {t.name for t in old.initializer},
        {t.name for t in new.initializer},
    )
    mates: dict[str, str | None] = {}
    for i, j in pairs:
        for theirs, mine in zip(old.node[i].output, new.node[j].output, strict=False):
            if theirs and mine:
                mates[mine] = theirs
    claimed = set(mates.values())
    paired_new = {j for _, j in pairs}
    for j, n in enumerate(new.node):
        if j not in paired_new:
            for o in n.output:
                if o and o not in mates and o in claimed:
                    mates[o] = None
    return {mine: theirs for mine, theirs in mates.items() if theirs != mine}
