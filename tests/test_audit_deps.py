"""scripts/audit_deps.py's decisions on registry answers shaped like PyPI's and npm's.

`make audit` runs the script against the real registries; these pin down what it concludes from
them: a vulnerability fails, a withdrawn one doesn't, a release behind the latest is reported as
not audited (with why), a deprecated library the page ships fails and a build tool's doesn't.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "audit_deps.py"


@pytest.fixture()
def audit(monkeypatch: pytest.MonkeyPatch) -> Any:
    spec = importlib.util.spec_from_file_location("audit_deps", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "audit_deps", module)
    spec.loader.exec_module(module)
    return module


def pypi_document(
    version: str, vulnerabilities: list[dict[str, Any]], requires_python: str = ">=3.9"
) -> dict[str, Any]:
    return {
        "info": {"version": version, "requires_python": requires_python},
        "vulnerabilities": vulnerabilities,
    }


VULN = {"id": "PYSEC-2099-1", "aliases": ["CVE-2099-1"], "fixed_in": ["2.0.1"], "withdrawn": None}


def answers(audit: Any, monkeypatch: pytest.MonkeyPatch, documents: dict[str, Any]) -> None:
    def fetch(url: str, accept: str = "application/json") -> Any:
        return documents.get(url)

    monkeypatch.setattr(audit, "fetch_json", fetch)


def test_a_known_vulnerability_of_the_installed_latest_release_fails(audit, monkeypatch, capsys):
    answers(audit, monkeypatch, {audit.PYPI.format("demo"): pypi_document("2.0.0", [VULN])})
    finding = audit.audit_python_one("demo", "2.0.0")
    assert [v["id"] for v in finding.vulnerabilities] == ["PYSEC-2099-1"]
    assert audit.report([finding], []) == 1
    assert "VULNERABLE demo 2.0.0: PYSEC-2099-1, CVE-2099-1 (fixed in 2.0.1)" in capsys.readouterr().out


def test_a_withdrawn_vulnerability_does_not_count(audit, monkeypatch):
    withdrawn = {**VULN, "withdrawn": "2099-02-01T00:00:00Z"}
    answers(audit, monkeypatch, {audit.PYPI.format("demo"): pypi_document("2.0.0", [withdrawn])})
    finding = audit.audit_python_one("demo", "2.0.0")
    assert finding.vulnerabilities == [] and finding.unaudited_because is None
    assert audit.report([finding], []) == 0


def test_a_release_behind_the_latest_is_reported_as_not_audited(audit, monkeypatch, capsys):
    # the latest's list says nothing about 1.0: it must not pass as "audited, clean"
    answers(audit, monkeypatch, {audit.PYPI.format("demo"): pypi_document("3.0", [], ">=3.99")})
    finding = audit.audit_python_one("demo", "1.0")
    assert finding.unaudited_because and "needs Python >=3.99" in finding.unaudited_because
    assert audit.report([finding], []) == 0
    out = capsys.readouterr().out
    assert "0 of 1 installed distributions audited" in out
    assert "not audited: demo 1.0 (latest 3.0)" in out


def test_a_deprecated_shipped_npm_library_fails_and_a_build_tools_does_not(audit, monkeypatch, tmp_path):
    lock = tmp_path / "package-lock.json"
    lock.write_text(
        json.dumps(
            {
                "packages": {
                    "": {"name": "x"},
                    "node_modules/shipped": {"version": "1.0.0"},
                    "node_modules/@scope/tool": {"version": "2.0.0", "dev": True},
                    "node_modules/@esbuild/other-os": {"version": "1.0.0", "optional": True},
                }
            }
        )
    )
    deprecated = {"versions": {"1.0.0": {"deprecated": "security: use 1.0.1"}}, "dist-tags": {"latest": "1.0.1"}}
    tool = {"versions": {"2.0.0": {"deprecated": "unmaintained"}}, "dist-tags": {"latest": "2.0.0"}}
    answers(
        audit,
        monkeypatch,
        {audit.NPM.format("shipped"): deprecated, audit.NPM.format("@scope%2Ftool"): tool},
    )
    findings = audit.audit_npm(lock)
    # the optional binary for another platform isn't installed, so it isn't audited
    assert [(f.name, f.shipped, f.deprecated) for f in findings] == [
        ("@scope/tool", False, "unmaintained"),
        ("shipped", True, "security: use 1.0.1"),
    ]
    assert audit.report([], findings) == 1
    assert audit.report([], [findings[0]]) == 0


def test_an_unreachable_registry_is_an_error_not_a_pass(audit, monkeypatch, capsys):
    def fail(url: str, accept: str = "application/json") -> Any:
        raise audit.RegistryError(f"{url}: timed out")

    monkeypatch.setattr(audit, "fetch_json", fail)
    assert audit.main(["--lock", str(SCRIPT)]) == 2
    assert "could not be read" in capsys.readouterr().err
