"""Everything else a ModelProto holds, on one model: types of every kind, attributes of every
type, metadata on graphs/nodes/values/initializers, quantization annotations, device
configurations, training info."""

from __future__ import annotations

import pytest

from .browser_models import kitchen_sink_model
from .browser_pages import open_model, upload, wait_ready


@pytest.fixture
def kitchen(page, server):
    return upload(page, server, kitchen_sink_model(), "kitchen_sink.onnx")


def test_types_of_every_kind_and_attributes_of_every_type(page, server, kitchen, artifacts):
    open_model(page, server, kitchen["id"])
    box = lambda name: page.locator(f"#graph [data-box='input:{name}']").text_content()  # noqa: E731
    assert "FLOAT ⟨2×3⟩" in box("x")
    assert "seq(tensor(float)[N,3])" in box("seq_in")
    assert "map(int64, tensor(float))" in box("map_in")
    assert "optional(tensor(float)[2,3])" in box("opt_in")
    page.screenshot(path=str(artifacts / "everything-graph.png"))

    page.click("#graph [data-node-id=n0]")
    panel = page.locator("#sidebar")
    value = lambda name: panel.locator(f"[data-attr={name}]").text_content()  # noqa: E731
    assert panel.locator("[data-attr=f] input").input_value() == "0.25"
    assert panel.locator("[data-attr=strings] input").input_value() == '["a","b"]'
    assert "INT32 ⟨2×3⟩" in value("t") and "t_attr" in value("t")
    assert "FLOAT16 ⟨2⟩" in value("tensors") and "BOOL ⟨2⟩" in value("tensors")
    assert "sparse FLOAT ⟨4⟩" in value("sparse") and "1 non-zero" in value("sparse")
    assert panel.locator("[data-attr=tp] .type-proto").text_content() == "seq(tensor(float)[N,3])"
    assert panel.locator("[data-attr=tps] .type-proto").all_text_contents() == [
        "map(int64, tensor(float))",
        "optional(tensor(int64)[])",
    ]
    # node doc_string (Markdown), metadata_props, device configuration with its sharding spec
    assert panel.locator(".doc strong").text_content() == "every"
    assert panel.locator(".node-metadata [data-key=stage]").text_content() == "stagepre"
    config = panel.locator(".device-list [data-config=mesh2]")
    assert "pipeline stage 1" in config.text_content()
    spec = config.locator(".sharding-spec[data-tensor=x]").text_content()
    assert "on devices 0, 1" in spec and "axis 0 (size 2) split into 2 shards" in spec
    # an operator of an imported domain that no schema defines
    panel.locator(".panel-flags .callout-bad").wait_for()
    panel.locator(".device-list").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "everything-node.png"))


def test_value_and_initializer_panels(page, server, kitchen, artifacts):
    open_model(page, server, kitchen["id"], "#path=&input=x")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-kicker").text_content() == "Graph input"
    assert panel.locator(".value-metadata [data-key=unit]").text_content() == "unitmetres"
    panel.locator(".doc strong").wait_for()
    assert panel.locator(".doc strong").text_content() == "main"

    # an initializer: its metadata, its quantization parameters (links to them), its values
    page.click("#graph [data-node-id=n1]")
    panel.locator("button.tensor-name[data-tensor=w]").click()
    assert panel.locator(".panel-kicker").text_content() == "Initializer"
    assert "tensor=w" in page.url
    assert panel.locator(".value-metadata [data-key=source]").text_content() == "sourcerandom"
    quant = panel.locator(".quant-own [data-key=SCALE_TENSOR]")
    assert quant.text_content() == "SCALE_TENSORw_scale"
    panel.locator(".tensor-preview[data-ref=w] .tp-values").wait_for()
    page.screenshot(path=str(artifacts / "everything-initializer.png"))
    quant.locator("button").click()
    assert panel.locator(".panel-title").text_content() == "w_scale"
    assert "is the SCALE_TENSOR of w" in panel.locator(".quant-param").text_content()

    # an intermediate value whose type only shape inference knows
    page.goto(f"{server}/models/{kitchen['id']}#path=&tensor=s2")
    wait_ready(page)
    assert panel.locator(".panel-kicker").text_content() == "Value"
    assert "inferred by ONNX shape inference" in panel.text_content()
    assert "Mul scale_out" in panel.text_content()


def test_model_panel_training_configuration_and_graph_metadata(page, server, kitchen, artifacts):
    open_model(page, server, kitchen["id"])
    panel = page.locator("#sidebar")
    panel.locator(".model-doc h1").wait_for()
    assert panel.locator(".model-doc h1").text_content() == "Kitchen sink"
    assert panel.locator(".graph-metadata [data-key=graph_note]").text_content() == "graph_notekitchen"
    assert "3 initializers (1 sparse)" in panel.locator(".init-list summary").text_content()
    assert "cuda:0, cuda:1" in panel.locator(".device-list [data-config=mesh2]").text_content()
    training = panel.locator(".training-item[data-index='0']")
    assert training.locator(".binding-init [data-key=w]").text_content() == "ww_init"
    assert training.locator(".binding-update [data-key=w]").text_content() == "ww_new"
    training.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "everything-model-panel.png"))

    training.locator("a.train-algo").click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='train[0].algo/n0']")
    assert "training 0 algorithm" in page.locator("#breadcrumb").text_content()
    assert panel.locator("h3", has_text="Training graph on screen").count() == 1
    page.go_back()
    wait_ready(page)
    training.locator("a.train-init").click()
    page.wait_for_selector("#graph[data-state=ready] [data-node-id='train[0].init/n0']")
