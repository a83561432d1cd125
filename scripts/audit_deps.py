"""Dependency audit: known vulnerabilities in the installed Python packages, deprecations in npm's.

This is the audit the package registries we can reach allow. PyPI answers
`/pypi/<project>/json`: the project's latest release with the vulnerabilities known for it (PyPI's
feed of the PyPA advisory database and OSV). It does not answer `/pypi/<project>/<version>/json`
(what pip-audit asks), and OSV's API, ecosyste.ms and npm's audit endpoint are out of reach. So:

- an installed distribution at its project's latest release is audited against that list, and any
  vulnerability not withdrawn fails the audit;
- one behind its latest release (pinned by a dependent, or the latest needs a newer Python) can't
  be audited here; it is listed with the reason, so a reader sees what the audit did not cover;
- npm's registry carries no advisories, only deprecation notices: a library the page ships
  (package.json's `dependencies`, bundled into the wheel) that is deprecated at its locked version
  fails the audit; the build tools' deprecations are listed.

Run by `make audit` (part of `make test`); exits 1 on a finding, 2 when a registry can't be read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

PYPI = "https://pypi.org/pypi/{}/json"
NPM = "https://registry.npmjs.org/{}"
# npm's abbreviated package document: versions with their `deprecated` notice, without readmes
NPM_ABBREVIATED = "application/vnd.npm.install-v1+json"
ATTEMPTS = 4
TIMEOUT_SECONDS = 30
OWN_PROJECT = "onnx-studio"


class RegistryError(Exception):
    """A registry could not be read after retries: the audit can't say anything."""


def fetch_json(url: str, accept: str = "application/json") -> Any:
    for attempt in range(ATTEMPTS):
        try:
            request = urllib.request.Request(url, headers={"Accept": accept})
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            last: Exception = error
        except (OSError, ValueError) as error:
            last = error
        time.sleep(2**attempt)
    raise RegistryError(f"{url}: {last}")


@dataclass
class PythonFinding:
    name: str
    installed: str
    latest: str | None = None
    vulnerabilities: list[dict[str, Any]] = field(default_factory=list)
    unaudited_because: str | None = None


def installed_distributions() -> dict[str, str]:
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and canonicalize_name(name) != OWN_PROJECT:
            found[canonicalize_name(name)] = dist.version
    return found


def _python_allows(requires_python: str | None) -> bool:
    if not requires_python:
        return True
    try:
        return SpecifierSet(requires_python).contains(".".join(map(str, sys.version_info[:3])), prereleases=True)
    except InvalidSpecifier:
        return True


def audit_python_one(name: str, installed: str) -> PythonFinding:
    finding = PythonFinding(name, installed)
    document = fetch_json(PYPI.format(name))
    if document is None:
        finding.unaudited_because = "not on PyPI"
        return finding
    info = document["info"]
    finding.latest = info["version"]
    try:
        same = Version(installed) == Version(info["version"])
    except InvalidVersion:
        same = installed == info["version"]
    if not same:
        reason = "PyPI lists vulnerabilities for the latest release only"
        if not _python_allows(info.get("requires_python")):
            reason += f"; {info['version']} needs Python {info['requires_python']}"
        finding.unaudited_because = reason
        return finding
    finding.vulnerabilities = [v for v in document.get("vulnerabilities") or [] if not v.get("withdrawn")]
    return finding


def audit_python() -> list[PythonFinding]:
    distributions = installed_distributions()
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda item: audit_python_one(*item), sorted(distributions.items())))


@dataclass
class NpmFinding:
    name: str
    locked: str
    shipped: bool
    deprecated: str | None = None
    latest: str | None = None


def locked_npm_packages(lock_path: Path) -> list[tuple[str, str, bool]]:
    lock = json.loads(lock_path.read_text())
    packages = []
    for path, entry in lock.get("packages", {}).items():
        if not path or "version" not in entry:
            continue
        name = path.rsplit("node_modules/", 1)[-1]
        # esbuild's per-platform binaries are optional; only the one for this machine is installed
        if entry.get("optional") and not (lock_path.parent / path).exists():
            continue
        packages.append((name, entry["version"], not entry.get("dev", False)))
    return sorted(set(packages))


def audit_npm_one(name: str, locked: str, shipped: bool) -> NpmFinding:
    finding = NpmFinding(name, locked, shipped)
    document = fetch_json(NPM.format(name.replace("/", "%2F")), NPM_ABBREVIATED)
    if document is None:
        finding.deprecated = "not on npm's registry"
        return finding
    finding.latest = document.get("dist-tags", {}).get("latest")
    version = document.get("versions", {}).get(locked)
    if version is None:
        finding.deprecated = f"version {locked} is no longer on npm's registry"
    elif version.get("deprecated"):
        finding.deprecated = str(version["deprecated"])
    return finding


def audit_npm(lock_path: Path) -> list[NpmFinding]:
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda item: audit_npm_one(*item), locked_npm_packages(lock_path)))


def report(python: list[PythonFinding], npm: list[NpmFinding]) -> int:
    vulnerable = [f for f in python if f.vulnerabilities]
    unaudited = [f for f in python if f.unaudited_because]
    audited = len(python) - len(unaudited)
    print(f"Python: {audited} of {len(python)} installed distributions audited against PyPI's")
    print(f"  vulnerability list, {sum(len(f.vulnerabilities) for f in vulnerable)} known vulnerabilities")
    for f in vulnerable:
        for v in f.vulnerabilities:
            ids = ", ".join([v.get("id", "?"), *v.get("aliases", [])])
            fixed = ", ".join(v.get("fixed_in") or []) or "no fix yet"
            print(f"  VULNERABLE {f.name} {f.installed}: {ids} (fixed in {fixed})")
    for f in unaudited:
        latest = f" (latest {f.latest})" if f.latest else ""
        print(f"  not audited: {f.name} {f.installed}{latest}: {f.unaudited_because}")
    shipped_deprecated = [f for f in npm if f.shipped and f.deprecated]
    tools_deprecated = [f for f in npm if not f.shipped and f.deprecated]
    shipped = [f for f in npm if f.shipped]
    print(f"npm: {len(npm)} locked packages ({len(shipped)} shipped with the page or its build);")
    print("  npm's registry serves no advisories here, deprecations only")
    for f in shipped_deprecated:
        print(f"  DEPRECATED (shipped) {f.name} {f.locked}: {f.deprecated}")
    for f in tools_deprecated:
        print(f"  deprecated (build tool) {f.name} {f.locked}: {f.deprecated}")
    for f in shipped:
        if f.latest and f.latest != f.locked:
            print(f"  behind: {f.name} {f.locked} (latest {f.latest})")
    return 1 if vulnerable or shipped_deprecated else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, default=Path("package-lock.json"))
    args = parser.parse_args(argv)
    try:
        python = audit_python()
        npm = audit_npm(args.lock)
    except RegistryError as error:
        print(f"audit: a registry could not be read: {error}", file=sys.stderr)
        return 2
    return report(python, npm)


if __name__ == "__main__":
    sys.exit(main())
