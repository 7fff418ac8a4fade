"""[run] write_retries (issue 18): a Hudi write that fails transiently — a Java exception chain holding a network
error to the storage, a write conflict or a lock timeout — is written again with backoff; past the bound, or for any
other failure at once, the run stops with exit 74 and nothing committed.

The failures are Hudi's own (issue 49): the table runs Hudi's multi-writer mode with its FileSystemBasedLockProvider,
and the test holds that lock file while a write of the batch is in flight — its data files written, its commit
waiting for the lock — so Hudi's LockManager gives up with a HoodieLockException in the JVM, the failed instant stays
uncommitted and the retry's write rolls it back. The terminal failure is a storage path that refuses: a file where
Hudi needs the partition's folder."""

from __future__ import annotations

import os
import threading
import time

import pytest

from cdcsync.errors import SinkError
from cdcsync.exit_codes import ExitCode
from cdcsync.reporting import PlainReporter
from tests.integration.engine.helpers import (
    both,
    by_key,
    completed_commits,
    hudi_rs_rows,
    run_once,
    spark_rows,
    write_config,
)

pytestmark = pytest.mark.integration

ROWS = [{"id": i, "v": f"v{i}"} for i in range(5)]
RETRYING = "a transient failure: writing the batch again"


def _lock_options(locks) -> dict[str, str]:
    """Hudi's multi-writer mode with a lock file in `locks`; a lock held by another is given up on in ~1 s."""
    return {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
            "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
            "hoodie.write.lock.filesystem.path": str(locks),
            "hoodie.write.lock.wait_time_ms": "200", "hoodie.write.lock.num_retries": "2",
            "hoodie.write.lock.wait_time_ms_between_retry": "100", "hoodie.write.lock.client.num_retries": "2",
            "hoodie.write.lock.client.wait_time_ms_between_retry": "100"}


def _config(tmp_path, bootstrap, make_topic, produce, retries=None, **extra):
    topic = make_topic()
    produce(topic, ROWS)
    extra = {"sink.primary_key": ["id"]} | extra | ({"run.write_retries": retries} if retries is not None else {})
    return write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **extra)


class LockThief:
    """Takes Hudi's lock file for each of the first `times` instants that go inflight on the table — once Hudi itself
    is not holding it — so that the write's next lock (its commit's) cannot be had; gives it back when cdcsync
    announces the retry (`Reporter`)."""

    def __init__(self, table, locks, times: int):
        self.timeline, self.lock, self.times = table / ".hoodie" / "timeline", locks / "lock", times
        self.held_for: list[str] = []  # the instants whose commit found the lock taken
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.release()

    def release(self) -> None:
        self.lock.unlink(missing_ok=True)  # Hudi's provider may have deleted it already (it checks no owner)

    def _watch(self) -> None:
        while not self._stop.is_set() and len(self.held_for) < self.times:
            inflight = {p.name.split(".")[0] for p in self.timeline.glob("*.inflight")} if self.timeline.is_dir() \
                else set()
            fresh = sorted(inflight - set(self.held_for))
            if fresh and self._take():
                self.held_for.append(fresh[0])
            time.sleep(0.002)

    def _take(self) -> bool:
        try:  # atomic, as Hudi's own create of the lock file: fails while Hudi holds it
            fd = os.open(self.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False
        os.write(fd, b"held by test_write_retries")
        os.close(fd)
        return True


class Warnings(PlainReporter):
    def __init__(self, on_retry=lambda: None):
        super().__init__()
        self.warnings: list[str] = []
        self._on_retry = on_retry

    def warn(self, message: str) -> None:
        super().warn(message)
        self.warnings.append(message)
        if RETRYING in message:
            self._on_retry()


def _table_files(table) -> list[str]:
    return sorted(p.name for p in table.rglob("*.parquet") if ".hoodie" not in p.parts)


def test_a_real_lock_timeout_is_written_again_and_committed_once(spark, bootstrap, make_topic, produce, tmp_path):
    locks, table = tmp_path / "locks", tmp_path / "table"
    locks.mkdir()
    config = _config(tmp_path, bootstrap, make_topic, produce, **{"sink.options": _lock_options(locks)})
    with LockThief(table, locks, times=2) as thief:
        reporter = Warnings(on_retry=thief.release)
        summary = run_once(config, spark, reporter)
    # two writes of batch 0 reached their commit and found the lock taken; the third committed
    assert len(thief.held_for) == 2, thief.held_for
    retries = [w for w in reporter.warnings if RETRYING in w]
    assert len(retries) == 2 and "retry 2 of 3" in retries[1], reporter.warnings
    assert all("org.apache.hudi.exception.HoodieLockException: Unable to acquire the lock" in w for w in retries)
    # exactly once: one commit, carrying the batch, and the table exact as Spark and hudi-rs read it
    assert summary.totals["upserted"] == 5 and len(summary.instants) == 1
    commits = completed_commits(spark, table)
    assert [i for i, _ in commits] == summary.instants and summary.instants[0] not in thief.held_for
    spark_view, rs_view = both(spark, table)
    assert spark_view == by_key(ROWS, ["id"]) == rs_view
    assert len(spark_rows(spark, str(table))) == len(hudi_rs_rows(str(table))) == 5  # no row read twice
    # the failed attempts wrote their data files but never committed: their instants are still pending (Hudi's
    # multi-writer policy rolls them back lazily, once their heartbeats expire) and no reader sees their files
    from cdcsync.sinks.hudi import _meta_client

    pending = _meta_client(spark, str(table)).getActiveTimeline().filterInflightsAndRequested().getInstants()
    assert sorted(i.requestedTime() for i in pending) == thief.held_for
    files = _table_files(table)
    assert {f.rsplit("_", 1)[1].removesuffix(".parquet") for f in files} == {*thief.held_for, *summary.instants}
    assert {r["_hoodie_commit_time"] for r in spark_rows(spark, str(table))} == set(summary.instants)


@pytest.mark.parametrize("case", ["past-the-bound", "not-transient"])
def test_a_write_that_keeps_failing_exits_74_with_nothing_committed(case, spark, bootstrap, make_topic, produce,
                                                                     tmp_path):
    locks, table = tmp_path / "locks", tmp_path / "table"
    locks.mkdir()
    if case == "past-the-bound":  # the lock taken from every write: one retry, then exit 74
        config = _config(tmp_path, bootstrap, make_topic, produce, 1, **{"sink.options": _lock_options(locks)})
        thief, want, failure = LockThief(table, locks, times=99), 1, "HoodieLockException: Unable to acquire the lock"
    else:  # a file where Hudi needs the partition's folder: the storage refuses, no retry can cure that
        config = _config(tmp_path, bootstrap, make_topic, produce, 3, **{"sink.partition_by": ["v"]})
        table.mkdir()
        (table / "v=v0").write_text("not a folder")
        thief, want, failure = LockThief(table, locks, times=0), 0, "HoodieIOException"  # in a Spark task
    reporter = Warnings(on_retry=thief.release)
    with thief, pytest.raises(SinkError) as e:
        run_once(config, spark, reporter)
    assert e.value.exit_code == ExitCode.SINK_WRITE == 74
    assert e.value.message.startswith(f"Hudi write to {table} failed: ") and failure in e.value.message, e.value
    assert case == "past-the-bound" or "table/v=v0/" in e.value.message, e.value
    assert not e.value.facts["transient"] if case == "not-transient" else e.value.facts["transient"]
    assert len([w for w in reporter.warnings if RETRYING in w]) == want, reporter.warnings
    assert len(thief.held_for) == want + 1 if case == "past-the-bound" else not thief.held_for
    assert completed_commits(spark, table) == []  # nothing committed
    (table / "v=v0").unlink(missing_ok=True)
    summary = run_once(config, spark)  # the cause gone, the next run reads the whole batch again
    assert summary.totals["upserted"] == 5 and len(summary.instants) == 1
    spark_view, rs_view = both(spark, table)
    assert spark_view == by_key(ROWS, ["id"]) == rs_view
