"""Issue 8, point 5 (partial): with max_records_per_second a backlog is read in bounded batches at no more than the
rate. (The 200k-record memory-flatness run of the acceptance list is not part of this suite.)"""

from __future__ import annotations

import time

import pytest

from tests.integration.engine.helpers import run_once, spark_rows, write_config

pytestmark = pytest.mark.integration


def test_backlog_is_paced_in_bounded_batches(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    produce(topic, [{"id": i} for i in range(400)])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.max_records_per_second": 100,
                          "run.trigger_interval": "1s"})
    t0 = time.monotonic()
    summary = run_once(cfg, spark)
    elapsed = time.monotonic() - t0
    assert summary.batches == 4, summary.ledger
    assert summary.totals["messages"] == 400
    assert elapsed >= 400 / 100  # never faster than the rate
    assert len(spark_rows(spark, str(tmp_path / "table"))) == 400
