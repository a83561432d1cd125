"""A process killed at any moment leaves every revision whole and readable (issue 13).

tests/store_crash_worker.py uploads (from bytes, an open file, a stream with no file), edits
(an attribute, a tensor replaced, a tensor added), undoes/redoes, deletes and collects (no grace
period) in a loop on one data dir, journaling what each operation made durable. This test
SIGKILLs it ROUNDS times — at a random moment, or just after it starts an upload, an edit or a
collection — and after each kill opens the store and checks that (1) every journaled revision
of every model not being deleted is there and reads back as the bytes journaled; (2) every
revision the index lists (journaled or not: one committed just before the kill) has all its
blobs and reads back as a model onnx's checker accepts, and every blob's bytes hash to its name;
(3) a new upload and edit work. After the last round a collection with no grace period leaves
no intent, no temp file and no blob no revision needs, and (1) and (2) still hold.

Where the kills land (counted by the test, which asserts at least 2 in each of upload, edit and
collect), in runs on a 2-core machine (~25 s each, also with a second copy running alongside):
upload 5-8, edit 5-7, collect 5-6, the rest (0-5) between operations or in a delete or an undo;
4-7 kills leave a put's temp file behind, and 3-7 revisions are found committed but not
journaled yet.

The last check found that a killed upload's or edit's intent outlived it by 24 hours (until it
expired), sparing everything stored since from collection: intents now name their process
(index.py), and the collector drops those of processes that died.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import os
import queue
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import onnx
import pytest
from store_crash_worker import edit, make_model

from app.store.store import COLLECT_GRACE_SECONDS, Store

WORKER = Path(__file__).with_name("store_crash_worker.py")
ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 20
KINDS = ("upload", "edit", "collect")  # each must get kills of its own

pytestmark = pytest.mark.local_store  # the folder store and SQLite index, in a process of its own


def test_a_process_killed_at_any_moment_leaves_every_revision_whole(tmp_path):
    rng = random.Random(13)
    data_dir = tmp_path / "data"
    journal = tmp_path / "journal.jsonl"
    journal.touch()
    landed: collections.Counter[str] = collections.Counter()
    durations: dict[str, list[float]] = collections.defaultdict(list)
    torn_puts = unjournaled = 0
    for n in range(ROUNDS):
        # most rounds aim at the kind with the fewest kills so far; every fourth is at random
        target = None if n % 4 == 3 else min(KINDS, key=lambda k: (landed[k], rng.random()))
        landed[_run_and_kill(data_dir, journal, rng, n, target, durations)] += 1
        store = Store.in_folder(data_dir)
        torn_puts += bool(list(store.blobs.stray_temp_files()))
        unjournaled += _check(store, journal)
        _upload_and_edit(store, journal, rng)
    store = Store.in_folder(data_dir)
    store.collect(now=time.time() + COLLECT_GRACE_SECONDS)  # no grace: only uploads/edits under way protect
    # every process that began an upload or edit is gone (killed): nothing is under way any more
    assert store.index.oldest_intent(0.0) is None
    assert list(store.blobs.stray_temp_files()) == []
    used, derived = store.index.referenced()
    assert set(store.blobs.digests()) - used - derived == set()
    _check(store, journal)
    print(
        f"kills: {dict(landed)}; kills that left a put's temp file: {torn_puts}; unjournaled revisions: {unjournaled}"
    )
    assert all(landed[k] >= 2 for k in KINDS), dict(landed)


def test_an_upload_under_way_is_spared_until_its_process_dies(tmp_path):
    """The collector drops the intents of a process that died, never those of one running —
    another process, or another store object on the same folder in this one."""
    data_dir = tmp_path / "data"
    store = Store.in_folder(data_dir)

    def collect_with_no_grace() -> int:
        return store.collect(now=time.time() + COLLECT_GRACE_SECONDS + 1)["removed"]

    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(data_dir), "--hold-intent"], stdout=subprocess.PIPE, cwd=ROOT, env=_env()
    )
    try:
        assert proc.stdout is not None
        word, theirs = proc.stdout.readline().decode().split()
        assert word == "ready"
        assert collect_with_no_grace() == 0
        assert store.blobs.exists(theirs)
    finally:
        proc.kill()
        proc.wait()
    # killed: its intent goes, and what it stored with it (not 24 hours later)
    assert collect_with_no_grace() == 1
    assert not store.blobs.exists(theirs)
    assert store.index.oldest_intent(0.0) is None
    mine = Store.in_folder(data_dir)
    intent = mine.index.begin_intent()
    ours = mine.blobs.put(b"ours" * 2048)
    assert collect_with_no_grace() == 0
    assert store.blobs.exists(ours)
    mine.index.end_intent(intent)
    assert collect_with_no_grace() == 1


def _env() -> dict:
    """The environment of a worker: this one, the repository on its PYTHONPATH."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _run_and_kill(data_dir: Path, journal: Path, rng: random.Random, n: int, target, durations) -> str:
    """Run the worker, SIGKILL it; answer what it was doing then (a kind, or "between")."""
    stderr = journal.with_name(f"worker-{n}.err")
    with open(stderr, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, str(WORKER), str(data_dir), str(journal), str(rng.randrange(1 << 30))],
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=ROOT,
            env=_env(),
        )
    lines: queue.Queue = queue.Queue()
    seen: list[list[str]] = []

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put((time.monotonic(), raw.decode().split()))
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    began: dict[str, float] = {}

    def next_line(timeout: float):
        """The worker's next marker line (None: it ended), noting how long operations take."""
        item = lines.get(timeout=timeout)
        if item is None:
            return None
        at, words = item
        seen.append(words)
        if words[0] == "begin":
            began[words[1]] = at
        elif words[0] == "end" and words[1] in began:
            durations[words[1]].append(at - began.pop(words[1]))
        return words

    try:
        assert next_line(60) == ["ready", "-"], stderr.read_text()
        deadline = time.monotonic() + rng.uniform(0.05, 1.5)
        while (left := deadline - time.monotonic()) > 0:
            with contextlib.suppress(queue.Empty):
                if next_line(left) is None:
                    break
        if target is not None:
            give_up = time.monotonic() + 10
            with contextlib.suppress(queue.Empty):  # none started in 10 s: killed wherever it is
                while (words := next_line(max(0.0, give_up - time.monotonic()))) is not None:
                    if words == ["begin", target]:
                        # somewhere inside it: its typical length, from the ones seen finish so far
                        typical = statistics.median(durations[target][-20:]) if durations[target] else 0.01
                        time.sleep(rng.uniform(0, 0.9 * typical))
                        break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reader.join()
    with contextlib.suppress(queue.Empty):  # (its end read already, when it died of itself)
        while next_line(0) is not None:  # what it printed before it died
            pass
    assert proc.returncode == -signal.SIGKILL, stderr.read_text()  # died of the kill, not of an error
    last = next((w for w in reversed(seen) if w[0] in ("begin", "end")), ["end", "-"])
    return last[1] if last[0] == "begin" else "between"


def _journal(journal: Path) -> list[dict]:
    return [json.loads(line) for line in journal.read_text().splitlines()]


def _check(store: Store, journal: Path) -> int:
    """Checks (1) and (2); answers how many revisions the index holds that the journal doesn't."""
    entries = _journal(journal)
    deleting = {e["model"] for e in entries if e["op"] == "deleting"}
    deleted = {e["model"] for e in entries if e["op"] == "deleted"}
    expected = {(e["model"], e["rev"]): e["sha"] for e in entries if e["op"] in ("upload", "edit")}
    models = {m.id: m for m in store.list_models()}
    assert not deleted & set(models), "a deleted model is back"
    whole: dict[tuple[str, int], bytes] = {}
    # (2) every revision the index lists: all its blobs there, and a model the checker accepts
    for mid, record in models.items():
        revisions = store.revisions(mid)
        assert record.head in {r.rev for r in revisions}
        for revision in revisions:
            missing = {d for d in revision.blobs() if not store.blobs.exists(d)}
            assert not missing, (mid, revision.rev, missing)
            data = whole[(mid, revision.rev)] = store.whole_bytes(revision)
            onnx.checker.check_model(onnx.ModelProto.FromString(data), full_check=True)
    # and every blob there is whole: named by the hash of its bytes (a put lands by rename, never
    # by writing in place, so a kill can't leave a short blob that a later put of the same bytes
    # would take for stored)
    for digest in store.blobs.digests():
        assert _sha(store.blobs.get(digest)) == digest, f"blob {digest} is damaged"
    # (1) every journaled revision, but of models being deleted when the kill came: as journaled
    for (mid, rev), sha in expected.items():
        if mid in deleting:
            continue
        assert mid in models, f"model {mid} is lost"
        assert (mid, rev) in whole, f"revision {rev} of model {mid} is lost"
        assert _sha(whole[(mid, rev)]) == sha, (mid, rev)
    return len(set(whole) - set(expected))


def _upload_and_edit(store: Store, journal: Path, rng: random.Random) -> None:
    """(3) the store still takes a new upload and an edit of it (journaled, so later rounds check them)."""
    model = make_model(rng)
    data = model.SerializeToString()
    record = store.create_model("probe.onnx", data)
    graph = onnx.ModelProto.FromString(store.blobs.get(store.revision(record.id, 0).blob))
    ops = edit(rng, [graph, model])
    rev = store.commit_revision(record.id, 0, graph.SerializeToString(), {}, ops, [])
    assert store.whole_bytes(store.revision(record.id, rev)) == model.SerializeToString()
    with open(journal, "a") as f:
        for r, d in ((0, data), (rev, model.SerializeToString())):
            f.write(json.dumps({"op": "upload" if r == 0 else "edit", "model": record.id, "rev": r, "sha": _sha(d)}))
            f.write("\n")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
