"""A continuous `run` with `--metrics-port` (issue 18): /metrics counts what the topic holds and the table got, lag
included; /healthz turns unhealthy when the loop is stuck."""

from __future__ import annotations

import json

import pytest

from devtools.local_kafka import free_port
from tests import cli
from tests.integration.engine.helpers import hudi_rs_rows, write_config

pytestmark = pytest.mark.integration


def test_metrics_match_the_topic_and_the_table_and_healthz_sees_a_stuck_loop(bootstrap, make_topic, produce,
                                                                           tmp_path):
    topic = make_topic(partitions=2)
    produce(topic, [{"id": i, "v": f"v{i}"} for i in range(30)], partition=0)
    produce(topic, [{"id": 100 + i} for i in range(20)] + ["{bad"], partition=1)
    port = free_port()
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.trigger_interval": "1s", "run.max_records_per_batch": 20,
                          "run.on_bad_record": "dead-letter", "run.stuck_after": "4s"})
    # batch 3 (the first after the 51 messages: 20 + 20 + 11) hangs before its write: a stuck loop
    proc = cli.start("run", cfg, "--metrics-port", port, env={"CDCSYNC_FAULT": "before_write:3:STALL"})
    base = f"http://127.0.0.1:{port}"
    try:
        text = cli.wait_until("three batches", lambda: (t := cli.http_get(f"{base}/metrics")[1]) and
                     cli.metric_series(t, "cdcsync_batches_total").get((("table", "t"),)) == 3 and t)
        assert {"-Xms2g", "-XX:+AlwaysPreTouch"} <= set(cli.jvm_args(proc.pid)), "a service's heap is fixed"
        messages = cli.metric_series(text, "cdcsync_messages_total")
        assert messages == {(("partition", "0"), ("table", "t"), ("topic", topic)): 30,
                            (("partition", "1"), ("table", "t"), ("topic", topic)): 21}
        records = cli.metric_series(text, "cdcsync_records_total")
        upserted = sum(v for k, v in records.items() if ("class", "upserted") in k)
        assert upserted == len(hudi_rs_rows(str(tmp_path / "table"))) == 50
        assert sum(v for k, v in records.items() if ("class", "bad") in k) == 1
        assert cli.metric_series(text, "cdcsync_dead_letter_records_total") == {(("table", "t"),): 1}
        stages = cli.metric_series(text, "cdcsync_batch_stage_duration_seconds_count")
        assert {dict(k)["stage"]: v for k, v in stages.items()} == {"read_decode": 3, "dead_letter": 1, "write": 3}
        # the loop plans again every second: lag as the brokers see it
        cli.wait_until("zero lag", lambda: set(cli.metric_series(cli.http_get(f"{base}/metrics")[1],
                                              "cdcsync_consumer_lag_messages").values()) == {0.0}, 30)
        assert cli.http_get(f"{base}/healthz")[0] == 200

        produce(topic, [{"id": 200 + i} for i in range(5)], partition=0)
        cli.wait_until("lag of the 5 new messages", lambda: cli.metric_series(cli.http_get(f"{base}/metrics")[1],
                                                           "cdcsync_consumer_lag_messages").get(
            (("partition", "0"), ("topic", topic))) == 5, 30)
        status, body = cli.wait_until("/healthz to fail",
                                      lambda: (r := cli.http_get(f"{base}/healthz"))[0] == 503 and r, 30)
        assert json.loads(body)["status"] == "stuck"
    finally:
        proc.kill()
        out, err = proc.communicate(timeout=60)
    assert f"metrics on http://0.0.0.0:{port}/metrics" in err
