"""Dark mode: the page follows the system's colour scheme (app.css prefers-color-scheme: dark).
Every text stays readable (4.5:1, computed here from the colours the browser computes), the
drawing — SVG for small graphs, canvas for big ones — turns dark too, and a switch of scheme
while the page is open redraws the canvas without a reload. Exports keep the light palette."""

from __future__ import annotations

import re
import time
import zlib

from onnx import TensorProto, helper

from .browser_models import tiny_cnn
from .browser_pages import open_model, upload, wait_ready

READABLE = 4.5  # WCAG 2 AA, text under 18.66 px bold / 24 px
# theme.js CATEGORY_ORDER and HEAT_CLASSES: the heads a node's op name is written on
CATEGORIES = ["conv", "matmul", "activation", "norm", "pool", "control", "quant", "shape", "math", "custom", "other"]
HEAT_STEPS = ["zero", "unknown", "0", "1", "2", "3", "4", "5"]

# [text colour, then the background colours from the element outwards] of each element matched
# by a selector, as the browser computes them (rgb/rgba strings); SVG text gives its fill and the
# fill of the shape it is drawn on (`on`, a selector inside the same box)
COLOURS = """([selector, on]) => {
  const el = document.querySelector(selector);
  if (!el) return null;
  if (on) {
    const shape = el.closest('.box').querySelector(on);
    return [getComputedStyle(el).fill, getComputedStyle(shape).fill];
  }
  const out = [getComputedStyle(el).color];
  for (let e = el; e; e = e.parentElement) out.push(getComputedStyle(e).backgroundColor);
  return out;
}"""


def rgba(text: str) -> tuple[float, float, float, float]:
    parts = [float(x) for x in re.findall(r"[\d.]+", text)]
    return (*parts[:3], parts[3] if len(parts) > 3 else 1.0)


def luminance(rgb) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb[:3]
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a, b) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def over(top, below):
    """`top` (with its alpha) painted over the opaque colour `below`."""
    a = top[3]
    return tuple(top[i] * a + below[i] * (1 - a) for i in range(3))


def seen_background(layers: list[str]):
    """The colour behind a text: its element's background and its ancestors', composited."""
    colour = (255.0, 255.0, 255.0)  # the canvas under the page
    for layer in reversed(layers):
        colour = over(rgba(layer), colour)
    return colour


def text_contrast(page, selector: str, on: str | None = None) -> float:
    found = page.evaluate(COLOURS, [selector, on])
    assert found, f"nothing matches {selector}"
    if on:
        return contrast(rgba(found[0]), rgba(found[1]))
    background = seen_background(found[1:])
    return contrast(over(rgba(found[0]), background), background)


def page_colours(page) -> tuple[tuple, tuple]:
    body = page.evaluate(
        "() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]"
    )
    return rgba(body[0]), rgba(body[1])


def first_pixel(png: bytes) -> tuple[int, int, int]:
    """The top-left pixel of an 8-bit RGB(A) PNG: whatever a row's filter, its first pixel is
    stored as is (its left and upper neighbours are 0), so only the data's first bytes are needed."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, data = 8, b""
    while at < len(png):
        size = int.from_bytes(png[at : at + 4], "big")
        kind = png[at + 4 : at + 8]
        if kind == b"IHDR":
            assert png[at + 16] == 8 and png[at + 17] in (2, 6), "8-bit RGB or RGBA"
        if kind == b"IDAT":
            data += png[at + 8 : at + 8 + size]
        at += size + 12
    raw = zlib.decompressobj().decompress(data, 4)
    return raw[1], raw[2], raw[3]


def screen_pixel(page, x: float, y: float) -> tuple[int, int, int]:
    return first_pixel(page.screenshot(clip={"x": x, "y": y, "width": 1, "height": 1}))


def is_dark(rgb) -> bool:
    return luminance(rgb) < 0.05


def is_light(rgb) -> bool:
    return luminance(rgb) > 0.7


def test_dark_scheme_gives_a_dark_page_whose_texts_are_readable(page, server, tmp_path):
    summary = upload(page, server, tiny_cnn(), "tiny_cnn.onnx")
    open_model(page, server, summary["id"], "#path=&node=n0")  # the Conv: its node panel
    page.locator("#sidebar .attr-name").first.wait_for()
    light_bg, light_text = page_colours(page)
    assert is_light(light_bg)
    with page.expect_download() as light_export:
        page.click("#btn-export-svg")

    # the page opened on a dark desktop
    page.emulate_media(color_scheme="dark")
    page.reload()
    wait_ready(page)
    page.locator("#sidebar .attr-name").first.wait_for()
    dark_bg, dark_text = page_colours(page)
    assert is_dark(dark_bg) and is_light(dark_text), (dark_bg, dark_text)
    assert dark_bg != light_bg and dark_text != light_text
    # the page, its panels and its controls: each kind of text against what it is drawn on
    readable = {
        "body text": ".panel-title",
        "muted text": "#sidebar .panel-kicker",
        "a link": "#sidebar a[href], #sidebar .linklike",
        "a button": "#btn-model",
        "the primary button": "#btn-download",
        "an attribute's name": "#sidebar .attr-name",
        "an attribute's type": "#sidebar .attr-type",
        "an attribute's value": "#sidebar .attr-edit input",
        "the drawing's tools": "#btn-fit",
    }
    for what, selector in readable.items():
        assert text_contrast(page, selector) >= READABLE, what
    # the drawing: a node's op on its head, its name on its body, a tensor's type by its edge
    assert page.locator("#graph g.box.node").count() > 0
    node = '#graph g.box[data-node-id="n0"]'
    assert is_dark(rgba(page.evaluate("s => getComputedStyle(document.querySelector(s)).fill", f"{node} .box-body")))
    assert text_contrast(page, f"{node} .t-op", ".box-head") >= READABLE
    assert text_contrast(page, f"{node} .t-name", ".box-body") >= READABLE
    # every op category's head and every heat map step under the op's name
    heads = [f"--g-cat-{c}-head" for c in CATEGORIES] + [f"--g-heat-{k}" for k in HEAT_STEPS]
    inks = page.evaluate(
        "names => { const s = getComputedStyle(document.documentElement); return names.map((n) => s.getPropertyValue(n).trim()); }",
        ["--g-ink-op", *heads],
    )
    op = hex_rgb(inks[0])
    for name, head in zip(heads, inks[1:], strict=True):
        assert contrast(op, hex_rgb(head)) >= READABLE, name

    # exports stay light: documents they are pasted into are
    with page.expect_download() as dark_export:
        page.click("#btn-export-svg")
    light_svg = light_export.value.path().read_text()
    dark_svg = dark_export.value.path().read_text()
    assert style_of(dark_svg) == style_of(light_svg)
    with page.expect_download() as png:
        page.click("#btn-export-png")
    assert is_light(first_pixel(png.value.path().read_bytes()))


def hex_rgb(text: str) -> tuple[int, int, int]:
    text = text.lstrip("#")
    if len(text) == 3:
        text = "".join(c * 2 for c in text)
    return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)


def style_of(svg: str) -> str:
    return svg[svg.index("<style>") : svg.index("</style>")]


def branches(count: int, depth: int):
    """`count` chains of `depth` unary ops from one input, summed: count * depth + 1 nodes,
    each chain a name scope (a group)."""
    ops = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg"]
    nodes, ends = [], []
    for b in range(count):
        prev = "x"
        for d in range(depth):
            nodes.append(helper.make_node(ops[(b + d) % len(ops)], [prev], [f"b{b}_{d}"], name=f"/branch{b}/op{d}"))
            prev = f"b{b}_{d}"
        ends.append(prev)
    nodes.append(helper.make_node("Sum", ends, ["y"], name="/sum"))
    graph = helper.make_graph(
        nodes,
        "branches",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# how many of the canvas's own pixels are the drawing's box fill now (app.css --g-box-fill),
# and that colour
BOX_FILL_PIXELS = """() => {
  const canvas = document.querySelector('#graph canvas.graph-canvas');
  const probe = document.createElement('canvas').getContext('2d');
  probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue('--g-box-fill').trim();
  probe.fillRect(0, 0, 1, 1);
  const [r, g, b] = probe.getImageData(0, 0, 1, 1).data;
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i] === r && data[i + 1] === g && data[i + 2] === b && data[i + 3] === 255) n++;
  return { fill: [r, g, b], pixels: n };
}"""


def test_a_big_graph_on_canvas_turns_dark_when_the_system_does(page, server):
    summary = upload(page, server, branches(60, 44), "branches.onnx")
    open_model(page, server, summary["id"])
    page.click("#expand-all")
    page.wait_for_selector("#graph[data-expanded=all][data-state=ready]:not([data-drawn=window])", timeout=60_000)
    assert page.get_attribute("#graph", "data-renderer") == "canvas"
    light = page.evaluate(BOX_FILL_PIXELS)
    assert is_light(light["fill"]) and light["pixels"] > 1000, light
    area = page.locator("#graph").bounding_box()
    page.click("#btn-fit")  # the drawing in the middle, the background around it
    background = (area["x"] + 20, area["y"] + 60)
    assert is_light(screen_pixel(page, *background))
    page.click("#btn-home")
    minimap = page.locator("#minimap")
    minimap.wait_for()  # the drawing is bigger than the window: the overview shows where it is
    corner = (minimap.bounding_box()["x"] + 8, minimap.bounding_box()["y"] + 8)
    assert is_light(screen_pixel(page, *corner))
    page.evaluate("() => { window.stillThisPage = true; }")

    # the system turns dark with the page open: the canvas is drawn again in the dark palette
    page.emulate_media(color_scheme="dark")
    page.wait_for_function(f"() => ({BOX_FILL_PIXELS})().pixels > 1000")
    dark = page.evaluate(BOX_FILL_PIXELS)
    assert is_dark(dark["fill"]), dark
    # the overview too (drawn again when the browser is idle)
    deadline = time.monotonic() + 10
    while not is_dark(screen_pixel(page, *corner)) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert is_dark(screen_pixel(page, *corner))
    page.click("#btn-fit")
    assert is_dark(screen_pixel(page, *background))
    assert page.evaluate("() => window.stillThisPage === true")  # not reloaded


def scheme_label(page) -> str:
    return page.get_attribute("#scheme-toggle", "aria-label")


def test_the_top_bars_button_chooses_light_or_dark_whatever_the_system_and_keeps_it(page, server):
    """System -> light -> dark -> system, from the button at the top bar's end: the page and its
    canvas drawing follow the choice at once, it is kept for the next page (this browser), and
    "as the system" follows the system again."""
    page.emulate_media(color_scheme="light")
    summary = upload(page, server, branches(60, 44), "branches.onnx")
    open_model(page, server, summary["id"])
    page.click("#expand-all")
    page.wait_for_selector("#graph[data-expanded=all][data-state=ready]:not([data-drawn=window])", timeout=60_000)
    assert page.get_attribute("#graph", "data-renderer") == "canvas"
    assert scheme_label(page) == "Colours: as the system (light now). Click for light."
    page.click("#scheme-toggle")
    assert scheme_label(page) == "Colours: light. Click for dark."
    assert is_light(page_colours(page)[0])
    page.evaluate("() => { window.stillThisPage = true; }")

    page.click("#scheme-toggle")  # dark on a light desktop
    assert scheme_label(page) == "Colours: dark. Click for as the system."
    assert page.evaluate("() => document.documentElement.classList.contains('dark')")
    background, text = page_colours(page)
    assert is_dark(background) and contrast(text, background) >= READABLE
    page.wait_for_function(f"() => ({BOX_FILL_PIXELS})().pixels > 1000")
    assert is_dark(page.evaluate(BOX_FILL_PIXELS)["fill"])  # the canvas drawn again, not reloaded
    assert page.evaluate("() => window.stillThisPage === true")

    page.goto(f"{server}/")  # the models list: the choice kept, before its first paint
    assert page.evaluate("() => document.documentElement.classList.contains('dark')")
    assert is_dark(page_colours(page)[0])
    page.emulate_media(color_scheme="dark")
    page.click("#scheme-toggle")  # as the system, which is dark now
    assert scheme_label(page) == "Colours: as the system (dark now). Click for light."
    assert is_dark(page_colours(page)[0])
    page.emulate_media(color_scheme="light")
    page.wait_for_function("() => !document.documentElement.classList.contains('dark')")
    assert is_light(page_colours(page)[0])
    page.reload()
    assert scheme_label(page) == "Colours: as the system (light now). Click for light."
