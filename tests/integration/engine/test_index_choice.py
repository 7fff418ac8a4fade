"""Issue 15 (the index for the table): each commit records the index its keys were placed by, and a run whose
[sink.options] would place them by a bucket index of another count, or switch into or out of buckets, stops before
reading anything, naming the key and the settings the table was written with. Hudi's column statistics index is
built only when asked for, and a table that has it keeps it. Hudi's shuffles are as wide as the session's,
narrower for a batch of few rows."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from cdcsync.config import load_config
from cdcsync.errors import ConfigError
from cdcsync.sinks import hudi
from cdcsync.sinks.hudi import latest_instant, recorded_index
from tests.integration.engine.helpers import hudi_rs_rows, kafka_rows, run_once, sync_rows, write_config

pytestmark = pytest.mark.integration

BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}


def test_a_table_keeps_the_index_its_keys_were_placed_by(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": i % 6, "v": i} for i in range(12)])

    def config(table: str, options: dict):
        return write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ", **{
            "sink.primary_key": ["id"], "sink.path": str(tmp_path / table), "sink.options": options,
            "run.checkpoint_dir": str(tmp_path / f"{table}_ckpt"), "run.max_records_per_batch": 6})

    bucketed = str(tmp_path / "bucketed")
    assert run_once(config("bucketed", BUCKET), spark).batches == 2  # a first load, then an upsert
    assert recorded_index(spark, bucketed) == "BUCKET:2"
    assert {r["id"]: r["v"] for r in hudi_rs_rows(bucketed)} == {i: 6 + i for i in range(6)}

    produce(topic, [{"id": 1, "v": 100}])
    before = latest_instant(spark, bucketed)
    for options in ({**BUCKET, "hoodie.bucket.index.num.buckets": "4"}, {}):
        with pytest.raises(ConfigError) as err:
            run_once(config("bucketed", options), spark)
        assert err.value.facts["key"] == "sink.options.hoodie.index.type"
        assert "its commits were written with BUCKET:2" in err.value.message and \
            '"hoodie.bucket.index.num.buckets" = "2"' in err.value.hint
    assert latest_instant(spark, bucketed) == before, "nothing was committed"
    assert run_once(config("bucketed", BUCKET), spark).totals["messages"] == 1  # the same index: it goes on
    assert {r["id"]: r["v"] for r in hudi_rs_rows(bucketed)}[1] == 100

    simple = str(tmp_path / "simple")
    assert run_once(config("simple", {}), spark).batches == 3
    assert recorded_index(spark, simple) == "SIMPLE"
    with pytest.raises(ConfigError) as err:
        run_once(config("simple", BUCKET), spark)
    assert "cannot be written with the index BUCKET:2: its commits were written with SIMPLE" in err.value.message
    assert '"hoodie.index.type" = "SIMPLE" as the table was written' in err.value.hint


def _metadata_partitions(table: str) -> set[str]:
    """The metadata table's partitions as hoodie.properties lists them."""
    props = (Path(table) / ".hoodie" / "hoodie.properties").read_text().splitlines()
    listed = next(p.split("=", 1)[1] for p in props if p.startswith("hoodie.table.metadata.partitions="))
    return set(filter(None, listed.split(",")))


def test_column_statistics_are_built_when_asked_for_and_kept_by_a_table_that_has_them(
        spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": i, "v": i} for i in range(4)])

    def run(table: str, options: dict) -> None:
        run_once(write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ", **{
            "sink.primary_key": ["id"], "sink.path": str(tmp_path / table), "sink.options": options,
            "run.checkpoint_dir": str(tmp_path / f"{table}_ckpt"), "run.max_records_per_batch": 2}), spark)

    run("plain", {})
    assert _metadata_partitions(str(tmp_path / "plain")) == {"files"}
    run("indexed", {"hoodie.metadata.index.column.stats.enable": "true"})
    assert "column_stats" in _metadata_partitions(str(tmp_path / "indexed"))

    produce(topic, [{"id": 1, "v": 100}])
    run("indexed", {})  # a write with the index off would drop it from the metadata table
    assert "column_stats" in _metadata_partitions(str(tmp_path / "indexed"))
    assert {r["id"]: r["v"] for r in hudi_rs_rows(str(tmp_path / "plain"))} == {0: 0, 1: 1, 2: 2, 3: 3}
    assert {r["id"]: r["v"] for r in hudi_rs_rows(str(tmp_path / "indexed"))} == {0: 0, 1: 100, 2: 2, 3: 3}


_GROUPS = itertools.count()


def _lookup_tasks(spark, cfg, batch, width: str) -> list[int]:
    """The tasks of each stage of the SIMPLE index's key look-up in the upsert of `batch`, in a session `width`
    shuffle partitions wide."""
    sc, was = spark.sparkContext, spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", width)
    group = f"hudi-width-{next(_GROUPS)}"  # a group per upsert: the tracker keeps a group's jobs
    sc.setJobGroup(group, f"an upsert in a session {width} shuffle partitions wide")
    try:
        sync_rows(spark, cfg, batch)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", was)
        for prop in ("spark.jobGroup.id", "spark.job.description"):  # later tests' jobs belong to no group
            sc.setLocalProperty(prop, None)
    tracker = sc.statusTracker()
    stages = [tracker.getStageInfo(s) for j in tracker.getJobIdsForGroup(group)
              for s in tracker.getJobInfo(j).stageIds]
    return [s.numTasks for s in stages if s and s.name.startswith("distinct at HoodieJavaRDD")]


def test_hudis_shuffles_are_as_wide_as_the_sessions_and_a_task_per_rows_per_task(spark, tmp_path, monkeypatch):
    """The README's sizing (spark.sql.shuffle.partitions to the cluster's cores) sizes Hudi's upsert too: its key
    look-up ran 4 tasks whatever the session said, before. A batch of few rows gets a task per ROWS_PER_TASK (Hudi's
    RDD shuffles are not coalesced by adaptive execution): 25 upserts of 4,000 rows ran ~5 % faster so."""
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"]}))

    def batch(v: int, first_offset: int):
        return kafka_rows(spark, [json.dumps({"id": i, "v": v}) for i in range(10)], first_offset=first_offset)

    sync_rows(spark, cfg, batch(0, 0))  # the first load, a bulk_insert: the upserts come next
    monkeypatch.setattr(hudi, "ROWS_PER_TASK", 4)  # 10 rows: three tasks, fewer than the session's 8
    assert set(_lookup_tasks(spark, cfg, batch(1, 10), "8")) == {3}
    monkeypatch.setattr(hudi, "ROWS_PER_TASK", 1)  # a task a row: the session's width, 3, bounds them
    assert set(_lookup_tasks(spark, cfg, batch(2, 20), "3")) == {3}
    monkeypatch.undo()  # 10 rows, 50,000 a task: one
    assert set(_lookup_tasks(spark, cfg, batch(3, 30), "3")) == {1}
    assert {r["id"]: r["v"] for r in hudi_rs_rows(cfg.sink.path)} == {i: 3 for i in range(10)}
