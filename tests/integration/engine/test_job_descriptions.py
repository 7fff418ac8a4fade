"""A batch's own Spark jobs carry its id and stage in the Spark UI and event log, not the description Hudi left."""

from __future__ import annotations

import pytest

from tests.integration.engine.helpers import kafka_rows, sync_rows, write_config

pytestmark = pytest.mark.integration

ONE_PASS = "cdcsync batch 0: read, decode, type, classify and count (the one pass)"


def _jobs(spark) -> dict[int, tuple[str | None, str]]:
    """Every job Spark's status store holds: id → (description, call site)."""
    sc = spark.sparkContext._jsc.sc()
    sc.listenerBus().waitUntilEmpty(10_000)  # the store is fed by the listener bus, after the jobs end
    jobs = sc.statusStore().jobsList(None)
    out = {}
    for i in range(jobs.size()):
        job = jobs.apply(i)
        described = job.description()
        out[job.jobId()] = (described.get() if described.isDefined() else None, job.name())
    return out


def test_a_batch_names_its_own_jobs_by_stage_and_leaves_no_name_behind(spark, tmp_path):
    from cdcsync.config import load_config

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"]}))
    values = [{"op": "c", "after": {"id": i, "name": "a"}, "ts_ms": 1} for i in range(3)]
    values.append({"op": "d", "before": {"id": 1, "name": "a"}, "ts_ms": 2})
    rows = kafka_rows(spark, values)
    before = max(_jobs(spark), default=-1)
    assert sync_rows(spark, cfg, rows).totals()["deleted"] == 1
    batch = {jid: job for jid, job in _jobs(spark).items() if jid > before}
    described = {d for d, _ in batch.values()}
    assert {"cdcsync batch 0: key and columns", ONE_PASS, "cdcsync batch 0: delete markers"} <= described
    ledger = [d for d, site in batch.values() if "ledger.py" in site]
    assert ledger and set(ledger) == {ONE_PASS}  # the pass's jobs, named by it
    assert any(d and d.startswith("SparkRDDWriteClient") for d in described)  # Hudi still names its own
    assert spark.sparkContext.getLocalProperty("spark.job.description") is None  # later jobs start unnamed


def test_a_batch_typed_again_the_full_way_names_the_inference_too(spark, tmp_path):
    from cdcsync.config import load_config

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"]}))
    sync_rows(spark, cfg, kafka_rows(spark, [{"op": "c", "after": {"id": 1, "name": "a"}, "ts_ms": 1}]))
    before = max(_jobs(spark))
    # a field the known columns lack: the rows do not fit, the batch's columns are inferred from all its records
    grown = sync_rows(spark, cfg, kafka_rows(spark, [{"op": "c", "after": {"id": 2, "name": "b", "extra": 7},
                                                      "ts_ms": 2}], first_offset=1))
    assert [c.column for c in grown.changes] == ["extra"]
    batch = [d for jid, (d, _) in _jobs(spark).items() if jid > before]
    assert "cdcsync batch 0: columns" in batch and ONE_PASS in batch


def test_a_batch_that_fails_leaves_no_name_behind(spark, tmp_path):
    from cdcsync.config import load_config
    from cdcsync.errors import ConfigError

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "MERGE_ON_READ",
                                   **{"sink.primary_key": ["id"], "sink.ordering_field": "versoin"}))
    with pytest.raises(ConfigError, match="ordering_field"):  # found once the batch's columns are: id, version
        sync_rows(spark, cfg, kafka_rows(spark, [{"op": "c", "after": {"id": 1, "version": 1}, "ts_ms": 1}]))
    assert spark.sparkContext.getLocalProperty("spark.job.description") is None
