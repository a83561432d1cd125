"""Opening models: upload through the page, the drawing, the model list, errors."""

from __future__ import annotations

import re
import time

import onnx
import onnx.numpy_helper
import pytest

from .browser_models import light_model, tiny_cnn
from .browser_pages import open_model, upload, wait_ready


def test_upload_through_file_picker_draws_every_node(page, server, tmp_path):
    model = tiny_cnn()
    path = tmp_path / "tiny_cnn.onnx"
    onnx.save(model, path)

    page.goto(server + "/")
    page.set_input_files("#file-input", str(path))
    page.wait_for_url(re.compile(r"/models/[^/#]+"))
    wait_ready(page)

    boxes = page.locator("#graph [data-node-id]")
    assert boxes.count() == len(model.graph.node)
    ids = sorted(boxes.evaluate_all("els => els.map(e => e.getAttribute('data-node-id'))"))
    assert ids == sorted(f"n{i}" for i in range(len(model.graph.node)))
    # graph inputs/outputs are boxes of their own; initializers are not
    assert page.locator("#graph [data-io=input]").count() == 1
    assert page.locator("#graph [data-io=output]").count() == 1
    assert page.locator("#graph [data-io]").count() == 2
    # initializers are listed, with their shapes, in the box of the node reading them
    conv = page.locator("#graph [data-node-id=n0]")
    assert "Conv" in conv.text_content()
    assert "conv1.weight ⟨8×3×3×3⟩" in conv.text_content()
    assert "/features/conv1/Conv" in conv.text_content()
    # edges carry dtype and shape from value_info
    labels = page.locator("#graph .edge-label").all_text_contents()
    assert "FLOAT ⟨1×8×32×32⟩" in labels
    # one edge per tensor read, but for the Constant's: it is listed in the box reading it
    assert page.locator("#graph path.edge").count() == len(model.graph.node)
    reshape = page.locator("#graph [data-node-id=n5]")
    assert "shape = [1,-1]" in reshape.text_content()
    assert page.locator("#graph [data-node-id=n4]").get_attribute("data-const") == "n4"
    assert page.locator("#graph [data-node-id=n4]").text_content() == "shape = [1,-1]"
    # a graph input shows its name, dtype and shape
    page.click("#graph [data-io=input]")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-title").text_content() == "input"
    assert "FLOAT" in panel.text_content() and "[1, 3, 32, 32]" in panel.text_content()
    assert "input=input" in page.url
    # a TENSOR attribute (Constant.value) previews its values
    page.click("#graph [data-node-id=n4]")
    panel.locator("[data-attr=value] .preview-link").click()
    preview = panel.locator("[data-attr=value] .tensor-preview")
    preview.locator(".tp-values").wait_for()
    assert "INT64 ⟨2⟩" in preview.text_content()
    assert preview.locator(".tp-values").text_content() == "1, -1"
    assert "min -1" in preview.locator(".tp-stats").text_content()
    # the toolbar names the model and its revision
    assert page.locator("#model-name").text_content() == "tiny_cnn.onnx"
    assert page.locator("#model-revision").text_content() == "rev 0"

    # the list page links to it
    page.click("#back-link")
    link = page.locator("#models-table a.model-link", has_text="tiny_cnn.onnx")
    link.wait_for()
    link.click()
    wait_ready(page)
    assert page.locator("#graph [data-node-id]").count() == len(model.graph.node)


def test_drop_a_model_with_its_external_data(page, server, tmp_path):
    model = tiny_cnn()  # save_model moves its tensors out to the data file
    folder = tmp_path / "ext"
    folder.mkdir()
    onnx.save_model(
        model,
        folder / "tiny_ext.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="tiny_ext.weights",
        size_threshold=0,
    )
    files = [folder / "tiny_ext.weights", folder / "tiny_ext.onnx"]  # data first: the page reorders

    page.goto(server + "/")
    page.evaluate(
        """files => {
            const dt = new DataTransfer();
            for (const f of files) dt.items.add(new File([new Uint8Array(f.bytes)], f.name));
            const zone = document.getElementById("dropzone");
            zone.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
            zone.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
        }""",
        [{"name": f.name, "bytes": list(f.read_bytes())} for f in files],
    )
    page.wait_for_url(re.compile(r"/models/[^/#]+"))
    wait_ready(page)
    assert page.locator("#model-name").text_content() == "tiny_ext.onnx"
    assert page.locator("#graph [data-node-id]").count() == len(model.graph.node)
    # the weights come from the external data file
    page.click("#graph [data-node-id=n0]")
    page.locator("#sidebar .preview-link[data-ref='conv1.weight']").click()
    values = page.locator("#sidebar .tensor-preview .tp-values")
    values.wait_for()
    first = onnx.numpy_helper.to_array(tiny_cnn().graph.initializer[0]).flatten()[0]
    assert float(values.text_content().split(",")[0]) == pytest.approx(float(first), rel=1e-4)


def test_official_resnet50_draws_every_node(page, server):
    model = onnx.load(light_model("resnet50"))
    summary = upload(page, server, model, "light_resnet50.onnx")
    started = time.monotonic()
    open_model(page, server, summary["id"])
    elapsed = time.monotonic() - started
    # the first view is ready before the sections below the window are laid out (progressive:
    # a loaded machine showed 300 of 415): every node is drawn once the drawing is complete
    page.wait_for_selector("#graph[data-complete=true]:not([data-drawn=window])", timeout=30_000)
    assert page.locator("#graph [data-node-id]").count() == len(model.graph.node)
    # IR 3: every initializer is also listed as a graph input; those are not input boxes
    initializer_names = {t.name for t in model.graph.initializer}
    real_inputs = [i for i in model.graph.input if i.name not in initializer_names]
    assert page.locator("#graph [data-io=input]").count() == len(real_inputs)
    assert elapsed < 30, f"opening took {elapsed:.1f}s"


def test_upload_of_a_file_that_is_no_model_says_why(page, server, tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_bytes(b"this is not a protobuf \xff\xfe")
    page.goto(server + "/")
    page.set_input_files("#file-input", str(path))
    status = page.locator("#upload-status.error")
    status.wait_for()
    assert "notes.onnx" in status.text_content()
    assert page.url.rstrip("/") == server


def test_unknown_model_id_shows_not_found(page, server):
    page.goto(server + "/models/0123456789ab")
    page.wait_for_selector("#graph[data-state=error]")
    assert "no model with this id" in page.locator("#graph").text_content()
    assert page.locator("#graph [data-node-id]").count() == 0


def viewport_transform(page) -> tuple[float, float, float]:
    t = page.get_attribute("#graph svg > g.viewport", "transform")
    m = re.fullmatch(r"translate\(([-\d.]+),([-\d.]+)\) scale\(([-\d.]+)\)", t)
    assert m, t
    return float(m[1]), float(m[2]), float(m[3])


def test_pan_zoom_fit_and_keyboard(page, server):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"])
    opened = viewport_transform(page)
    assert opened[2] == pytest.approx(1.0)  # opens at a readable size: 100 %
    page.click("#btn-fit")
    fitted = viewport_transform(page)
    assert fitted[2] <= 1.0
    box = page.locator("#graph").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    page.mouse.move(cx + 200, cy)  # empty background beside the drawing
    page.mouse.wheel(0, -400)
    page.wait_for_function(
        f"document.querySelector('#graph svg > g.viewport').getAttribute('transform').indexOf('scale({fitted[2]:.5f})') < 0"
    )
    zoomed = viewport_transform(page)
    assert zoomed[2] > fitted[2]

    # dragging pans and does not select anything
    page.mouse.move(cx + 200, cy)
    page.mouse.down()
    page.mouse.move(cx + 260, cy + 40, steps=5)
    page.mouse.up()
    panned = viewport_transform(page)
    assert panned[0] == pytest.approx(zoomed[0] + 60, abs=1)
    assert panned[1] == pytest.approx(zoomed[1] + 40, abs=1)
    assert page.locator("#graph .selected").count() == 0

    page.click("#btn-fit")
    assert viewport_transform(page) == pytest.approx(fitted, abs=0.01)
    page.click("#btn-home")  # back to the view it opened with
    assert viewport_transform(page) == pytest.approx(opened, abs=0.01)

    # a click selects, Escape goes back to the model panel
    page.click("#graph [data-node-id=n2]")
    assert page.locator("#sidebar .panel-title").text_content() == "MaxPool"
    page.keyboard.press("Escape")
    assert page.locator("#sidebar .panel-kicker").text_content() == "Model"
    assert "node=" not in page.url


def test_the_layout_worker_starts_with_the_page_and_a_failed_start_is_replaced(page, server):
    model_id = upload(page, server, tiny_cnn())["id"]
    open_model(page, server, model_id)
    workers = page.evaluate("""() => performance.getEntriesByType('resource')
        .filter(r => r.name.includes('layout-worker.js')).length""")
    adopted = page.evaluate("() => performance.getEntriesByName('studio:worker-adopted').length")
    # one worker, started from the page's <head> and taken by the page's layout client
    assert workers == 1 and adopted == 1
    assert page.evaluate("() => window.layoutWorkerPrefetch") is None
    assert page.locator("#graph [data-node-id]").count() == len(tiny_cnn().graph.node)

    # the early worker's script fails to load: the page starts a worker of its own and draws
    seen = []

    def first_fails(route):
        seen.append(route.request.url)
        if len(seen) == 1:
            route.abort()
        else:
            route.continue_()

    page.route("**/layout-worker.js*", first_fails)
    page.reload()
    wait_ready(page)
    # a second worker was asked for (whether the page saw the failure before adopting the early
    # worker or after: it replaces a worker that stopped) and the drawing is whole
    assert len(seen) >= 2
    assert page.locator("#graph [data-node-id]").count() == len(tiny_cnn().graph.node)


def test_a_model_is_deleted_from_the_models_page_after_asking(page, server, artifacts):
    keep = upload(page, server, tiny_cnn(), "keep.onnx")
    gone = upload(page, server, tiny_cnn(), "gone.onnx")
    page.goto(server + "/")
    row = page.locator(f"#models-table tr[data-model-id='{gone['id']}']")
    row.get_by_role("button", name="Delete gone.onnx").click()  # each row's button names its model
    dialog = page.locator("dialog#delete-model")
    dialog.wait_for()
    assert "gone.onnx" in dialog.text_content() and "can't be undone" in dialog.text_content()
    page.screenshot(path=str(artifacts / "delete-model.png"))
    # the safe answer has the focus: Enter keeps the model
    assert page.evaluate("() => document.activeElement.classList.contains('modal-close')")
    page.keyboard.press("Enter")
    dialog.wait_for(state="detached")
    assert row.count() == 1
    row.locator(".delete-model").click()
    page.locator("dialog#delete-model .confirm-delete").click()
    page.wait_for_selector(f"#models-table tr[data-model-id='{gone['id']}']", state="detached")
    assert page.locator("#models-status").text_content() == "Deleted gone.onnx."
    ids = [m["id"] for m in page.request.get(server + "/api/models").json()["models"]]
    assert ids == [keep["id"]]


def test_a_model_is_renamed_from_the_models_page(page, server, artifacts):
    """Two uploads of one export told apart by a name of their own (QA14 #13)."""
    first = upload(page, server, tiny_cnn(), "model.onnx")
    upload(page, server, tiny_cnn(), "model.onnx")
    page.goto(server + "/")
    row = page.locator(f"#models-table tr[data-model-id='{first['id']}']")
    row.wait_for()  # the list is fetched after the page loads (CI read it before it came)
    assert row.locator(".model-twin").count() == 1  # told apart by its id, for now
    row.get_by_role("button", name="Rename model.onnx").click()
    dialog = page.locator("dialog#rename-model")
    field = dialog.locator("input[name=name]")
    assert page.evaluate("() => document.activeElement.name") == "name"  # typed over at once
    field.fill("  ")
    page.keyboard.press("Enter")
    dialog.locator(".field-error", has_text="Give the model a name.").wait_for()
    field.fill("\u0007")
    page.keyboard.press("Enter")
    dialog.locator(".field-error").wait_for(state="visible")
    assert "control character" in dialog.locator(".field-error").text_content()
    field.fill("baseline fp32.onnx")
    page.screenshot(path=str(artifacts / "rename-model.png"))
    page.keyboard.press("Enter")
    dialog.wait_for(state="detached")
    row.locator(".model-link", has_text="baseline fp32.onnx").wait_for()  # the list is fetched again
    assert row.locator(".model-twin").count() == 0
    page.locator("#models-status", has_text="Renamed model.onnx to baseline fp32.onnx.").wait_for()
    r = page.request.get(f"{server}/api/models/{first['id']}/download")
    assert (
        'filename="baseline fp32.onnx"' in r.headers["content-disposition"]
        or "baseline" in r.headers["content-disposition"]
    )

    # to the name another model has: said (QA35 #9)
    row.get_by_role("button", name="Rename baseline fp32.onnx").click()
    dialog.locator("input[name=name]").fill("model.onnx")
    page.keyboard.press("Enter")
    page.locator(
        "#models-status", has_text="Renamed baseline fp32.onnx to model.onnx, which another model is named too"
    ).wait_for()


def test_a_big_graphs_types_come_after_its_first_view_and_fill_the_panels(page, server):
    """Past INFER_INLINE_NODES the graph JSON can come without inference's types (they would
    hold the first view back): the page asks for them once the graph is drawn, and a node's
    panel then gives its output's inferred type — nothing in the model declares it. The graph
    JSON is made to say "deferred" on its way (the server's warm-up races to include them)."""
    import json

    from onnx import TensorProto, helper

    count = 1001  # past the size whose graph JSON is written into the page: it is fetched
    nodes = [helper.make_node("Transpose", ["x"], ["t"], name="turn", perm=[1, 0])]
    nodes += [helper.make_node("Relu", ["t" if i == 0 else f"r{i - 1}"], [f"r{i}"]) for i in range(count)]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info(f"r{count - 1}", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    summary = upload(page, server, model, "chain.onnx")
    asked = []

    def deferred(route):
        body = route.fetch().json()
        body.update(inferred_types="deferred", inferred_value_info=[])
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    held = []  # the types' answer, held back until a node's panel is open
    page.route("**/graph?path=*", deferred)
    page.route("**/types?*", lambda route: held.append(route))
    page.on("request", lambda r: asked.append(r.url) if "/types?" in r.url else None)
    open_model(page, server, summary["id"])
    page.click("#graph [data-node-id=n0]")
    row = page.locator("#sidebar .tensor-row", has=page.locator("[data-tensor=t]"))
    assert "⟨" not in row.text_content(), row.text_content()  # nothing declares t's type
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert len(asked) == 1 and "revision=0" in asked[0], asked
    held[0].continue_()
    page.wait_for_selector("#graph[data-types=inferred]")
    # the panel opened meanwhile is drawn again with the type
    page.wait_for_function(
        "() => [...document.querySelectorAll('#sidebar .tensor-row')].some(r => r.textContent.includes('⟨5×2⟩'))"
    )


def test_long_dim_names_are_shortened_in_their_middle_and_every_dim_stays(page, server, artifacts):
    """PaddlePaddle names its dynamic dims p2o.DynamicDimension.N: an input's type line and its
    edge's label keep all four dims, each long name cut in its middle (its number kept), not the
    last dims dropped at the line's end."""
    dims = ["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"]
    g = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"])],
        "paddle",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, dims)],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, dims)],
    )
    summary = upload(page, server, onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 17)]))
    open_model(page, server, summary["id"])
    wait_ready(page)
    line = page.locator("#graph g.box.io[data-name=x] .t-ioType").text_content()
    assert line.count("×") == 3 and "…" in line, line
    assert re.search(r"…on\.0×3×p2o\.…on\.1×p2o\.…on\.2", line), line
    label = page.locator("#graph .edge-label").first.text_content()
    assert label.count("×") == 3 and label.rstrip(")⟩").endswith(".2"), label
    page.screenshot(path=str(artifacts / "long-dim-names.png"))


def test_worded_dim_names_are_shortened_at_their_end(page, server):
    """optimum's mask dims, batch×(past_sequence + sequence), too long for the mask's type line
    and its edge's label: each name cut keeps its start ("past_s…", "seque…"), which reads as
    it; cut in their middle they were "pa…ce" and "se…ce" (the KV-cache QA)."""
    from .browser_models import masked_decoder

    summary = upload(page, server, masked_decoder(), "decoder.onnx")
    open_model(page, server, summary["id"])
    wait_ready(page)
    line = page.locator("#graph g.box.io[data-name=attention_mask] .t-ioType").text_content()
    labels = page.locator("#graph .edge-label").all_text_contents()
    mask_label = next(t for t in labels if "+" in t)
    cuts = [w for text in (line, mask_label) for w in re.split(r"[×()⟨⟩+\s]+", text) if "…" in w]
    assert cuts, (line, mask_label)  # the test is about cut names: some must be cut
    names = ("batch", "past_sequence", "sequence")
    for w in cuts:
        start = w.split("…")[0]
        assert w.endswith("…") and len(start) >= 3 and any(n.startswith(start) for n in names), (w, line, mask_label)


def test_the_models_page_marks_a_model_the_checker_refuses(page, server, artifacts):
    good = upload(page, server, tiny_cnn(), "good.onnx")
    broken = tiny_cnn()
    del broken.opset_import[:]
    bad = upload(page, server, broken, "cut.onnx")
    for summary in (good, bad):
        assert page.request.get(f"{server}/api/models/{summary['id']}/validation").ok
    page.goto(server + "/")
    page.locator(f"#models-table tr[data-model-id='{bad['id']}'] .badge-invalid").wait_for()
    assert (
        page.locator(f"#models-table tr[data-model-id='{bad['id']}'] .badge-invalid").text_content() == "checker errors"
    )
    assert page.locator(f"#models-table tr[data-model-id='{good['id']}'] .badge-invalid").count() == 0
    page.locator("#models-table").screenshot(path=str(artifacts / "models-checker-errors.png"))


def test_a_small_initializer_shows_its_value_on_its_reader(page, server):
    """A threshold held in an initializer reads "iou_threshold = 0.45" on the node reading it,
    as a Constant's value does (it read "iou_threshold ⟨scalar⟩"); a big one keeps its shape."""
    import numpy as np
    from onnx import numpy_helper

    graph = onnx.helper.make_graph(
        [
            onnx.helper.make_node("Mul", ["x", "iou_threshold"], ["m"], name="scale"),
            onnx.helper.make_node("MatMul", ["m", "big"], ["y"], name="mm"),
        ],
        "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])],
        [
            numpy_helper.from_array(np.array(0.45, np.float32), "iou_threshold"),
            numpy_helper.from_array(np.ones((4, 4), np.float32), "big"),
        ],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    summary = upload(page, server, model, "thresholds.onnx")
    open_model(page, server, summary["id"])
    wait_ready(page)
    scale = page.locator('#graph g.box[data-node-id="n0"]').text_content()
    assert "iou_threshold = 0.45" in scale, scale
    mm = page.locator('#graph g.box[data-node-id="n1"]').text_content()
    assert "big ⟨4×4⟩" in mm, mm


def test_a_wide_first_view_starts_at_the_first_input_the_graph_declares(page, server, artifacts):
    """QA29: a decoder's first view opened on one of its six past key/value inputs, which the
    layout put left of input_ids, the input a reader starts from; it opens on input_ids."""
    from onnx import TensorProto as T
    from onnx import helper as h

    past = [f"past_key_values.{i}.key" for i in range(8)]
    nodes = [h.make_node("Relu", ["input_ids"], ["h0"], name="/model/embed/Relu")]
    for i, name in enumerate(past):  # each layer a group: the inputs drawn above them all
        nodes.append(h.make_node("Add", [f"h{i}", name], [f"a{i}"], name=f"/model/layers.{i}/Add"))
        nodes.append(h.make_node("Relu", [f"a{i}"], [f"h{i + 1}"], name=f"/model/layers.{i}/Relu"))
    nodes.append(h.make_node("Relu", [f"h{len(past)}"], ["logits"], name="/lm_head/Relu"))
    graph = h.make_graph(
        nodes,
        "decoder",
        [h.make_tensor_value_info(n, T.FLOAT, ["batch", 64]) for n in ["input_ids", *past]],
        [h.make_tensor_value_info("logits", T.FLOAT, ["batch", 64])],
    )
    summary = upload(page, server, h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), "wide.onnx")
    open_model(page, server, summary["id"])
    wait_ready(page)
    page.screenshot(path=str(artifacts / "first-view-first-input.png"))
    area = page.locator("#graph").bounding_box()
    first = page.locator('#graph [data-io=input][data-name="input_ids"]').bounding_box()
    assert first is not None
    assert area["x"] <= first["x"] and first["x"] + first["width"] <= area["x"] + area["width"], (first, area)
