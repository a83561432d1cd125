"""Sweep real ONNX models through the real model page in headless Chromium, looking for bugs.

For every model of the corpus (the ~1,900 official ONNX node-test models from
`onnx.backend.test.case.node.collect_testcases`, every op/dtype/subgraph, plus every .onnx
under the installed onnx package's `backend/test/data/` folders light, pytorch-converted,
pytorch-operator, simple, real) it:

  1. uploads the model to a fresh `onnx-studio serve` (its own data dir, /tmp/sweep/data),
  2. opens /models/{id} and waits for the page to be ready (30 s, else a failure),
  3. clicks up to 5 node boxes (the first ones in the window), waits for the node panel each
     time, and opens one tensor view (an initializer's or a tensor attribute's "preview") the
     first time a node panel offers one,
  4. clicks the first graph input's and graph output's boxes (their panels), then
     clicks the drawing's background, waits for the model panel and its Costs (and turns the
     FLOPs heat map on and off once the costs are counted),
  5. for a model whose main graph has an If/Loop/Scan (any node holding a subgraph),
     double-clicks that node's box, waits for its subgraph to be drawn and clicks a box in it.

With --run it also opens the Run panel, gives it the model's first test data set (the node
test's own, or pytorch-*'s test_data_set_0) and records the verdict against its outputs.

It records every console error/warning, every uncaught page error, every HTTP response >= 500,
every 4xx of an /api/ call the page made by itself, failed requests, timeouts, graphs or panels
that show an error, and a few "looks wrong" texts (undefined, [object Object], NaN in a type).
Results go to /tmp/sweep/results.jsonl (one line per model) and a grouped summary to stdout;
a screenshot of each model with a problem is kept in /tmp/sweep/shots/.

    .venv/bin/python bench/page_sweep.py [--every K] [--limit N] [--only SUBSTR] [--no-node-tests] [--run]

--every K keeps every K-th node-test model (the onnx/backend/test/data models are always all
swept); --limit N stops after N models; --only keeps the models whose name holds SUBSTR.
One browser, one page at a time: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import defaultdict
from pathlib import Path

import onnx

REPO = Path(__file__).resolve().parent.parent
STUDIO = REPO / ".venv" / "bin" / "onnx-studio"
OUT = Path(os.environ.get("SWEEP_DIR", "/tmp/sweep"))
sys.path.insert(0, str(REPO))
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, VIEWPORT  # noqa: E402  (the browser tests' launch)

READY = "#graph[data-state=ready]:not([data-drawn=window]), #graph[data-state=error]"
SIDEBAR_READY = "#sidebar[data-state=ready]"
PAGE_TIMEOUT = 30_000  # ms: the page's first view
STEP_TIMEOUT = 10_000  # ms: a panel, a tensor view, the costs
MAX_BOXES = 5
CONTROL_FLOW = {"If", "Loop", "Scan", "SequenceMap"}

# ------------------------------------------------------------------ the corpus


def node_test_models():
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's overflow warnings while the cases are made
        cases = collect_testcases(None)
    for case in cases:
        if case.model is not None:
            DATA_SETS[f"node/{case.name}"] = case.data_sets[0] if case.data_sets else None
            yield f"node/{case.name}", case.model


DATA_SETS: dict = {}  # a node test's first data set: (inputs, outputs), numpy values


def write_data_set(name: str, model: onnx.ModelProto, folder: Path) -> list[Path]:
    """The .pb files of a model's first test data set (as onnx's cmd_tools writes them), or []."""
    import shutil

    from onnx import numpy_helper

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    given = DATA_SETS.get(name)
    if given is None:
        src = ONNX_DATA / name / "test_data_set_0"
        if not src.is_dir():
            return []
        out = []
        for f in sorted(src.glob("*.pb")):
            shutil.copy(f, folder / f.name)
            out.append(folder / f.name)
        return out
    out = []
    for kind, values, infos in (("input", given[0], model.graph.input), ("output", given[1], model.graph.output)):
        for j, value in enumerate(values):
            if j >= len(infos):
                break
            info = infos[j]
            if isinstance(value, onnx.TensorProto):
                proto = value
            elif info.type.HasField("map_type"):
                proto = numpy_helper.from_dict(value, info.name)
            elif info.type.HasField("sequence_type"):
                proto = numpy_helper.from_list(value, info.name)
            elif info.type.HasField("optional_type"):
                proto = numpy_helper.from_optional(value, info.name)
            else:
                proto = numpy_helper.from_array(value, info.name)
            path = folder / f"{kind}_{j}.pb"
            path.write_bytes(proto.SerializeToString())
            out.append(path)
    return out


ONNX_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"


def data_models():
    root = ONNX_DATA
    for kind in ("light", "pytorch-converted", "pytorch-operator", "simple", "real"):
        for path in sorted((root / kind).rglob("*.onnx")):
            rel = path.relative_to(root)
            name = str(rel.parent) if path.name == "model.onnx" else str(rel.with_suffix(""))
            yield name, path


def corpus(every: int, only: str | None, node_tests: bool = True):
    out = []
    if node_tests:
        for i, (name, model) in enumerate(node_test_models()):
            if i % every == 0:
                out.append((name, model))
    out.extend(data_models())
    if only:
        out = [(n, m) for n, m in out if only in n]
    return out


def model_bytes(model) -> bytes:
    return model.read_bytes() if isinstance(model, Path) else model.SerializeToString()


def load(model) -> onnx.ModelProto:
    return onnx.load(str(model), load_external_data=False) if isinstance(model, Path) else model


def subgraph_nodes(model: onnx.ModelProto) -> list[str]:
    """Positions ("n3") of the main graph's nodes that hold a subgraph."""
    out = []
    for i, node in enumerate(model.graph.node):
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            out.append(f"n{i}")
    return out


def tensor_of(model: onnx.ModelProto, ref: str):
    """The TensorProto a tensor view's ref names in the main graph ("@n3#value": node 3's tensor
    attribute, else an initializer's name), or None."""
    m = re.fullmatch(r"@n(\d+)#(.+)", ref)
    if m:
        i, attr = int(m.group(1)), m.group(2)
        if i < len(model.graph.node):
            for a in model.graph.node[i].attribute:
                if a.name == attr and a.type == onnx.AttributeProto.TENSOR:
                    return a.t
        return None
    return next((t for t in model.graph.initializer if t.name == ref), None)


def same_value(shown: str, expected) -> bool:
    import math

    import numpy as np

    text = shown.strip()
    if isinstance(expected, (bytes, np.bytes_)):
        expected = expected.decode("utf-8", "replace")
    if isinstance(expected, str):
        return text.strip('"') == expected or text == json.dumps(expected)
    if isinstance(expected, (bool, np.bool_)):
        return text.lower() in (("true", "1") if expected else ("false", "0"))
    if isinstance(expected, (complex, np.complexfloating)):
        return True  # not parsed here
    try:
        x = float(text.replace("∞", "inf").replace("Infinity", "inf"))
    except ValueError:
        return False
    e = float(expected)
    if math.isnan(e):
        return math.isnan(x)
    if math.isinf(e):
        return x == e
    if isinstance(expected, (np.integer, int)):
        return x == e
    return abs(x - e) <= 1e-6 * max(1.0, abs(e)) or np.float32(x) == np.float32(e)


def check_tensor_view(page, model: onnx.ModelProto, ref: str) -> list[str]:
    """What the tensor view of `ref` shows against the values onnx's numpy_helper reads."""
    import numpy as np
    from onnx import numpy_helper

    t = tensor_of(model, ref)
    if t is None or t.data_location == onnx.TensorProto.EXTERNAL:
        return []
    try:
        arr = numpy_helper.to_array(t)
    except Exception:
        return []
    view = page.locator(f'#sidebar .tensor-preview[data-ref="{css_escape(ref)}"]').first
    out = []
    head = view.locator(".tp-head").inner_text() if view.locator(".tp-head").count() else ""
    dtype = onnx.TensorProto.DataType.Name(t.data_type)
    dims = "×".join(str(d) for d in t.dims)
    shape = f"⟨{dims}⟩" if t.dims else "scalar"
    if not head.startswith(f"{dtype} {shape}"):
        out.append(f"{ref}: head says {head.splitlines()[0] if head else '(none)'!r}, the tensor is {dtype} {shape}")
    cells = view.locator(".tp-cell").all_text_contents()
    flat = arr.reshape(-1)
    if flat.dtype.kind == "V" or str(flat.dtype).startswith(("float8", "bfloat16", "float4", "int4", "uint4")):
        flat = flat.astype(np.float32)
    for k, c in enumerate(cells[:64]):
        if k >= flat.size:
            out.append(f"{ref}: shows {len(cells)} values, the tensor has {flat.size}")
            break
        if not same_value(c, flat[k].item() if hasattr(flat[k], "item") else flat[k]):
            out.append(f"{ref} ({dtype}): value #{k} shown as {c!r}, numpy_helper reads {flat[k]!r}")
            break
    return out


def input_dim_params(model: onnx.ModelProto) -> set[str]:
    """The symbolic dims (dim_param) of the main graph's real inputs (not initializers)."""
    inits = {t.name for t in model.graph.initializer}
    out = set()
    for v in model.graph.input:
        if v.name in inits:
            continue
        out.update(type_dim_params(v.type))
    return out


def type_dim_params(tp: onnx.TypeProto) -> set[str]:
    """The dim_params of a type, inside sequences, optionals and maps too."""
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        t = getattr(tp, kind)
        return {d.dim_param for d in t.shape.dim if d.dim_param} if t.HasField("shape") else set()
    if kind == "sequence_type":
        return type_dim_params(tp.sequence_type.elem_type)
    if kind == "optional_type":
        return type_dim_params(tp.optional_type.elem_type)
    if kind == "map_type":
        return type_dim_params(tp.map_type.value_type)
    return set()


# ------------------------------------------------------------------ the server


def start_server(data_dir: Path, log: Path):
    data_dir.mkdir(parents=True, exist_ok=True)
    err = log.open("w")
    proc = subprocess.Popen(
        [str(STUDIO), "serve", "--port", "0", "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        cwd=str(REPO),
    )
    line = proc.stdout.readline()
    while " on http" not in line:
        if not line and proc.poll() is not None:
            raise SystemExit(f"the server did not start (see {log})")
        line = proc.stdout.readline()
    url = line.split(" on ")[1].split()[0].rstrip("/")
    return proc, url


def upload(server: str, name: str, data: bytes) -> tuple[int, dict | str]:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    req = urllib.request.Request(
        f"{server}/api/models", data=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")[:500]


# ------------------------------------------------------------------ the page

# Points to click: the head of each drawn node box that is in the window and on top there.
BOX_POINTS = """(max) => {
  const area = document.getElementById('graph').getBoundingClientRect();
  const out = [];
  for (const g of document.querySelectorAll('#graph g.box[data-node-id]')) {
    const r = g.getBoundingClientRect();
    if (r.width < 4 || r.height < 4) continue;
    const x = r.left + Math.min(r.width / 2, 40), y = r.top + Math.min(6, r.height / 2);
    if (x < area.left + 2 || x > area.right - 2 || y < area.top + 2 || y > area.bottom - 2) continue;
    const hit = document.elementFromPoint(x, y);
    if (!hit || hit.closest('[data-box]') !== g.closest('[data-box]')) continue;
    if (hit.closest('[data-ref-kind]')) continue;
    out.push({ id: g.getAttribute('data-node-id'), box: g.getAttribute('data-box'), x, y });
    if (out.length >= max) break;
  }
  return out;
}"""

# The point to click on the head of one node's box, if it is in the window and on top there.
BOX_POINT = """(id) => {
  const area = document.getElementById('graph').getBoundingClientRect();
  const g = document.querySelector(`#graph g.box[data-node-id="${CSS.escape(id)}"]`);
  if (!g) return null;
  const r = g.getBoundingClientRect();
  const x = r.left + Math.min(r.width / 2, 40), y = r.top + Math.min(6, r.height / 2);
  if (x < area.left + 2 || x > area.right - 2 || y < area.top + 2 || y > area.bottom - 2) return null;
  const hit = document.elementFromPoint(x, y);
  if (!hit || hit.closest('[data-box]') !== g.closest('[data-box]')) return null;
  return { x, y };
}"""

# The head of the first graph input's (or output's) box in the window.
VALUE_BOX_POINT = """(kind) => {
  const area = document.getElementById('graph').getBoundingClientRect();
  for (const g of document.querySelectorAll(`#graph g.box[data-box^="${kind}:"]`)) {
    const r = g.getBoundingClientRect();
    const x = r.left + Math.min(r.width / 2, 40), y = r.top + Math.min(6, r.height / 2);
    if (x < area.left + 2 || x > area.right - 2 || y < area.top + 2 || y > area.bottom - 2) continue;
    const hit = document.elementFromPoint(x, y);
    if (!hit || hit.closest('[data-box]') !== g || hit.closest('[data-ref-kind]')) continue;
    return { box: g.getAttribute('data-box'), x, y };
  }
  return null;
}"""

# A point of the drawing's background: nothing drawn under it.
BACKGROUND_POINT = """() => {
  const area = document.getElementById('graph').getBoundingClientRect();
  for (let fy = 0.95; fy > 0.1; fy -= 0.05) {
    for (let fx = 0.02; fx < 0.98; fx += 0.04) {
      const x = area.left + fx * area.width, y = area.top + fy * area.height;
      const hit = document.elementFromPoint(x, y);
      if (!hit || !hit.closest('#graph')) continue;
      if (hit.closest('[data-box], [data-group], [data-frame], [data-tensor], [data-toggle], button, a, .heat-legend, .graph-tools, .minimap')) continue;
      if (!(hit.tagName === 'svg' || hit.tagName === 'CANVAS' || hit.classList.contains('viewport'))) continue;
      return { x, y, tag: hit.tagName };
    }
  }
  return null;
}"""

# Texts on screen that betray a bug: JavaScript values printed as they are.
ODD_TEXT = """() => {
  const out = [];
  const scan = (root, where) => {
    if (!root) return;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const t = n.textContent;
      if (/\\bundefined\\b|\\[object \\w+\\]|\\bNaN\\s*(×|x|⟩)|⟨[^⟩]*NaN|function \\(|=> \\{/.test(t)
          && !/\\b(is|be|are|become|becomes|remains?) undefined\\b|undefined behaviou?r/i.test(t)) {
        const e = n.parentElement;
        if (e && e.closest('.tp-values, .tp-cell, .tp-stats, textarea, input, pre, .doc, .model-doc, .tp-doc, .schema-desc, .schema-body, .schema-list')) continue;
        out.push(where + ': ' + t.trim().slice(0, 160));
      }
    }
  };
  scan(document.getElementById('graph'), 'graph');
  scan(document.getElementById('sidebar'), 'sidebar');
  scan(document.getElementById('breadcrumb'), 'breadcrumb');
  return [...new Set(out)].slice(0, 5);
}"""

# Text that sticks out of its box in the drawing (cut or overflowing labels).
OVERFLOW = """() => {
  const out = [];
  for (const g of document.querySelectorAll('#graph g.box')) {
    const rect = g.querySelector('rect');
    if (!rect) continue;
    const rb = rect.getBoundingClientRect();
    if (rb.width < 10) continue;
    for (const t of g.querySelectorAll('text')) {
      const tb = t.getBoundingClientRect();
      if (tb.width === 0) continue;
      if (tb.right > rb.right + 2 || tb.left < rb.left - 2) {
        out.push(`${g.getAttribute('data-box')}: "${t.textContent.slice(0, 60)}" ${Math.round(tb.right - rb.right)}px past`);
        break;
      }
    }
    if (out.length >= 3) break;
  }
  return out;
}"""


class Recorder:
    """What goes wrong on one page, each tagged with the step it happened in."""

    def __init__(self, page, server: str):
        self.page = page
        self.server = server
        self.step = "open"
        self.events: list[dict] = []
        page.on("console", self.on_console)
        page.on(
            "pageerror",
            lambda exc: self.add("pageerror", f"{exc}"[:600], stack=(getattr(exc, "stack", "") or "")[:1200]),
        )
        page.on("response", self.on_response)
        page.on("requestfailed", self.on_failed)

    def add(self, kind: str, text: str, **extra):
        self.events.append({"kind": kind, "text": text, "step": self.step, **extra})

    def on_console(self, msg):
        if msg.type in ("error", "warning"):
            loc = msg.location or {}
            self.add(f"console.{msg.type}", msg.text[:600], where=f"{loc.get('url', '')}:{loc.get('lineNumber', '')}")

    def on_response(self, response):
        status = response.status
        url = response.url
        if status >= 500 or (400 <= status < 500 and "/api/" in url):
            try:
                body = response.text()[:400]
            except Exception:
                body = ""
            self.add(f"http.{status}", f"{response.request.method} {url.replace(self.server, '')}", body=body)

    def on_failed(self, request):
        failure = request.failure or ""
        if "ERR_ABORTED" in failure:  # a fetch the page cancelled itself (a newer view)
            return
        self.add("requestfailed", f"{request.method} {request.url.replace(self.server, '')}: {failure}")


def shown_errors(page, scope: str = "#sidebar") -> list[str]:
    """The texts of the error notes shown in `scope` (a hidden, empty one is a form's spare)."""
    return page.evaluate(
        """sel => [...document.querySelectorAll(sel + ' .field-error, ' + sel + ' .error-card')]
             .filter(e => !e.hidden && e.checkVisibility() && e.textContent.trim())
             .map(e => e.textContent.trim().slice(0, 400))""",
        scope,
    )


def graph_error(page) -> str | None:
    if page.locator("#graph[data-state=error]").count():
        return page.locator("#graph").inner_text()[:400]
    return None


def wait_tensor_view(page, ref: str, where: str = "#sidebar") -> tuple[str, str]:
    """Wait for the tensor view of `ref` to load: ("ok"|"error"|"empty", text)."""
    sel = f'{where} .tensor-preview[data-ref="{css_escape(ref)}"]'
    page.wait_for_selector(f"{sel}:not(:has(.tp-status))", state="attached", timeout=STEP_TIMEOUT)
    view = page.locator(sel).first
    if view.locator(".field-error").count():
        return "error", view.locator(".field-error").inner_text()
    if view.locator(".tp-values").count():
        return "ok", view.locator(".tp-head").inner_text()
    return "empty", view.inner_text()[:200]


def css_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def run_step(page, rec: Recorder, problem, result: dict, files: list[Path]) -> None:
    """Run the model on a test data set through the Run panel; the verdict against its outputs."""
    rec.step = "run panel"
    page.click("#btn-run")
    page.wait_for_selector("#sidebar[data-panel=run] .panel-section", state="attached", timeout=STEP_TIMEOUT)
    if not page.locator("#run-go").count():
        # no Run button (a graph with no inputs): what the panel says instead
        result["run"] = ["unavailable", page.locator("#sidebar").inner_text()[:200]]
        return
    own = page.locator("#run-own-inputs")
    if own.count() and own.is_visible():
        own.click()
    page.set_input_files("#run-dataset", [str(f) for f in files])
    rec.step = "run (test data set)"
    page.click("#run-go")
    try:
        page.wait_for_selector(
            "#run-results[data-ready=true], #run-results .field-error", state="attached", timeout=90_000
        )
    except Exception:
        problem("run-timeout", "no run results in 90 s")
        return
    errors = shown_errors(page, "#run-results")
    if errors:
        result["run"] = ["error", errors[0][:300]]
        problem("run-error", errors[0])
        return
    verdict = page.locator("#run-expected-verdict")
    text = verdict.inner_text() if verdict.count() else "(no verdict against the expected outputs)"
    result["run"] = ["ok", text]
    if "differ" in text or verdict.count() == 0:
        rows = page.locator("#run-expected tr").all_inner_texts()[:6] if page.locator("#run-expected").count() else []
        problem("run-verdict", text + (" | " + " / ".join(r.replace("\t", " ") for r in rows) if rows else ""))
    rec.step = "run output tensor views"
    try:
        page.wait_for_selector("#run-results .tensor-preview .tp-status", state="detached", timeout=STEP_TIMEOUT)
    except Exception:
        problem("run-output-timeout", "an output's tensor view did not load")
    for t in shown_errors(page, "#run-results"):
        problem("run-output-error", t)
    for t in page.evaluate(ODD_TEXT):
        problem("odd-text", t)


def sweep_one(
    page,
    rec: Recorder,
    server: str,
    name: str,
    model_id: str,
    proto: onnx.ModelProto,
    shots: Path,
    run_data: Path | None = None,
) -> dict:
    result: dict = {"name": name, "id": model_id, "steps": []}
    problems: list[dict] = []

    def problem(kind: str, text: str):
        problems.append({"kind": kind, "text": text[:600], "step": rec.step})

    def odd_texts():
        for t in page.evaluate(ODD_TEXT):
            problem("odd-text", t)

    t0 = time.monotonic()
    rec.step = "open"
    page.goto(f"{server}/models/{model_id}", wait_until="commit")
    try:
        page.wait_for_selector(READY, state="attached", timeout=PAGE_TIMEOUT)
        page.wait_for_selector(SIDEBAR_READY, state="attached", timeout=PAGE_TIMEOUT)
    except Exception as exc:
        problem("timeout", f"page not ready in {PAGE_TIMEOUT // 1000} s: {str(exc).splitlines()[0]}")
        result["problems"] = problems
        return result
    result["ready_s"] = round(time.monotonic() - t0, 2)
    err = graph_error(page)
    if err:
        problem("graph-error", err)
        result["problems"] = problems
        return result
    for t in shown_errors(page):
        problem("sidebar-error", t)
    result["renderer"] = page.locator("#graph").get_attribute("data-renderer")
    odd_texts()
    for t in page.evaluate(OVERFLOW):
        problem("label-overflow", t)

    # ---- node boxes
    points = page.evaluate(BOX_POINTS, MAX_BOXES)
    result["boxes"] = len(points)
    tensor_opened = False
    for pt in points:
        rec.step = f"click node {pt['id']}"
        page.mouse.click(pt["x"], pt["y"])
        try:
            page.wait_for_selector(
                f'#sidebar[data-state=ready][data-panel=node][data-shows$="{css_escape(pt["box"])}"]',
                state="attached",
                timeout=STEP_TIMEOUT,
            )
        except Exception:
            shows = page.locator("#sidebar").get_attribute("data-shows")
            panel = page.locator("#sidebar").get_attribute("data-panel")
            problem("node-panel", f"no node panel for {pt['id']} (sidebar shows {shows!r}, panel {panel!r})")
            continue
        for t in shown_errors(page):
            problem("panel-error", t)
        odd_texts()
        if not tensor_opened:
            link = page.locator("#sidebar .preview-link")
            if link.count():
                tensor_opened = True
                ref = link.first.get_attribute("data-ref")
                rec.step = f"tensor view {ref} (node {pt['id']})"
                link.first.click()
                try:
                    state, text = wait_tensor_view(page, ref)
                    result["tensor"] = [ref, state, text[:100]]
                    if state == "error":
                        problem("tensor-error", f"{ref}: {text}")
                    elif state == "ok":
                        for t in check_tensor_view(page, proto, ref):
                            problem("tensor-values", t)
                except Exception:
                    problem("tensor-timeout", f"tensor view of {ref} did not load")
                odd_texts()

    # ---- a graph input's and a graph output's panel
    for kind in ("input", "output"):
        pt = page.evaluate(VALUE_BOX_POINT, kind)
        if pt is None:
            continue
        result.setdefault("value_panels", []).append(pt["box"])
        rec.step = f"click {kind} box"
        page.mouse.click(pt["x"], pt["y"])
        try:
            page.wait_for_selector(
                f'#sidebar[data-state=ready][data-panel={kind}][data-shows$="{css_escape(pt["box"])}"]',
                state="attached",
                timeout=STEP_TIMEOUT,
            )
        except Exception:
            sb = page.locator("#sidebar")
            problem(
                "value-panel",
                f"no {kind} panel for {pt['box']} (panel {sb.get_attribute('data-panel')!r}, shows {sb.get_attribute('data-shows')!r})",
            )
            continue
        for t in shown_errors(page):
            problem("panel-error", t)
        odd_texts()

    # ---- the model panel, by a click on the background
    rec.step = "background click"
    pt = page.evaluate(BACKGROUND_POINT)
    if pt is None:
        # nothing empty in the window: the toolbar's model button does the same
        page.click("#btn-model")
    else:
        page.mouse.click(pt["x"], pt["y"])
    try:
        page.wait_for_selector("#sidebar[data-state=ready][data-panel=model]", state="attached", timeout=STEP_TIMEOUT)
    except Exception:
        problem(
            "model-panel",
            f"no model panel after a background click (panel {page.locator('#sidebar').get_attribute('data-panel')!r})",
        )
        page.click("#btn-model")
    odd_texts()
    rec.step = "costs"
    if page.locator("#costs").count():
        try:
            page.wait_for_selector(
                "#costs[data-ready=true], #costs.field-error", state="attached", timeout=STEP_TIMEOUT * 3
            )
            errors = shown_errors(page)
            for t in errors:
                problem("model-panel-error", t)
            asked = page.locator("#costs .cost-dims input").evaluate_all("fs => fs.map(f => f.name)")
            declared = input_dim_params(proto)
            extra = [n for n in asked if n not in declared]
            if extra:
                problem(
                    "costs-dims",
                    f"Costs asks for sizes {extra} that no graph input declares (inputs' symbolic dims: {sorted(declared)})",
                )
            if not errors and page.locator("#costs .cost-heat button[data-metric=flops]").count():
                rec.step = "costs heat map"
                page.click("#costs .cost-heat button[data-metric=flops]")
                page.wait_for_selector("#heat-legend:not([hidden])", timeout=STEP_TIMEOUT)
                odd_texts()
                page.click("#heat-legend .heat-off")
        except Exception as exc:
            problem("costs-timeout", f"costs: {str(exc).splitlines()[0]}")
        odd_texts()

    # ---- the Run panel, on the model's first test data set
    if run_data is not None:
        files = write_data_set(name, proto, run_data)
        if files:
            run_step(page, rec, problem, result, files)

    # ---- subgraphs
    holders = subgraph_nodes(proto)
    if holders:
        nid = holders[0]
        rec.step = f"open subgraph of {nid}"
        result["subgraph"] = nid
        try:
            pt = page.evaluate(BOX_POINT, nid)
            if pt is None:
                # off screen, under the panel or in a collapsed group: a deep link selects and reveals it
                page.evaluate("id => { location.hash = 'node=' + encodeURIComponent(id); }", nid)
                page.wait_for_selector(f'#graph g.box[data-node-id="{nid}"]', timeout=STEP_TIMEOUT)
                page.wait_for_timeout(400)  # the reveal's pan
                pt = page.evaluate(BOX_POINT, nid)
            if pt is None:
                raise RuntimeError(f"the box of {nid} is not in the window even after a deep link to it")
            page.mouse.dblclick(pt["x"], pt["y"])
            page.wait_for_selector("#breadcrumb .crumb >> nth=1", state="attached", timeout=STEP_TIMEOUT)
            page.wait_for_selector(READY, state="attached", timeout=PAGE_TIMEOUT)
            page.wait_for_selector(SIDEBAR_READY, state="attached", timeout=PAGE_TIMEOUT)
            err = graph_error(page)
            if err:
                problem("subgraph-error", err)
            else:
                odd_texts()
                inner = page.evaluate(BOX_POINTS, 1)
                if inner:
                    rec.step = f"click node {inner[0]['id']} in the subgraph"
                    page.mouse.click(inner[0]["x"], inner[0]["y"])
                    page.wait_for_selector(
                        f'#sidebar[data-state=ready][data-panel=node][data-shows$="{css_escape(inner[0]["box"])}"]',
                        state="attached",
                        timeout=STEP_TIMEOUT,
                    )
                    odd_texts()
        except Exception as exc:
            problem("subgraph-timeout", f"{nid}: {str(exc).splitlines()[0]}")
    page.wait_for_timeout(50)  # late answers' errors
    result["seconds"] = round(time.monotonic() - t0, 2)
    result["problems"] = problems
    return result


# ------------------------------------------------------------------ the report


def signature(text: str) -> str:
    """A symptom's text without what differs from model to model (ids, names, numbers)."""
    s = re.sub(r"/api/models/[0-9a-f]+", "/api/models/ID", text)
    s = re.sub(r"models/[0-9a-f]{8,}", "models/ID", s)
    s = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", s)
    s = re.sub(r"\b\d+(\.\d+)?\b", "N", s)
    return s[:200]


def step_kind(step: str) -> str:
    return re.sub(r"\b(node|of) \S+", r"\1 …", re.sub(r"tensor view \S+ \(node \S+\)", "tensor view", step))


def summarize(results: list[dict]) -> str:
    groups: dict[tuple, list] = defaultdict(list)
    for r in results:
        seen = set()
        for e in r.get("events", []) + r.get("problems", []):
            key = (e["kind"], signature(e["text"]), step_kind(e["step"]))
            if key in seen:
                continue
            seen.add(key)
            groups[key].append((r["name"], e))
    lines = []
    for (kind, sig, step), hits in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        names = sorted({n for n, _ in hits})
        lines.append(f"[{len(names)} models] {kind} during '{step}': {sig}")
        lines.append(f"    e.g. {', '.join(names[:4])}")
        lines.append(f"    first: {hits[0][1]['text'][:300]}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=1, help="keep every K-th node-test model")
    ap.add_argument("--limit", type=int, default=0, help="stop after N models")
    ap.add_argument("--only", default=None, help="only the models whose name holds this")
    ap.add_argument("--no-node-tests", action="store_true", help="only the onnx/backend/test/data models")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument(
        "--run", action="store_true", help="also run each model on its first test data set in the Run panel"
    )
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    shots = out / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    models = corpus(args.every, args.only, node_tests=not args.no_node_tests)
    if args.limit:
        models = models[: args.limit]
    print(f"{len(models)} models", flush=True)
    data_dir = out / "data"
    if data_dir.exists():
        import shutil

        shutil.rmtree(data_dir)
    proc, server = start_server(data_dir, out / "server.log")
    print(f"server {server}", flush=True)
    results = []
    start = time.monotonic()
    jsonl = (out / "results.jsonl").open("w")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(STEP_TIMEOUT)
            for i, (name, model) in enumerate(models):
                data = model_bytes(model)
                status, summary = upload(server, name.replace("/", "__") + ".onnx", data)
                if status != 201:
                    r = {
                        "name": name,
                        "events": [],
                        "problems": [{"kind": f"upload.{status}", "text": str(summary), "step": "upload"}],
                    }
                    results.append(r)
                    jsonl.write(json.dumps(r) + "\n")
                    continue
                page = context.new_page()
                rec = Recorder(page, server)
                try:
                    run_data = out / "dataset" if args.run else None
                    r = sweep_one(page, rec, server, name, summary["id"], load(model), shots, run_data)
                except Exception as exc:
                    r = {
                        "name": name,
                        "id": summary["id"],
                        "problems": [{"kind": "sweep-crash", "text": str(exc).splitlines()[0], "step": rec.step}],
                    }
                r["events"] = rec.events
                if r.get("problems") or rec.events:
                    shot = shots / (re.sub(r"[^\w.-]", "_", name) + ".png")
                    try:
                        page.screenshot(path=str(shot))
                        r["shot"] = str(shot)
                    except Exception:
                        pass
                page.close()
                results.append(r)
                jsonl.write(json.dumps(r) + "\n")
                jsonl.flush()
                bad = len(r.get("problems", [])) + len(r["events"])
                if bad or i % 50 == 0:
                    el = time.monotonic() - start
                    print(
                        f"[{i + 1}/{len(models)} {el:.0f}s] {name}: {r.get('seconds')}s, {bad} problem(s)", flush=True
                    )
                    for e in (r.get("problems", []) + r["events"])[:3]:
                        print(f"      {e['kind']} @ {e['step']}: {e['text'][:200]}", flush=True)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
        jsonl.close()
    took = time.monotonic() - start
    report = f"{len(results)} models swept in {took:.0f} s\n" + summarize(results)
    (out / "summary.txt").write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
