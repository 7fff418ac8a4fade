"""Issue 18: `cdcsync run --once` from cron, back to back, each process with new data: every run exits 0, across
the metadata table's compaction (after 10 delta commits), and the table ends as the messages say.

With Hudi 1.2.0 a process whose first write triggered that compaction failed with exit 74 (ArrayIndexOutOfBounds in
HoodieMetadataPayload.getInsertValue): here each run writes one commit, so every such compaction is one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import cdcsync
from tests.integration.engine.helpers import hudi_rs_rows, spark_rows, write_config

# 20 cdcsync processes, each starting its own JVM
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.soak]

RUNS = 20
KEYS = 6  # each run upserts 3 of them


def completed(timeline: Path) -> list[tuple[str, str]]:
    """(requested time, action) of the completed instants ("<requested>_<completed>.<action>" files), in order."""
    done = (f.name for f in timeline.iterdir() if "_" in f.name and not f.name.startswith("."))
    return sorted((name.split("_")[0], name.rsplit(".", 1)[1]) for name in done)


def compactions_by_a_first_write(table: Path) -> int:
    """Metadata-table compactions triggered while a run committed its delta commit (its first and only write), not
    while Hudi's inline compaction of the data table (a run's second write) committed."""
    data = completed(table / ".hoodie" / "timeline")
    count = 0
    for t, action in completed(table / ".hoodie" / "metadata" / ".hoodie" / "timeline"):
        if action == "commit":
            before = [a for d, a in data if d < t]
            count += bool(before) and before[-1] == "deltacommit"
    return count


def test_cron_runs_all_exit_zero_across_the_metadata_compaction(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "spark.master": "local[2]",
                          "spark.spark.sql.shuffle.partitions": "2"})
    want: dict[int, int] = {}
    for run in range(RUNS):
        msgs = [{"id": (run + i) % KEYS, "v": run * 10 + i} for i in range(3)]
        produce(topic, msgs)
        want.update((m["id"], m["v"]) for m in msgs)
        p = cdcsync("run", cfg, "--once", "--json", "-q")
        assert p.returncode == 0, f"run {run} exited {p.returncode}:\n{p.stderr[-4000:]}"
        summary = json.loads(p.stdout)
        assert summary["batches"] == 1 and summary["totals"]["messages"] == 3, summary
    table = tmp_path / "table"
    assert compactions_by_a_first_write(table) >= 1  # the case issue 18 failed on was crossed
    assert {r["id"]: r["v"] for r in spark_rows(spark, str(table))} == want
    assert {r["id"]: r["v"] for r in hudi_rs_rows(str(table))} == want
