"""`cdcsync status` on tables written by `run` (issue 18): offsets, lag, last commit and dead letters match what
Spark and the brokers say, and no JVM is started."""

from __future__ import annotations

import json

import pytest

from cdcsync.exit_codes import ExitCode
from cdcsync.sinks import hudi
from tests import cli
from tests.integration.engine.helpers import run_once, write_config

pytestmark = pytest.mark.integration


def test_status_matches_the_table_the_topic_and_the_dead_letters(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    good = [{"id": i, "v": f"v{i}"} for i in range(60)]
    produce(topic, good + ["{not json", "[1, 2"], keys=[str(i % 7) for i in range(62)])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.on_bad_record": "dead-letter",
                          "run.max_records_per_batch": 25})
    summary = run_once(cfg, spark)
    assert summary.batches >= 3 and summary.totals["bad"] == 2
    produce(topic, [{"id": 100 + i} for i in range(9)], partition=1)  # behind: 9 messages, all in partition 1

    p = cli.cdcsync("status", cfg, "--json", jvm_free=True)
    assert p.returncode == ExitCode.OK, p.stderr[-3000:]
    st = json.loads(p.stdout)
    last = hudi.last_checkpoint(spark, str(tmp_path / "table"))  # what Spark's Hudi client reads
    assert st["committed_offsets"] == last["offsets"].to_json() == summary.end_offsets.to_json()
    assert st["lag"] == {f"{topic}/0": 0, f"{topic}/1": 9} and st["lag_total"] == 9
    (table,) = st["tables"]
    assert table["last_commit"]["instant"] == last["instant"]
    assert table["last_commit"]["batch_id"] == last["batch_id"] == summary.batches - 1
    assert 0 <= table["last_commit"]["age_seconds"] < 600
    assert sum((c["records"] or {}).get("upserted", 0) for c in table["recent_commits"]) == 60
    dl = spark.read.format("hudi").load(str(tmp_path / "table_dead_letter"))
    want = {r["reason"]: r["count"] for r in dl.groupBy("reason").count().collect()}
    assert st["dead_letters"]["by_reason"] == want and st["dead_letters"]["total"] == 2
    assert st["writer"] is None and st["healthy"] is True

    behind = cli.cdcsync("status", cfg, "--max-lag", "8", jvm_free=True)  # the monitoring probe's form
    assert behind.returncode == ExitCode.WARNINGS, behind.stderr[-2000:]
    assert "9 messages behind, more than --max-lag 8" in behind.stdout and f"{topic}/1: 9" in behind.stdout
    assert cli.cdcsync("status", cfg, "--max-lag", "9", jvm_free=True).returncode == ExitCode.OK


def test_status_of_a_config_that_has_written_nothing(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": 1}, {"id": 2}])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"]})
    p = cli.cdcsync("status", cfg, "--json", "--max-age", "60", jvm_free=True)
    st = json.loads(p.stdout)
    assert p.returncode == ExitCode.WARNINGS and st["committed_offsets"] is None and st["lag_total"] == 2
    assert st["tables"][0]["last_commit"] is None and "no commit yet" in st["problems"][0]
