"""Helpers the browser tests share: storing a model, opening the model page, waiting for it."""

from __future__ import annotations

import onnx

# The on-screen size (CSS px) of every text of a drawn box and edge in the window: its font size times
# the drawing's scale. Tests and bench/first_view.py judge a first view's readability by it.
LABEL_SIZES = """() => {
  const area = document.getElementById('graph').getBoundingClientRect();
  const out = [];
  for (const t of document.querySelectorAll('#graph .box text, #graph .edge-label')) {
    const r = t.getBoundingClientRect();
    if (r.width === 0 || r.bottom < area.top || r.top > area.bottom || r.right < area.left || r.left > area.right) continue;
    out.push(parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
  }
  return out;
}"""


def upload(page, server: str, model: onnx.ModelProto, name: str = "model.onnx") -> dict:
    """Store a model through the API (tests of the upload page use the file picker instead)."""
    response = page.request.post(
        f"{server}/api/models",
        multipart={
            "file": {"name": name, "mimeType": "application/octet-stream", "buffer": model.SerializeToString()},
        },
    )
    assert response.status == 201, response.text()
    return response.json()


def open_model(page, server: str, model_id: str, hash_: str = "") -> None:
    page.goto(f"{server}/models/{model_id}{hash_}")
    wait_ready(page)


def wait_ready(page, timeout: float = 30_000) -> None:
    """Wait until every box and edge of the graph on screen is drawn (the page hook): the page
    is ready once the window's part is painted, the rest follows a slice per frame."""
    page.wait_for_selector("#graph[data-state=ready]:not([data-drawn=window])", timeout=timeout)
    page.wait_for_selector("#sidebar[data-state=ready]", state="attached", timeout=timeout)


def wait_revision(page, revision: int) -> None:
    """Wait for the toolbar to show `revision`, then for the graph to be redrawn."""
    page.wait_for_function(
        "rev => document.getElementById('model-revision').textContent === `rev ${rev}`", arg=revision
    )
    wait_ready(page)


def compared_with_revision(page, server: str, model_id: str, revision: int, other: int = 0) -> str:
    """Open the model at its head `revision`, and in Compare pick its revision `other`; the
    summary line, once the comparison is drawn."""
    open_model(page, server, model_id)
    wait_revision(page, revision)
    page.click("#btn-compare")
    page.locator(f"#compare-with option[value='rev:{other}']").wait_for(state="attached")
    page.select_option("#compare-with", f"rev:{other}")
    page.locator("#compare-body[data-ready=true]").wait_for()
    return page.locator("#compare-summary").text_content()


def hash_params(page) -> dict[str, str]:
    """The model page's URL hash, decoded: {"rev", "path", "node" | "tensor" | ...}."""
    from urllib.parse import parse_qsl, urlsplit

    return dict(parse_qsl(urlsplit(page.url).fragment, keep_blank_values=True))


def address_of(page, server: str, model_id: str, node_id: str) -> str:
    """A node's address in its name form as a page's link writes it: the server's, its last
    segment's name as written (lib/address.js linkAddress) unless the name holds a "%"."""
    from urllib.parse import quote, unquote

    response = page.request.get(f"{server}/api/models/{model_id}/node?id={quote(node_id)}")
    assert response.ok, response.text()
    address = response.json()["address"]
    base, _, last = address.rpartition("/")
    if not last.startswith("@") or "%" in unquote(last[1:]):
        return address
    return f"{base}/@{unquote(last[1:])}" if base else f"@{unquote(last[1:])}"


def upload_bytes(page, server: str, data: bytes, name: str) -> dict:
    """Store any file (a data file such as a TensorProto .pb) through the API."""
    response = page.request.post(
        f"{server}/api/models",
        multipart={
            "file": {"name": name, "mimeType": "application/octet-stream", "buffer": data},
        },
    )
    assert response.status == 201, response.text()
    return response.json()


def tensor_cells(view) -> list[str]:
    """The values a tensor view (.tensor-preview) shows, as text, in order."""
    return view.locator(".tp-cell").all_text_contents()


def first_flat_index(view) -> int:
    return int(view.locator(".tp-cell").first.get_attribute("data-flat"))


def downloaded(page, server: str, model_id: str, query: str = "") -> onnx.ModelProto:
    """The current revision as downloaded (`query`: e.g. "?layout=embedded"), parsed and passing
    the full check."""
    response = page.request.get(f"{server}/api/models/{model_id}/download{query}")
    assert response.ok, response.text()
    model = onnx.load_from_string(response.body())
    onnx.checker.check_model(model, full_check=True)
    return model


def replace_json(page, area, submit, was: str, now: str) -> None:
    """A JSON values editor: wait for its prefill, check it is `was`, put `now`, submit."""
    page.wait_for_function("el => el.value.length > 0", arg=area.element_handle())
    assert area.input_value() == was
    area.fill(now)
    submit.click()


def reveal(page, *, group: str | None = None, node: str | None = None) -> None:
    """Select a group or node through the URL (as a deep link does): the page brings it into
    the window — a drawing opens at a readable size, so most of a big one starts off screen."""
    key, value = ("group", group) if group is not None else ("node", node)
    page.evaluate("([k, v]) => { location.hash = `${k}=${encodeURIComponent(v)}`; }", [key, value])
    selector = f'#graph [data-group-id="{value}"]' if key == "group" else f'#graph [data-node-id="{value}"]'
    page.wait_for_function(
        """sel => { const e = document.querySelector(sel); const g = document.getElementById('graph');
                    if (!e || g.dataset.state !== 'ready') return false;
                    // its top-left part in the window: a whole box, or the tab of an expanded frame
                    const r = e.getBoundingClientRect(), a = g.getBoundingClientRect();
                    return r.top >= a.top && r.top + Math.min(r.height, 40) <= a.bottom
                      && r.left >= a.left && r.left + Math.min(r.width, 120) <= a.right; }""",
        arg=selector,
    )
