"""Who reads a graph's values, and the initializers nobody does: the one home of that question
for delete_node (the weights only it read go with it), delete_initializer (refused while read),
remove_input and cleanup.

A main-graph initializer is read by more than the main graph's nodes: the training graphs read
it and their bindings set it (TrainingInfoProto), a graph output may name it, and a quantization
annotation may name it as a tensor's scale or zero point."""

from __future__ import annotations

import onnx

from ..onnx_io.traverse import graphs_within, live_from, node_reads
from ..words import plural, some_names


def names_read(g) -> set[str]:
    """Every value name the graph's nodes read, including reads from inside their subgraphs."""
    return {x for h in graphs_within(g) for n in h.node for x in n.input if x}


def read_elsewhere(model: onnx.ModelProto, g) -> set[str]:
    """Names of g's values read other than by g's nodes: g's outputs, the scales and zero points
    its quantization annotations name, and for the main graph what its training graphs read and
    what their bindings set."""
    out: set[str] = set()
    if isinstance(g, onnx.GraphProto):
        out |= {o.name for o in g.output}
        out |= {p.value for a in g.quantization_annotation for p in a.quant_parameter_tensor_names}
    if g is model.graph:
        for t in model.training_info:
            out |= {b.key for b in (*t.initialization_binding, *t.update_binding)}
            for field in ("initialization", "algorithm"):
                if t.HasField(field):
                    out |= names_read(getattr(t, field))
    return out


def names_in_use(model: onnx.ModelProto, g) -> set[str]:
    return names_read(g) | read_elsewhere(model, g)


def unread_inputs(model: onnx.ModelProto) -> list[str]:
    """The main graph's inputs (not an initializer's twin) that no node, in it or in a body, reads
    and nothing else names: a decoder frozen to its cache branch and simplified keeps an
    encoder_hidden_states its callers must still feed (QA45 #9)."""
    g = model.graph
    used = names_in_use(model, g) | initializer_names(g)
    return [v.name for v in g.input if v.name not in used]


def live_nodes(model: onnx.ModelProto, g: onnx.GraphProto) -> tuple[list[bool], set[str]]:
    """Which of the main graph's nodes some graph output (or training graph) depends on, and
    every value name they and those outputs need: one walk from the last node back."""
    needed = read_elsewhere(model, g)
    return live_from(g.node, needed), needed


def newly_dead_words(model: onnx.ModelProto, g: onnx.GraphProto, was_live: list[bool]) -> str:
    """ "; 2 nodes no output needs any more ('abs', 'neg'): cleanup … removes them" for the nodes
    of g live before an edit of its outputs (`was_live`, live_nodes' first answer then) and dead
    now; "" when none. They stay drawn and in the download until cleaned up."""
    now = live_nodes(model, g)[0]
    dead = [n for n, before, after in zip(g.node, was_live, now, strict=True) if before and not after]
    if not dead:
        return ""
    names = some_names([n.name or f"{n.op_type} → {n.output[0]}" for n in dead], 3)
    return f"; {plural(len(dead), 'node')} no output needs any more ({names}): cleanup (Model › Tools › Clean up…) removes them"


def initializer_names(g: onnx.GraphProto) -> set[str]:
    """Dense and sparse initializers' names (a sparse one is named by its values)."""
    return {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}


def drop_initializers(g: onnx.GraphProto, names: set[str]) -> None:
    """Remove the initializers (dense or sparse) of these names, with graph inputs of the same
    names (below IR 4 every initializer is one)."""
    for field, name_of in ((g.initializer, lambda t: t.name), (g.sparse_initializer, lambda s: s.values.name)):
        for i in reversed(range(len(field))):
            if name_of(field[i]) in names:
                del field[i]
    for i in reversed(range(len(g.input))):
        if g.input[i].name in names:
            del g.input[i]


def left_unread(model: onnx.ModelProto, g: onnx.GraphProto, candidates) -> list[str]:
    """Those of `candidates` that are initializers of g nothing reads any more, in their order:
    none a graph input a caller may feed (IR 4 and up: an initializer that is also an input is
    the input's default, part of the model's interface)."""
    inits = initializer_names(g)
    fed = {v.name for v in g.input} if model.ir_version >= 4 else set()
    used = names_in_use(model, g)
    out: list[str] = []
    for name in candidates:
        if name in inits and name not in used and name not in fed and name not in out:
            out.append(name)
    return out


def drop_dead_nodes(model: onnx.ModelProto, g: onnx.GraphProto) -> int:
    """Remove g's nodes no output needs, and the initializers only they read (left_unread): what
    simplify promises after onnxruntime's passes, which leave some (a written-out
    LayerNormalization's InvStdDev — QA37 #3). How many nodes went."""
    live, _ = live_nodes(model, g)
    dead = [i for i, ok in enumerate(live) if not ok]
    read = [x for i in dead for x in node_reads(g.node[i]) if x]
    for i in reversed(dead):
        del g.node[i]
    drop_initializers(g, set(left_unread(model, g, read)))
    return len(dead)
