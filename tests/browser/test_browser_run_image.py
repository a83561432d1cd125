"""Run a vision model on an image (the Run panel's "or an image"): the browser decodes and sizes
it, lays it out as the input declares (NCHW, NHWC; grey for one channel), scales the pixels as
chosen (ImageNet mean/std for float inputs unless said, 0–255 for uint8) and feeds it; the values
onnxruntime got are checked against numpy's of the same pixels."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper

from .browser_pages import open_model, upload

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def png(pixels: np.ndarray) -> bytes:
    """A PNG of `pixels` (height × width × 3, uint8): 8-bit RGB, no filter, written here."""
    height, width, _ = pixels.shape
    rows = b"".join(b"\x00" + pixels[y].astype(np.uint8).tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def identity_model(dtype: int, shape: list, name: str = "image") -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Identity", [name], ["fed"], name="same")],
        "g",
        [helper.make_tensor_value_info(name, dtype, shape)],
        [helper.make_tensor_value_info("fed", dtype, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def pixels(height: int, width: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.integers(0, 256, (height, width, 3), dtype=np.uint8)


def run_with_image(page, server, model: onnx.ModelProto, image: bytes, choose=None) -> dict:
    """Open the model's Run panel, pick `image` for its input (then `choose(page)`), run it: the
    run's JSON answer."""
    mid = upload(page, server, model, "vision.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-run")
    row = page.locator(f".run-input[data-name={model.graph.input[0].name}]")
    row.locator("input.run-image").set_input_files(
        files=[{"name": "photo.png", "mimeType": "image/png", "buffer": image}]
    )
    row.locator(".run-image-preview").wait_for()
    if choose:
        choose(row)
    with page.expect_response(lambda r: r.url.endswith("/run") and r.request.method == "POST") as answer:
        page.click("#run-go")
    page.locator("#run-results[data-ready=true]").wait_for()
    return answer.value.json()


def fed_values(answer: dict) -> np.ndarray:
    out = answer["outputs"]["fed"]
    assert out["count"] == out["size"], "the whole tensor is in the answer"
    return np.array(out["values"], np.float64).reshape(out["shape"])


def test_an_image_is_fed_nchw_with_imagenet_scaling(page, server, artifacts):
    rgb = pixels(8, 12)
    answer = run_with_image(page, server, identity_model(TensorProto.FLOAT, [1, 3, 8, 12]), png(rgb))
    row = page.locator(".run-input[data-name=image]")
    assert row.locator(".run-image-words").text_content() == (
        "photo.png → 12×8 NCHW, 0–1, then ImageNet mean/std (torchvision)"
    )
    expected = ((rgb / 255.0 - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1)[None]
    got = fed_values(answer)
    assert got.shape == (1, 3, 8, 12)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    row.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "run-image.png"))
    sidebar = page.evaluate(
        "() => { const s = document.querySelector('#sidebar'); return [s.scrollWidth, s.clientWidth]; }"
    )
    assert sidebar[0] <= sidebar[1], sidebar  # the image's options stay in the panel's width


def test_a_uint8_nhwc_input_takes_pixels_as_they_are_in_bgr_and_its_sizes(page, server):
    rgb = pixels(5, 9)
    model = identity_model(TensorProto.UINT8, [1, "height", "width", 3])

    def bgr(row):
        assert row.locator(".run-image-scaling").input_value() == "raw"  # uint8: pixels as they are
        row.locator(".run-image-bgr").check()
        row.locator(".run-image-words").filter(has_text="BGR").wait_for()

    answer = run_with_image(page, server, model, png(rgb), bgr)
    got = fed_values(answer)
    np.testing.assert_array_equal(got, rgb[:, :, ::-1][None])
    # the image's size is the run's: the free dims took it
    assert page.locator(".run-dim[aria-label=height]").input_value() == "5"
    assert page.locator(".run-dim[aria-label=width]").input_value() == "9"


def test_a_grey_input_is_fed_the_luminance_resized_to_its_size(page, server):
    rgb = np.zeros((56, 56, 3), np.uint8)
    rgb[:, 28:] = 255  # left half black, right half white
    model = identity_model(TensorProto.FLOAT, [1, 1, 28, 28])

    def unit(row):
        row.locator(".run-image-scaling").select_option("unit")
        row.locator(".run-image-words").filter(has_text="0–1").wait_for()

    got = fed_values(run_with_image(page, server, model, png(rgb), unit))
    assert got.shape == (1, 1, 28, 28)
    assert np.allclose(got[0, 0, :, :12], 0, atol=0.02) and np.allclose(got[0, 0, :, 16:], 1, atol=0.02)


def test_a_yolo_input_takes_its_image_letterboxed_at_0_to_1(page, server):
    """QA43 #5: an Ultralytics export's "images" read 0–1 pixels, letterboxed (the whole frame,
    grey 114 around); ImageNet's mean/std and a centre crop were offered first."""
    rgb = pixels(4, 8)  # twice as wide as high, into a square input
    model = identity_model(TensorProto.FLOAT, [1, 3, 8, 8], name="images")

    def defaults(row):
        assert row.locator(".run-image-scaling").input_value() == "unit"
        assert row.locator(".run-image-fit").input_value() == "letterbox"

    got = fed_values(run_with_image(page, server, model, png(rgb), defaults))
    assert got.shape == (1, 3, 8, 8)
    np.testing.assert_allclose(got[0, :, 2:6, :], (rgb / 255.0).transpose(2, 0, 1), atol=1e-5)  # scale 1
    grey = np.full((3, 2, 8), 114 / 255.0)
    np.testing.assert_allclose(got[0, :, :2, :], grey, atol=1e-5)
    np.testing.assert_allclose(got[0, :, 6:, :], grey, atol=1e-5)


def test_a_yolo_of_free_size_takes_its_image_padded_to_the_stride(page, server):
    """QA44 #2: a YOLO of free height and width was fed an 800×600 photo as it was, and failed at
    its first Concat (600 is no multiple of 32): letterboxed, the image stays at its size and
    the sides are padded up to multiples of 32."""
    rgb = pixels(20, 40)
    model = identity_model(TensorProto.FLOAT, [1, 3, "height", "width"], name="images")
    got = fed_values(run_with_image(page, server, model, png(rgb)))
    assert got.shape == (1, 3, 32, 64)
    np.testing.assert_allclose(got[0, :, 6:26, 12:52], (rgb / 255.0).transpose(2, 0, 1), atol=1e-5)
    assert np.allclose(got[0, :, :6, :], 114 / 255.0) and np.allclose(got[0, :, :, :12], 114 / 255.0)


def test_an_ultralytics_export_of_free_size_takes_its_image_letterboxed_to_its_imgsz(page, server):
    """An Ultralytics export's metadata says the size it was made for (imgsz) and its stride; its
    own predictor letterboxes every image to imgsz, also where the export left the sides free: so
    does Run, whatever the input is called (here "x"), 0–1 and letterboxed by default."""
    rgb = pixels(8, 32)
    model = identity_model(TensorProto.FLOAT, [1, 3, "height", "width"], name="x")
    meta = {"author": "Ultralytics", "task": "detect", "stride": "32", "imgsz": "[32, 64]"}
    onnx.helper.set_model_props(model, meta)

    def defaults(row):
        assert row.locator(".run-image-scaling").input_value() == "unit"
        assert row.locator(".run-image-fit").input_value() == "letterbox"
        row.locator(".run-image-words").filter(has_text="64×32").wait_for()

    got = fed_values(run_with_image(page, server, model, png(rgb), defaults))
    assert got.shape == (1, 3, 32, 64)
    # 32×8 scaled by 2 to 64×16, centred: 8 rows of grey above and below
    assert np.allclose(got[0, :, :8, :], 114 / 255.0) and np.allclose(got[0, :, 24:, :], 114 / 255.0)
    assert not np.allclose(got[0, :, 8:24, :], 114 / 255.0)
    hints = page.evaluate(
        "async (metas) => { const m = await import('/static/js/lib/image-input.js');"
        " return metas.map((props) => m.exportHints(props)); }",
        [
            [{"key": "author", "value": "Ultralytics"}, {"key": "imgsz", "value": "640"}],
            [
                {"key": "author", "value": "Ultralytics"},
                {"key": "imgsz", "value": "[1, 2, 3]"},
                {"key": "stride", "value": "64"},
            ],
            [{"key": "imgsz", "value": "[640, 640]"}],  # not an Ultralytics export: its imgsz is no one's promise
        ],
    )
    assert hints == [
        {"ultralytics": True, "size": {"height": 640, "width": 640}, "stride": 32},
        {"ultralytics": True, "size": None, "stride": 64},
        {"ultralytics": False, "size": None, "stride": 32},
    ]


def test_which_inputs_take_an_image(page, server):
    mid = upload(page, server, identity_model(TensorProto.FLOAT, [1, 3, 8, 12]), "vision.onnx")["id"]
    open_model(page, server, mid)
    layouts = page.evaluate(
        "async (shapes) => { const m = await import('/static/js/lib/image-input.js');"
        " return shapes.map(([dtype, shape]) => { const l = m.imageLayout({ dtype, shape }); return l && l.layout; }); }",
        [
            ["FLOAT", [1, 3, 224, 224]],
            ["FLOAT", ["batch", 3, "height", "width"]],
            ["UINT8", [1, 320, 320, 3]],
            ["FLOAT16", [3, 32, 32]],
            ["FLOAT", [28, 28, 1]],  # grey only after a batch: rank 3 of one channel is no image
            ["FLOAT", [1, 28, 28, 1]],
            ["FLOAT", [1, 1, 28, 28]],
            ["FLOAT", [8, 3, 224, 224]],  # a batch of 8: not one image
            ["FLOAT", [1, 16, 32, 32]],  # 16 channels
            ["INT64", [1, 3, 224, 224]],
            ["FLOAT", [1, 3, 4, 4]],  # 4×4: a feature map, not an image
            ["FLOAT", [1, 128, 768]],
        ],
    )
    assert layouts == ["NCHW", "NCHW", "NHWC", "CHW", None, "NHWC", "NCHW", None, None, None, None, None]
    # an input no image fits has no image field
    mid = upload(page, server, identity_model(TensorProto.FLOAT, [1, 128, 768]), "text.onnx")["id"]
    open_model(page, server, mid)
    page.click("#btn-run")
    page.locator(".run-input[data-name=image]").wait_for()
    assert page.locator(".run-input[data-name=image] input.run-image").count() == 0
