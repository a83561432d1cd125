"""Links written by hand: a node whose name holds "/" named with its slashes left as they are (as
the API's addresses are shown in docs/api.md), and a link naming no node said in a line, not
dropped without a word (QA14 #10)."""

from __future__ import annotations

import onnx
from onnx import TensorProto
from onnx import helper as h

from .browser_pages import open_model, upload


def scoped_model() -> onnx.ModelProto:
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [
        h.make_node("Relu", ["x"], ["a"], name="/model/h.1/mlp/Relu"),
        h.make_node("Sigmoid", ["a"], ["y"], name="/model/h.1/mlp/Sigmoid"),
    ]
    return h.make_model(h.make_graph(nodes, "g", [x], [y]), opset_imports=[h.make_opsetid("", 17)])


def test_a_node_named_with_its_slashes_in_a_link_is_found(page, server):
    mid = upload(page, server, scoped_model(), "scoped.onnx")["id"]
    open_model(page, server, mid, "#path=&node=@%2Fmodel%2Fh.1%2Fmlp%2FSigmoid")
    page.locator("#sidebar .panel-title", has_text="Sigmoid").wait_for()
    assert page.locator("#toast").count() == 0 or "names no node" not in page.locator("#toast").text_content()
    # the page's own link keeps the name readable, not encoded twice (%252F)
    page.wait_for_function("location.hash.includes('node=')")
    assert page.url.endswith("#rev=0&path=&node=@/model/h.1/mlp/Sigmoid")


def test_the_page_links_a_node_by_its_name_as_written(page, server):
    """Clicking nodes writes links a person can read and that open the same node again: slashes
    and spaces as they are, a name holding "%" in the encoded form (decoded, it would read back
    as another name)."""
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [
        h.make_node("Relu", ["x"], ["a"], name="/enc/layer 0/Relu"),
        h.make_node("Sigmoid", ["a"], ["y"], name="gate%2Fsig"),
    ]
    model = h.make_model(h.make_graph(nodes, "g", [x], [y]), opset_imports=[h.make_opsetid("", 17)])
    mid = upload(page, server, model, "names.onnx")["id"]
    for node, op, tail in [("n0", "Relu", "node=@/enc/layer%200/Relu"), ("n1", "Sigmoid", "node=@gate%25252Fsig")]:
        open_model(page, server, mid)
        page.locator(f"#graph [data-node-id={node}]").click()
        page.wait_for_function(f"location.hash.endsWith({tail!r})")
        link = page.url
        page.goto("about:blank")
        open_model(page, server, mid, link[link.index("#") :])
        page.locator("#sidebar .panel-title", has_text=op).wait_for()


def test_a_link_naming_no_node_says_so(page, server):
    mid = upload(page, server, scoped_model(), "scoped.onnx")["id"]
    open_model(page, server, mid, "#path=&node=@no_such_node")
    toast = page.locator("#toast", has_text="names no node")
    toast.wait_for()
    assert (
        toast.text_content()
        == "This link names no node @no_such_node in the main graph at revision 0: showing the graph."
    )
