"""The dead-letter table is written in the batch, before its offsets advance: `kill -9` between the dead-letter
write and the main commit, restart, and the bad records are there once each (still with the time they were
first seen), the good rows exact, the ledger balanced."""

from __future__ import annotations

import signal

import pytest

from tests.cli import cdcsync
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once
from tests.integration.engine.test_dead_letter import config, expected_table, mixed, produce_mixed

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.soak  # a killed process and its restart, each starting a JVM
def test_crash_after_dead_lettering_before_commit(spark, bootstrap, make_topic, tmp_path):
    topic = make_topic(partitions=2)
    data = mixed(n_good=120, n_bad=24, n_ids=30, n_tombstones=3, seed=7)
    coords = produce_mixed(bootstrap, topic, data)
    cfg = config(tmp_path, bootstrap, topic)
    p = cdcsync("run", cfg, "--once", env={"CDCSYNC_FAULT": "before_write:0"})  # killed after the dead-letter write
    assert p.returncode == -signal.SIGKILL, p.stderr[-2000:]
    assert not (tmp_path / "table" / ".hoodie" / "hoodie.properties").exists()  # no main commit, no offsets
    dl_path = str(tmp_path / "table_dead_letter")
    first = {(r.partition, r.offset): r.first_seen for r in
             spark.read.format("hudi").load(dl_path).select("partition", "offset", "first_seen").collect()}
    want_bad = {(p_, o): reason for (p_, o), (k, reason) in zip(coords, data.expect, strict=True) if k == "bad"}
    assert set(first) == set(want_bad)

    summary = run_once(cfg, spark)  # the restart reads the same range again

    assert summary.totals["messages"] == len(coords) and summary.totals["bad"] == 24
    for tp, c in summary.ledger.items():
        assert c["messages"] == c["upserted"] + c["deleted"] + c["skipped"] + c["bad"], (tp, c)
    rows = spark.read.format("hudi").load(dl_path).select("partition", "offset", "reason", "first_seen").collect()
    assert len(rows) == 24  # once each
    assert {(r.partition, r.offset): r.reason for r in rows} == want_bad
    assert {(r.partition, r.offset): r.first_seen for r in rows} == first
    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == expected_table(data.rows)
