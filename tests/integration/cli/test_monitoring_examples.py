"""The monitoring examples (issue 48) read only what `run` exposes: every metric name in every query of the Grafana
dashboard (examples/grafana/cdcsync.json) and of the Prometheus rules (examples/prometheus/cdcsync-rules.yml) is one
a real run's /metrics offers, or the textfile's own last-success series (tests/integration/cli/
test_metrics_textfile.py checks that one)."""

from __future__ import annotations

import pytest

from cdcsync.runtime.metrics import LAST_SUCCESS
from devtools.local_kafka import free_port
from tests import cli, promql
from tests.integration.engine.helpers import write_config

pytestmark = pytest.mark.integration

TEXTFILE_ONLY = {LAST_SUCCESS}  # `run --once --metrics-textfile` adds it; /metrics has no use for it


def test_every_dashboard_and_rule_query_reads_metrics_a_real_run_exposes(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    produce(topic, [{"id": i} for i in range(10)] + ["{bad"], partition=0)
    port = free_port()
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.trigger_interval": "1s",
                          "run.on_bad_record": "dead-letter"})
    proc = cli.start("run", cfg, "--metrics-port", port)
    try:
        text = cli.wait_until("a committed batch", lambda: (t := cli.http_get(f"http://127.0.0.1:{port}/metrics")[1])
                              and cli.metric_series(t, "cdcsync_batches_total") and t)
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    exposed = promql.exposed_names(text)
    assert not exposed & TEXTFILE_ONLY
    queries = {**promql.dashboard_queries(), **promql.rule_queries()}
    unknown = {where: sorted(names) for where, expr in queries.items()
               if (names := promql.metric_names(expr) - exposed - TEXTFILE_ONLY)}
    assert not unknown, f"metric names /metrics does not expose: {unknown}"
    used = set().union(*(promql.metric_names(e) for e in queries.values()))
    # a histogram or counter a query means is read under one of its series names, never the bare family name
    assert len(used) >= 20 and "cdcsync_batch_stage_duration_seconds" not in used
