"""Issue 3: MOR compacts after N delta commits (Hudi's default N = 5 unless [sink.options] say otherwise), and the
run still resumes from its own commits, which compactions do not carry."""

from __future__ import annotations

import pytest

from tests.integration.engine.helpers import hudi_rs_rows, operations, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration


# Hudi's bucket index: the compactor must not get the writer's index settings (a NullPointerException in Hudi)
@pytest.mark.parametrize("index", [{}, {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}],
                         ids=["default-index", "bucket-index"])
def test_mor_compacts_after_n_delta_commits(index, spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": i % 4, "v": i} for i in range(12)])  # 4 keys updated three times
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.max_records_per_batch": 4,
                          "sink.options": {"hoodie.compact.inline.max.delta.commits": "2", **index}})
    summary = run_once(cfg, spark)
    assert summary.batches == 3
    path = str(tmp_path / "table")
    # the first batch is a first load; a compaction follows the next 2 delta commits
    assert operations(spark, path) == ["BULK_INSERT", "UPSERT", "UPSERT", "COMPACT"]
    want = {i: 8 + i for i in range(4)}
    assert {r["id"]: r["v"] for r in spark_rows(spark, path)} == want
    assert {r["id"]: r["v"] for r in hudi_rs_rows(path)} == want
    produce(topic, [{"id": 9, "v": 99}])
    assert run_once(cfg, spark).totals["messages"] == 1  # resumes past the compaction from its own commit


def test_a_compaction_left_pending_is_completed_by_a_run_with_nothing_to_read(spark, bootstrap, make_topic, produce,
                                                                               tmp_path):
    """Inline compaction only runs on a write: a compaction a killed run left requested or inflight would stay
    pending through every drain. Here a run that schedules compactions and leaves them to another process (Hudi's
    async compaction off, inline compaction off) leaves one; the next run, compacting in the background, runs it."""
    from cdcsync.sinks.hudi import _meta_client

    topic = make_topic()
    produce(topic, [{"id": i % 4, "v": i} for i in range(12)])
    options = {"hoodie.compact.inline.max.delta.commits": "2"}
    leave_pending = {**options, "hoodie.datasource.compaction.async.enable": "false", "hoodie.compact.inline": "false",
                     "hoodie.compact.schedule.inline": "true"}
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.max_records_per_batch": 4, "sink.options": leave_pending})
    assert run_once(cfg, spark).batches == 3
    path = str(tmp_path / "table")

    def pending() -> int:
        return _meta_client(spark, path).getActiveTimeline().filterPendingCompactionTimeline().countInstants()

    assert pending() == 1 and "COMPACT" not in operations(spark, path)
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "sink.options": options})
    assert run_once(cfg, spark).totals["messages"] == 0
    assert pending() == 0 and "COMPACT" in operations(spark, path)
    want = {i: 8 + i for i in range(4)}
    assert {r["id"]: r["v"] for r in spark_rows(spark, path)} == want == {r["id"]: r["v"] for r in hudi_rs_rows(path)}


def test_batches_keep_committing_while_a_compaction_runs_in_the_background(spark, bootstrap, make_topic, produce,
                                                                           tmp_path, monkeypatch):
    """Issue 15: a write only schedules the plan; the compactor thread executes it while later batches commit (here
    it starts once two more batches have committed), and the table ends exact for Spark and hudi-rs."""
    import time

    from cdcsync.runtime.compactor import Compactor
    from cdcsync.sinks.hudi import _meta_client

    execute, started = Compactor._execute, []

    def late_execute(self):  # the first compaction starts once two more batches have committed
        deadline = time.monotonic() + 120
        while not started and self._behind < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        started.append(self._behind)
        execute(self)

    monkeypatch.setattr(Compactor, "_execute", late_execute)
    topic = make_topic()
    produce(topic, [{"id": i % 4, "v": i} for i in range(28)])  # 7 batches of 4: 4 keys updated each batch
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.max_records_per_batch": 4,
                          "sink.options": {"hoodie.compact.inline.max.delta.commits": "2"}})
    assert run_once(cfg, spark).batches == 7
    path = str(tmp_path / "table")
    tl = _meta_client(spark, path).getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    instants = [(tl.readCommitMetadata(i).getOperationType().toString(), i.requestedTime(), i.getCompletionTime())
                for i in tl.getInstants()]
    compactions = [(req, done) for op, req, done in instants if op == "COMPACT"]
    assert compactions, instants
    req, done = compactions[0]
    during = [r for op, r, d in instants if op == "UPSERT" and req < r and d < done]
    assert started[0] >= 2 and len(during) >= 2, f"delta commits completed while the compaction ran: {instants}"
    want = {i: 24 + i for i in range(4)}
    assert {r["id"]: r["v"] for r in spark_rows(spark, path)} == want == {r["id"]: r["v"] for r in hudi_rs_rows(path)}
