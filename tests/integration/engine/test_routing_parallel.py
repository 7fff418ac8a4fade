"""Acceptance (issue 46): whole-database sync with the routed tables of a batch committed in parallel
([run] table_parallelism). 24 PostgreSQL tables in one Debezium topic (`source.db`/`schema`/`table`), one
`[[route]]` with `sink_table = "<>"`, MERGE_ON_READ: a `--once` run at the default width and one at width 1, each
into a table root of its own from the same topic, land the same tables, equal to the source model as Spark and as
hudi-rs read them, with the same ledger; the parallel run's commits overlap in time, the serial run's never do.
The speed-up is a benchmark figure (`python -m bench.tables`), not an assertion on a shared CI machine.

And exactly once: `kill -9` while several tables' commits are in flight, then a restart: every table exact, no
table holding a batch twice, nothing left pending."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from bench.tables import DB, SCHEMA, Tables, changes, final_state
from cdcsync.engine import routing
from cdcsync.sinks import hudi
from cdcsync.sinks.timeline import Timeline
from tests import cli
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows
from tests.integration.engine.test_routing import routed_config
from tests.integration.engine.test_routing_crash import batch_ids

pytestmark = pytest.mark.integration

ROUTE = {"source_table": f"{DB}\\.{SCHEMA}\\..*", "sink_table": "<>"}
ACCEPTANCE = Tables(tables=24, changes=30, keys=12)


def send(produce, topic: str, w: Tables) -> None:
    events = list(changes(w))
    produce(topic, [e for _, _, e in events], keys=[json.dumps(k) for _, k, _ in events])


def config(root: Path, bootstrap: str, topic: str, **run) -> Path:
    root.mkdir()
    return routed_config(root, bootstrap, topic, "debezium-json", [ROUTE], **{f"run.{k}": v for k, v in run.items()})


def assert_tables_equal_the_model(spark, db: Path, w: Tables) -> None:
    want = final_state(w)
    assert sorted(p.name for p in db.iterdir() if not p.name.endswith("_delete_markers")) == sorted(want)
    for table, rows in want.items():
        model = by_key(list(rows.values()), ["id"])
        assert by_key(spark_rows(spark, str(db / table)), ["id"]) == model, table
        assert by_key(hudi_rs_rows(str(db / table)), ["id"]) == model, table


def timeline(table: Path) -> tuple[list[tuple[dt.datetime, dt.datetime]], set[str]]:
    """The table's completed commits and delta commits as (requested, completed) times, and the instants still
    pending: requested or inflight with no completed file (read by sinks/timeline.py, as `status` reads it)."""
    instants = Timeline(str(table)).instants
    done = {i.requested for i in instants if i.completed}
    commits = [(i.requested_at, i.completed_at) for i in instants
               if i.completed_at and i.action in ("commit", "deltacommit")]
    return commits, {i.requested for i in instants if not i.completed} - done


def most_at_once(db: Path) -> int:
    """The most tables whose commits were in flight at one moment."""
    edges = sorted((t, step) for table in db.iterdir() if (table / ".hoodie").is_dir()
                   for a, b in timeline(table)[0] for t, step in ((a, 1), (b, -1)))
    most = now = 0
    for _, step in edges:  # at equal times an end (-1) sorts before a start: touching is not overlapping
        now += step
        most = max(most, now)
    return most


@pytest.mark.soak  # two runs of 24 tables' commits (the speed-up itself: python -m bench.tables)
def test_24_tables_committed_in_parallel_equal_their_sources_and_the_serial_run(spark, bootstrap, make_topic,
                                                                                 produce, tmp_path):
    topic = make_topic(partitions=2)
    send(produce, topic, ACCEPTANCE)
    runs = {}
    for name, run in (("parallel", {}), ("serial", {"table_parallelism": 1})):
        cfg = config(tmp_path / name, bootstrap, topic, **run)
        t0 = time.monotonic()
        summary = run_once(cfg, spark)
        runs[name] = (summary, round(time.monotonic() - t0, 1))
        assert summary.totals["messages"] == ACCEPTANCE.messages and summary.totals["bad"] == 0
        assert summary.unrouted == 0 and len(summary.tables) == ACCEPTANCE.tables
        assert_tables_equal_the_model(spark, tmp_path / name / "db", ACCEPTANCE)
    (parallel, took_parallel), (serial, took_serial) = runs["parallel"], runs["serial"]
    print(f"24 tables, one batch: parallel (width {routing.table_parallelism(None)}) {took_parallel} s, "
          f"serial {took_serial} s")
    # the same result whichever table finished first: merged in table-name order
    assert parallel.tables == serial.tables and list(parallel.tables) == sorted(parallel.tables)
    assert parallel.totals == serial.totals and parallel.ledger == serial.ledger
    assert [i.split("@")[0] for i in parallel.instants[0].split(",")] == sorted(parallel.tables)
    assert most_at_once(tmp_path / "serial" / "db") == 1
    assert most_at_once(tmp_path / "parallel" / "db") >= 2


CRASH = Tables(tables=12, changes=40, keys=10)


@pytest.mark.soak  # a killed process and its restart, each starting a JVM (as test_routing_crash)
def test_kill_during_parallel_commits_then_resume(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    send(produce, topic, CRASH)
    cfg = config(tmp_path / "run", bootstrap, topic, table_parallelism=4, max_records_per_batch=CRASH.messages // 4)
    db, ckpt = tmp_path / "run" / "db", tmp_path / "run" / "ckpt"

    proc = cli.start("run", cfg, "--once", own_group=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # a full pipe would stall it
    reader.start()
    seen = _in_flight_together(proc, db, ckpt)
    # the whole group, as a service manager kills it: the JVM outlives a killed Python parent long enough to finish
    # the writes in flight, which would then not be in flight at the kill
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    reader.join(timeout=60)
    assert proc.returncode == -9 and seen >= 2, "".join(lines)[-3000:]
    progress = routing.read_progress(spark, str(ckpt))
    assert progress.state == "writing" and progress.batch_id >= 1
    cut = progress.batch_id
    tables = sorted(t.name for t in db.iterdir() if (t / ".hoodie").is_dir())
    left = {t: timeline(db / t)[1] for t in tables}
    assert any(left.values()), left  # commits in flight at the kill stay pending, never completed
    committed = {t for t in tables if hudi.last_checkpoint(spark, str(db / t))["batch_id"] == cut}
    print(f"killed in batch {cut} with {seen} commits in flight: left pending {left}, committed {sorted(committed)}")
    assert 1 <= len(committed) < len(tables)  # cut short: some tables hold the batch, others not

    code, err = cli.run_killed("run", cfg, "--once", timeout=1200)  # three batches of 12 commits: minutes when loaded
    assert code == 0, err[-3000:]
    start = next(line for line in err.splitlines() if " start " in f" {line}")
    for p, offset in progress.start[topic].items():  # resumed at the start of the interrupted batch
        assert f"{topic}/{p}:{offset}" in start, start
    assert routing.read_progress(spark, str(ckpt)).state == "done"
    assert_tables_equal_the_model(spark, db, CRASH)
    for t in tables:
        ids = batch_ids(spark, str(db / t))
        assert ids == sorted(set(ids)) and cut in ids, (t, ids)  # each batch once: committed tables were skipped
        assert not timeline(db / t)[1], t  # what the kill left in flight was rolled back


def _in_flight_together(proc, db: Path, ckpt: Path, timeout: float = 600) -> int:
    """Wait until a batch after the first is being written, at least one table has committed it and at least two
    tables' commits are in flight; returns how many are."""
    deadline = time.monotonic() + timeout
    progress = ckpt / "routes-progress.json"
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before commits were in flight together after one had landed"
        try:
            rec = json.loads(progress.read_text())
            tables = [t for t in db.iterdir() if (t / ".hoodie").is_dir()] \
                if rec["state"] == "writing" and rec["batch_id"] >= 1 else []
            flying = sum(1 for t in tables if timeline(t)[1])
            # a table's newest commit says which batch it holds (a first load may take more than one commit)
            newest = [Timeline(str(t)).last_sync_commit() for t in tables]
            landed = sum(1 for c in newest if c and c.batch_id == rec["batch_id"])
        except (OSError, ValueError, EOFError):  # a file written or renamed while read
            landed = flying = 0
        if landed >= 1 and flying >= 2:
            return flying
        time.sleep(0.02)
    raise AssertionError("no two commits were in flight together after one had landed")
