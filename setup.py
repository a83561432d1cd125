"""Setuptools hooks; the rest of the configuration is in pyproject.toml. The front end (esbuild
bundle, npm libraries) is built into app/static before an sdist or a wheel collects the package's
files: scripts/build_frontend.py, a no-op when the built files match the sources, as in an sdist
(which is why a wheel builds from one with no node)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent


def build_frontend() -> None:
    spec = importlib.util.spec_from_file_location("build_frontend", HERE / "scripts" / "build_frontend.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        module.ensure(HERE)
    except module.FrontendError as exc:
        raise SystemExit(f"error: cannot build ONNX Studio's front end: {exc}") from None


class BuildPy(build_py):
    def run(self):
        # an editable install serves the tree itself, which `make bundle` builds
        if not getattr(self, "editable_mode", False):
            build_frontend()
            self.__dict__.pop("data_files", None)  # collected again, built files included
        super().run()


class SDist(sdist):
    def run(self):
        build_frontend()
        super().run()


setup(cmdclass={"build_py": BuildPy, "sdist": SDist})
