"""Loading stored revisions as ModelProtos, with caches keyed by content digest.

The caches hold only what can be recomputed from a blob, so any worker can serve any request.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import OrderedDict
from concurrent.futures import Future

import onnx
import orjson
from flask import current_app
from google.protobuf.message import Message

from ..edits.jsontypes import shown
from ..errors import StudioError
from ..onnx_io import offload
from ..onnx_io.external import ExternalFiles, missing_data
from ..onnx_io.light import light_copy
from ..onnx_io.load import parse_model_file
from ..onnx_io.text_fields import is_bytes_error, readable_strings
from ..store import Store
from . import derived


class LRU:
    """A bounded, thread-safe cache of what one process computed (by key, least recently used
    dropped); concurrent asks for one key share one computation."""

    def __init__(self, size: int):
        self.size = size
        self.items: OrderedDict = OrderedDict()
        self.building: dict = {}  # key -> Future of a make() under way
        self.lock = threading.Lock()

    def peek(self, key):
        with self.lock:
            return self.items.get(key)

    def __contains__(self, key) -> bool:
        with self.lock:
            return key in self.items

    def put(self, key, value) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)

    def get(self, key, make):
        """The cached value, or make() it; concurrent callers for one key share one make()."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            pending = self.building.get(key)
            if pending is None:
                pending = self.building[key] = Future()
                owner = True
            else:
                owner = False
        if not owner:
            return pending.result()
        try:
            value = make()
        except BaseException as exc:
            with self.lock:
                del self.building[key]
            pending.set_exception(exc)
            raise
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)
            del self.building[key]
        pending.set_result(value)
        return value


_models = LRU(4)  # digest -> parsed ModelProto (read-only: edits parse their own copy)
_verdicts = LRU(256)  # digest -> validation state
_inferred = LRU(4)  # digest -> model with inferred value_info (or None)


def make_readable() -> bool:
    """Decode the invalid UTF-8 string fields of every model the views hold (text_fields.py);
    True when any was found. Walking every model at load would cost ~8 µs a node on every big
    model; only the rare model with such bytes pays, once, when a view trips over them."""
    fixed = 0
    for cache in (_models, _inferred):
        with cache.lock:
            held = list(cache.items.values())
        fixed += sum(readable_strings(m) for m in held if isinstance(m, Message))
    return fixed > 0


def _json_ready(value):
    """`value`, after checking it holds no bytes (which a JSON answer would trip over later)."""
    try:
        orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError as exc:
        if is_bytes_error(exc):
            raise
    return value


def readable_retry(make):
    """make() (a JSON-ready value), once more after make_readable() when it failed on such bytes."""
    try:
        return _json_ready(make())
    except (TypeError, UnicodeError) as exc:
        if not is_bytes_error(exc) or not make_readable():
            raise
        return make()


def store() -> Store:
    return current_app.extensions["store"]


def revision_number(raw) -> int | None:
    """A revision number from a query: ASCII digits only (int() also takes " 1" and "１")."""
    if raw is None or raw == "":
        return None
    if not (isinstance(raw, str) and raw.isascii() and raw.isdigit() and len(raw) <= 20):
        raise StudioError("bad_revision", f"revision must be a whole number, got {shown(raw)}")
    return int(raw)


def load(model_id: str, rev: int | None = None):
    """(record, revision, model) for a model's head or a given revision."""
    s = store()
    record = s.model(model_id)
    if record.kind != "model":
        raise StudioError(
            "not_a_model",
            f"{record.name} is a {record.kind.replace('_', ' ')} file, not a model: "
            "it has a data view but no graph or edits",
        )
    revision = s.revision(model_id, rev)
    model = _models.get(revision.blob, lambda: parse_model_file(s.blobs.path(revision.blob)))
    return record, revision, model


def load_data_file(model_id: str):
    """(record, revision, parsed proto) for a stored non-model file (tensor, sequence, ...)."""
    from ..onnx_io.kinds import detect

    s = store()
    record = s.model(model_id)
    revision = s.revision(model_id)
    detected = _models.get(revision.blob, lambda: detect(s.blobs.get(revision.blob), record.name).message)
    return record, revision, detected


def _big_graph(model: onnx.ModelProto) -> bool:
    return len(model.graph.node) > current_app.config["INFER_INLINE_NODES"]


def _offloaded(digest: str, model: onnx.ModelProto) -> bool:
    """Big graphs and heavy weights are checked in the helper process (the checks hold the GIL).
    The size is the blob's: ModelProto.ByteSize() walks every weight (seconds on 1 GiB)."""
    return _big_graph(model) or store().blobs.size(digest) > OFFLOAD_BYTES


def verdict(digest: str, model: onnx.ModelProto) -> dict:
    """The validation state: onnx's checker and inference run in the helper process (offload.py),
    whatever the model's size; a model they crash on is invalid, with that said. Kept in the
    store by the graph's digest (derived.py)."""
    return _verdicts.get(
        digest,
        lambda: derived.kept(store(), "verdict", digest, lambda: _helper_verdict(digest), orjson.dumps, orjson.loads),
    )


def remember_verdict(digest: str, basic: dict, full: dict | None) -> None:
    """An edited graph's verdict from the checks its edit's gate ran (the basic and the full
    check, both passed): what validating it again would give, without the seconds that takes
    on a big graph (44k nodes: ~2 s) when the next edit asks for its base's verdict."""
    if not (basic.get("ok") and full and full.get("ok")):
        return
    value = {
        "ok": True,
        "message": basic.get("message", ""),
        "full": {"ok": True, "message": full.get("message", "")},
        "inference_errors": [],
    }
    _verdicts.put(digest, value)
    store().set_derived(derived.key("verdict", digest), orjson.dumps(value), digest)


def _helper_verdict(digest: str) -> dict:
    try:
        return offload.validate_file(str(store().blobs.path(digest)), digest)
    except StudioError as exc:
        if exc.code != "onnx_failed":
            raise
        return {"ok": False, "message": exc.message, "full": {"ok": False, "message": exc.message}}


OFFLOAD_BYTES = 64 * 2**20
PENDING = {"ok": None, "pending": True, "message": "validation is running; GET .../validation waits for it"}


def known_verdict(digest: str) -> dict | None:
    """The validation state when some request has computed it, else None (nothing is run: the
    models page lists every model)."""
    cached = _verdicts.peek(digest)
    if cached is not None:
        return cached
    data = store().derived(derived.key("verdict", digest))  # every verdict is kept there (derived.kept)
    return None if data is None else orjson.loads(data)


def verdict_if_cheap(digest: str, model: onnx.ModelProto, limit: int) -> dict:
    """The validation state when cached or quick to compute (small models), else PENDING."""
    if digest in _verdicts or derived.known(store(), "verdict", digest) or not _offloaded(digest, model):
        return verdict(digest, model)
    return PENDING


def inferred(digest: str, model: onnx.ModelProto) -> onnx.ModelProto | None:
    """The model after shape inference (in the helper process), or None when it can't run there."""

    def infer():
        try:
            return offload.infer_file(str(store().blobs.path(digest)), digest)
        except StudioError as exc:
            if exc.code != "onnx_failed":
                raise
            return None  # the graph is drawn without inferred types

    return _inferred.get(
        digest, lambda: derived.kept(store(), "inferred", digest, infer, _model_bytes, _model_from_bytes)
    )


def inferred_from_inputs(digest: str) -> onnx.ModelProto | None:
    """The model inferred with its outputs' own dim names left out (in the helper): shapes in the
    inputs' dims alone, for cost formulas; None when that can't run there. Kept like `inferred`:
    Costs at each new set of sizes asks for it again."""

    def infer():
        try:
            return offload.infer_file_from_inputs(str(store().blobs.path(digest)), digest)
        except StudioError as exc:
            if exc.code != "onnx_failed":
                raise
            return None

    return derived.kept(store(), "inferred_from_inputs", digest, infer, _model_bytes, _model_from_bytes)


def inferred_at_dims(digest: str, dims: dict[str, int]) -> onnx.ModelProto | None:
    """The model after shape inference with the given input dims fixed (in the helper), or None
    when that can't run there (the plain inference's shapes are used then)."""
    try:
        return offload.infer_file_at_dims(str(store().blobs.path(digest)), digest, dims)
    except StudioError as exc:
        if exc.code != "onnx_failed":
            raise
        return None


_function_types = LRU(4)  # digest -> function_types()
TypedAt = dict  # {"node", "name", "calls", "differ"}: the call a function body's types are as at


def function_types(digest: str, model: onnx.ModelProto) -> dict[str, tuple[TypedAt, list[onnx.ValueInfoProto]]]:
    """The types of the values in the model's functions' bodies, each as at one call of it
    (onnx_io/function_types.py, in the helper process, on the model after inference), by graph
    path ("fn[k]", or "fn[k]/n2/then_branch" within one): (the call, its value infos). A function
    missing: none of its calls has known input types (or none there is). Kept like `inferred`."""
    if not model.functions:
        return {}

    def compute() -> dict:
        typed = inferred(digest, model)
        try:
            return offload.function_types(typed if typed is not None else light_copy(model))
        except StudioError as exc:
            if exc.code != "onnx_failed":
                raise
            return {}  # bodies drawn untyped, as before inference

    def encode(value: dict) -> bytes:
        return orjson.dumps(
            {p: {**t, "value_info": base64.b64encode(t["value_info"]).decode()} for p, t in value.items()}
        )

    def decode(data: bytes) -> dict:
        return {p: {**t, "value_info": base64.b64decode(t["value_info"])} for p, t in orjson.loads(data).items()}

    def make() -> dict:
        raw = derived.kept(store(), "function_types", digest, compute, encode, decode)
        return {
            path: (
                {k: t[k] for k in ("node", "name", "calls", "differ")},
                list(onnx.GraphProto.FromString(t["value_info"]).value_info),
            )
            for path, t in raw.items()
        }

    return _function_types.get(digest, make)


def _model_bytes(model: onnx.ModelProto | None) -> bytes:
    return b"" if model is None else model.SerializeToString()


def _model_from_bytes(data: bytes) -> onnx.ModelProto | None:
    return onnx.ModelProto.FromString(data) if data else None  # what the helper inferred: ours


def inferred_if_cheap(digest: str, model: onnx.ModelProto, limit: int) -> tuple[onnx.ModelProto | None, bool]:
    """(inferred model, True) when it is cached or the model is small enough to infer now;
    (None, False) when inference should be asked for separately (GET .../types)."""
    if digest in _inferred or derived.known(store(), "inferred", digest) or len(model.graph.node) <= limit:
        return inferred(digest, model), True
    return None, False


def external_reader(revision) -> ExternalFiles:
    """The files the revision's tensors name, by location: its external data files (uploaded
    blobs or files linked in place) and the tensors the store took out of its graph."""
    s = store()
    return ExternalFiles(s.data_files(revision), s.external_path, s.data_file_size)


_missing = LRU(256)  # (data dir, graph digest, its data files) -> missing_data


def missing_weights(revision, model: onnx.ModelProto) -> list[dict]:
    """The external data the revision's tensors name that it lacks (external.missing_data). Kept
    in the store by the graph's digest and its files (a walk of every tensor: ~0.15 s on 44k
    nodes, not to be paid after each restart); not for a revision with files linked in place,
    which can go at any time."""
    key = _missing_key(revision)
    if key is None:
        return missing_data(model, external_reader(revision))

    def compute() -> list[dict]:
        return derived.kept(
            store(),
            "missing",
            revision.blob,
            lambda: missing_data(model, external_reader(revision)),
            _json_bytes,  # a hostile offset (10**30) is past orjson's 64-bit integers
            json.loads,
            key[2],
        )

    return _missing.get(key, compute)


def known_missing_weights(revision) -> int | None:
    """How many external data files the revision lacks, once some request has looked (a page
    opened it; the models list then says "weights missing"); None before: listing runs nothing."""
    key = _missing_key(revision)
    if key is None:
        return None
    data = store().derived(derived.key("missing", revision.blob, key[2]))
    if data is None:
        return None
    try:
        return len({m.get("location") for m in json.loads(data)})
    except (ValueError, AttributeError, TypeError):
        return None


def _json_bytes(value) -> bytes:
    return json.dumps(value).encode()


def edited_has_its_weights(base, edited) -> None:
    """An edit names no external data its base lacked (edits/apply.py refuses a stray location,
    and only files no tensor names are left out), so an edit of a base with all its weights has
    them too: said here, sparing the walk over every tensor its summary would take."""
    base_key, key = _missing_key(base), _missing_key(edited)
    if base_key is None or key is None or _missing.peek(base_key) != []:
        return
    _missing.put(key, [])
    store().set_derived(derived.key("missing", edited.blob, key[2]), _json_bytes([]), edited.blob)


def _missing_key(revision) -> tuple | None:
    """What missing_weights is kept by: (data dir, graph digest, a digest of its data files);
    None for a revision with files linked in place (which can go at any time)."""
    if any(isinstance(e, dict) for e in revision.external.values()):
        return None
    files = hashlib.sha256(orjson.dumps(sorted(revision.external.items()))).hexdigest()[:16]
    return (store().where, revision.blob, files)


_tensor_stats = LRU(512)  # (digest, tensor ref) -> stats over the whole tensor
_graph_json = LRU(8)  # (digest, path, with types) -> serialized graph JSON bytes


def graph_json(revision, model: onnx.ModelProto, path: str, infer_limit: int) -> bytes:
    """The graph JSON of one graph as bytes, cached by content: a 40k-node view takes a second
    or two to build and is asked for again on every page load."""

    from ..views import graph_view

    typed, ready = inferred_if_cheap(revision.blob, model, infer_limit)

    def build() -> bytes:
        out = graph_view(model, path, typed)
        out["inferred_types"] = "included" if ready else "deferred"
        return orjson.dumps(out)

    def kept() -> bytes:
        extra = f"{int(ready)}:{path}"
        return derived.kept(store(), "graph", revision.blob, build, bytes, bytes, extra)

    # kept without the revision number: the same graph can be several models' revisions
    data = _graph_json.get((revision.blob, path, ready), kept)
    return b'{"revision":%d,' % revision.rev + data[1:]


_search_indexes = LRU(4)  # digest -> views.search.SearchIndex


def search_index(revision, model: onnx.ModelProto):
    """The search index of a revision, built once (pure Python over the parsed model: a 44k-node
    model takes a fraction of a second) and shared by every search of that revision."""
    from ..views.search import SearchIndex

    return _search_indexes.get(revision.blob, lambda: SearchIndex(model))


# a model this small has its summary and main graph JSON written into its page (web/__init__.py)
EMBED_MAX_NODES = 1000


def page_ready(model_id: str) -> None:
    """After an upload: a small model's main graph JSON built now (kept as a derived blob), so
    the page about to be opened is answered at once (cold: ~20 ms sooner); big ones warm up in
    the background once their summary is asked for. A failure here is the page's to report."""
    try:
        _, revision, model = load(model_id)
        if len(model.graph.node) <= EMBED_MAX_NODES:
            graph_json(revision, model, "", current_app.config["INFER_INLINE_NODES"])
    except Exception:  # the page asks again and shows what is wrong
        pass


def warm_up(app, model_id: str) -> None:
    """Build a model's main graph JSON, checks, inferred types and search index in the
    background, so the page the person is about to open finds them ready (after an upload, and
    for a big model whose checks are pending when its summary is asked for)."""
    import threading

    def run():
        with app.app_context():
            try:
                _, revision, model = load(model_id)
                limit = app.config["INFER_INLINE_NODES"]
                graph_json(revision, model, "", limit)  # without inferred types, if they take long
                verdict(revision.blob, model)
                from .runtime import runtime_verdict  # it builds on this module

                runtime_verdict(revision, model, wait=True)  # onnxruntime's smoke run, kept on the row
                inferred(revision.blob, model)
                graph_json(revision, model, "", limit)  # with them, as the next page load asks
                search_index(revision, model).read_notes()  # Find answers at once, its notes too
            except Exception:  # a warm-up failure only costs the page its head start
                pass

    threading.Thread(target=run, name=f"warm-{model_id}", daemon=True).start()


def cached_stats(digest: str, ref: str):
    """For tensor_preview: stats of one tensor of one revision, computed once."""

    def stats(compute):
        return derived.kept(store(), "stats", digest, compute, orjson.dumps, orjson.loads, ref)

    return lambda compute: _tensor_stats.get((digest, ref), lambda: stats(compute))
