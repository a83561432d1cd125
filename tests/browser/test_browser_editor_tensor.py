"""Editing initializers in the tensor panel: values from an uploaded .npy (with the dtype/shape
check and "allow type/shape change"), values from JSON, .npy download, delete when unused."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper as nh

from .browser_models import if_model, tiny_cnn
from .browser_pages import downloaded, open_model, replace_json, upload, wait_revision


def show_tensor(page, name: str) -> None:
    """Select a tensor through the URL hash and wait for its panel."""
    page.evaluate("n => { location.hash = `#path=&tensor=${encodeURIComponent(n)}`; }", name)
    page.wait_for_function("n => document.querySelector('#sidebar .panel-title')?.textContent === n", arg=name)


def initializer(model: onnx.ModelProto, name: str) -> np.ndarray:
    return nh.to_array(next(t for t in model.graph.initializer if t.name == name))


def test_replace_initializer_from_npy_and_json(page, server, artifacts, tmp_path):
    model = tiny_cnn()
    model.graph.initializer.append(nh.from_array(np.arange(6, dtype=np.int64).reshape(2, 3), "spare"))
    fc_bias = next(t for t in model.graph.initializer if t.name == "fc.bias")
    fc_bias.CopyFrom(nh.from_array(np.array([0, -0.0] + [0] * 8, np.float32), "fc.bias"))
    summary = upload(page, server, model, "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&tensor=conv1.weight")
    panel = page.locator("#sidebar")
    assert panel.locator(".panel-kicker").text_content() == "Initializer"

    # a float64 .npy of the right shape: its values, converted to FLOAT
    weights = np.random.default_rng(1).standard_normal((8, 3, 3, 3))
    np.save(tmp_path / "w.npy", weights)
    form = panel.locator("#initializer-edit .ed-npy")
    form.locator("input[type=file]").set_input_files(str(tmp_path / "w.npy"))
    info = form.locator(".ed-file-info")
    page.wait_for_function("el => el.textContent.includes('float64')", arg=info.element_handle())
    assert "float64 [8, 3, 3, 3]" in info.text_content()
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)

    # a .npy of another shape: the server's check, inline; allowed on request
    show_tensor(page, "fc.bias")
    np.save(tmp_path / "b.npy", np.arange(5, dtype=np.float32))
    form = panel.locator("#initializer-edit .ed-npy")
    form.locator("input[type=file]").set_input_files(str(tmp_path / "b.npy"))
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "FLOAT [10]" in error.text_content() and "Allow type/shape change" in error.text_content()
    page.screenshot(path=str(artifacts / "editor-tensor-panel.png"))
    assert page.locator("#model-revision").text_content() == "rev 1"

    # values as JSON, prefilled with the current ones (ten zeros)
    replace_json(
        page,
        panel.locator("#initializer-edit textarea[name=values]"),
        panel.locator("#initializer-edit .ed-json-form button[type=submit]"),
        "[0, -0, 0, 0, 0, 0, 0, 0, 0, 0]",  # a -0 among them is prefilled as such
        "[0.5, -0, 2, 3, 4, 5, 6, 7, 8, 9.25]",
    )
    wait_revision(page, 2)

    # the spare INT64 initializer: save it as .npy, then delete it (nothing reads it)
    show_tensor(page, "spare")
    with page.expect_download() as info:
        panel.locator(".ed-npy-download").click()
    saved = np.load(info.value.path())
    assert info.value.suggested_filename == "spare.npy"
    assert saved.dtype == np.int64 and saved.tolist() == [[0, 1, 2], [3, 4, 5]]
    panel.locator(".ed-delete-initializer button[type=submit]").click()
    wait_revision(page, 3)
    assert panel.locator(".panel-kicker").text_content() == "Model"

    # an initializer in use can't be deleted: the button says why
    show_tensor(page, "fc.weight")
    assert panel.locator(".ed-delete-initializer button[type=submit]").is_disabled()
    assert "remove its readers first" in panel.locator(".ed-delete-initializer").text_content()

    result = downloaded(page, server, summary["id"])
    np.testing.assert_array_equal(initializer(result, "conv1.weight"), weights.astype(np.float32))
    bias = initializer(result, "fc.bias")
    np.testing.assert_array_equal(bias, np.array([0.5, -0.0, 2, 3, 4, 5, 6, 7, 8, 9.25], np.float32))
    assert np.signbit(bias[1]), "the -0 left as it was is still -0 (it became +0)"
    assert "spare" not in {t.name for t in result.graph.initializer}


def test_type_change_allowed_and_npy_download_of_floats(page, server, tmp_path):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&tensor=conv1.bias")
    panel = page.locator("#sidebar")

    # FLOAT [8] -> DOUBLE [8] from a float64 file, with "allow type/shape change": the Conv then
    # refuses mixed types, so the server says the model would break
    np.save(tmp_path / "bias.npy", np.linspace(-1, 1, 8))
    form = panel.locator("#initializer-edit .ed-npy")
    form.locator("input[type=file]").set_input_files(str(tmp_path / "bias.npy"))
    form.locator("input[name=allow_type_change]").check()
    form.locator("button[type=submit]").click()
    error = form.locator(".field-error")
    error.wait_for(state="visible")
    assert "invalid" in error.text_content() or "inference" in error.text_content()

    # the same file without the option: converted to FLOAT, kept
    form.locator("input[name=allow_type_change]").uncheck()
    form.locator("button[type=submit]").click()
    wait_revision(page, 1)

    with page.expect_download() as info:
        panel.locator(".ed-npy-download").click()
    saved = np.load(info.value.path())
    assert saved.dtype == np.float32 and saved.shape == (8,)
    np.testing.assert_array_equal(saved, np.linspace(-1, 1, 8).astype(np.float32))
    result = downloaded(page, server, summary["id"])
    np.testing.assert_array_equal(initializer(result, "conv1.bias"), saved)


def test_initializer_of_a_subgraph(page, server):
    summary = upload(page, server, if_model(), "if_model.onnx")
    open_model(page, server, summary["id"], "#path=n1%2Fthen_branch&tensor=one")
    panel = page.locator("#sidebar")
    replace_json(
        page,
        panel.locator("#initializer-edit textarea[name=values]"),
        panel.locator("#initializer-edit .ed-json-form button[type=submit]"),
        "[[1, 1, 1],\n [1, 1, 1]]",
        "[[1, 2, 3], [4, 5, 6]]",
    )
    wait_revision(page, 1)
    assert "path=@branch/then_branch" in page.url and panel.locator(".panel-title").text_content() == "one"
    result = downloaded(page, server, summary["id"])
    then_branch = next(a.g for a in result.graph.node[1].attribute if a.name == "then_branch")
    np.testing.assert_array_equal(
        nh.to_array(then_branch.initializer[0]), np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    )


def test_a_string_tensor_downloads_as_numpy_text(page, server, tmp_path):
    """QA21 F6: a STRING tensor had no .npy from the page ("NumPy has no native string type") and
    a 500 from the API; numpy's fixed-width text holds it, which set_initializer takes back."""
    m = tiny_cnn()
    m.graph.initializer.append(
        onnx.helper.make_tensor("labels", onnx.TensorProto.STRING, [3], [b"cat", b"dog", b"bird"])
    )
    summary = upload(page, server, m, "labelled.onnx")
    open_model(page, server, summary["id"], "#path=&tensor=labels")
    panel = page.locator("#sidebar")
    with page.expect_download() as info:
        panel.locator(".ed-npy-download").click()
    assert info.value.suggested_filename == "labels.npy"
    got = np.load(info.value.path(), allow_pickle=False)
    assert got.dtype.kind == "U" and got.tolist() == ["cat", "dog", "bird"]
