"""Issue 17, point 2: the same config on a Spark standalone cluster — a master and a worker started from the PySpark
wheel, two executors in their own JVMs, writing to the S3 server — gives the same table as `local[2]`. In standalone
mode the driver runs no task, so an exact table is the executors' work; the worker's directories show the two
executors it launched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from devtools.local_kafka import free_port
from tests.cli import cdcsync, http_get, wait_until
from tests.integration.engine.helpers import (
    by_key,
    expected_state,
    hudi_rs_rows,
    produce_fixture,
    run_once,
    spark_rows,
    write_config,
)

pytestmark = pytest.mark.integration


def _spark_class(*args: str, log: Path) -> subprocess.Popen:
    import pyspark

    home = Path(pyspark.__file__).parent
    env = {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    d = tmp_path_factory.mktemp("standalone")
    port, ui, worker_ui = free_port(), free_port(), free_port()
    master = _spark_class("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                          "--webui-port", str(ui), log=d / "master.log")
    worker = _spark_class("org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host",
                          "127.0.0.1", "--cores", "2", "--memory", "2g", "--work-dir", str(d / "work"),
                          "--webui-port", str(worker_ui), log=d / "worker.log")
    try:
        wait_until("a worker registered with the master", lambda: (lambda s, body: s == 200 and json.loads(
            body).get("aliveworkers", 0) >= 1)(*http_get(f"http://127.0.0.1:{ui}/json/")), timeout=120)
        yield f"spark://127.0.0.1:{port}", d / "work"
    finally:
        for p in (worker, master):
            os.killpg(p.pid, 15)
            p.wait(timeout=60)


@pytest.mark.soak  # a master, a worker and two executor JVMs started for one table
def test_standalone_cluster_gives_the_same_table(standalone, s3_server, spark, bootstrap, make_topic, produce,
                                                 tmp_path):
    master, work = standalone
    topic = make_topic(partitions=2)
    fixture = "debezium-1.9-mysql-schema.txt"
    n = produce_fixture(produce, topic, fixture)
    local_dir, cluster_dir = tmp_path / "local", tmp_path / "cluster"
    local_dir.mkdir()
    cluster_dir.mkdir()
    run_once(write_config(local_dir, bootstrap, topic, "debezium-json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"]}), spark)
    prefix = f"{s3_server.bucket}/{uuid.uuid4().hex[:10]}"
    cfg = write_config(cluster_dir, bootstrap, topic, "debezium-json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "sink.path": f"s3a://{prefix}/table",
                          "run.checkpoint_dir": f"s3a://{prefix}/ckpt", **s3_server.storage(),
                          "spark.master": master, "spark.spark.executor.cores": "1",
                          "spark.spark.cores.max": "2", "spark.spark.executor.memory": "768m",
                          "spark.spark.driver.host": "127.0.0.1"})
    t0 = time.time()
    proc = cdcsync("run", cfg, "--once", "--json", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["totals"]["messages"] == n
    local = by_key(spark_rows(spark, str(local_dir / "table")), ["id"])
    cluster = by_key(hudi_rs_rows(f"s3://{prefix}/table", s3_server.reader_options()), ["id"])
    assert local == expected_state(fixture, ["id"]) and cluster == local
    apps = [a for a in work.iterdir() if a.stat().st_mtime >= t0 - 5]
    assert len(apps) == 1 and sorted(e.name for e in apps[0].iterdir()) == ["0", "1"], apps  # two executors
