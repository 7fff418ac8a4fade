"""Acceptance (issue 7): `cdcsync replay-from-offset` against the real broker, Spark and Hudi.

1. replaying an applied range leaves the table equal, row by row; 2. delete the table, replay from earliest, and it
equals what `run` produced; 3. timestamps resolve to the right offsets, out-of-range offsets name the valid range,
and --dry-run counts match what the replay reads; 4. --into leaves the main table and its offsets untouched.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
import signal
import socket
import subprocess
import time

import pytest

from cdcsync.config import load_config
from cdcsync.engine.replay import Replayer
from cdcsync.reporting import PlainReporter
from cdcsync.runtime.lock import ConcurrentWriterError
from cdcsync.sinks import hudi
from tests.cli import cdcsync as cli
from tests.fixtures import cdc_cases
from tests.integration.engine.helpers import (
    both,
    completed_commits,
    expected_state,
    produce_fixture,
    run_once,
    spark_rows,
    timestamped_topic,
    write_config,
)

pytestmark = pytest.mark.integration

FIXTURE = "debezium-2.7-postgres-bare.txt"  # inserts, updates and deletes (with tombstones), in tests/fixtures/cdc
N = len(cdc_cases.records(FIXTURE))
BASE_TS = (int(time.time()) - 3600) * 1000  # recent, as a real topic's records would be


def replay(config, spark, frm, to=None, into=None):
    r = Replayer(load_config(config), PlainReporter(), frm, to, str(into) if into else None, spark=spark)
    plan = r.plan()
    return plan, r.run(plan)


def instants(spark, path, compactions: bool = True) -> list[str]:
    return [t for t, md in completed_commits(spark, path)
            if compactions or md.getOperationType().toString() != "COMPACT"]


def commit_meta(spark, path, instant: str, key: str) -> str | None:
    return next(md for t, md in completed_commits(spark, path) if t == instant).getMetadata(key)


@pytest.fixture
def dbz_topic(make_topic, produce):
    """The Debezium fixture over 2 partitions, keyed by id as a connector would (a key's changes stay in order)."""
    topic = make_topic(partitions=2)
    produce_fixture(produce, topic, FIXTURE)  # the file's keys are the connector's: {"id": …}
    return topic


@pytest.fixture
def ts_topic(make_topic, produce):
    return timestamped_topic(make_topic, produce, BASE_TS)


def test_replaying_an_applied_range_leaves_the_table_equal(spark, bootstrap, dbz_topic, tmp_path):
    config = write_config(tmp_path, bootstrap, dbz_topic, "debezium-json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"], "run.max_records_per_batch": 6})
    run_once(config, spark)
    table = tmp_path / "table"
    before = both(spark, table)
    assert before[0] == before[1] == expected_state(FIXTURE, ["id"])
    recorded = hudi.last_checkpoint(spark, str(table))

    plan, result = replay(config, spark, "earliest")
    assert plan.messages == N and plan.batches == -(-N // 6) and not plan.into
    assert result.summary.totals["messages"] == N and result.summary.batches == -(-N // 6)
    assert result.summary.totals["deleted"] > 0  # the deletes went through the same path again

    assert both(spark, table) == before  # acceptance 1: row by row, read by Spark and by hudi-rs
    assert hudi.last_checkpoint(spark, str(table)) == recorded  # the resume point did not move
    newest = instants(spark, table, compactions=False)[-1]  # the replay's last write (a compaction may follow)
    assert newest != recorded["instant"]
    assert json.loads(commit_meta(spark, table, newest, hudi.META_REPLAY))["to"] == {
        dbz_topic: {str(p): o for p, o in plan.end[dbz_topic].items()}}
    assert commit_meta(spark, table, newest, hudi.META_OFFSETS) is None
    assert run_once(config, spark).totals["messages"] == 0  # run carries on from its own offsets
    committed = Replayer(load_config(config), PlainReporter(), "earliest", "committed", spark=spark).plan()
    assert committed.end == recorded["offsets"] and committed.messages == N  # where the Hudi commits say


def test_delete_table_then_replay_from_earliest_equals_run(spark, bootstrap, dbz_topic, tmp_path):
    config = write_config(tmp_path, bootstrap, dbz_topic, "debezium-json", "COPY_ON_WRITE",
                          **{"sink.primary_key": ["id"]})
    run_once(config, spark)
    table = tmp_path / "table"
    produced_by_run = both(spark, table)
    shutil.rmtree(table)

    plan, result = replay(config, spark, "earliest")
    assert result.summary.totals["messages"] == plan.messages == N
    assert both(spark, table) == produced_by_run  # acceptance 2
    assert produced_by_run[0] == expected_state(FIXTURE, ["id"])


def test_timestamps_resolve_per_partition(bootstrap, ts_topic, tmp_path):
    config = write_config(tmp_path, bootstrap, ts_topic, "json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"]})

    def plan(frm, to=None):
        return Replayer(load_config(config), PlainReporter(), frm, to).plan()

    p = plan(f"timestamp:{BASE_TS + 3000}", dt.datetime.fromtimestamp((BASE_TS + 7000) / 1000, dt.UTC).isoformat())
    assert p.start == {ts_topic: {0: 3, 1: 3}} and p.end == {ts_topic: {0: 7, 1: 7}}
    p = plan(f"timestamp:{BASE_TS + 3500}")  # between two messages: the next one; --to defaults to the end
    assert p.start == {ts_topic: {0: 4, 1: 4}} and p.end == {ts_topic: {0: 10, 1: 10}} and p.messages == 12
    p = plan(f"timestamp:{BASE_TS + 60_000}")  # after every message: nothing to replay
    assert p.start == p.end == {ts_topic: {0: 10, 1: 10}} and p.messages == 0
    p = plan("partition:1,offset:2", "partition:1,offset:5")  # only the partition the lists name
    assert p.start == {ts_topic: {1: 2}} and p.end == {ts_topic: {1: 5}} and p.messages == 3


def test_out_of_range_offsets_error_with_the_valid_range(bootstrap, ts_topic, tmp_path):
    from kafka import KafkaAdminClient, TopicPartition

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.delete_records({TopicPartition(ts_topic, 1): 4})  # as retention would
    admin.close()
    config = write_config(tmp_path, bootstrap, ts_topic, "json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"]})

    p = cli("replay-from-offset", config, "--from", "partition:1,offset:2", "--dry-run")
    assert p.returncode == 2, p.stderr
    assert f"offset 2 for {ts_topic}/1 is past retention" in p.stderr and "[4, 10]" in p.stderr and p.stdout == ""
    p = cli("replay-from-offset", config, "--from", "earliest", "--to", "partition:0,offset:11", "--dry-run")
    assert p.returncode == 2 and f"{ts_topic}/0 is beyond the latest offset" in p.stderr and "[0, 10]" in p.stderr
    p = cli("replay-from-offset", config, "--from", "partition:0,offset:8", "--to", "partition:0,offset:3",
            "--dry-run")
    assert p.returncode == 2 and f"--from is after --to on {ts_topic}/0: 8 > 3" in p.stderr
    p = cli("replay-from-offset", config, "--from", "earliest", "--dry-run", "--json")
    assert p.returncode == 0, p.stderr
    assert [(r["partition"], r["from"], r["to"]) for r in json.loads(p.stdout)["plan"]["partitions"]] == [
        (0, 0, 10), (1, 4, 10)]


def test_dry_run_counts_match_what_the_replay_reads(spark, bootstrap, ts_topic, tmp_path):
    config = write_config(tmp_path, bootstrap, ts_topic, "json", "COPY_ON_WRITE",
                          **{"sink.primary_key": ["id"], "run.max_records_per_batch": 5})
    frm, to = f"timestamp:{BASE_TS + 2000}", f"timestamp:{BASE_TS + 8000}"
    t0 = time.monotonic()
    p = cli("replay-from-offset", config, "--from", frm, "--to", to, "--dry-run", "--json")
    assert p.returncode == 0, p.stderr
    dry = json.loads(p.stdout)  # one JSON object on stdout
    assert dry["dry_run"] is True and dry["summary"] is None and time.monotonic() - t0 < 60
    counts = {(r["topic"], r["partition"]): r["messages"] for r in dry["plan"]["partitions"]}
    assert counts == {(ts_topic, 0): 6, (ts_topic, 1): 6} and dry["plan"]["batches"] == 3
    assert not (tmp_path / "table").exists() and not (tmp_path / "ckpt").exists()  # a dry run writes nothing

    _, result = replay(config, spark, frm, to, into=tmp_path / "side")
    read = {tuple(tp.rsplit("/", 1)): c["messages"] for tp, c in result.summary.ledger.items()}
    assert {(t, int(p)): n for (t, p), n in read.items()} == counts
    assert result.summary.batches == dry["plan"]["batches"]
    assert {r["id"] for r in spark_rows(spark, str(tmp_path / "side"))} == {
        p * 100 + i for p in (0, 1) for i in range(2, 8)}


def test_replay_into_a_side_table_leaves_the_main_table_and_offsets_untouched(spark, bootstrap, dbz_topic,
                                                                              produce, tmp_path):
    config = write_config(tmp_path, bootstrap, dbz_topic, "debezium-json", "COPY_ON_WRITE",
                          **{"sink.primary_key": ["id"]})
    run_once(config, spark)
    table, side = tmp_path / "table", tmp_path / "side"
    main_rows, main_instants = both(spark, table), instants(spark, table)
    recorded = hudi.last_checkpoint(spark, str(table))

    plan, result = replay(config, spark, "earliest", into=side)
    assert plan.into and plan.target == str(side) and result.summary.totals["messages"] == N
    assert both(spark, table) == main_rows and instants(spark, table) == main_instants  # acceptance 4
    assert hudi.last_checkpoint(spark, str(table)) == recorded
    assert both(spark, side) == main_rows  # the side table is the same content, built separately
    assert hudi.last_checkpoint(spark, str(side)) is None  # and holds no resume point of its own

    produce(dbz_topic, [json.dumps({"op": "c", "before": None, "after": {"id": 900, "name": "new"},
                                    "source": {"ts_ms": 1596001200000}})], keys=["900"])
    assert run_once(config, spark).totals["messages"] == 1  # the main pipeline resumes where it was


def test_refuses_while_a_run_holds_the_table_but_into_still_works(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": i} for i in range(3)])
    config = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"]})
    holder = subprocess.Popen(["sleep", "120"])  # a live process on this host stands in for a running `run`
    try:
        (tmp_path / "ckpt").mkdir()
        (tmp_path / "ckpt" / "writer.lock").write_text(json.dumps({
            "host": socket.gethostname(), "pid": holder.pid, "what": "cdcsync run", "started": time.time(),
            "heartbeat": time.time()}))
        with pytest.raises(ConcurrentWriterError) as err:
            replay(config, spark, "earliest")
        assert err.value.exit_code == 81 and f"cdcsync run (pid {holder.pid}" in err.value.message
        assert "multi-writer locking is not configured" in err.value.message and "--into" in err.value.hint
        assert not (tmp_path / "table").exists()  # refused before anything was written

        _, result = replay(config, spark, "earliest", into=tmp_path / "side")
        assert result.summary.totals["upserted"] == 3
        assert {r["id"] for r in spark_rows(spark, str(tmp_path / "side"))} == {0, 1, 2}
        assert json.loads((tmp_path / "ckpt" / "writer.lock").read_text())["pid"] == holder.pid  # not taken over
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow  # two cdcsync processes, each starting its own JVM
@pytest.mark.soak  # a killed replay process and its rerun, each starting a JVM
def test_crashed_replay_rerun_finishes_its_range(spark, bootstrap, dbz_topic, produce, tmp_path):
    config = write_config(tmp_path, bootstrap, dbz_topic, "debezium-json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"], "run.max_records_per_batch": 5})
    side = tmp_path / "side"
    fault = {"CDCSYNC_FAULT": "after_write:1"}  # killed right after the second batch's commit
    p = cli("replay-from-offset", config, "--from", "earliest", "--into", side, env=fault)
    assert p.returncode == -signal.SIGKILL, p.stderr[-2000:]
    [folder] = (tmp_path / "ckpt").glob("replay-*")
    progress = json.loads((folder / "progress.json").read_text())
    assert progress["status"] == "running" and sum(progress["done"][dbz_topic].values()) == 5

    produce(dbz_topic, [json.dumps({"op": "c", "before": None, "after": {"id": 900, "name": "late"},
                                    "source": {"ts_ms": 1596001200000}})], keys=["900"])
    p = cli("replay-from-offset", config, "--from", "earliest", "--into", side, "--json", env={"CDCSYNC_FAULT": None})
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)
    # the range fixed at the first start is finished (batch 1 again, then batch 2); the late message is not in it
    assert out["plan"]["resumed"] is True and out["plan"]["messages"] == N - 5
    assert out["summary"]["totals"]["messages"] == N - 5
    assert json.loads((folder / "progress.json").read_text())["status"] == "finished"
    assert both(spark, side)[0] == both(spark, side)[1] == expected_state(FIXTURE, ["id"])


def test_multi_writer_locking_lets_a_replay_write_beside_a_run(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": i} for i in range(3)])
    config = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **{
        "sink.primary_key": ["id"], "sink.options": {
            "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
            "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider",
            "hoodie.cleaner.policy.failed.writes": "LAZY"}})
    holder = subprocess.Popen(["sleep", "120"])
    try:
        (tmp_path / "ckpt").mkdir()
        lock = {"host": socket.gethostname(), "pid": holder.pid, "what": "cdcsync run", "started": time.time(),
                "heartbeat": time.time()}
        (tmp_path / "ckpt" / "writer.lock").write_text(json.dumps(lock))
        progress = io.StringIO()
        r = Replayer(load_config(config), PlainReporter(stream=progress), "earliest", spark=spark)
        result = r.run(r.plan())
        assert result.summary.totals["upserted"] == 3
        assert {x["id"] for x in spark_rows(spark, str(tmp_path / "table"))} == {0, 1, 2}
        assert "multi-writer locking is configured" in progress.getvalue()
        assert json.loads((tmp_path / "ckpt" / "writer.lock").read_text()) == lock  # the run's lock is left alone
    finally:
        holder.kill()
        holder.wait()
