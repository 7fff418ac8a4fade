"""Issue 17, point 3: with [catalog], `run` registers its tables (the main one and the dead-letter one) in a Hive
metastore (an embedded Derby one here), so another Spark application queries them by name; a column added later is
seen by name too, in the metastore's schema as well. Each step is its own process, as an operator's would be:
an embedded Derby metastore admits one JVM at a time, and a run that finds it held stops before any batch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cdcsync.exit_codes import ExitCode
from tests import cli
from tests.integration.engine.helpers import write_config

pytestmark = pytest.mark.integration

QUERY = """
import json, sys
from cdcsync.config import load_config
from cdcsync.runtime.session import build_session
cfg = load_config(sys.argv[1])
spark = build_session("catalog-query", "local[1]", cfg.catalog.spark_settings())
rows = lambda q: [r.asDict() for r in spark.sql(q).collect()]
stored = spark._jsparkSession.sessionState().catalog().externalCatalog().getTable("lake", "t").dataSchema()
print(json.dumps({"tables": sorted(t.name for t in spark.catalog.listTables("lake")),
                  "count": rows("SELECT count(*) AS n FROM lake.t")[0]["n"],
                  "dead": rows("SELECT reason FROM lake.t_dead_letter"),
                  "extra": rows(sys.argv[2]) if len(sys.argv) > 2 else None,
                  "stored": list(stored.fieldNames())}), flush=True)
if len(sys.argv) > 3:  # "hold": keep the embedded metastore open, as another application would
    import time
    time.sleep(300)
"""


def query(cfg, sql: str | None = None) -> dict:
    p = subprocess.run([sys.executable, "-c", QUERY, str(cfg), *([sql] if sql else [])], capture_output=True,
                       text=True, timeout=300, env=cli._env(None))
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def query_and_hold(cfg, sql: str) -> tuple[dict, subprocess.Popen]:
    """`query`'s answer, from a process that then keeps the metastore open until killed."""
    p = subprocess.Popen([sys.executable, "-c", QUERY, str(cfg), sql, "hold"], stdout=subprocess.PIPE, text=True,
                         env=cli._env(None))
    line = p.stdout.readline()
    if not line:
        p.kill()
        pytest.fail(f"the query process ended ({p.wait()}) without an answer")
    return json.loads(line), p


@pytest.mark.soak  # three runs and two query processes, each a JVM
def test_tables_are_queryable_by_name_and_a_later_column_shows(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": i, "name": f"n{i}"} for i in range(10)] + ["{not json"])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ", **{
        "sink.primary_key": ["id"], "run.on_bad_record": "dead-letter",
        "catalog.database": "lake", "catalog.metastore_dir": str(tmp_path / "metastore")})
    first = cli.cdcsync("run", cfg, "--once", timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    seen = query(cfg)
    assert seen["tables"] == ["t", "t_dead_letter"] and seen["count"] == 10
    assert seen["dead"] == [{"reason": "invalid_json"}] and "extra" not in seen["stored"]

    produce(topic, [{"id": 3, "name": "n3", "extra": "added"}, {"id": 20, "name": "n20", "extra": "new"}])
    second = cli.cdcsync("run", cfg, "--once", timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    seen, holder = query_and_hold(cfg, "SELECT id, extra FROM lake.t WHERE extra IS NOT NULL ORDER BY id")
    try:
        assert seen["count"] == 11
        assert seen["extra"] == [{"id": 3, "extra": "added"}, {"id": 20, "extra": "new"}]
        assert "extra" in seen["stored"], "the metastore's own schema has the new column"
        assert not (tmp_path / "derby.log").exists() and not (cli.ROOT / "derby.log").exists()
        busy = cli.cdcsync("run", cfg, "--once", timeout=300)  # another process holds the embedded metastore
    finally:
        holder.kill()
        holder.wait()
    assert busy.returncode == ExitCode.SINK_WRITE, busy.stderr[-3000:]
    assert "the [catalog] metastore at" in busy.stderr and "one process at a time" in busy.stderr
