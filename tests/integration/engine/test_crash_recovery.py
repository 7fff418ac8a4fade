"""Acceptance (issue 3, point 3): `kill -9` the run before, during and after a Hudi commit, restart, and the
final table holds every message exactly once. The topic is insert-only json with unique ids and no primary key,
so a duplicate would show as an extra row."""

from __future__ import annotations

import signal

import pytest

from tests import cli
from tests.integration.engine.helpers import hudi_rs_rows, spark_rows, write_config

pytestmark = pytest.mark.integration

N = 600
BATCH = 100


@pytest.mark.soak  # three killed processes and their restarts, each a JVM
def test_kill_minus_nine_before_during_after_commit(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    produce(topic, [{"id": i, "payload": f"row-{i}"} for i in range(N)])
    config = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                          **{"run.max_records_per_batch": BATCH})

    # batch 0 committed, batch 1 killed before its write
    code, err = cli.run_killed("run", config, "--once", fault="before_write:1")
    assert code == -signal.SIGKILL, err[-2000:]
    # batch 1 redone; batch 2 committed, then killed
    code, err = cli.run_killed("run", config, "--once", fault="after_write:2")
    assert code == -signal.SIGKILL, err[-2000:]
    # killed while Hudi writes batch 3
    code, err = cli.run_killed("run", config, "--once", kill_on="writing batch=3", delay=2.0)
    assert code == -signal.SIGKILL, err[-2000:]
    code, err = cli.run_killed("run", config, "--once")  # the restart finishes the topic
    assert code == 0, err[-3000:]

    rows = spark_rows(spark, str(tmp_path / "table"))
    ids = [r["id"] for r in rows]
    assert len(ids) == N, f"{len(ids)} rows for {N} messages"
    assert sorted(ids) == list(range(N)), "lost or duplicated rows"
    rs_ids = sorted(r["id"] for r in hudi_rs_rows(str(tmp_path / "table")))
    assert rs_ids == list(range(N))
