"""Issue 8, exactly-once with several tables: `kill -9` after the first routed table committed a batch and before
the second did; the restart re-applies exactly that range (idempotent upserts) and every table ends correct.
Also: the default route takes what no route matches."""

from __future__ import annotations

import pytest

from cdcsync.engine import routing
from cdcsync.sinks import hudi
from tests import cli
from tests.integration.engine.helpers import completed_commits, hudi_rs_rows, run_once, spark_rows
from tests.integration.engine.test_routing import canal, routed_config

pytestmark = pytest.mark.integration

TYPES = {"id": "int", "n": "int"}


@pytest.mark.soak  # a killed process and its restart, each starting a JVM
def test_kill_between_routed_tables_then_resume(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    msgs = []
    for i in range(30):  # both tables in every batch: inserts, then updates of the same keys
        table = "a" if i % 2 == 0 else "b"
        msgs.append(canal("db", table, "INSERT" if i < 20 else "UPDATE", [{"id": str(i % 10), "n": str(i)}],
                          TYPES, 1000 + i))
    produce(topic, msgs)
    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json",
                        [{"source_table": r"db\.(a|b)", "sink_table": "t_<>"}],
                        **{"run.max_records_per_batch": 10, "run.table_parallelism": 1})  # one table, then the next
    db = tmp_path / "db"

    code, err = cli.run_killed("run", cfg, "--once", fault="routed_between_tables:1")
    assert code == -9, err[-2000:]
    # the crash hit between the tables: t_a holds batch 1, t_b only batch 0, and the record says "writing"
    assert hudi.last_checkpoint(spark, str(db / "t_a"))["batch_id"] == 1
    assert hudi.last_checkpoint(spark, str(db / "t_b"))["batch_id"] == 0
    progress = routing.read_progress(spark, str(tmp_path / "ckpt"))
    assert progress.state == "writing" and progress.batch_id == 1
    assert progress.start == {topic: {0: 10}} and progress.end == {topic: {0: 20}}

    code, err = cli.run_killed("run", cfg, "--once")
    assert code == 0, err[-3000:]
    assert f"offsets={topic}/0:10" in err  # resumed at the start of the interrupted batch, not after it
    done = routing.read_progress(spark, str(tmp_path / "ckpt"))
    assert done.state == "done" and done.end == {topic: {0: 30}}
    last = {i: i for i in range(20, 30)}  # the updates carry n = i for id i % 10
    want_a = {k % 10: v for k, v in last.items() if k % 2 == 0}
    want_b = {k % 10: v for k, v in last.items() if k % 2 == 1}
    for read in (lambda p: spark_rows(spark, p), hudi_rs_rows):
        assert {r["id"]: r["n"] for r in read(str(db / "t_a"))} == want_a
        assert {r["id"]: r["n"] for r in read(str(db / "t_b"))} == want_b
    assert hudi.last_checkpoint(spark, str(db / "t_b"))["offsets"] == {topic: {0: 30}}
    # the table that had committed the interrupted batch was not written again: one commit per batch each
    assert batch_ids(spark, str(db / "t_a")) == [0, 1, 2] and batch_ids(spark, str(db / "t_b")) == [0, 1, 2]


def batch_ids(spark, path: str) -> list[int]:
    return [int(md.getMetadata(hudi.META_BATCH)) for _, md in completed_commits(spark, path)
            if md.getMetadata(hudi.META_OFFSETS)]


def test_default_route_takes_unmatched_tables(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [canal("db", "a", "INSERT", [{"id": "1", "n": "1"}], TYPES, 1),
                    canal("db", "other", "INSERT", [{"id": "2", "n": "2"}], TYPES, 2),
                    canal("db2", "more", "INSERT", [{"id": "3", "n": "3"}], TYPES, 3)])
    cfg = routed_config(tmp_path, bootstrap, topic, "canal-json", [{"source_table": r"db\.a", "sink_table": "a"}],
                        **{"sink.unrouted": "default", "sink.table_name": "rest"})
    summary = run_once(cfg, spark)
    assert summary.unrouted == 0 and summary.totals["upserted"] == 3
    assert summary.tables["rest"]["upserted"] == 2 and summary.tables["a"]["upserted"] == 1
    assert sorted(r["id"] for r in spark_rows(spark, str(tmp_path / "db" / "rest"))) == [2, 3]
    assert [r["id"] for r in spark_rows(spark, str(tmp_path / "db" / "a"))] == [1]
