"""The store: models and revisions in an index, their bytes in a content-addressed blob store.

A model is stored as its graph — the ModelProto with every big tensor's bytes taken out
(wire.py) — plus each such tensor as a blob of its own, shared by every revision and model that
holds the same bytes. An edit stores a new graph and only the tensors it changed. Revision 0
of a split upload also keeps its skeleton (the uploaded bytes without the tensors' bytes), so
it downloads byte for byte as uploaded without a second copy of the weights.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import logging
import mmap
import os
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import onnx

from ..errors import NotFound, StoreUnavailable, StudioError
from . import wire
from .blobs import CHUNK, Blobs, BlobStore
from .card import card_of_bytes, card_of_model
from .index import SqlIndex, SqliteIndex
from .records import Edited, ModelRecord, Revision

log = logging.getLogger(__name__)

# blobs stored less than this long ago are never collected (besides those of uploads and edits
# under way, which the index lists): a request that read a revision's digests just before the
# revision was deleted may still open them
COLLECT_GRACE_SECONDS = 600.0
# an upload or edit still "under way" after this long was in a process that died (the intents of
# a process that died are dropped as soon as the collector sees it gone: index.py; this is the
# backstop for intents whose owner can't be told)
INTENT_EXPIRES_SECONDS = 24 * 3600.0
MAX_JOINED_SIZES = 4096  # edited revisions' sizes remembered in a process (~200 bytes each)


class Store:
    def __init__(self, index: SqlIndex, blobs: Blobs, where: str, split_min_bytes: int = wire.SPLIT_MIN_BYTES):
        self.index = index
        self.blobs = blobs
        self.split_min_bytes = split_min_bytes  # tensors this big or bigger are stored as blobs of their own
        self.where = where  # names this store (in-process caches keyed across stores)
        self._collector = ThreadPoolExecutor(1, thread_name_prefix="blob-collector")
        self._collect_queued = threading.Lock()  # held while a collection waits to start
        self._timer: threading.Timer | None = None  # the next collection, for blobs too fresh at the last
        self._timer_lock = threading.Lock()
        self._joined_sizes: dict[str, int] = {}  # graph digest -> its size with its tensors (model_size)

    @classmethod
    def in_folder(cls, data_dir: Path, split_min_bytes: int = wire.SPLIT_MIN_BYTES) -> Store:
        """The default pair: SQLite and a blob folder, both under data_dir."""
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        index = SqliteIndex(data_dir / "index.sqlite3")
        return cls(index, BlobStore(data_dir / "blobs"), str(data_dir.resolve()), split_min_bytes)

    # --- the index, as it is ----------------------------------------------------------
    def model(self, model_id: str) -> ModelRecord:
        return self.index.model(model_id)

    def list_models(self) -> list[ModelRecord]:
        return self.index.list_models()

    def delete_model(self, model_id: str) -> None:
        self.index.delete_model(model_id)

    def revision(self, model_id: str, rev: int | None = None) -> Revision:
        if rev is not None and not 0 <= rev < 2**63:  # no number an index can even hold (SQLite: OverflowError)
            self.index.model(model_id)  # an unknown model is said first
            raise NotFound("unknown_revision", f"model {model_id} has no revision {rev}")
        return self.index.revision(model_id, rev)

    def revisions(self, model_id: str) -> list[Revision]:
        return self.index.revisions(model_id)

    def models_with_revisions(self) -> list[tuple[ModelRecord, list[Revision]]]:
        """Every model, newest first, with its revisions, in two index queries: a model deleted
        between them is left out (listing the models while a teammate deletes one)."""
        records = self.index.list_models()
        by_model = self.index.all_revisions()
        return [(record, by_model[record.id]) for record in records if record.id in by_model]

    def card(self, revision: Revision) -> dict | None:
        """A revision's card; for one stored before cards (or before they named operators and
        metadata), made from its graph once and kept."""
        current = revision.card is not None and (not revision.card or "ops" in revision.card)
        if current or self.model(revision.model_id).kind != "model":
            return revision.card
        with self.blobs.open(revision.blob) as f, _mapped(f) as buf:
            card = card_of_bytes(buf) or {}  # {}: bytes the wire walk can't follow, not tried again
        self.index.set_card(revision.model_id, revision.rev, card)
        return card

    def set_runtime(self, model_id: str, rev: int, verdict: dict, invalid: str | None = None) -> None:
        self.index.set_runtime(model_id, rev, verdict, invalid)

    def update_checks(self, model_id: str, change: Callable[[dict], dict]) -> dict:
        return self.index.update_checks(model_id, change)

    def rename_model(self, model_id: str, name: str) -> None:
        self.index.rename(model_id, name)

    def undo(self, model_id: str, base: int | None = None, steps: int = 1) -> int:
        return self.index.undo(model_id, base, steps)

    def redo(self, model_id: str, base: int | None = None) -> int:
        return self.index.redo(model_id, base)

    def find_content(self, content: str) -> list[ModelRecord]:
        return self.index.find_content(content)

    # --- storing --------------------------------------------------------------------
    @contextlib.contextmanager
    def _intent(self) -> Iterator[None]:
        intent = self.index.begin_intent()
        try:
            yield
        finally:
            self.index.end_intent(intent)

    def create_model(
        self, name: str, data, external: dict | None = None, kind: str = "model", source: str = "binary"
    ) -> ModelRecord:
        """Store a model: `data` its bytes or a readable stream (stored without holding it in
        memory). `external` maps each external data location to its bytes, a readable stream or
        a Path (linked in place, not copied)."""
        with self._intent():
            ext = {loc: self._external_entry(content) for loc, content in (external or {}).items()}
            if kind == "model":
                with _mapped(data) as buf:
                    revision, content = self._put_model(buf)
                    revision["card"] = card_of_bytes(buf, contents=False) or {}  # the list reads the rest once
            else:
                digest = self._put_any(data)
                revision, content = {"blob": digest, "tensors": {}}, digest
            model_id = self.index.add_model(name, {**revision, "external": ext}, kind, source, content)
        return self.model(model_id)

    def _put_any(self, data) -> str:
        if isinstance(data, (bytes, bytearray, memoryview)):
            return self.blobs.put(data)
        return self.blobs.put_stream(data)

    def _put_model(self, buf) -> tuple[dict, str]:
        """(revision columns, content key) of a model's bytes, stored split; whole when the wire
        walk can't follow bytes protobuf accepted (they stay the model's, byte for byte)."""
        try:
            sp = wire.split(buf, self.blobs.put, self.split_min_bytes)
        except wire.WireError:
            digest = self.blobs.put(buf)
            return {"blob": digest, "tensors": {}}, digest
        if not sp.payloads:
            digest = self.blobs.put(buf)
            return {"blob": digest, "tensors": {}}, digest
        parts, cuts = wire.skeleton(buf, sp.payloads)
        skeleton = self.blobs.put_parts(parts)
        recipe = {"skeleton": skeleton, "skeleton_size": self.blobs.size(skeleton), "cuts": cuts}
        tensors = {digest: p.end - p.start for p, digest in sp.payloads}
        revision = {"blob": self.blobs.put(sp.graph), "tensors": tensors, "source": recipe}
        return revision, _recipe_key(recipe)

    def commit_revision(
        self,
        model_id: str,
        base: int,
        data: bytes,
        external: dict,
        ops: list,
        changes: list,
        runtime: dict | None = None,
        invalid: list | None = None,
        model: onnx.ModelProto | None = None,
        added: set[str] | None = None,
    ) -> int:
        """Store an edited graph as a new revision whose parent is `base`, if `base` is still
        the head. Big tensors the edit put in are stored as blobs; references the base did not
        hold (a hand-made external location naming a blob) stay references to nothing, but for
        `added`: blobs the edit itself stored (a tool's result streamed in).
        `model`: the parsed graph `data` serializes, when the caller has it (split in place,
        faster than walking the bytes)."""
        edited = Edited(data, external, ops, changes, runtime, invalid, model, added or set())
        return self.commit_revisions(model_id, base, [edited])[-1]

    def derive_model(self, name: str, base: Revision, edited: Edited) -> ModelRecord:
        """A new model whose revision 0 is a graph made from another model's revision (a part of
        a split): its tensors are the base's blobs, shared, not copied; its external data files
        the base's. Its ops and changes say how it was made."""
        with self._intent():
            record = self._edited_record(edited, base.tensors)
            model_id = self.index.add_model(name, record)
        return self.model(model_id)

    def commit_revisions(self, model_id: str, base: int, chain: list[Edited]) -> list[int]:
        """Store edited graphs as a chain of revisions on `base` (still the head), each the
        next one's parent: all of them or none (a recipe's batches)."""
        with self._intent():
            tensors = self.index.revision(model_id, base).tensors
            records = []
            for edited in chain:
                record = self._edited_record(edited, tensors)
                records.append(record)
                tensors = record["tensors"]
            return self.index.commit_revisions(model_id, base, records)

    def _edited_record(self, edited: Edited, base_tensors: dict[str, int]) -> dict:
        """An edited graph's revision columns, its big tensors stored as blobs."""
        new: set[str] = set(edited.added)

        def put(raw) -> str:
            digest = self.blobs.put(raw)
            new.add(digest)
            return digest

        if edited.model is not None:
            changed, refs = wire.split_model(edited.model, put, self.split_min_bytes)
            graph = edited.model.SerializeToString() if changed else edited.data
            card = card_of_model(edited.model)
        else:
            sp = wire.split(edited.data, put, self.split_min_bytes)
            graph, refs = sp.graph, sp.refs
            card = card_of_bytes(graph, contents=False) or {}
        return {
            "blob": self.blobs.put(graph),
            "external": edited.external,
            "tensors": {d: n for d, n in refs.items() if d in base_tensors or d in new},
            "ops": edited.ops,
            "changes": edited.changes,
            "runtime": edited.runtime,
            "invalid": edited.invalid,
            "card": card,
            "recipe": edited.recipe,
        }

    def attach_files(self, model_id: str, base: int, files: dict, describe: Callable[[dict], list[str]]) -> int:
        """A new revision on `base` (still the head) holding what `base` holds plus external data
        files (location -> readable stream): its graph, tensors and uploaded bytes are `base`'s.
        `describe(entries)` gives the revision's changes, or raises to store nothing (the blobs
        put meanwhile are collected)."""
        with self._intent():
            entries = {loc: self._external_entry(content) for loc, content in files.items()}
            changes = describe(entries)
            old = self.index.revision(model_id, base)
            revision = {
                "blob": old.blob,
                "external": {**old.external, **entries},
                "tensors": old.tensors,
                "source": old.source,  # the graph is the upload's still: it downloads byte for byte
                "ops": [],  # nothing to replay: a recipe's batch for it is empty
                "changes": changes,
                "invalid": old.invalid,
                "card": old.card,
            }
            return self.index.commit_revision(model_id, base, revision)

    def restore(self, model_id: str, base: int, rev: int, ops: list, changes: list) -> int:
        """Make what revision `rev` holds the head again, as a new revision on `base` (edits/
        recipe.py restore_op): its blobs are the ones `rev` references."""
        with self._intent():
            return self.index.restore(model_id, base, rev, ops, changes)

    def _external_entry(self, content):
        if isinstance(content, Path):
            return {"path": str(content.resolve()), "size": content.stat().st_size}
        return self._put_any(content)

    # --- reading --------------------------------------------------------------------
    def external_path(self, entry) -> Path:
        """Where an external data entry's bytes are: a blob, or a file linked in place."""
        if isinstance(entry, dict):
            return Path(entry["path"])
        return self.blobs.path(entry)

    def data_file_size(self, entry) -> int | None:
        """An external data entry's size (a blob's from the blob store, without fetching it);
        None for a file linked in place that is gone."""
        if isinstance(entry, dict):
            try:
                return Path(entry["path"]).stat().st_size
            except OSError:
                return None
        return self.blobs.size(entry)

    def data_files(self, revision: Revision) -> dict:
        """Every file a revision's tensors name, location -> entry (for external.ExternalFiles):
        its external data files and the tensor blobs its graph references."""
        files = dict(revision.external)
        files.update({wire.TENSOR_PREFIX + d: d for d in revision.tensors})
        return files

    def model_size(self, revision: Revision) -> int:
        """The revision's bytes as a model with its external data files: what it downloads as."""
        if revision.source:
            size = revision.source["skeleton_size"] + sum(c[2] for c in revision.source["cuts"])
        elif revision.tensors:
            size = self._joined_size(revision)
        else:
            size = self.blobs.size(revision.blob)
        # a linked file that is gone counts nothing: the checks say so
        return size + sum(self.data_file_size(entry) or 0 for entry in revision.external.values())

    def _joined_size(self, revision: Revision) -> int:
        """The graph with its tensors put back, counted once per reference: a tensor's bytes held
        twice (tied weights, a quantizer's equal constants) are downloaded twice, though stored
        once (a sum over the blobs said 9.4 MiB of a 26 MB download, QA17). Walking the graph
        costs ~20 ms per MB of it, so the answer is kept by the graph's digest (a revision's
        graph never changes): in this process, and in the store for the others."""
        self.blobs.size(revision.blob)  # the graph still there (a lost one: BlobMissing, "damaged")
        known = self._joined_sizes.get(revision.blob)
        if known is not None:
            return known
        key = f"joined-size/1/{revision.blob}"
        kept = self.derived(key)
        if kept is not None:
            size = int(kept)
        else:
            size = wire.segments_size(wire.join(self.blobs.get(revision.blob), revision.tensors))
            self.set_derived(key, str(size).encode(), revision.blob)
        if len(self._joined_sizes) >= MAX_JOINED_SIZES:
            self._joined_sizes.pop(next(iter(self._joined_sizes)))
        self._joined_sizes[revision.blob] = size
        return size

    def whole(self, revision: Revision) -> tuple[int, Iterator[bytes]]:
        """(size, chunks) of the revision as one .onnx, its tensors inside (external data files
        stay external): the uploaded bytes for revision 0, else the graph with each tensor
        reference replaced by the tensor's bytes — streamed, never held whole."""
        if revision.source:
            segments: list = wire.source_segments(revision.source)
        elif revision.tensors:
            segments = wire.join(self.blobs.get(revision.blob), revision.tensors)
        else:
            self.blobs.readable([revision.blob])
            return self.blobs.size(revision.blob), self.blobs.read_chunks(revision.blob)
        size = sum(_segment_size(s) for s in segments)
        return size, self._stream(segments)

    def whole_graph(self, graph: bytes, tensors: dict[str, int]) -> tuple[int, Iterator[bytes]]:
        """(size, chunks) of a graph that references the store's tensors (a revision's, changed:
        a run's extra outputs), as one .onnx with the tensors inside."""
        segments = wire.join(graph, tensors)
        return sum(_segment_size(s) for s in segments), self._stream(segments)

    def _stream(self, segments: list) -> Iterator[bytes]:
        """The segments' bytes; the blobs they read checked before the first (Blobs.readable)."""
        self.blobs.readable(s.digest for s in segments if isinstance(s, (wire.BlobRef, wire.SkeletonRange)))
        return self._streamed(segments)

    def _streamed(self, segments: list) -> Iterator[bytes]:
        for s in segments:
            if isinstance(s, wire.BlobRef):
                yield from self.blobs.read_chunks(s.digest)
            elif isinstance(s, wire.SkeletonRange):
                with self.blobs.open(s.digest) as f:
                    f.seek(s.start)
                    left = s.end - s.start
                    while left > 0:
                        block = f.read(min(CHUNK, left))
                        if not block:
                            raise StudioError("store_damaged", f"blob {s.digest} is shorter than recorded", 500)
                        left -= len(block)
                        yield block
            else:
                yield bytes(s)

    def whole_bytes(self, revision: Revision) -> bytes:
        """The revision as one .onnx, in memory (for what needs the model whole)."""
        return b"".join(self.whole(revision)[1])

    # --- derived data, by the content it comes from -----------------------------------------
    def derived(self, key: str) -> bytes | None:
        """Data derived from a blob (graph JSON, verdicts, inferred types, tensor stats) stored
        under `key` (kind/format/source digest/...), or None. Any worker, after any restart,
        finds what one computed."""
        digest = self.index.derived(key)
        if digest is None:
            return None
        try:
            return zlib.decompress(self.blobs.get(digest))
        except (FileNotFoundError, zlib.error):
            return None  # collected or damaged: computed again

    def has_derived(self, key: str) -> bool:
        return self.index.derived(key) is not None

    def set_derived(self, key: str, data: bytes, source: str) -> None:
        """Keep `data` derived from blob `source` (collected with it). Compressed: graph JSON
        shrinks ~10x, and level 1 costs ~1 ms per MB."""
        with self._intent():
            digest = self.blobs.put(zlib.compress(data, 1))
            self.index.set_derived(key, digest, source)

    # --- health -----------------------------------------------------------------------
    def reachable(self) -> list[str]:
        """What of the store can't be reached now (empty: all is well). Each ping is bounded in
        time (S3's: s3_blobs.PING_TIMEOUT_SECONDS; PostgreSQL's connect: pg_index.CONNECT_TIMEOUT_SECONDS)."""
        problems = []
        for what, part in (("index", self.index), ("blob store", self.blobs)):
            try:
                part.ping()
            except StoreUnavailable as exc:
                problems.append(f"{what}: {exc.reason}")  # the part is named already
            except Exception as exc:
                problems.append(f"{what}: {exc}")
        return problems

    # --- housekeeping -------------------------------------------------------------------
    def disk_usage(self, models: list[tuple[ModelRecord, list[Revision]]] | None = None) -> dict:
        """Bytes the store holds: per model (every blob its revisions need and the data derived
        from them, shared ones counted in each) and in total (each blob once). When the blob
        store can't be reached (the sizes are its, the total a listing of it), every figure is
        None: unknown, and the models list answers still. Its probe first: a hung S3 answers
        that in seconds, where the sizes' requests would each wait out their timeouts."""
        sizes: dict[str, int] = {}

        def size(d: str) -> int:
            if d not in sizes:
                try:
                    sizes[d] = self.blobs.size(d)
                except (FileNotFoundError, ValueError):
                    sizes[d] = 0
            return sizes[d]

        derived: dict[str, set[str]] = {}
        for digest, source in self.index.derived_blobs():
            derived.setdefault(source, set()).add(digest)
        held: dict[str, set[str]] = {}  # model -> the blobs it holds
        for record, revisions in self.models_with_revisions() if models is None else models:
            used: set[str] = set()
            for r in revisions:
                used |= r.blobs()
            held[record.id] = used | {d for source in list(used) for d in derived.get(source, ())}
        try:  # the index answered: only the blob store's sizes are left to ask
            self.blobs.ping()
            total = sum(size(d) for d in self.blobs.digests())  # first: S3's listing gives the sizes
            per_model = {model_id: sum(size(d) for d in used) for model_id, used in held.items()}
        except (StoreUnavailable, OSError):  # can't be reached (or its folder is gone)
            return {"models": dict.fromkeys(held), "total": None, "other": None}
        in_models = set().union(*held.values())
        # the rest: files uploaded for a tool or a run (calibration data, test data sets), and
        # blobs nothing holds any more, until the next collection
        return {"models": per_model, "total": total, "other": max(0, total - sum(size(d) for d in in_models))}

    def collect_soon(self) -> None:
        """Collect in the background (one collection at a time; asking while one waits to
        start adds nothing)."""
        if not self._collect_queued.acquire(blocking=False):
            return

        def run() -> None:
            self._collect_queued.release()
            try:
                done = self.collect()
            except Exception:  # the next one tries again; the operator hears of it
                root = getattr(self.blobs, "root", None)
                if root is None or Path(root).is_dir():  # not a store whose folder was removed under it
                    log.warning("collecting unused blobs failed", exc_info=True)
                return
            if done["spared"]:  # unused, yet too fresh to go: again once they are old enough
                self._again_after(COLLECT_GRACE_SECONDS + 1.0)

        self._collector.submit(run)

    def collect_after_grace(self) -> None:
        """One collection once blobs stored now that nothing references (a run's outputs kept
        for download) are past their grace: they don't pile up until the next delete."""
        self._again_after(COLLECT_GRACE_SECONDS + 1.0)

    def _again_after(self, seconds: float) -> None:
        """One collection `seconds` from now (a later ask replaces an earlier one's timer)."""
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(seconds, self.collect_soon)
            self._timer.daemon = True  # a process may end meanwhile: the next one starts by collecting
            self._timer.start()

    def collect(self, now: float | None = None) -> dict:
        """Remove the blobs no revision (or derived data of one) needs. Spared: blobs stored in
        the last COLLECT_GRACE_SECONDS and since the start of the oldest upload or edit under
        way (what it stored is not referenced yet). Answers {"removed", "bytes"}."""
        now = time.time() if now is None else now
        oldest = self.index.oldest_intent(now - INTENT_EXPIRES_SECONDS)
        cutoff = now - COLLECT_GRACE_SECONDS
        if oldest is not None:
            cutoff = min(cutoff, oldest - 1.0)
        used, derived = self.index.referenced()
        keep = used | derived
        removed = freed = spared = 0
        for digest in list(self.blobs.digests()):
            if digest in keep:
                continue
            try:
                if self.blobs.modified(digest) >= cutoff:
                    spared += 1
                    continue
                size = self.blobs.size(digest)
            except FileNotFoundError:
                continue
            self.blobs.remove(digest)
            removed += 1
            freed += size
        self.blobs.remove_strays(cutoff)
        return {"removed": removed, "bytes": freed, "spared": spared}


def _segment_size(s) -> int:
    if isinstance(s, wire.BlobRef):
        return s.size
    if isinstance(s, wire.SkeletonRange):
        return s.end - s.start
    return len(s)


def _recipe_key(recipe: dict) -> str:
    """The content key of a split upload: its skeleton and tensors name its bytes exactly."""
    return hashlib.sha256(json.dumps([recipe["skeleton"], recipe["cuts"]]).encode()).hexdigest()


@contextlib.contextmanager
def _mapped(data) -> Iterator:
    """A buffer over `data`: bytes as they are; a stream's file memory-mapped (a spooled
    upload is on disk), or copied to a temporary file first when it has none."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield data
        return
    try:
        fd = data.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    with contextlib.ExitStack() as stack:
        if fd is None:
            tmp = stack.enter_context(tempfile.TemporaryFile())
            while block := data.read(CHUNK):
                tmp.write(block)
            tmp.flush()
            fd = tmp.fileno()
        if os.fstat(fd).st_size == 0:
            yield b""
            return
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        stack.callback(_unmap, mm)
        view = memoryview(mm)
        try:
            yield view
        finally:
            view.release()


def _unmap(mm: mmap.mmap) -> None:
    """Close a map, or leave it to be unmapped with its last view: a slice of it can outlive the
    upload in a library's frames (an exception caught in a reference cycle) until the cycle
    collector runs, and closing under it would fail the upload that is already stored."""
    try:
        mm.close()
    except BufferError:
        gc.collect()
        with contextlib.suppress(BufferError):
            mm.close()
