"""A big graph's JSON is built by two processes: a forked child builds the first nodes and the
value_info while the server builds the rest. The bytes must be the ones one process gives,
scope numbering included, and a child that fails costs nothing but time."""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnx.numpy_helper
import orjson
import pytest
from onnx import TensorProto, helper

from app.views import forked
from app.views import graph as graph_module
from app.views.graph import graph_view


def _torch_like(n_nodes: int) -> onnx.ModelProto:
    nodes = []
    for i in range(n_nodes):
        n = helper.make_node("Relu" if i % 3 else "Transpose", [f"t{i}"], [f"t{i + 1}"], name=f"node_{i}")
        if i % 3 == 0:
            n.attribute.append(helper.make_attribute("perm", [0]))
        if i % 5:  # some nodes have no metadata; scopes recur, and new ones come late
            n.metadata_props.add(key="pkg.torch.onnx.stack_trace", value=f"File x.py, line {i}")
            n.metadata_props.add(key="pkg.torch.onnx.name_scopes", value=f"['', 'm', 'm.l{i % 4 + i // 40}', 'op_{i}']")
        nodes.append(n)
    infos = [helper.make_tensor_value_info(f"t{i}", TensorProto.FLOAT, [i % 3 + 1]) for i in range(1, n_nodes)]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(f"t{n_nodes}", TensorProto.FLOAT, [1])],
        value_info=infos,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def alone():
    """The graph JSON bytes of a one-process build."""

    def build(model):
        return orjson.dumps(graph_view(model, ""))

    return build


def test_forked_build_gives_the_bytes_of_one_process(monkeypatch, alone):
    model = _torch_like(120)
    expected = alone(model)
    monkeypatch.setattr(graph_module, "SPLIT_NODES", 10)
    started, parent_calls = [], []
    real_start, real_head = forked.start, graph_module._head_json

    def start(fn):
        started.append(real_start(fn))
        return started[-1]

    def head(*args):
        if os.getpid() == parent:
            parent_calls.append(args)  # the fallback: this process built the head itself
        return real_head(*args)

    parent = os.getpid()
    monkeypatch.setattr(forked, "start", start)
    monkeypatch.setattr(graph_module, "_head_json", head)
    split = orjson.dumps(graph_view(model, ""))
    assert started and started[0] is not None and parent_calls == []
    assert split == expected
    graph = orjson.loads(split)
    assert [n["id"] for n in graph["nodes"]] == [f"n{i}" for i in range(120)]
    assert graph["scopes"] == [["m", f"m.l{k}"] for k in (1, 2, 3, 0, 4, 5)]
    assert len(graph["value_info"]) == 119


def test_a_failing_child_leaves_the_work_to_the_server(monkeypatch, alone):
    model = _torch_like(60)
    expected = alone(model)
    monkeypatch.setattr(graph_module, "SPLIT_NODES", 10)
    parent, real_head = os.getpid(), graph_module._head_json

    def head(*args):
        if os.getpid() != parent:
            raise MemoryError("the child ran out")
        return real_head(*args)

    monkeypatch.setattr(graph_module, "_head_json", head)
    assert orjson.dumps(graph_view(model, "")) == expected


def test_forked_returns_the_childs_bytes_or_none():
    assert forked.start(lambda: b"x" * 3_000_000).result() == b"x" * 3_000_000  # more than a pipe holds
    assert forked.start(lambda: 1 / 0).result() is None


def test_a_failed_build_stops_and_reaps_its_child(monkeypatch):
    monkeypatch.setattr(graph_module, "SPLIT_NODES", 10)
    children = []
    real_start = forked.start
    monkeypatch.setattr(forked, "start", lambda fn: children.append(real_start(fn)) or children[-1])

    def broken(*args):
        raise RuntimeError("no initializers today")

    monkeypatch.setattr(graph_module, "tensor_brief", broken)
    model = _torch_like(40)
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.zeros(2, np.float32), "w"))
    with pytest.raises(RuntimeError):
        graph_view(model, "")
    assert children and children[0] is not None
    with pytest.raises(ChildProcessError):  # reaped: no zombie left behind
        os.waitpid(children[0].pid, os.WNOHANG)
