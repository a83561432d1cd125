"""Blobs in S3 (issue 14): S3BlobStore against a real HTTP S3 (moto_server on a loopback port),
every method of the blob interface, its bounded local cache, and the store end to end on it."""

from __future__ import annotations

import hashlib
import io
import os
import time
import uuid
from pathlib import Path

import numpy as np
import onnx
import pytest
from numpy.lib.format import read_array
from s3_server import BUCKET
from test_store import download, revision_blobs, store_of, weighty_model
from testkit import upload

from app import create_app
from app.store import parse_blob_url
from app.store.s3_blobs import S3BlobStore
from app.store.store import COLLECT_GRACE_SECONDS


@pytest.fixture
def prefix(s3_endpoint):
    return f"t-{uuid.uuid4().hex[:12]}"  # each test its own keys in the shared bucket


@pytest.fixture
def blobs(prefix, tmp_path):
    return S3BlobStore(BUCKET, prefix, tmp_path / "cache", cache_bytes=64 << 20, pin_seconds=0)


def calls(client, operation: str) -> list:
    """A list that grows by one on each `operation` request the client makes."""
    made: list = []
    client.meta.events.register(f"after-call.s3.{operation}", lambda **kw: made.append(1))
    return made


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("size", [0, 5, 12 << 20])  # 12 MiB: a multipart upload (boto3's 8 MiB threshold)
def test_round_trips_are_byte_exact(blobs, prefix, size):
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    uploads = calls(blobs.client, "CreateMultipartUpload")
    digest = blobs.put(data)
    assert digest == sha(data)
    assert len(uploads) == (size > 8 << 20)
    assert blobs.put_stream(io.BytesIO(data), chunk=1 << 20) == digest
    assert blobs.put_parts([data[:3], memoryview(data)[3:]]) == digest
    head = blobs.client.head_object(Bucket=BUCKET, Key=f"{prefix}/{digest[:2]}/{digest}")
    assert head["ContentLength"] == size
    gets = calls(blobs.client, "GetObject")
    for where in ("cache", "S3"):  # the put's spooled file is this host's copy; then without it
        if where == "S3":
            blobs.cache.discard(digest)
        assert blobs.exists(digest) and blobs.size(digest) == size
        assert blobs.get(digest) == data
        assert b"".join(blobs.read_chunks(digest, chunk=1 << 20)) == data
        with blobs.open(digest) as f:
            assert f.read() == data
            f.seek(size // 3)
            assert f.read(1000) == data[size // 3 : size // 3 + 1000]
            f.seek(1)
            assert f.read(2) == data[1:3]
        assert (len(gets) > 0) == (where == "S3"), where
    assert blobs.path(digest).read_bytes() == data  # downloaded
    assert list(blobs.digests()) == [digest]


def test_a_missing_blob_reads_as_file_not_found(blobs):
    ghost = sha(b"never stored")
    for read in (blobs.get, blobs.open, blobs.path, blobs.size, blobs.modified, lambda d: list(blobs.read_chunks(d))):
        with pytest.raises(FileNotFoundError):
            read(ghost)
    assert not blobs.exists(ghost)
    blobs.remove(ghost)  # nothing to remove: fine
    with pytest.raises(ValueError, match="not a blob digest"):
        blobs.get("../etc/passwd")


def test_a_put_of_a_stored_blob_refreshes_its_time_without_uploading(blobs):
    digest = blobs.put(b"weights" * 1000)
    first = blobs.modified(digest)
    assert abs(first - time.time()) < 60
    puts = calls(blobs.client, "PutObject")
    time.sleep(0.05)
    assert blobs.put(b"weights" * 1000) == digest
    assert blobs.modified(digest) > first
    assert puts == []  # copied onto itself, not sent again
    assert blobs.get(digest) == b"weights" * 1000


def test_digests_are_listed_page_by_page_and_remove_removes(blobs, prefix):
    stored = {blobs.put(f"blob {i}".encode()) for i in range(7)}
    # keys that aren't blobs of this prefix are no digests
    blobs.client.put_object(Bucket=BUCKET, Key=f"{prefix}/notes.txt", Body=b"x")
    blobs.client.put_object(Bucket=BUCKET, Key=f"{prefix}-other/{next(iter(stored))}", Body=b"x")
    pages = calls(blobs.client, "ListObjectsV2")
    assert set(blobs.digests(page_size=3)) == stored
    assert len(pages) == 3
    gone = sorted(stored)[0]
    blobs.path(gone)
    blobs.remove(gone)
    assert not blobs.exists(gone) and not (blobs.cache.root / gone).exists()
    assert set(blobs.digests()) == stored - {gone}


def test_path_goes_through_a_bounded_lru_cache(prefix, tmp_path):
    writer = S3BlobStore(BUCKET, prefix, tmp_path / "writer", cache_bytes=1 << 30)
    kib = 100 << 10
    a, b, c, d = (writer.put(bytes([i]) * kib) for i in range(4))
    big = writer.put(b"B" * (4 * kib))
    cache_bytes = 3 * kib + 10
    # another process's store: an empty cache
    reader = S3BlobStore(BUCKET, prefix, tmp_path / "reader", cache_bytes=cache_bytes, pin_seconds=0)
    gets = calls(reader.client, "GetObject")

    def cached() -> set[str]:
        names = {p.name for _, _, p in reader.cache.entries()}
        assert reader.cache.total() <= cache_bytes or names == {big}
        return names

    assert reader.path(a).read_bytes() == bytes([0]) * kib and len(gets) == 1
    assert reader.path(a) == reader.path(a) and len(gets) == 1  # hits
    reader.path(b)
    reader.path(c)
    assert cached() == {a, b, c} and len(gets) == 3
    reader.path(a)  # used again: b is now the least recently used
    assert reader.path(d).read_bytes() == bytes([3]) * kib
    assert cached() == {a, c, d} and len(gets) == 4
    reader.path(b)
    assert cached() == {a, d, b} and len(gets) == 5
    # a blob bigger than the whole cache still gets its file (the only entry)
    assert reader.path(big).read_bytes() == b"B" * (4 * kib)
    assert cached() == {big}
    assert list(reader.stray_temp_files()) == []
    # entries used in the last pin_seconds are never evicted (another thread may be opening one)
    pinned = S3BlobStore(BUCKET, prefix, tmp_path / "pinned", cache_bytes=cache_bytes, pin_seconds=60)
    for digest in (a, b, c, d):
        pinned.path(digest)
    assert len(pinned.cache.entries()) == 4
    # a put keeps its spooled file as the cache entry: no download after
    fresh = reader.put(b"fresh" * 1000)
    before = len(gets)
    assert reader.path(fresh).read_bytes() == b"fresh" * 1000 and len(gets) == before


def test_a_killed_puts_temp_file_is_stray(blobs):
    fd, tmp = blobs.cache.temp_file()
    os.close(fd)
    assert list(blobs.stray_temp_files()) == [Path(tmp)]


def test_strays_of_killed_puts_are_removed_after_the_grace(blobs, prefix):
    """A put killed mid-way leaves a spooled file and, when big, a multipart upload S3 keeps (and
    bills) until someone aborts it: the collector's remove_strays takes those begun before its cutoff."""
    fd, tmp = blobs.cache.temp_file()
    os.close(fd)
    client = blobs.client
    begun = client.create_multipart_upload(Bucket=BUCKET, Key=f"{prefix}/ab/{'ab' * 32}")["UploadId"]
    elsewhere = client.create_multipart_upload(Bucket=BUCKET, Key=f"other-{prefix}/x")["UploadId"]

    def open_uploads(under: str) -> set[str]:
        return {u["UploadId"] for u in client.list_multipart_uploads(Bucket=BUCKET, Prefix=under).get("Uploads", [])}

    # moto dates every multipart upload 2010-11-10 (S3 gives the real time): only the spooled
    # file can show that what is younger than the cutoff is kept
    assert blobs.remove_strays(time.time() - 3600) == 1
    assert open_uploads(f"{prefix}/") == set() and Path(tmp).exists()
    assert open_uploads(f"other-{prefix}/") == {elsewhere}  # another store's prefix: not ours
    assert blobs.remove_strays(time.time() + 5) == 1
    assert not Path(tmp).exists() and begun
    client.abort_multipart_upload(Bucket=BUCKET, Key=f"other-{prefix}/x", UploadId=elsewhere)


def test_ping_says_what_is_wrong(blobs, prefix, tmp_path):
    blobs.ping()
    missing = S3BlobStore("no-such-bucket-here", prefix, tmp_path / "c2")
    with pytest.raises(OSError, match=r"s3://no-such-bucket-here: no such bucket"):
        missing.ping()


def test_a_missing_bucket_refuses_uploads_in_a_503_saying_so(s3_endpoint, tmp_path):
    """QA18 F21: a mistyped or recreated bucket answered uploads a bare 500."""
    app = create_app({"DATA_DIR": str(tmp_path), "BLOB_URL": "s3://no-such-bucket-here/p", "TESTING": True})
    r = upload(app.test_client(), weighty_model().SerializeToString())
    assert r.status_code == 503, r.get_json()
    error = r.get_json()["error"]
    assert error["code"] == "store_unavailable"
    assert error["message"].startswith("the blob store (S3) refuses requests: An error occurred (NoSuchBucket)"), error


def test_sizes_come_from_the_listing_and_stay_known(blobs):
    """The models list sums every model's blob sizes: from one listing, not a HEAD each."""
    digests = [blobs.put(bytes([k]) * (100 + k)) for k in range(3)]
    fresh = S3BlobStore(BUCKET, blobs.prefix, blobs.cache.root.parent / "c3", pin_seconds=0)
    assert sorted(fresh.digests()) == sorted(digests)
    heads = calls(fresh.client, "HeadObject")
    assert [fresh.size(d) for d in digests] == [100, 101, 102] and not heads


def test_readyz_names_a_missing_bucket(s3_endpoint, tmp_path):
    app = create_app({"DATA_DIR": str(tmp_path), "BLOB_URL": "s3://no-such-bucket-here/p", "TESTING": True})
    r = app.test_client().get("/readyz")
    assert r.status_code == 503
    assert r.get_json()["problems"] == ["blob store: s3://no-such-bucket-here: no such bucket (404)"]


@pytest.mark.parametrize(
    "url", ["http://bucket/p", "s3://", "s3:///prefix", "s3://Bad_Bucket/p", "s3://bucket/p?x=1", "s3://bucket/a/../b"]
)
def test_a_malformed_blob_url_is_refused_by_name(url, tmp_path):
    with pytest.raises(ValueError, match="BLOB_URL"):
        create_app({"DATA_DIR": str(tmp_path), "BLOB_URL": url, "TESTING": True})


def test_blob_urls():
    assert parse_blob_url("s3://my.bucket/models/team-a/") == ("my.bucket", "models/team-a")
    assert parse_blob_url("s3://my-bucket") == ("my-bucket", "")


@pytest.fixture
def s3_app(prefix, tmp_path):
    return create_app({"DATA_DIR": str(tmp_path / "data"), "BLOB_URL": f"s3://{BUCKET}/{prefix}", "TESTING": True})


def test_the_store_end_to_end_on_s3(s3_app, prefix, tmp_path):
    client = s3_app.test_client()
    s = store_of(s3_app)
    assert isinstance(s.blobs, S3BlobStore) and s.blobs.prefix == prefix
    assert client.get("/readyz").status_code == 200
    model = weighty_model(layers=3)
    data = model.SerializeToString()
    mid = upload(client, data).get_json()["id"]
    # no blob folder: every blob is in the bucket
    assert not (tmp_path / "data" / "blobs").exists()
    assert revision_blobs(s, mid) <= set(s.blobs.digests())
    assert download(client, mid, 0) == data
    assert client.get(f"/api/models/{mid}/graph").status_code == 200  # parsed from the cached local file
    # an attribute edit: a new graph blob, the tensors shared
    r = client.post(
        f"/api/models/{mid}/edits",
        json={"base": 0, "ops": [{"op": "set_attribute", "node": "act1", "name": "alpha", "value": 0.25}]},
    )
    assert r.status_code == 200, r.get_json()
    assert s.revision(mid, 1).tensors == s.revision(mid, 0).tensors
    expected = onnx.ModelProto.FromString(data)
    next(a for n in expected.graph.node if n.name == "act1" for a in n.attribute).f = 0.25
    assert download(client, mid) == expected.SerializeToString()
    assert download(client, mid, 0) == data
    w = next(t for t in model.graph.initializer if t.name == "w2")
    got = read_array(io.BytesIO(client.get(f"/api/models/{mid}/npy/w2").data), allow_pickle=False)
    assert np.array_equal(got, onnx.numpy_helper.to_array(w))

    # deleting a model collects what only it used (past the grace period), nothing else
    gone = upload(client, weighty_model(seed=2, layers=2).SerializeToString()).get_json()["id"]
    only_gone = revision_blobs(s, gone) - revision_blobs(s, mid)
    assert only_gone
    assert client.delete(f"/api/models/{gone}").status_code == 204
    assert s.collect()["removed"] == 0  # within the grace period
    before = set(s.blobs.digests())
    result = s.collect(now=time.time() + COLLECT_GRACE_SECONDS + 1)
    removed = before - set(s.blobs.digests())
    assert result["removed"] == len(removed)
    assert only_gone <= removed
    # the rest were data derived from the deleted model's graphs (its graph JSON); what the kept
    # model's revisions and derived data need stays
    used, derived = s.index.referenced()
    assert removed.isdisjoint(used | derived)
    assert revision_blobs(s, mid) <= set(s.blobs.digests())
    assert download(client, mid, 0) == data
    assert download(client, mid) == expected.SerializeToString()


def test_s3_down_a_moment_ago_is_tried_again_after_the_cool_off(blobs, monkeypatch):
    from app.errors import StoreUnavailable
    from app.store import s3_blobs

    blobs._breaker.failed("Read timeout on endpoint URL")
    puts = calls(blobs.client, "PutObject")
    with pytest.raises(StoreUnavailable, match=r"it failed to answer just now .*; it will be tried again in 10 s"):
        blobs.put(b"held back")
    assert puts == []  # not asked at all
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 0.0)
    digest = blobs.put(b"now it answers")
    assert blobs.get(digest) == b"now it answers"
    # a readiness ping that S3 answers closes the breaker too
    monkeypatch.setattr(s3_blobs, "COOL_OFF_SECONDS", 60.0)
    blobs._breaker.failed("Read timeout")
    blobs.ping()
    assert blobs.exists(digest)
