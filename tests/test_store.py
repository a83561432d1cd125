"""Revisions share their weights (issue 13): a model is stored as its graph plus its big tensors
as content-addressed blobs; an edit stores a new graph and only the tensors it changed;
revision 0 downloads byte for byte as uploaded; what no revision needs is collected, never what
one does or what an upload or edit under way is about to reference."""

from __future__ import annotations

import io
import random
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from testkit import upload

from app.onnx_io.external import TENSOR_PREFIX
from app.store import wire
from app.store.blobs import remove_older
from app.store.store import COLLECT_GRACE_SECONDS


def weighty_model(seed: int = 0, width: int = 256, layers: int = 4) -> onnx.ModelProto:
    """MatMul + Add + Relu layers with float weights (`width`² floats each, 256 KiB at 256),
    a small shape tensor kept in the graph, and a Constant node holding a big tensor."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x = "x"
    for i in range(layers):
        w = numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32), f"w{i}")
        b = numpy_helper.from_array(rng.standard_normal(width).astype(np.float32), f"b{i}")
        inits += [w, b]
        nodes += [
            helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"matmul{i}"),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}"),
            helper.make_node("LeakyRelu", [f"a{i}"], [f"y{i}"], name=f"act{i}", alpha=0.1),
        ]
        x = f"y{i}"
    big = numpy_helper.from_array(rng.standard_normal((4, width)).astype(np.float32), "bias_table")
    nodes.append(helper.make_node("Constant", [], ["table"], name="table", value=big))
    nodes.append(helper.make_node("ReduceSum", ["table"], ["table_sum"], name="table_sum", keepdims=0))
    nodes.append(helper.make_node("Add", [x, "table_sum"], ["y"], name="out"))
    graph = helper.make_graph(
        nodes,
        "weighty",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="studio-tests")


def store_of(app):
    return app.extensions["store"]


def revision_blobs(store, model_id: str) -> set[str]:
    return set().union(*(r.blobs() for r in store.revisions(model_id)))


def download(client, mid: str, rev: int | None = None, layout: str | None = None) -> bytes:
    q = {} if rev is None else {"revision": rev}
    if layout:
        q["layout"] = layout
    r = client.get(f"/api/models/{mid}/download", query_string=q)
    assert r.status_code == 200, r.data[:300]
    return r.data


def test_a_model_is_its_graph_plus_shared_tensor_blobs(app, client):
    model = weighty_model()
    data = model.SerializeToString()
    mid = upload(client, data).get_json()["id"]
    s = store_of(app)
    rev = s.revision(mid)
    # every float weight of 4 KiB or more is a blob of its own (the Constant's too); the
    # biases (1 KiB) stay in the graph
    weights = [t for t in model.graph.initializer if len(t.raw_data) >= wire.SPLIT_MIN_BYTES]
    assert len(rev.tensors) == len(weights) + 1
    assert s.blobs.size(rev.blob) < 0.05 * len(data)
    graph = onnx.load_from_string(s.blobs.get(rev.blob))
    refs = [t for t in graph.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    assert {e.value for t in refs for e in t.external_data if e.key == "location"} == {
        TENSOR_PREFIX + d for d in rev.tensors if d != _digest_of_constant(model)
    }
    # revision 0 downloads byte for byte as uploaded, and as the same size the summary says
    assert download(client, mid) == data
    assert client.get(f"/api/models/{mid}").get_json()["size"] == len(data)
    # the tensors' values read through the references
    r = client.get(f"/api/models/{mid}/npy/w2")
    assert r.status_code == 200, r.get_json()
    want = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "w2"))
    assert np.array_equal(np.load(io.BytesIO(r.data)), want)


def _with_groups(message: bytes) -> bytes:
    """`message` with an unknown field of the group wire type (proto2's groups: protobuf keeps
    it) holding a nested group, before and after its own fields."""
    tag = wire.encode_varint
    group = tag(99 << 3 | 3) + tag(1 << 3) + tag(5) + tag(7 << 3 | 3) + tag(2 << 3 | 5) + b"\0" * 4
    group += tag(7 << 3 | 4) + tag(99 << 3 | 4)
    return group + message + group


def test_unknown_group_fields_are_kept_and_the_tensors_still_split(app, client):
    """A mutation fuzz campaign found a model protobuf accepts (an unknown field of the group
    wire type) whose upload answered 500: the wire walk knew no groups. It skips them now, and
    a model it can't walk is stored whole rather than refused."""
    model = weighty_model()
    graph = _with_groups(model.graph.SerializeToString())
    outer = onnx.ModelProto()
    outer.CopyFrom(model)
    outer.ClearField("graph")
    graph_field = wire.encode_varint(7 << 3 | 2) + wire.encode_varint(len(graph)) + graph
    data = _with_groups(outer.SerializeToString() + graph_field)
    parsed = onnx.load_from_string(data)  # protobuf takes it: the groups are unknown fields
    assert len(parsed.graph.node) == len(model.graph.node)
    r = upload(client, data)
    assert r.status_code == 201, r.get_json()
    mid = r.get_json()["id"]
    assert len(store_of(app).revision(mid).tensors) == 5  # the 4 weights and the Constant's
    assert download(client, mid) == data  # the groups and all
    assert client.get(f"/api/models/{mid}/graph").status_code == 200


def _unpacked_ints_model(count: int) -> bytes:
    """A model with a 64×64 float weight (16 KiB) and an initializer of `count` int64s written
    unpacked (a tag per value, as old writers did: protobuf reads them)."""
    tag = wire.encode_varint
    ints = b"".join(tag(7 << 3) + tag(v) for v in range(count))  # TensorProto.int64_data = 7
    head = onnx.TensorProto(name="ids", data_type=TensorProto.INT64, dims=[count]).SerializeToString()
    tensor = head + ints
    model = weighty_model(layers=1, width=64)
    # GraphProto.initializer = 5: appended to the graph's bytes, it is the last initializer
    graph = model.graph.SerializeToString() + tag(5 << 3 | 2) + tag(len(tensor)) + tensor
    model.ClearField("graph")
    return model.SerializeToString() + tag(7 << 3 | 2) + tag(len(graph)) + graph


def test_unpacked_repeated_scalars_are_walked_as_one_run(app, client, monkeypatch):
    """2M int64s written unpacked are 2M fields: the wire walk took 3.3 s of the server's GIL on
    them (another client waited ~0.8 s); runs of one scalar field are skipped whole now, and the
    bytes still split and join back exactly."""
    data = _unpacked_ints_model(1_000_000)
    parsed = onnx.load_from_string(data)
    assert list(parsed.graph.initializer[-1].int64_data[:3]) == [0, 1, 2]
    blobs: dict[str, bytes] = {}

    def put(b) -> str:
        import hashlib

        digest = hashlib.sha256(bytes(b)).hexdigest()
        blobs[digest] = bytes(b)
        return digest

    # the walk's fields counted, not timed (a busy machine): the run is one field, not a million
    walked = 0
    real_fields = wire._fields

    def counted(*args):
        nonlocal walked
        for f in real_fields(*args):
            walked += 1
            yield f

    monkeypatch.setattr(wire, "_fields", counted)
    sp = wire.split(data, put)
    monkeypatch.undo()
    assert 0 < walked < 1_000, walked
    assert len(sp.payloads) == 1  # the 64×64 weight
    whole = b"".join(
        bytes(blobs[s.digest]) if isinstance(s, wire.BlobRef) else bytes(s) for s in wire.join(sp.graph, sp.refs)
    )
    assert onnx.load_from_string(whole) == parsed
    mid = upload(client, data).get_json()["id"]
    assert download(client, mid) == data


def test_bytes_the_wire_walk_cant_follow_are_stored_whole(app, monkeypatch):
    def refuse(*args, **kwargs):
        raise wire.WireError("unsupported wire type 6")

    monkeypatch.setattr(wire, "split", refuse)
    data = weighty_model().SerializeToString()
    s = store_of(app)
    record = s.create_model("m.onnx", data)
    rev = s.revision(record.id)
    assert rev.tensors == {} and s.blobs.get(rev.blob) == data


def _digest_of_constant(model: onnx.ModelProto) -> str:
    import hashlib

    node = next(n for n in model.graph.node if n.op_type == "Constant")
    return hashlib.sha256(node.attribute[0].t.raw_data).hexdigest()


def test_an_attribute_edit_stores_only_a_new_graph(app, client):
    model = weighty_model(layers=6)
    data = model.SerializeToString()
    mid = upload(client, data).get_json()["id"]
    s = store_of(app)
    before = s.disk_usage()["total"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "act3", "name": "alpha", "value": 0.25}]},
    )
    assert r.status_code == 200, r.get_json()
    grown = s.disk_usage()["total"] - before
    assert 0 < grown < 0.01 * len(data), grown
    assert s.revision(mid, 1).tensors == s.revision(mid, 0).tensors
    # the edited revision downloads as the model the edit made: the same proto, serialized
    # as protobuf serializes it
    expected = onnx.ModelProto.FromString(data)
    next(a for n in expected.graph.node if n.name == "act3" for a in n.attribute).f = 0.25
    got = download(client, mid)
    assert onnx.ModelProto.FromString(got) == expected
    assert got == expected.SerializeToString()
    assert download(client, mid, layout="embedded") == got
    # revision 0 is still the upload, byte for byte; undo/redo move between the two
    assert download(client, mid, 0) == data
    assert client.post(f"/api/models/{mid}/undo").status_code == 200
    assert download(client, mid) == data
    assert client.post(f"/api/models/{mid}/redo").status_code == 200
    assert download(client, mid) == got


def test_an_edit_that_changes_a_tensor_stores_that_tensor_only(app, client):
    model = weighty_model()
    data = model.SerializeToString()
    mid = upload(client, data).get_json()["id"]
    s = store_of(app)
    new = np.full((256, 256), 0.5, np.float32)
    buf = io.BytesIO()
    np.save(buf, new)
    blob = client.post("/api/blobs", data={"file": (io.BytesIO(buf.getvalue()), "w1.npy")}).get_json()["blob"]
    before = s.revision(mid, 0).tensors
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_initializer", "name": "w1", "value": {"npy": blob}}]},
    )
    assert r.status_code == 200, r.get_json()
    after = s.revision(mid, 1).tensors
    assert len(set(after) - set(before)) == 1 and len(set(before) - set(after)) == 1
    got = onnx.ModelProto.FromString(download(client, mid))
    assert np.array_equal(numpy_helper.to_array(next(t for t in got.graph.initializer if t.name == "w1")), new)
    onnx.checker.check_model(got, full_check=True)


def test_the_same_file_uploaded_twice_is_stored_once_and_offered(app, client):
    data = weighty_model(seed=3).SerializeToString()
    first = upload(client, data, "a.onnx").get_json()
    s = store_of(app)
    total = s.disk_usage()["total"]
    second = upload(client, data, "b.onnx").get_json()
    assert second["id"] != first["id"]
    assert [d["id"] for d in second["duplicates"]] == [first["id"]]
    assert "duplicates" not in first
    assert s.disk_usage()["total"] == total  # the second entry costs no blob
    listed = client.get("/api/models").get_json()
    assert listed["disk_bytes"] == total
    assert {m["id"]: m["disk_bytes"] for m in listed["models"]} == {first["id"]: total, second["id"]: total}
    assert listed["other_bytes"] == 0
    # a file uploaded for a tool (calibration data) is on disk, no model's: said apart
    buf = io.BytesIO()
    np.save(buf, np.arange(1000, dtype=np.float32))
    blob = client.post("/api/blobs", data={"file": (io.BytesIO(buf.getvalue()), "c.npy")})
    assert blob.status_code in (200, 201), blob.get_json()
    listed = client.get("/api/models").get_json()
    assert listed["other_bytes"] > 0 and listed["disk_bytes"] == total + listed["other_bytes"]


def test_a_hand_made_reference_reads_nothing_of_another_model(app, client):
    """A model whose tensor names another model's tensor blob as its external location gets
    no bytes from it: only the references the store made for a revision resolve."""
    victim = upload(client, weighty_model(seed=7).SerializeToString()).get_json()["id"]
    digest = next(iter(store_of(app).revision(victim).tensors))
    model = weighty_model(seed=8, layers=1)
    t = model.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value=TENSOR_PREFIX + digest)
    t.external_data.add(key="length", value=str(256 * 256 * 4))
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    assert store_of(app).revision(mid).tensors.keys().isdisjoint({digest})
    r = client.get(f"/api/models/{mid}/tensors/{t.name}")
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "external_data_missing"
    r = client.get(f"/api/models/{mid}/download", query_string={"layout": "embedded"})
    assert r.status_code == 422
    # nor through an edit that writes such a reference into the graph
    r = client.post(
        f"/api/models/{victim}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "act0", "name": "alpha", "value": 0.5}]},
    )
    assert r.status_code == 200


def test_deleting_a_model_collects_what_only_it_used(app, client):
    s = store_of(app)
    keep = upload(client, weighty_model(seed=1).SerializeToString()).get_json()["id"]
    gone = upload(client, weighty_model(seed=2).SerializeToString()).get_json()["id"]
    shared_model = weighty_model(seed=2)
    shared_model.graph.node[2].attribute[0].f = 0.3  # the same weights as `gone`, another graph
    shared = upload(client, shared_model.SerializeToString()).get_json()["id"]
    only_gone = revision_blobs(s, gone) - revision_blobs(s, shared) - revision_blobs(s, keep)
    assert only_gone and revision_blobs(s, gone) & revision_blobs(s, shared)
    # and the data derived from those only (an upload builds a small model's graph JSON); a
    # derived blob whose bytes another entry also has stays
    derived = s.index.derived_blobs()
    kept_derived = {d for d, source in derived if source not in only_gone}
    only_gone |= {d for d, source in derived if source in only_gone} - kept_derived
    assert client.delete(f"/api/models/{gone}").status_code == 204
    result = s.collect(now=time.time() + COLLECT_GRACE_SECONDS + 1)
    assert result["removed"] == len(only_gone)
    assert not any(s.blobs.exists(d) for d in only_gone)
    for mid in (keep, shared):
        assert all(s.blobs.exists(d) for d in revision_blobs(s, mid))
        onnx.checker.check_model(onnx.ModelProto.FromString(download(client, mid)), full_check=True)
    # within the grace period nothing goes (a request may still be reading a deleted model)
    third = upload(client, weighty_model(seed=5).SerializeToString()).get_json()["id"]
    blobs = revision_blobs(s, third)
    client.delete(f"/api/models/{third}")
    assert s.collect()["removed"] == 0
    assert all(s.blobs.exists(d) for d in blobs)


@pytest.mark.parametrize("seed", range(3))
def test_collection_never_removes_a_referenced_blob(app, seed):
    """Uploads, edits and deletes from several threads while a collector with no grace period
    runs over and over: every revision left is whole, and reads back as it was stored."""
    s = store_of(app)
    base_models = [weighty_model(seed=k, width=64, layers=2) for k in range(3)]
    expected: dict[tuple[str, int], bytes] = {}
    lock = threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []

    def uploader(k: int) -> None:
        r = random.Random(seed * 100 + k)
        for _ in range(6):
            m = onnx.ModelProto()
            m.CopyFrom(base_models[r.randrange(3)])
            m.graph.node[2].attribute[0].f = r.random()
            data = m.SerializeToString()
            record = s.create_model("m.onnx", data)
            with lock:
                expected[(record.id, 0)] = data

    def editor(k: int) -> None:
        r = random.Random(seed * 200 + k)
        for _ in range(8):
            with lock:
                keys = [key for key in expected if key[1] == 0]
            if not keys:
                time.sleep(0.01)
                continue
            mid, _ = r.choice(keys)
            try:
                record = s.model(mid)
                graph = onnx.ModelProto.FromString(s.blobs.get(s.revision(mid, record.head).blob))
            except Exception:
                continue  # deleted meanwhile
            with lock:
                whole = expected.get((mid, record.head))
            if whole is None:
                continue
            new = numpy_helper.from_array(np.full((64, 64), r.random(), np.float32), "w0")  # a new tensor blob
            graph.graph.initializer[0].CopyFrom(new)  # the graph: the other weights stay references
            model = onnx.ModelProto.FromString(whole)
            model.graph.initializer[0].CopyFrom(new)  # the model it stands for
            try:
                rev = s.commit_revision(mid, record.head, graph.SerializeToString(), {}, [], [])
            except Exception:
                continue  # deleted or moved meanwhile
            with lock:
                if (mid, 0) in expected:  # not deleted meanwhile (the deleter drops its keys after)
                    expected[(mid, rev)] = model.SerializeToString()

    def deleter() -> None:
        r = random.Random(seed * 300)
        for _ in range(4):
            time.sleep(0.05)
            with lock:
                ids = sorted({key[0] for key in expected})
            if ids:
                victim = r.choice(ids)
                s.delete_model(victim)
                with lock:
                    for key in [key for key in expected if key[0] == victim]:
                        del expected[key]

    def collector() -> None:
        while not stop.is_set():
            s.collect(now=time.time() + COLLECT_GRACE_SECONDS)  # no grace: only intents protect

    def guarded(fn, *args):
        def run():
            try:
                fn(*args)
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        return threading.Thread(target=run)

    workers = [guarded(uploader, k) for k in range(2)] + [guarded(editor, k) for k in range(2)] + [guarded(deleter)]
    sweeper = guarded(collector)
    sweeper.start()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    sweeper.join()
    assert not errors, errors
    s.collect(now=time.time() + COLLECT_GRACE_SECONDS)
    assert expected
    for (mid, rev), data in expected.items():
        revision = s.revision(mid, rev)
        assert all(s.blobs.exists(d) for d in revision.blobs()), (mid, rev)
        assert s.whole_bytes(revision) == data  # byte for byte: the upload, or as protobuf writes it


def _ok(response) -> dict:
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_derived_data_are_kept_by_content_across_a_restart(tmp_path, monkeypatch):
    """Graph JSON, verdicts, inferred types and tensor stats computed once are found again by
    another process (here: a new app on the same folder, the in-memory caches emptied)."""
    from app import create_app, views
    from app.api import documents
    from app.onnx_io import offload

    config = {"DATA_DIR": str(tmp_path / "data"), "TESTING": True}
    caches = (documents._graph_json, documents._verdicts, documents._inferred, documents._tensor_stats)
    for cache in caches:  # the process's caches are keyed by content: another test's model may be there
        cache.items.clear()
    first = create_app(config).test_client()
    mid = upload(first, weighty_model(seed=11).SerializeToString()).get_json()["id"]
    answers = {
        url: _ok(first.get(url))
        for url in (
            f"/api/models/{mid}/graph?path=",
            f"/api/models/{mid}/validation",
            f"/api/models/{mid}/types?path=",
            f"/api/models/{mid}/tensors/w1",
        )
    }
    for cache in caches:
        cache.items.clear()

    def refuse(*_args, **_kwargs):
        raise AssertionError("derived again instead of read from the store")

    monkeypatch.setattr(views, "graph_view", refuse)
    monkeypatch.setattr(offload, "validate_file", refuse)
    monkeypatch.setattr(offload, "infer_file", refuse)
    monkeypatch.setattr("app.views.tensors.array_stats", refuse)
    second = create_app(config).test_client()
    for url, answer in answers.items():
        r = second.get(url)
        assert r.status_code == 200, (url, r.get_json())
        got = r.get_json()
        if url.endswith("/validation"):
            got.pop("runtime", None), answer.pop("runtime", None)
        assert got == answer, url


def test_an_edits_verdict_is_remembered_as_validation_would_give_it(app, client):
    """The gate's checks of an edited graph become its verdict (no second validation when the
    next edit asks for its base's): the same answer the helper's validation gives."""
    from app.api import documents

    mid = upload(client, weighty_model(seed=4).SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "act1", "name": "alpha", "value": 0.2}]},
    )
    assert r.status_code == 200, r.get_json()
    with app.app_context():
        digest = store_of(app).revision(mid, 1).blob
        remembered = documents._verdicts.peek(digest)
        assert remembered is not None
        assert remembered == documents._helper_verdict(digest)


def test_an_edited_revision_downloads_with_external_data(app, client, tmp_path):
    """layout=external: every tensor over 1 KiB in one .data file next to the .onnx, copied
    from the blobs (streamed into the zip); onnx loads it back as the same model."""
    import zipfile

    model = weighty_model(seed=9)
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "act0", "name": "alpha", "value": 0.3}]},
    )
    assert r.status_code == 200, r.get_json()
    data = download(client, mid, layout="external")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert sorted(z.namelist()) == ["model.r1.data", "model.r1.onnx"]
        z.extractall(tmp_path)
    got = onnx.load(str(tmp_path / "model.r1.onnx"))
    stored = onnx.load(str(tmp_path / "model.r1.onnx"), load_external_data=False)
    moved = [t for t in stored.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    assert {t.name for t in moved} == {t.name for t in model.graph.initializer if len(t.raw_data) > 1024}
    expected = onnx.ModelProto.FromString(model.SerializeToString())
    next(a for n in expected.graph.node if n.name == "act0" for a in n.attribute).f = 0.3
    for t in expected.graph.initializer:
        want = numpy_helper.to_array(t)
        assert np.array_equal(numpy_helper.to_array(next(g for g in got.graph.initializer if g.name == t.name)), want)
    const = next(n for n in got.graph.node if n.op_type == "Constant").attribute[0].t
    want = numpy_helper.to_array(next(n for n in expected.graph.node if n.op_type == "Constant").attribute[0].t)
    assert np.array_equal(numpy_helper.to_array(const), want)
    onnx.checker.check_model(got, full_check=True)


def test_a_file_written_at_the_cutoff_is_not_older_than_it(tmp_path):
    """File times come from the kernel's coarse clock, behind time.time(): a put's temp file
    made as a collector takes its cutoff must not count as older than that cutoff."""
    written = tmp_path / ".tmp-put"
    written.write_bytes(b"a put under way")
    assert remove_older([written], time.time()) == 0 and written.exists()
    assert remove_older([written], time.time() + 1) == 1 and not written.exists()


def test_a_killed_runs_scratch_folder_is_removed_with_its_links(tmp_path):
    """A run hard-links blobs into a scratch folder; a process killed mid-run leaves it, and its
    links would keep removed blobs' bytes on disk: the collector's remove_strays takes scratch
    folders well past its cutoff, never one a run may still use."""
    import os

    from app.store.blobs import SCRATCH_SLACK_SECONDS, BlobStore

    blobs = BlobStore(tmp_path / "blobs")
    digest = blobs.put(b"weights" * 1000)
    stale = blobs.scratch() / "run-killed"
    stale.mkdir()
    os.link(blobs.path(digest), stale / "w.bin")
    fresh = blobs.scratch() / "run-under-way"
    fresh.mkdir()
    old = time.time() - 2 * SCRATCH_SLACK_SECONDS
    os.utime(stale, (old, old))
    assert blobs.remove_strays(time.time()) == 1
    assert not stale.exists() and fresh.exists() and blobs.exists(digest)
    assert list(blobs.digests()) == [digest]  # the scratch folder is no blob


def test_a_model_holding_a_tensor_twice_is_sized_as_it_downloads(app, client):
    # QA17 F6: tied weights are stored once but downloaded (and loaded) twice; the models list
    # summed the blobs (9.4 MiB listed for a 26 MB download)
    model = weighty_model()
    twin = onnx.TensorProto()
    twin.CopyFrom(next(t for t in model.graph.initializer if t.name == "w0"))
    twin.name = "w0_tied"
    model.graph.initializer.append(twin)
    model.graph.node.append(helper.make_node("MatMul", ["y", "w0_tied"], ["y2"], name="tied"))
    model.graph.output.append(helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 256]))
    mid = upload(client, model.SerializeToString()).get_json()["id"]
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "act1", "name": "alpha", "value": 0.3}]},
    )
    assert r.status_code == 200, r.get_json()
    s = store_of(app)
    edited = s.revision(mid, 1)
    listed = {m["id"]: m for m in client.get("/api/models").get_json()["models"]}[mid]
    downloaded = len(download(client, mid))
    assert listed["size"] == downloaded
    assert s.blobs.size(edited.blob) + sum(edited.tensors.values()) < downloaded - 200_000  # the blobs, once: w0 once
    assert client.get(f"/api/models/{mid}").get_json()["size"] == listed["size"]
    # kept by the graph's content: another process (a restart) finds it without walking the graph
    s._joined_sizes.clear()
    assert s.has_derived(f"joined-size/1/{edited.blob}")
    assert s.model_size(edited) == listed["size"]
