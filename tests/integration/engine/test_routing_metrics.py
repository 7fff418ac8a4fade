"""Per-table metrics of a routed run (issue 46): a service with `--metrics-port` landing two PostgreSQL tables of one
Debezium topic in two MERGE_ON_READ tables that compact; /metrics gives each routed table, by its own name, its
records, its commits, its compactions (scheduled and completed, as its timeline has them), its write failures and
its lag, while the run-wide series keep [sink] table_name. Then one table's storage breaks (its hoodie.properties a
directory, as in test_routing_isolation.py): it is set aside, its failure counted under the reason its error
gives, and it lags by everything produced since, while the other catches up."""

from __future__ import annotations

import json
import re

import pytest

from bench.tables import DB, SCHEMA, Tables, changes
from cdcsync import storage
from cdcsync.runtime.compactor import HadoopFiles
from cdcsync.runtime.metrics import FAILURE_REASONS
from cdcsync.sinks import timeline
from devtools.local_kafka import free_port
from tests import cli
from tests.integration.engine.helpers import by_key, hudi_rs_rows
from tests.integration.engine.test_routing import routed_config

pytestmark = pytest.mark.integration

WORKLOAD = Tables(tables=2, changes=40, keys=10)
FIRST, PER_BATCH = 60, 20  # 3 batches, each with rows of both tables: a first load, then delta commits, compacted
BATCHES = FIRST // PER_BATCH
TABLES = ("t000", "t001")
BROKEN = "t001"


def _series(text: str, name: str) -> dict:
    return {dict(k).get("table"): v for k, v in cli.metric_series(text, name).items()}


def _by_table(text: str, name: str, label: str) -> dict:
    return {(dict(k)["table"], dict(k)[label]): v for k, v in cli.metric_series(text, name).items()}


@pytest.mark.soak  # a service run scraped batch by batch
def test_each_routed_table_has_its_records_lag_failures_and_compactions_on_metrics(bootstrap, make_topic, produce,
                                                                                   tmp_path):
    topic = make_topic(partitions=2)
    state: dict = {}
    events = changes(WORKLOAD, state)
    first = [next(events) for _ in range(FIRST)]
    want = {t: by_key(list(state[t].values()), ["id"]) for t in TABLES}  # the tables after the first changes
    rest = list(events)
    produce(topic, [e for _, _, e in first], keys=[json.dumps(k) for _, k, _ in first])
    cfg = routed_config(tmp_path, bootstrap, topic, "debezium-json",
                        [{"source_table": f"{DB}\\.{SCHEMA}\\..*", "sink_table": "<>"}],
                        **{"run.trigger_interval": "1s", "run.max_records_per_batch": PER_BATCH,
                           # inline compaction after each delta commit; updates in log files, not in a rewrite of
                           # the small base file (which leaves a compaction nothing to plan)
                           "sink.options": {"hoodie.datasource.compaction.async.enable": "false",
                                            "hoodie.compact.inline.max.delta.commits": "1",
                                            "hoodie.parquet.small.file.limit": "0"}})
    port = free_port()
    proc = cli.start("run", cfg, "--metrics-port", port)
    base = f"http://127.0.0.1:{port}/metrics"
    try:
        text = cli.wait_until(f"{BATCHES} batches", lambda: (t := cli.http_get(base)[1]) and cli.metric_series(
            t, "cdcsync_batches_total").get((("table", "unrouted_rows"),)) == BATCHES and t, 900)
        rows = _by_table(text, "cdcsync_table_rows_total", "class")
        for table in TABLES:
            ops = [e["op"] for name, _, e in first if name == table]
            assert rows.get((table, "upserted"), 0) == sum(op in ("c", "u") for op in ops), (table, rows)
            assert rows.get((table, "deleted"), 0) == ops.count("d"), (table, rows)
            assert by_key(hudi_rs_rows(str(tmp_path / "db" / table)), ["id"]) == want[table]
        assert {t for t, _ in rows} == set(TABLES)  # nothing under [sink] table_name, which got no row
        assert _series(text, "cdcsync_hudi_commits_total") == {t: BATCHES for t in TABLES}
        # the run-wide ledger keeps the config's name
        assert sum(cli.metric_series(text, "cdcsync_messages_total").values()) == FIRST
        assert {dict(k)["table"] for k in cli.metric_series(text, "cdcsync_messages_total")} == {"unrouted_rows"}

        compacted = {}
        for table in TABLES:  # what each table's timeline says, on the table's own series
            listed = timeline.instants(str(tmp_path / "db" / table))
            plans = {i.requested for i in listed if i.action == "compaction"}
            done = [i for i in listed if i.action == "commit" and i.completed and i.requested in plans]
            assert len(plans) == len(done) >= 1, (table, listed)  # inline: each completed within its batch
            compacted[table] = len(done)
        assert _series(text, "cdcsync_hudi_compactions_scheduled_total") == compacted
        assert _series(text, "cdcsync_hudi_compactions_total") == compacted
        assert _series(text, "cdcsync_hudi_compaction_duration_seconds_count") == compacted
        assert _by_table(text, "cdcsync_table_write_failures_total", "reason") == {
            (t, reason): 0 for t in TABLES for reason in FAILURE_REASONS}
        assert _series(text, "cdcsync_table_lag_messages") == {t: 0 for t in TABLES}

        props = tmp_path / "db" / BROKEN / ".hoodie" / "hoodie.properties"
        props.rename(tmp_path / "saved.properties")
        props.mkdir()
        produce(topic, [e for _, _, e in rest], keys=[json.dumps(k) for _, k, _ in rest])
        text = cli.wait_until(f"{BROKEN} set aside", lambda: (t := cli.http_get(base)[1]) and cli.metric_series(
            t, "cdcsync_batches_total").get((("table", "unrouted_rows"),)) == BATCHES + 1 and t, 600)
        failures = _by_table(text, "cdcsync_table_write_failures_total", "reason")
        counted = {reason: n for (t, reason), n in failures.items() if t == BROKEN and n}
        assert len(counted) == 1 and list(counted.values()) == [1], failures  # a service tries again after 30 s
        reason = next(iter(counted))
        assert reason in FAILURE_REASONS and set(failures) == {(t, r) for t in TABLES for r in FAILURE_REASONS}
        assert not any(n for (t, _), n in failures.items() if t != BROKEN)
        # everything produced since stands past the table set aside; the other caught up
        assert _series(text, "cdcsync_table_lag_messages") == {"t000": 0, BROKEN: len(rest)}
        assert _series(text, "cdcsync_hudi_commits_total") == {"t000": BATCHES + 1, BROKEN: BATCHES}
        rows = _by_table(text, "cdcsync_table_rows_total", "class")
        assert sum(n for (t, _), n in rows.items() if t == BROKEN) == sum(1 for t, _, _ in first if t == BROKEN)
        assert sum(n for (t, _), n in rows.items() if t == "t000") == sum(1 for t, _, _ in first + rest if t == "t000")
    finally:
        proc.kill()
        err = proc.communicate(timeout=60)[1]
        print(err[-6000:])  # the run's log, shown when the test fails
    said = re.search(rf"table {BROKEN} is set aside \(run.on_table_failure = \"isolate\"\): (\w+): ", err)
    assert said and said.group(1) == reason, err[-3000:]  # the label is the reason the run gave


def test_a_timeline_is_listed_through_hadoop_as_directly(spark, tmp_path):
    """How Compactions lists a table on any Hadoop path (hdfs://, s3a://, …): here a local folder, both ways."""
    (tmp_path / "history").mkdir()
    for name in ("20261128120000000.compaction.requested", "20261128120000000_20261128120005000.commit"):
        (tmp_path / name).write_bytes(b"")
    through_hadoop = HadoopFiles(spark).entries(tmp_path.as_uri())
    assert through_hadoop == storage.Files().entries(str(tmp_path)) != {}
    assert HadoopFiles(spark).entries((tmp_path / "missing").as_uri()) == {}
