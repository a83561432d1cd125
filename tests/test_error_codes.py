"""Every error code app/ can answer is in the one catalogue (app/api/error_codes.py) with the status
it is raised with: read from the source with ast, so a new StudioError(...) with a code or a status
the catalogue lacks fails here, not in a client's script (QA33 #2)."""

from __future__ import annotations

import ast
from pathlib import Path

from app.api.error_codes import FRAMEWORK_STATUSES, catalogue, codes, framework_code

APP = Path(__file__).resolve().parents[1] / "app"

# the error classes and the status each answers unless told otherwise (app/errors.py)
DEFAULT_STATUS = {"StudioError": 400, "NotFound": 404, "Conflict": 409}
# raise sites whose code is no literal: (file, function) -> the codes it makes, with their status;
# an empty dict: it passes on another error's code (found where that one is raised)
MADE_AT_RUN_TIME: dict[tuple[str, str], dict[str, int]] = {
    ("edits/contract.py", "_check_op"): {"missing_field": 400, "bad_field": 400},
    ("edits/locate.py", "main_graph_value"): {"unknown_input": 404, "unknown_output": 404},
    ("onnx_io/address.py", "_node_index"): {"unknown_node": 404, "unknown_graph": 404},
    ("onnx_io/kinds.py", "detect"): {},
    ("api/errors.py", "_studio_error"): {},
    ("api/errors.py", "_missing_file"): {},
    ("api/errors.py", "_http_error"): {},
    ("web/guard.py", "_refuse"): {},
}


def _name(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _literal(node: ast.expr | None):
    return node.value if isinstance(node, ast.Constant) else None


class _Raises(ast.NodeVisitor):
    """(code, status, where) of each error made in a file; (where, function) of those whose code
    is made at run time."""

    def __init__(self, rel: str):
        self.rel, self.found, self.dynamic = rel, [], []
        self.function, self.class_status = "", None

    def visit_ClassDef(self, node: ast.ClassDef):
        before = self.class_status
        if not {getattr(b, "id", "") for b in node.bases} & set(DEFAULT_STATUS):
            self.class_status = None  # not a StudioError subclass (StudioError's own init names no code)
            self.generic_visit(node)
            self.class_status = before
            return
        for stmt in node.body:  # `status = 503` of a StudioError subclass
            if isinstance(stmt, ast.Assign) and any(getattr(t, "id", "") == "status" for t in stmt.targets):
                self.class_status = _literal(stmt.value)
        self.generic_visit(node)
        self.class_status = before

    def visit_FunctionDef(self, node: ast.FunctionDef):
        before, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = before

    def visit_Call(self, node: ast.Call):
        name, args = _name(node), node.args
        status_kw = next((k.value for k in node.keywords if k.arg == "status"), None)
        if name in DEFAULT_STATUS and args:
            status = _literal(args[2]) if len(args) > 2 else _literal(status_kw) if status_kw else None
            self._add(args[0], status or DEFAULT_STATUS[name], node)
        elif name == "error_response" and len(args) > 2:
            self._add(args[0], _literal(args[2]), node)
        elif name == "_refuse" and self.rel == "web/guard.py" and len(args) > 1:  # (status, code, message)
            self._add(args[1], _literal(args[0]), node)
        elif name == "__init__" and args and self.class_status:  # a subclass's super().__init__(code, ...)
            self._add(args[0], self.class_status, node)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict):  # {"code": "unauthorized", "message": ...} written by hand
        keys = [_literal(k) for k in node.keys]
        if "code" in keys and "message" in keys:
            code = node.values[keys.index("code")]
            if isinstance(code, ast.Constant):
                self.found.append((code.value, None, f"{self.rel}:{node.lineno}"))
        self.generic_visit(node)

    def _add(self, code: ast.expr, status, node: ast.Call):
        if isinstance(code, ast.Constant):
            self.found.append((code.value, status, f"{self.rel}:{node.lineno}"))
        else:
            self.dynamic.append((self.rel, self.function, node.lineno))


def _scan():
    found, dynamic = [], []
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP).as_posix()
        raises = _Raises(rel)
        raises.visit(ast.parse(path.read_text(encoding="utf-8")))
        found += raises.found
        dynamic += raises.dynamic
    return found, dynamic


def test_the_scan_finds_the_codes_app_raises():
    found, _ = _scan()
    raised = {code for code, _, _ in found}
    assert len(raised) > 100
    assert {"stale_base", "unknown_dim", "unauthorized", "unknown_host", "store_unavailable", "blob_missing"} <= raised


def test_every_code_raised_is_catalogued_with_its_status():
    found, _ = _scan()
    catalogued = codes()
    missing = sorted({f"{code} ({where})" for code, _, where in found if code not in catalogued})
    assert not missing, f"add these codes to app/api/error_codes.py: {missing}"
    off = sorted(
        f"{code} {status} ({where}): the catalogue says {catalogued[code].statuses}"
        for code, status, where in found
        if status is not None and status not in catalogued[code].statuses
    )
    assert not off, off


def test_codes_made_at_run_time_are_known_and_catalogued():
    _, dynamic = _scan()
    unknown = sorted(f"{rel}:{line} in {fn}" for rel, fn, line in dynamic if (rel, fn) not in MADE_AT_RUN_TIME)
    assert not unknown, f"a code made at run time: name its codes in MADE_AT_RUN_TIME: {unknown}"
    catalogued = codes()
    for made in MADE_AT_RUN_TIME.values():
        for code, status in made.items():
            assert status in catalogued[code].statuses, code


def test_the_frameworks_own_errors_are_catalogued():
    catalogued = codes()
    for status in FRAMEWORK_STATUSES:
        assert status in catalogued[framework_code(status)].statuses, status
    assert framework_code(405) == "method_not_allowed" and framework_code(404) == "not_found"


def test_the_catalogue_names_no_code_nothing_raises():
    found, _ = _scan()
    made = {code for code, _, _ in found} | {c for m in MADE_AT_RUN_TIME.values() for c in m}
    made |= {framework_code(s) for s in FRAMEWORK_STATUSES}
    assert sorted(codes().keys() - made) == []
    assert len(codes()) == len(catalogue()), "a code is catalogued twice"
    for e in catalogue():
        assert e.when and e.statuses == tuple(sorted(e.statuses)), e.code


def test_unknown_paths_and_methods_answer_catalogued_codes(client):
    r = client.get("/api/no-such-thing")
    assert r.status_code == 404 and r.get_json()["error"]["code"] == "not_found"
    r = client.delete("/api/ops")
    assert r.status_code == 405 and r.get_json()["error"]["code"] == "method_not_allowed"
