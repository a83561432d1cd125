"""The process tests/test_store_crash.py kills: opens the store in DATA_DIR and loops forever
over a random mix of uploads, edits, undo/redo, deletions and collections (no grace period).

    python tests/store_crash_worker.py DATA_DIR JOURNAL SEED
    python tests/store_crash_worker.py DATA_DIR --hold-intent

Before each store operation it prints `begin <kind>` on stdout; once the operation returned and
its journal line is on disk, `end <kind>` (the parent reads these to know what a kill landed in).
The journal (JSON lines, appended and fsynced one write at a time) records what the store has
made durable:

    {"op": "upload", "model": id, "rev": 0, "sha": sha256 of the uploaded bytes}
    {"op": "edit", "model": id, "rev": n, "sha": sha256 of what whole_bytes must give}
    {"op": "deleting", "model": id}  then  {"op": "deleted", "model": id}
    {"op": "undo" | "redo" | "collect", ...}  (for the record only)

An edit's expected bytes are its head's whole bytes, parsed, edited and serialized: the store
gives back an edited revision as protobuf serializes the model with every tensor inline
(tests/test_store.py::test_an_attribute_edit_stores_only_a_new_graph).

With --hold-intent it stands for an upload under way: begins an intent, stores a blob no
revision references, prints `ready <digest>` and waits to be killed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from app.errors import StudioError
from app.store.store import COLLECT_GRACE_SECONDS, Store

WIDTH = 448  # each weight 448² floats: 784 KiB, so a model of 3-5 layers is 2.5-4 MB
POOL = 6  # weights drawn from a pool of this many seeds repeat across uploads
MAX_MODELS = 7


def weights(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def make_model(r: random.Random) -> onnx.ModelProto:
    """MatMul + Add + LeakyRelu layers, a Constant holding a big tensor: like
    tests/test_store.py's weighty_model, with some weights from a small pool of seeds (the same
    tensors as earlier uploads) and some uploads the same bytes as an earlier one."""
    seed = r.randrange(POOL) if r.random() < 0.15 else r.randrange(1 << 30)
    rng = random.Random(seed)
    nodes, inits = [], []
    x = "x"
    for i in range(rng.randint(3, 5)):
        w_seed = rng.randrange(POOL) if rng.random() < 0.4 else rng.randrange(1 << 30)
        inits.append(numpy_helper.from_array(weights(w_seed, (WIDTH, WIDTH)), f"w{i}"))
        inits.append(numpy_helper.from_array(weights(seed + i, (WIDTH,)), f"b{i}"))
        nodes += [
            helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"matmul{i}"),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}"),
            helper.make_node("LeakyRelu", [f"a{i}"], [f"y{i}"], name=f"act{i}", alpha=rng.random()),
        ]
        x = f"y{i}"
    table = numpy_helper.from_array(weights(seed, (4, WIDTH)), "bias_table")
    nodes.append(helper.make_node("Constant", [], ["table"], name="table", value=table))
    nodes.append(helper.make_node("ReduceSum", ["table"], ["table_sum"], name="table_sum", keepdims=0))
    nodes.append(helper.make_node("Add", [x, "table_sum"], ["y"], name="out"))
    graph = helper.make_graph(
        nodes,
        "crash",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, WIDTH])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="crash-worker")


def edit(r: random.Random, models: list[onnx.ModelProto]) -> list[dict]:
    """Apply one random edit to each of `models` (the head's graph, the head whole) alike."""
    graph = models[0].graph
    kind = r.choice(["attribute", "attribute", "tensor", "tensor", "add"])
    if kind == "attribute":
        node = r.choice([n for n in graph.node if n.op_type == "LeakyRelu"])
        value = r.random()
        for m in models:
            next(a for n in m.graph.node if n.name == node.name for a in n.attribute if a.name == "alpha").f = value
        return [{"op": "set_attribute", "node": node.name, "name": "alpha", "value": value}]
    if kind == "tensor":
        name = r.choice([t.name for t in graph.initializer if t.name.startswith("w")])
        new = numpy_helper.from_array(weights(r.randrange(1 << 30), (WIDTH, WIDTH)), name)
        for m in models:
            next(t for t in m.graph.initializer if t.name == name).CopyFrom(new)
        return [{"op": "set_initializer", "name": name}]
    name = f"extra{r.randrange(1 << 30)}"
    new = numpy_helper.from_array(weights(r.randrange(1 << 30), (8, WIDTH)), name)  # 14 KiB: a blob
    for m in models:
        m.graph.initializer.append(new)
    return [{"op": "add_initializer", "name": name}]


class Journal:
    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, **entry) -> None:
        os.write(self.fd, (json.dumps(entry) + "\n").encode())  # one write: never torn by a kill
        os.fsync(self.fd)


def mark(word: str, kind: str) -> None:
    sys.stdout.write(f"{word} {kind}\n")
    sys.stdout.flush()


def hold_intent(data_dir: Path) -> None:
    store = Store.in_folder(data_dir)
    store.index.begin_intent()
    mark("ready", store.blobs.put(os.urandom(8192)))
    while True:
        time.sleep(60)


def main() -> None:
    if sys.argv[2] == "--hold-intent":
        hold_intent(Path(sys.argv[1]))
    data_dir, journal_path, seed = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    r = random.Random(seed)
    scratch = journal_path.parent / f"upload-{os.getpid()}.onnx"
    store = Store.in_folder(data_dir)
    journal = Journal(journal_path)
    mark("ready", "-")
    while True:
        models = [m.id for m in store.list_models()]
        weights_by_kind = {
            "upload": 3 if len(models) < MAX_MODELS else 0,
            "edit": 4 if models else 0,
            "undo": 1 if models else 0,
            "redo": 1 if models else 0,
            "delete": (1 if len(models) < MAX_MODELS else 4) if len(models) > 1 else 0,
            "collect": 2,
        }
        kind = r.choices(list(weights_by_kind), list(weights_by_kind.values()))[0]
        if kind == "upload":
            data = make_model(r).SerializeToString()
            how = r.choice(["bytes", "file", "file", "stream"])
            if how == "file":
                scratch.write_bytes(data)
            mark("begin", kind)
            if how == "bytes":
                record = store.create_model("m.onnx", data)
            elif how == "file":
                with open(scratch, "rb") as f:  # memory-mapped by the store
                    record = store.create_model("m.onnx", f)
            else:
                record = store.create_model("m.onnx", io.BytesIO(data))  # no file: copied first
            journal.write(op="upload", model=record.id, rev=0, sha=hashlib.sha256(data).hexdigest(), how=how)
        elif kind == "edit":
            mid = r.choice(models)
            head = store.revision(mid)
            whole = onnx.ModelProto.FromString(store.whole_bytes(head))
            graph = onnx.ModelProto.FromString(store.blobs.get(head.blob))
            ops = edit(r, [graph, whole])
            mark("begin", kind)
            rev = store.commit_revision(mid, head.rev, graph.SerializeToString(), head.external, ops, [])
            sha = hashlib.sha256(whole.SerializeToString()).hexdigest()
            journal.write(op="edit", model=mid, rev=rev, sha=sha, ops=ops)
        elif kind in ("undo", "redo"):
            mid = r.choice(models)
            mark("begin", kind)
            try:
                head = store.undo(mid) if kind == "undo" else store.redo(mid)
            except StudioError:
                head = None  # nothing to undo / redo
            journal.write(op=kind, model=mid, head=head)
        elif kind == "delete":
            mid = r.choice(models)
            journal.write(op="deleting", model=mid)  # from here on the model may be gone
            mark("begin", kind)
            store.delete_model(mid)
            journal.write(op="deleted", model=mid)
        else:
            mark("begin", kind)
            result = store.collect(now=time.time() + COLLECT_GRACE_SECONDS)  # no grace: only intents protect
            journal.write(op="collect", **result)
        mark("end", kind)


if __name__ == "__main__":
    main()
