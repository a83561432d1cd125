"""The tensor view: values of every dtype shown exactly, paging, jumping, sparse tensors."""

from __future__ import annotations

import json
import math

import numpy as np
import onnx
from onnx import numpy_helper

from .browser_models import every_dtype_model, kitchen_sink_model, low_precision_model
from .browser_pages import first_flat_index, open_model, tensor_cells, upload


def initializer(model: onnx.ModelProto, name: str) -> np.ndarray:
    return numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == name))


def same_float(shown: str, expected) -> bool:
    x = float(shown)
    e = float(expected)
    if math.isnan(e):
        return math.isnan(x)
    return x == e and math.copysign(1, x) == math.copysign(1, e)


def open_preview(page, ref: str):
    page.locator(f"#sidebar .preview-link[data-ref='{ref}']").click()
    view = page.locator(f"#sidebar .tensor-preview[data-ref='{ref}']")
    view.locator(".tp-values").wait_for()
    return view


def bar_counts(view) -> list[int]:
    return [int(c) for c in view.locator(".tp-hist .hist-bar").evaluate_all("bs => bs.map(b => b.dataset.count)")]


def test_float8_and_int4_values_equal_numpy_helper(page, server, artifacts):
    model = low_precision_model()
    summary = upload(page, server, model, "low_precision.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")

    f8 = initializer(model, "f8_weight")
    view = open_preview(page, "f8_weight")
    assert "FLOAT8E4M3FN ⟨2×6⟩" in view.locator(".tp-head").text_content()
    shown = tensor_cells(view)
    assert len(shown) == f8.size
    assert all(same_float(s, e) for s, e in zip(shown, f8.astype(np.float32).flatten(), strict=True)), shown
    assert "0.1015625" in shown and "NaN" in shown and "-0" in shown  # exact, not rounded to 0.1
    stats = view.locator(".tp-stats").text_content()
    assert "NaN 1" in stats and "max 448" in stats
    # the histogram under the stats: every finite value in one of its 64 bars, the bulk and the
    # 448 outlier both visible, on a linear scale or a log one
    counts = bar_counts(view)
    finite = f8.astype(np.float32).flatten()
    assert len(counts) == 64 and sum(counts) == np.isfinite(finite).sum() and counts[-1] >= 1
    assert view.locator(".tp-hist .hist-hi").text_content() == "448"
    bar_heights = "bs => bs.map(b => b.getBoundingClientRect().height)"
    linear = view.locator(".tp-hist .hist-bar").evaluate_all(bar_heights)
    assert 2 <= linear[-1] < max(linear) <= 44  # the lone 448 visible, the bulk to scale
    view.locator(".hist-scale").click()
    assert view.locator(".hist-scale").text_content() == "log scale"
    log = view.locator(".tp-hist .hist-bar").evaluate_all(bar_heights)
    assert log[-1] > linear[-1] and max(log) == max(linear)
    # row labels are multi-indices of the 2×6 tensor
    labels = view.locator(".tp-row").evaluate_all("rows => rows.map(r => r.dataset.index)")
    assert labels[0] == "[0,0]" and all(lbl.startswith("[") for lbl in labels)
    page.screenshot(path=str(artifacts / "tensor-float8.png"))

    page.click("#graph [data-node-id=n1]")
    i4 = initializer(model, "int4_weight")
    view = open_preview(page, "int4_weight")
    assert "INT4 ⟨3×5⟩" in view.locator(".tp-head").text_content()
    assert [int(s) for s in tensor_cells(view)] == [int(v) for v in i4.astype(np.int8).flatten()]
    values = i4.astype(np.int64).flatten()  # a bar per int4 level between min and max
    assert bar_counts(view) == np.bincount(values - values.min()).tolist()
    assert "a bar per value" in view.locator(".tp-hist").text_content()
    page.screenshot(path=str(artifacts / "tensor-int4.png"))


def test_page_through_a_large_tensor(page, server, artifacts):
    model = low_precision_model()
    big = initializer(model, "big").flatten()
    summary = upload(page, server, model, "low_precision.onnx")
    open_model(page, server, summary["id"], "#path=&tensor=big")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-kicker").text_content() == "Initializer"
    view = panel.locator(".tensor-preview[data-ref=big]")
    view.locator(".tp-values").wait_for()
    nav = view.locator(".tp-nav")
    assert nav.locator(".tp-prev").is_disabled()

    first = tensor_cells(view)
    page_size = len(first)
    assert 0 < page_size < big.size
    assert [float(v) for v in first] == big[:page_size].tolist()
    assert nav.locator(".tp-range").text_content() == f"0–{page_size - 1} of {big.size}"

    nav.locator(".tp-next").click()
    page.wait_for_function("() => document.querySelector('#sidebar .tp-cell').dataset.flat !== '0'")
    assert first_flat_index(view) == page_size
    assert [float(v) for v in tensor_cells(view)] == big[page_size : 2 * page_size].tolist()
    assert nav.locator(".tp-prev").is_enabled()

    # jump to a multi-index: the page holding it, the element marked
    nav.locator("input[name=index]").fill("[20, 5]")
    nav.locator(".tp-goto button").click()
    target = view.locator(".tp-cell.target")
    target.wait_for()
    assert int(target.get_attribute("data-flat")) == 20 * 40 + 5
    assert float(target.text_content()) == big[20 * 40 + 5]
    page.screenshot(path=str(artifacts / "tensor-paging.png"))

    # jump to a flat index near the end: the last page, shorter than the others
    nav.locator("input[name=index]").fill("1999")
    nav.locator(".tp-goto button").click()
    page.wait_for_function("() => document.querySelector('#sidebar .tp-cell.target')?.dataset.flat === '1999'")
    assert float(tensor_cells(view)[-1]) == big[-1]
    assert nav.locator(".tp-next").is_disabled()

    # an index outside the tensor is refused where it was typed
    nav.locator("input[name=index]").fill("[50, 0]")
    nav.locator(".tp-goto button").click()
    assert not nav.locator("input[name=index]").evaluate("e => e.validity.valid")

    # the wide window shows the same tensor
    view.locator(".tp-expand").click()
    wide = page.locator("#tensor-modal .tensor-preview.wide")
    wide.locator(".tp-values").wait_for()
    assert [float(v) for v in tensor_cells(wide)[:10]] == big[:10].tolist()
    page.screenshot(path=str(artifacts / "tensor-wide.png"))
    page.keyboard.press("Escape")
    page.wait_for_selector("#tensor-modal", state="detached")


def test_sparse_and_attribute_tensors(page, server, artifacts):
    model = kitchen_sink_model()
    summary = upload(page, server, model, "kitchen.onnx")
    open_model(page, server, summary["id"], "#path=&tensor=sp")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-kicker").text_content() == "Sparse initializer"
    assert "sparse · 2 non-zero values" in panel.text_content()
    view = panel.locator(".tensor-preview[data-ref=sp]")
    view.locator(".tp-values").wait_for()
    dense = numpy_helper.to_array(model.graph.sparse_initializer[0].values)
    assert "sparse, 2 stored" in view.locator(".tp-head").text_content()
    expected = np.zeros(6, np.float32)
    expected[[1, 4]] = dense
    assert [float(v) for v in tensor_cells(view)] == expected.tolist()

    # TENSORS attribute items: FLOAT16 and BOOL values
    page.goto(f"{server}/models/{summary['id']}#path=&node=n0")
    page.wait_for_selector("#graph[data-state=ready]")
    tensors = panel.locator("[data-attr=tensors]")
    tensors.locator("[data-item='1'] .preview-link").click()
    bools = tensors.locator("[data-item='1'] .tensor-preview .tp-values")
    bools.wait_for()
    assert bools.text_content() == "true, false"
    # SPARSE_TENSOR attribute: dtype, shape, nnz, densified preview
    sparse = panel.locator("[data-attr=sparse]")
    assert "sparse FLOAT ⟨4⟩" in sparse.text_content() and "1 non-zero" in sparse.text_content()
    sparse.locator(".preview-link").click()
    sparse.locator(".tp-values").wait_for()
    assert tensor_cells(sparse) == ["0", "0", "3", "0"]
    page.screenshot(path=str(artifacts / "tensor-attributes.png"))


def shown_equals(text: str, expected, dtype) -> bool:
    """Does the text a cell shows read back, at the tensor's own dtype, as the expected value?"""
    kind = np.dtype(dtype).kind
    if dtype == np.bool_:
        return text == ("true" if expected else "false")
    if kind == "O":
        return json.loads(text) == expected
    if kind in "iu" or np.dtype(dtype).name.startswith(("int", "uint")):
        return int(text) == int(expected)
    if kind == "c":
        return np.array(complex(text), dtype) == expected
    read = np.array(float(text), np.float64).astype(dtype)
    return same_float(str(float(read)), float(expected))


def test_every_dtype_reads_back_exactly(page, server, artifacts):
    model, arrays = every_dtype_model()
    summary = upload(page, server, model, "every_dtype.onnx")
    open_model(page, server, summary["id"])
    for name, arr in arrays.items():
        page.evaluate("h => { location.hash = h; }", f"#path=&tensor={name}")
        view = page.locator(f"#sidebar .tensor-preview[data-ref='{name}']")
        view.locator(".tp-values").wait_for()
        shown = tensor_cells(view)
        assert len(shown) == arr.size, name
        for text, expected in zip(shown, arr.flatten().tolist(), strict=True):
            assert shown_equals(text, expected, arr.dtype), (name, text, expected)
        if name == "words":
            page.screenshot(path=str(artifacts / "tensor-strings.png"))
    # shortest forms, as numpy prints them, where that is exact enough to read back
    page.evaluate("h => { location.hash = h; }", "#path=&tensor=f16")
    page.locator("#sidebar .tensor-preview[data-ref=f16] .tp-values").wait_for()
    assert tensor_cells(page.locator("#sidebar .tensor-preview[data-ref=f16]"))[:2] == ["0.1", "-65500"]


def test_an_initializer_listed_as_an_input_shows_its_values_first(page, server):
    """QA28: in an IR 3 model (the wheel's light models), an initializer is a graph input too, and
    its panel opened on the input's type-and-shape form, its values below it."""
    from .browser_models import tiny_cnn

    model = tiny_cnn()
    model.ir_version = 3
    weight = model.graph.initializer[0]
    model.graph.input.append(onnx.helper.make_tensor_value_info(weight.name, weight.data_type, list(weight.dims)))
    mid = upload(page, server, model, "ir3.onnx")["id"]
    open_model(page, server, mid, "#tensor=conv1.weight")
    page.locator("#sidebar .panel-section > h3", has_text="Values").first.wait_for()
    titles = [t.strip() for t in page.locator("#sidebar .panel-section > h3").all_text_contents()]
    values = titles.index("Values")
    declared = next(i for i, t in enumerate(titles) if "graph input" in t.lower())
    assert values < declared, titles
