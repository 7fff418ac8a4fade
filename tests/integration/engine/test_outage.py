"""Brokers that go away during a continuous `run` (issue 18): a 30 s outage is waited out, shown in the metrics, and
the table ends exact; an outage longer than [run] source_unavailable_timeout ends the run with exit 69."""

from __future__ import annotations

import json
import signal
import time

import pytest

from cdcsync.exit_codes import ExitCode
from devtools.local_kafka import BrokerSpec, Listener, LocalBroker, free_port
from tests import cli
from tests.integration.engine.helpers import hudi_rs_rows, write_config

pytestmark = [pytest.mark.integration, pytest.mark.soak]  # its own broker, stopped for 30 s


def _produce(bootstrap: str, topic: str, ids) -> None:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in ids:
        p.send(topic, key=str(i).encode(), value=json.dumps({"id": i, "v": f"v{i}"}).encode())
    p.flush()
    p.close()


def test_a_broker_outage_is_waited_out_and_a_long_one_exits_69(tmp_path):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    broker = LocalBroker(BrokerSpec(tmp_path / "kafka", [Listener("PLAINTEXT", free_port())])).start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.create_topics([NewTopic("orders", 2, 1)])
        admin.close()
        _produce(broker.bootstrap, "orders", range(40))
        port = free_port()
        cfg = write_config(tmp_path, broker.bootstrap, "orders", "json", "COPY_ON_WRITE",
                           **{"sink.primary_key": ["id"], "run.trigger_interval": "1s",
                              "run.source_unavailable_timeout": "3min"})
        base = f"http://127.0.0.1:{port}/metrics"
        proc = cli.start("run", cfg, "--metrics-port", port)
        try:
            cli.wait_until("the first rows", lambda: cli.metric_series(cli.http_get(base)[1],
                                                                       "cdcsync_messages_total"))
            cli.wait_until("all 40 messages", lambda: sum(cli.metric_series(
                cli.http_get(base)[1], "cdcsync_messages_total").values()) == 40)
            broker.stop()
            cli.wait_until("the outage in the metrics", lambda: cli.metric_series(
                cli.http_get(base)[1], "cdcsync_source_available") == {(): 0.0}, 60)
            time.sleep(30)
            assert proc.poll() is None  # still waiting, not dead
            broker.resume()
            _produce(broker.bootstrap, "orders", range(40, 60))
            text = cli.wait_until("the 20 messages after the outage", lambda: (t := cli.http_get(base)[1]) and sum(
                cli.metric_series(t, "cdcsync_messages_total").values()) == 60 and t, 180)
            assert cli.metric_series(text, "cdcsync_source_outages_total") == {(): 1.0}
            assert cli.metric_series(text, "cdcsync_source_available") == {(): 1.0}
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == ExitCode.OK, err[-3000:]
        assert "is not answering" in err and "answering again" in err
        assert sorted(r["id"] for r in hudi_rs_rows(str(tmp_path / "table"))) == list(range(60))

        # longer than the bound: exit 69 naming the brokers, nothing lost
        short = write_config(tmp_path, broker.bootstrap, "orders", "json", "COPY_ON_WRITE",
                             **{"sink.primary_key": ["id"], "run.trigger_interval": "1s",
                                "run.source_unavailable_timeout": "20s"})
        proc = cli.start("run", short)
        try:
            for line in proc.stderr:  # the run is up and idle once it reports its start
                if " start " in f" {line}":
                    break
            broker.stop()
            _, err = proc.communicate(timeout=180)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == ExitCode.UNREACHABLE, err[-3000:]
        assert broker.bootstrap in err and "source_unavailable_timeout" in err
    finally:
        broker.stop()
