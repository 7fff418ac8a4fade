"""Issue 17 (submitting to a cluster): the line README gives — `eval spark-submit "$(cdcsync spark-submit-args
c.toml)" run c.toml --once` — runs cdcsync under pyspark's own spark-submit, whose JVM carries the jars and
settings from the command line, and lands the exact table; with -q the summary is alone on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.engine.helpers import by_key, expected_state, produce_fixture, spark_rows, write_config

pytestmark = pytest.mark.integration


def test_spark_submit_runs_a_config(spark, bootstrap, make_topic, produce, tmp_path):
    import pyspark

    topic = make_topic(partitions=2)
    fixture = "debezium-1.9-mysql-schema.txt"
    n = produce_fixture(produce, topic, fixture)
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "spark.master": "local[2]"})
    home = Path(pyspark.__file__).parent
    line = f'eval "$SPARK_HOME/bin/spark-submit" "$({sys.executable} -m cdcsync spark-submit-args {cfg})" run {cfg} ' \
           "--once --json -q"  # -q: spark-submit's PythonRunner merges the driver's stderr into its stdout
    proc = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "SPARK_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["totals"]["messages"] == n
    assert by_key(spark_rows(spark, str(tmp_path / "table")), ["id"]) == expected_state(fixture, ["id"])
