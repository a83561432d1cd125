"""Groups of a torch dynamo export, whose module paths are node metadata (QA19 with real exports):
a module run twice (torchvision's one `relu` after conv1 and after the residual add) is one
scope for both calls, and drawn as one group the block read as a loop; torch's placeholder scope
for nodes of no module is no group; a block of a Sequential says whose ("layer1.0", not "0")."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .browser_pages import open_model, upload

NO_MODULE = "_empty_nn_module_stack_from_metadata_hook"


def scoped(node: onnx.NodeProto, *levels: str) -> onnx.NodeProto:
    items = ", ".join(repr(s) for s in ("", *levels, node.name))
    node.metadata_props.add(key="pkg.torch.onnx.name_scopes", value=f"[{items}]")
    return node


def basic_blocks() -> onnx.ModelProto:
    """Two BasicBlocks (conv1, relu, conv2, add, relu again), each relu's two calls one scope."""
    rng = np.random.default_rng(0)
    weights, nodes = [], []
    x = "x"
    nodes.append(scoped(helper.make_node("Shape", ["x"], ["x_shape"], name="node_Shape_0"), NO_MODULE))
    for b in range(2):
        block = f"layer1.{b}"
        for k in (1, 2):
            w = f"{block}.conv{k}.weight"
            weights.append(numpy_helper.from_array(rng.standard_normal((4, 4, 3, 3)).astype(np.float32), w))
        nodes += [
            scoped(
                helper.make_node(
                    "Conv", [x, f"{block}.conv1.weight"], [f"c1_{b}"], name=f"node_conv_{b}a", pads=[1] * 4
                ),
                "layer1",
                block,
                f"{block}.conv1",
            ),
            scoped(
                helper.make_node("Relu", [f"c1_{b}"], [f"r1_{b}"], name=f"node_relu_{b}a"),
                "layer1",
                block,
                f"{block}.relu",
            ),
            scoped(
                helper.make_node(
                    "Conv", [f"r1_{b}", f"{block}.conv2.weight"], [f"c2_{b}"], name=f"node_conv_{b}b", pads=[1] * 4
                ),
                "layer1",
                block,
                f"{block}.conv2",
            ),
            scoped(helper.make_node("Add", [f"c2_{b}", x], [f"s_{b}"], name=f"node_add_{b}"), "layer1", block),
            scoped(
                helper.make_node("Relu", [f"s_{b}"], [f"r2_{b}"], name=f"node_relu_{b}b"),
                "layer1",
                block,
                f"{block}.relu",
            ),
        ]
        x = f"r2_{b}"
    graph = helper.make_graph(
        nodes,
        "resnet_blocks",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [
            helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 4, 8, 8]),
            helper.make_tensor_value_info("x_shape", TensorProto.INT64, [4]),
        ],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def top(page, node: str) -> float:
    return page.locator(f"#graph [data-node-id={node}]").bounding_box()["y"]


def test_a_module_run_twice_is_drawn_as_its_calls_top_to_bottom(page, server, artifacts):
    model = basic_blocks()
    mid = upload(page, server, model, "resnet_blocks.onnx")["id"]
    open_model(page, server, mid)
    page.screenshot(path=str(artifacts / "torch_scopes_blocks.png"))

    ids = page.eval_on_selector_all("#graph g[data-group-id]", "els => els.map(e => e.dataset.groupId)")
    assert "layer1.0" in ids and "layer1.1" in ids, ids
    assert not [g for g in ids if g.endswith(".relu") or NO_MODULE in g], ids  # each call a node of its block
    labels = page.eval_on_selector_all("#graph .t-frame, #graph .t-group", "els => els.map(e => e.textContent)")
    assert any(t.startswith("layer1.0 ") for t in labels) and any(t.startswith("layer1.1 ") for t in labels), labels

    index = {n.name: f"n{i}" for i, n in enumerate(model.graph.node)}
    for b in range(2):  # conv1 → relu → conv2 → add → relu, each below the one before
        order = [f"node_conv_{b}a", f"node_relu_{b}a", f"node_conv_{b}b", f"node_add_{b}", f"node_relu_{b}b"]
        ys = [top(page, index[name]) for name in order]
        assert ys == sorted(ys), dict(zip(order, ys, strict=True))


def test_a_nodes_module_is_in_its_panel_when_its_name_does_not_say_it(page, server):
    """QA19 F4: a dynamo export's q_proj, k_proj and v_proj are all `node_linear…`: the panel
    says the module each belongs to (a TorchScript export's name says it already)."""
    model = basic_blocks()
    mid = upload(page, server, model, "blocks.onnx")["id"]
    open_model(page, server, mid, "#node=@node_conv_0b")
    props = page.locator("#sidebar .props").first
    props.wait_for()
    assert "Modulelayer1.0.conv2" in props.text_content().replace("\n", "")
