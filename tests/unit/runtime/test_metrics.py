"""run's metrics (issue 18): what the loop reports becomes Prometheus series, and /healthz says when it is stuck."""

import json
import time

from prometheus_client.parser import text_string_to_metric_families

from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import BatchResult
from cdcsync.runtime.metrics import RunMetrics
from tests import cli


def _samples(text: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def test_batches_lag_and_health_over_http():
    m = RunMetrics("orders", stuck_after_s=2.0)
    port = m.serve("127.0.0.1", 0)
    try:
        now_ms = int(time.time() * 1000)
        ledger = {"t/0": {"messages": 10, "rows": 10, "upserted": 7, "deleted": 2, "skipped": 0, "bad": 1,
                          "newest_ms": now_ms - 5000}}
        m.batch_committed(BatchResult(0, Offsets({"t": {0: 0}}), Offsets({"t": {0: 10}}), "1", ledger,
                                      stages={"read_decode": 1.5, "write": 0.75}), 2.5)
        m.dead_lettered(1)
        m.lag_seen(Offsets({"t": {0: 10, 1: 0}}), Offsets({"t": {0: 14, 1: 3}}))
        status, text = cli.http_get(f"http://127.0.0.1:{port}/metrics")
        got = _samples(text)
        assert status == 200
        assert got[("cdcsync_records_total", (("class", "upserted"), ("partition", "0"), ("table", "orders"),
                                              ("topic", "t")))] == 7
        assert got[("cdcsync_messages_total", (("partition", "0"), ("table", "orders"), ("topic", "t")))] == 10
        assert got[("cdcsync_dead_letter_records_total", (("table", "orders"),))] == 1
        assert got[("cdcsync_batches_total", (("table", "orders"),))] == 1
        assert got[("cdcsync_consumer_lag_messages", (("partition", "0"), ("topic", "t")))] == 4
        assert got[("cdcsync_consumer_lag_messages", (("partition", "1"), ("topic", "t")))] == 3
        assert 4 < got[("cdcsync_consumer_lag_seconds", (("partition", "0"), ("topic", "t")))] < 60
        assert 4 < got[("cdcsync_freshness_seconds", (("table", "orders"),))] < 60
        assert got[("cdcsync_batch_duration_seconds_sum", (("table", "orders"),))] == 2.5
        assert got[("cdcsync_batch_stage_duration_seconds_sum", (("stage", "write"), ("table", "orders")))] == 0.75

        m.beat()  # the metric checks above may take longer than a busy machine's share of stuck_after
        status, body = cli.http_get(f"http://127.0.0.1:{port}/healthz")
        assert status == 200 and json.loads(body)["status"] == "ok"
        time.sleep(2.3)  # no sign of life for longer than stuck_after
        status, body = cli.http_get(f"http://127.0.0.1:{port}/healthz")
        assert status == 503 and json.loads(body)["status"] == "stuck"
        m.beat()
        assert cli.http_get(f"http://127.0.0.1:{port}/healthz")[0] == 200
    finally:
        m.close()
