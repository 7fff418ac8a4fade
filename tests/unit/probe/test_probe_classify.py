"""Classification without a broker: failures → exit code, finding and fix; topic/group metadata → checks; the
verdict picks the first failing hop. Network cases use real local sockets that are not Kafka."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from cdcsync.kafka.security import Security
from cdcsync.probe.failures import classify as classify_failure
from cdcsync.probe.group import group_checks
from cdcsync.probe.hop import Client, Hop
from cdcsync.probe.net import WireError, parse_servers
from cdcsync.probe.report import FAIL, OK, SKIP, WARN, Check, Report
from cdcsync.probe.topics import topic_checks
from cdcsync.probe.walk import probe

SASL = Security(protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-256", username="alice", password="Secr3t-pw")


PLAINTEXT = Security()


def classify(role, layer, err, sec=PLAINTEXT, broker_id=None) -> Check:
    hop = Hop("broker-1.internal", 9092, role, broker_id=broker_id)
    classify_failure(hop, layer, err, time.perf_counter(), Client(sec, None, 5.0), None)
    assert hop.failure is not None and hop.failure is hop.checks[-1]
    return hop.failure


def test_parse_servers():
    assert parse_servers(" a:1, [::1]:9093 ,b.example.com:9092") == [("a", 1), ("::1", 9093), ("b.example.com", 9092)]
    for bad in ("a", "a:", ":9092", "a:99999", "a:x", ""):
        with pytest.raises(ValueError):
            parse_servers(bad)


def test_dns_failure_of_an_advertised_listener_names_host_and_fix():
    c = classify("broker", "dns", WireError("nxdomain", "x", reason="Name or service not known"), broker_id=1)
    assert (c.code, c.layer) == (68, "dns")
    assert c.finding == "advertised listener broker-1.internal:9092 (broker 1) does not resolve from this host"
    assert c.hint == ("set advertised.listeners to an address clients can reach, or add a listener for external "
                      "clients")


def test_dns_failure_of_the_bootstrap_points_at_bootstrap_servers():
    c = classify("bootstrap", "dns", WireError("nxdomain", "x"))
    assert c.code == 68 and "bootstrap.servers" in c.hint
    assert classify("bootstrap", "dns", WireError("timeout", "slow")).finding.endswith("did not answer in 5s")


@pytest.mark.parametrize("kind, words", [("refused", "refuses connections"), ("timeout", "does not answer TCP"),
                                         ("unreachable", "no network route")])
def test_tcp_failures_exit_69(kind, words):
    c = classify("broker", "tcp", WireError(kind, "x"), broker_id=2)
    assert c.code == 69 and words in c.finding


def test_sasl_failures():
    not_offered = classify("bootstrap", "sasl", WireError("not_offered", "x", enabled=[]), SASL)
    assert not_offered.code == 76 and "SASL expected but not offered" in not_offered.finding
    assert "security.protocol = PLAINTEXT" in not_offered.hint
    mech = classify("bootstrap", "sasl", WireError("mechanism", "x", enabled=["PLAIN"]), SASL)
    assert mech.code == 77 and mech.hint == "set sasl.mechanism to one of: PLAIN"
    auth = classify("bootstrap", "sasl", WireError("auth_failed", "Authentication failed"), SASL)
    assert auth.code == 77 and "rejects SASL authentication for user 'alice'" in auth.finding
    assert "kafka-configs" in auth.hint
    assert "Secr3t-pw" not in auth.hint + auth.finding + auth.detail


def test_metadata_timeout_is_unreachable():
    assert classify("bootstrap", "metadata", WireError("timeout", "no reply"), SASL).code == 69


def _report(*statuses_codes) -> Report:
    r = Report(["h:1"], {})
    r.checks = [Check("bootstrap", "h:1", f"l{i}", s, f"d{i}", hint=f"h{i}", code=c, finding=f"f{i}")
                for i, (s, c) in enumerate(statuses_codes)]
    return r


def test_exit_code_and_verdict_follow_the_first_failure():
    r = _report((OK, 0), (WARN, 1), (FAIL, 69), (FAIL, 68))
    assert (r.exit_code, r.status, r.verdict) == (69, "fail", "f2: h2")
    w = _report((OK, 0), (SKIP, 0), (WARN, 1), (WARN, 1))
    assert (w.exit_code, w.status) == (1, "warn") and w.verdict == "usable, with 2 warnings; first: f2: h2"
    ok = _report((OK, 0), (OK, 0))
    assert (ok.exit_code, ok.status) == (0, "ok") and ok.verdict.startswith("all 2 checks passed")
    assert ok.to_dict()["checks"][0]["layer"] == "l0"


def _md(*topics):
    return {"cluster_id": "c", "controller_id": 1, "brokers": [], "topics": list(topics)}


def _part(n, leader=1, replicas=(1,), isr=(1,), offline=(), err=0):
    return {"partition": n, "error_code": err, "leader": leader, "replicas": list(replicas), "isr": list(isr),
            "offline_replicas": list(offline)}


def _topic(name, parts=(), err=0, error=None):
    return {"name": name, "error_code": err, "error": error, "internal": False, "partitions": list(parts)}


def test_missing_topic_fails_with_66_and_says_nothing_was_created():
    checks, topics = topic_checks(_md(_topic("t", err=3, error="UNKNOWN_TOPIC_OR_PARTITION")), ["t"], {})
    [c] = checks
    assert (c.status, c.code) == (FAIL, 66) and "created nothing" in c.detail
    assert topics[0]["exists"] is False


def test_topic_authorization_fails_with_77():
    [c], _ = topic_checks(_md(_topic("t", err=29, error="TOPIC_AUTHORIZATION_FAILED")), ["t"], {})
    assert (c.code, c.finding.startswith("topic t")) == (77, True) and "kafka-acls" in c.hint


def test_leaderless_partition_fails_with_75_naming_offline_brokers():
    t = _topic("t", [_part(0), _part(1, leader=-1, replicas=(2, 3), isr=(), offline=(2, 3))])
    checks, _ = topic_checks(_md(t), ["t"], {})
    assert [(c.status, c.code) for c in checks] == [(FAIL, 75), (WARN, 1)]
    assert "partitions 1 have no leader (leader -1)" in checks[0].detail and "brokers 2, 3" in checks[0].hint
    assert "offline replicas" in checks[1].detail


def test_leader_on_an_unreachable_broker_fails_with_75():
    hop = Hop("b2.internal", 9092, "broker", broker_id=2)
    hop.fail("dns", time.perf_counter(), 68, "does not resolve from this host", "fix it")
    checks, _ = topic_checks(_md(_topic("t", [_part(0, leader=2, replicas=(2,), isr=(2,))])), ["t"], {2: hop})
    [c] = checks
    assert (c.code, c.hint) == (75, "fix it") and "broker 2 at b2.internal:9092" in c.detail


def test_under_replicated_is_a_warning_and_a_healthy_topic_is_ok():
    [w], _ = topic_checks(_md(_topic("t", [_part(0, replicas=(1, 2), isr=(1,))])), ["t"], {})
    assert (w.status, w.code) == (WARN, 1) and "under-replicated" in w.detail
    [ok], _ = topic_checks(_md(_topic("t", [_part(0), _part(1)])), ["t"], {})
    assert ok.status == OK and ok.detail.startswith("2 partitions, leaders on broker 1")


def test_group_checks():
    base = {"id": 1, "host": "h", "port": 9092, "message": None}
    assert group_checks({**base, "error_code": 0, "error": None}, "g", 1.0)[0].status == OK
    [c] = group_checks({**base, "error_code": 15, "error": "COORDINATOR_NOT_AVAILABLE"}, "g", 1.0)
    assert c.code == 75 and "offsets.topic.replication.factor" in c.hint
    [a] = group_checks({**base, "error_code": 30, "error": "GROUP_AUTHORIZATION_FAILED"}, "g", 1.0)
    assert a.code == 77


# ---- real local sockets that are not Kafka ---------------------------------------------------------------------

@pytest.fixture
def server():
    """serve(reply) -> port of a local TCP server that sends `reply` (or nothing) to each client."""
    socks = []

    def serve(reply: bytes | None) -> int:
        srv = socket.create_server(("127.0.0.1", 0))
        socks.append(srv)

        def loop():
            while True:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    return
                socks.append(conn)
                if reply is not None:
                    conn.recv(65536)
                    conn.sendall(reply)

        threading.Thread(target=loop, daemon=True).start()
        return srv.getsockname()[1]

    yield serve
    for s in socks:
        s.close()


def test_a_non_kafka_service_is_named(server):
    port = server(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    r = probe([("127.0.0.1", port)], Security(), timeout=2)
    assert r.exit_code == 76
    assert "does not speak the Kafka protocol" in r.verdict and "48 54 54 50" in r.verdict  # "HTTP"


def test_a_silent_listener_times_out_within_the_budget(server):
    port = server(None)
    t0 = time.monotonic()
    r = probe([("127.0.0.1", port)], Security(), topics=["t"], group="g", timeout=0.5)
    assert time.monotonic() - t0 < 1.5
    assert r.exit_code == 76 and "does not answer a Kafka request within 0.5s" in r.verdict
    assert [c.status for c in r.checks if c.role in ("topic", "group")] == [SKIP, SKIP]
