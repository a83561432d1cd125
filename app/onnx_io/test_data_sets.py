"""ONNX test data sets beside a model: the `test_data_set_N/` folders of onnx's backend tests
and of the model zoo's archives, each holding `input_K.pb` and `output_K.pb` (serialized
TensorProtos: the K-th input fed, the K-th output it must give)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypeVar

from ..errors import StudioError

T = TypeVar("T")
MAX_TENSOR_BYTES = 128 << 20  # one input_K.pb / output_K.pb read (into memory) from an upload or a folder
_MEMBER = re.compile(r"^(test_data_set_[^/]+)/(input|output)_(\d+)\.pb$")
_FOLDER = re.compile(r"^test_data_set_[^/]+/")


def split_test_data_sets(files: dict) -> tuple[dict, dict[str, dict]]:
    """(the files that are not test data, {set name: {"inputs": [reader, ...], "outputs": [...],
    "problem"}}) from {path relative to the model's folder: reader}, each side ordered by K. Other files inside a
    test data set's folder are neither (no tensor of the model names them). A set numbered
    with a gap, or without outputs, says so in its "problem" (it can't be a reference case)."""
    rest: dict = {}
    found: dict[str, dict[str, dict[int, object]]] = {}
    for path, reader in files.items():
        m = _MEMBER.match(path)
        if m:
            found.setdefault(m.group(1), {"input": {}, "output": {}})[m.group(2)][int(m.group(3))] = reader
        elif not _FOLDER.match(path):
            rest[path] = reader
    sets: dict[str, dict] = {}
    for name in sorted(found, key=_natural):
        sides = found[name]
        gaps = [
            f"{side}_{min(set(range(max(files))) - set(files))}.pb"
            for side, files in sides.items()
            if sorted(files) != list(range(len(files)))
        ]
        problem = (
            f"it lacks {' and '.join(gaps)} (its files are numbered with a gap)"
            if gaps
            else "it has no output_0.pb to hold the model to"
            if not sides["output"]
            else None
        )
        sets[name] = {
            "inputs": [sides["input"][k] for k in sorted(sides["input"])],
            "outputs": [sides["output"][k] for k in sorted(sides["output"])],
            "problem": problem,
        }
    return rest, sets


def _natural(name: str) -> tuple:
    """test_data_set_2 before test_data_set_10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def by_graph_names(named: list[tuple[str, T]], names: list[str]) -> dict[str, T]:
    """A test data set side's values ([(the name its tensor carries, value)], in K order) for the
    graph's inputs or outputs `names`: by those names when every one is the graph's, else by
    position (what onnx's backend test runner does)."""
    carried = {name for name, _ in named}
    if carried == set(names) and len(carried) == len(names):
        return dict(named)
    return {name: value for name, (_, value) in zip(names, named, strict=True)}


class FileMember:
    """A test data file on disk, read as an archive's member is (read_all with a limit)."""

    def __init__(self, path: Path):
        self.path = path

    def read_all(self, limit: int) -> bytes:
        with self.path.open("rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise StudioError("too_big", f"{self.path.name} is too big", 413)
        return data


def test_data_sets_beside(model_path: Path) -> dict[str, dict]:
    """The test data sets in the model file's folder (`onnx-studio path/model.onnx` of a model zoo
    or backend test folder), as split_test_data_sets gives them."""
    folder = model_path.parent
    files = {
        p.relative_to(folder).as_posix(): FileMember(p)
        for p in folder.glob("test_data_set_*/*.pb")
        if p.is_file() and not p.is_symlink()
    }
    return split_test_data_sets(files)[1]
