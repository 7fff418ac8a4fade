"""Acceptance (issue 3, point 8): the same config on a multi-process Spark cluster (`local-cluster[2,1,1024]`: a
master, two worker JVMs, executors in separate processes) gives the same table as `local[2]`."""

from __future__ import annotations

import json

import pytest

from tests.cli import cdcsync
from tests.integration.engine.helpers import by_key, expected_state, produce_fixture, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration


@pytest.mark.soak  # three JVMs (driver and two executors) started for one table
def test_local_cluster_gives_the_same_table(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    fixture = "debezium-1.9-mysql-schema.txt"
    n = produce_fixture(produce, topic, fixture)  # keyed by id, as the connector keys them: one key, one partition
    local_dir, cluster_dir = tmp_path / "local", tmp_path / "cluster"
    local_dir.mkdir()
    cluster_dir.mkdir()
    run_once(write_config(local_dir, bootstrap, topic, "debezium-json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"]}), spark)
    cfg = write_config(cluster_dir, bootstrap, topic, "debezium-json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "spark.master": "local-cluster[2,1,1024]",
                          "spark.spark.executor.memory": "768m"})
    proc = cdcsync("run", cfg, "--once", "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert summary["totals"]["messages"] == n
    local = by_key(spark_rows(spark, str(local_dir / "table")), ["id"])
    cluster = by_key(spark_rows(spark, str(cluster_dir / "table")), ["id"])
    assert local == expected_state(fixture, ["id"]) and cluster == local
