"""The store `onnx-studio apply` replays in: a throwaway one of the server's own kind, beside the
output. The model goes in as an upload does — its big tensors out of the graph, into blobs; its
external data files linked in place — so each batch edits a graph without its weights, as the
server's edits do, and the result is written out streamed from those blobs and files. Editing the
model whole held it 7–10 times over for a batch (9.0 GB for a 0.88 GiB model, QA42), and could
not hold one past protobuf's 2 GiB at all. Run inside the app's context (documents.store())."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx

from .api.documents import external_reader, store
from .api.run import write_runnable
from .edits.apply import EditResult
from .edits.sources import TensorFiles
from .onnx_io import parse_model
from .onnx_io.limits import PROTOBUF_LIMIT
from .onnx_io.runtime_check import check_model
from .onnx_io.save import copy_weights, move_weights_out
from .store.records import Revision


@dataclass
class Runnable:
    """A revision as onnxruntime runs it: its graph, and write(folder) -> (folder/model.onnx, the
    files the worker maps by the locations the graph names) with its weights beside it."""

    model: onnx.ModelProto
    write: Callable[[Path], tuple[Path, dict]]
    size: int  # the graph's bytes and its weights': what a run of it may hold
    read: Callable[[str, int, int | None], bytes]  # its tensors kept outside, by location


class StoredModel:
    """The model being replayed on (edits/recipe.ReplayWeights): its head revision in the store."""

    def __init__(self, model_id: str, revision: Revision):
        self.model_id = model_id
        self.revision = revision
        self._tensors: TensorFiles | None = None

    @classmethod
    def put(cls, path: Path, external: Callable[[onnx.ModelProto], dict[str, Path]]) -> StoredModel:
        """The model file stored (StudioError when it is no ONNX model); `external(graph)`: the
        data files its graph names, to link in place."""
        s = store()
        with open(path, "rb") as f:
            record = s.create_model(path.name, f)  # memory-mapped, each big tensor a blob
        revision = s.revision(record.id, 0)
        files = external(parse_model(s.blobs.get(revision.blob), path.name))
        if files:
            rev = s.attach_files(record.id, 0, files, lambda entries: [])
            revision = s.revision(record.id, rev)
        return cls(record.id, revision)

    @property
    def graph(self) -> bytes:
        """The head's graph: its big tensors are references to the store's blobs and files."""
        return store().blobs.get(self.revision.blob)

    def read(self, location: str, offset: int, length: int | None) -> bytes:
        """Bytes of a tensor the head keeps outside its graph (the batch's new ones too)."""
        files = self._tensors.files if self._tensors is not None else external_reader(self.revision)
        return files.read(location, offset, length)

    def tensors(self) -> TensorFiles:
        s = store()
        self._tensors = TensorFiles(
            external_reader(self.revision), s.blobs.scratch(), s.blobs.put_parts, s.split_min_bytes
        )
        return self._tensors

    def keep(self, result: EditResult) -> bytes:
        s = store()
        added = self._tensors.added if self._tensors is not None else set()
        rev = s.commit_revision(
            self.model_id,
            self.revision.rev,
            result.data,
            self.revision.external,  # every file the base names: the writer copies only what is still read
            result.ops,
            result.changes,
            model=result.model,
            added=added,
        )
        self.revision = s.revision(self.model_id, rev)
        self._tensors = None
        return self.graph

    def check_runtime(self, model: onnx.ModelProto) -> dict:
        """onnxruntime's smoke run of a batch's result (or of the base), its small tensors read
        from where the store keeps them."""
        return check_model(model, self.read)

    def runnable(self) -> Runnable:
        graph = parse_model(self.graph)
        revision = self.revision

        def write(folder: Path) -> tuple[Path, dict]:
            copy = onnx.ModelProto()
            copy.CopyFrom(graph)  # pointed at the folder's files in place
            return write_runnable(copy, [revision], folder)

        return Runnable(graph, write, store().model_size(revision), external_reader(revision).read)

    def write(self, output: Path, outside: bool) -> str:
        """The head at `output`: as one file when the model held its weights inside (streamed,
        the very bytes the server's download gives), else with every tensor over 1 KiB in
        `<output>.data` beside it — and so too when one file would pass protobuf's 2 GiB."""
        if not outside:
            size, chunks = store().whole(self.revision)
            if size < PROTOBUF_LIMIT:
                with open(output, "wb") as f:
                    for chunk in chunks:
                        f.write(chunk)
                return str(output)
        location = f"{output.name}.data"
        model = parse_model(self.graph)
        files = external_reader(self.revision)
        moved, _ = move_weights_out(model, location, files)
        output.write_bytes(model.SerializeToString())
        data = output.parent / location
        if not moved:  # no tensor as big as that
            data.unlink(missing_ok=True)
            return str(output)
        with open(data, "wb") as f:
            copy_weights(moved, files, f)
        data.chmod(output.stat().st_mode & 0o777)  # readable as the .onnx is (QA42)
        why = "as the model kept them outside" if outside else "as one file would pass protobuf's 2 GiB"
        return f"{output} (its weights in {location} beside it, {why})"
