"""`cdcsync probe` against real brokers: every exit code, every named hop, and what it must never do
(create a topic, start a JVM, print a password)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def _sasl(b, mechanism="PLAIN", password=None) -> list[str]:
    return ["--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", mechanism, "--sasl-username", b.user,
            "--sasl-password", password or b.password]


def _layers(run, role, status="ok") -> list[str]:
    return [c["layer"] for c in run.data["checks"] if c["role"] == role and c["status"] == status]


# ---- acceptance 1: healthy -------------------------------------------------------------------------------------

def test_healthy_broker_every_check_ok_exit_0_under_one_second(probe_broker, probe_cli):
    run = probe_cli("--bootstrap-servers", probe_broker.at("PLAIN"), "--json")
    assert run.code == 0, run.stdout + run.stderr
    data = run.data
    assert data["status"] == "ok" and data["exit_code"] == 0
    assert {c["status"] for c in data["checks"]} == {"ok"}
    assert _layers(run, "bootstrap") == ["dns", "tcp", "api-versions", "metadata"]
    assert _layers(run, "broker") == ["dns", "tcp", "api-versions", "metadata"]
    assert data["cluster"]["brokers"][0]["advertised"] == probe_broker.at("PLAIN")
    assert data["cluster"]["id"] and data["cluster"]["controller_id"] == 1
    assert data["elapsed_ms"] < 1000
    assert run.seconds < 1.0, f"the whole command took {run.seconds:.2f}s"


def test_human_report_is_a_table_and_a_verdict(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("PLAIN"))
    assert run.code == 0
    for word in ("layer", "target", "status", "detail", "hint", "ms", "api-versions", "broker 1"):
        assert word in run.stdout
    assert "verdict: OK (exit 0)" in run.stdout


def test_probe_brokers_is_the_same_command(probe_broker):
    from tests.cli import cdcsync

    p = cdcsync("probe-brokers", "-b", probe_broker.at("PLAIN"), "--json", timeout=120)
    assert p.returncode == 0
    assert '"status": "ok"' in p.stdout


# ---- acceptance 2: the advertised hop --------------------------------------------------------------------------

def test_advertised_name_that_does_not_resolve_exits_68_and_names_host_and_fix(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("BADDNS"), "--json")
    assert run.code == 68, run.stdout
    assert _layers(run, "bootstrap") == ["dns", "tcp", "api-versions", "metadata"]
    [fail] = run.failures()
    assert (fail["role"], fail["layer"]) == ("broker", "dns")
    assert fail["target"] == f"broker-1.invalid:{probe_broker.ports['BADDNS']}"
    verdict = run.data["verdict"]
    assert verdict.startswith(f"advertised listener broker-1.invalid:{probe_broker.ports['BADDNS']} (broker 1) "
                              "does not resolve from this host")
    assert "set advertised.listeners to an address clients can reach" in verdict


def test_advertised_closed_port_exits_69_and_names_it(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("CLOSED"), "--json")
    assert run.code == 69, run.stdout
    assert _layers(run, "bootstrap") == ["dns", "tcp", "api-versions", "metadata"]
    [fail] = run.failures()
    advertised = run.data["cluster"]["brokers"][0]["advertised"]
    assert advertised != probe_broker.at("CLOSED") and advertised.startswith("127.0.0.1:")
    assert (fail["role"], fail["layer"], fail["target"]) == ("broker", "tcp", advertised)
    assert f"advertised listener {advertised} (broker 1) refuses connections" in run.data["verdict"]
    assert "advertised.listeners" in fail["hint"]


def test_a_dead_entry_among_working_bootstrap_servers_is_a_warning_exit_1(probe_broker, probe_cli):
    from devtools.local_kafka import free_port

    dead = f"127.0.0.1:{free_port()}"
    run = probe_cli("-b", f"{dead},{probe_broker.at('PLAIN')}", "--json")
    assert run.code == 1, run.stdout
    warned = [c for c in run.data["checks"] if c["status"] == "warn"]
    assert [(c["target"], c["layer"]) for c in warned] == [(dead, "tcp")]
    assert "another bootstrap server answered" in warned[0]["detail"]
    assert run.data["verdict"].startswith(f"usable, with 1 warning; first: bootstrap server {dead} refuses")


def test_loopback_advertised_with_loopback_bootstrap_is_not_a_warning(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("PLAIN", host="localhost"), "--json")
    assert run.code == 0
    assert not [c for c in run.data["checks"] if c["layer"] == "listener"]


# ---- acceptance 3: the bootstrap hop, within --timeout + 1 s ---------------------------------------------------

def test_nothing_listening_at_bootstrap_exits_69_within_timeout(probe_cli):
    from devtools.local_kafka import free_port

    run = probe_cli("-b", f"127.0.0.1:{free_port()}", "--timeout", "2", "--json")
    assert run.code == 69
    assert run.failures()[0]["layer"] == "tcp" and "refuses connections" in run.data["verdict"]
    assert run.seconds < 3.0


def test_unresolvable_bootstrap_exits_68_within_timeout(probe_cli):
    run = probe_cli("-b", "no-such-broker.invalid:9092", "--timeout", "2", "--json")
    assert run.code == 68
    assert run.failures()[0]["layer"] == "dns"
    assert run.data["verdict"].startswith("bootstrap server no-such-broker.invalid:9092 does not resolve")
    assert run.seconds < 3.0


def test_bootstrap_that_never_completes_tcp_exits_69_within_timeout(probe_cli):
    import socket

    # a listener whose accept queue is full: the kernel drops further SYNs, so connecting times out
    server = socket.create_server(("127.0.0.1", 0), backlog=0)
    filler = socket.create_connection(server.getsockname())
    try:
        run = probe_cli("-b", f"127.0.0.1:{server.getsockname()[1]}", "--timeout", "1.5", "--json")
    finally:
        filler.close()
        server.close()
    assert run.code == 69, run.stdout
    assert run.failures()[0]["layer"] == "tcp" and "does not answer TCP within 1.5s" in run.data["verdict"]
    assert 1.5 <= run.data["elapsed_ms"] / 1000 < 2.5 and run.seconds < 2.5


# ---- acceptance 4: SASL and TLS --------------------------------------------------------------------------------

@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_sasl_right_credentials_ok(probe_broker, probe_cli, mechanism):
    run = probe_cli("-b", probe_broker.at("SASL"), *_sasl(probe_broker, mechanism), "--json")
    assert run.code == 0, run.stdout
    assert "sasl" in _layers(run, "bootstrap") and "sasl" in _layers(run, "broker")
    assert probe_broker.password not in run.stdout + run.stderr


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_sasl_wrong_password_exits_77_naming_sasl_authentication(probe_broker, probe_cli, mechanism):
    run = probe_cli("-b", probe_broker.at("SASL"), *_sasl(probe_broker, mechanism, "not-the-Password-42"), "--json")
    assert run.code == 77, run.stdout
    [fail] = run.failures()
    assert fail["layer"] == "sasl"
    assert "SASL authentication" in run.data["verdict"]
    assert "not-the-Password-42" not in run.stdout + run.stderr


def test_sasl_mechanism_not_enabled_exits_77_listing_the_enabled_ones(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("SASL"), *_sasl(probe_broker, "SCRAM-SHA-512"), "--json")
    assert run.code == 77
    assert "PLAIN, SCRAM-SHA-256" in run.data["verdict"]


def test_plaintext_client_on_sasl_listener_is_a_protocol_mismatch(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("SASL"), "--json")
    assert run.code == 76
    assert "SASL offered but not used" in run.data["verdict"]
    assert "SASL_PLAINTEXT" in run.failures()[0]["hint"]


def test_sasl_client_on_plaintext_listener_is_a_protocol_mismatch(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("PLAIN"), *_sasl(probe_broker), "--json")
    assert run.code == 76
    assert "SASL expected but not offered" in run.data["verdict"]


def test_ssl_with_the_right_ca_ok(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("TLS", "localhost"), "--security-protocol", "SSL",
                    "--ssl-cafile", str(probe_broker.ca.cert_path), "--json")
    assert run.code == 0, run.stdout
    tls = [c for c in run.data["checks"] if c["layer"] == "tls"]
    assert len(tls) == 2 and all(c["status"] == "ok" for c in tls)
    assert "SANs DNS:localhost" in tls[0]["detail"] and "hostname check ok" in tls[0]["detail"]


def test_ssl_with_a_wrong_ca_exits_76_naming_certificate_verification(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("TLS", "localhost"), "--security-protocol", "SSL",
                    "--ssl-cafile", str(probe_broker.other_ca.cert_path), "--json")
    assert run.code == 76
    [fail] = run.failures()
    assert fail["layer"] == "tls"
    assert "certificate verification failed" in run.data["verdict"]
    assert "cdcsync probe test CA" in fail["detail"] + run.data["verdict"]  # names the issuer it did not trust


def test_ssl_hostname_not_in_certificate_exits_76(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("TLS", "127.0.0.1"), "--security-protocol", "SSL",
                    "--ssl-cafile", str(probe_broker.ca.cert_path), "--json")
    assert run.code == 76
    assert "does not match the host name 127.0.0.1" in run.data["verdict"]
    assert "DNS:localhost" in run.data["verdict"]
    relaxed = probe_cli("-b", probe_broker.at("TLS", "127.0.0.1"), "--security-protocol", "SSL",
                        "--ssl-cafile", str(probe_broker.ca.cert_path), "--no-ssl-check-hostname", "--json")
    assert relaxed.code == 0, relaxed.stdout


def test_plaintext_client_on_ssl_listener_exits_76_naming_the_mismatch(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("TLS", "localhost"), "--json")
    assert run.code == 76
    [fail] = run.failures()
    assert fail["layer"] == "api-versions"
    assert "protocol mismatch" in run.data["verdict"] and "0x15 0x03" in run.data["verdict"]
    assert "security.protocol = SSL" in fail["hint"]


def test_ssl_client_on_plaintext_listener_exits_76_naming_the_mismatch(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("PLAIN"), "--security-protocol", "SSL",
                    "--ssl-cafile", str(probe_broker.ca.cert_path), "--json")
    assert run.code == 76
    assert "plaintext listener but the client speaks TLS (protocol mismatch)" in run.data["verdict"]


def test_sasl_ssl_ok(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("SASLSSL", "localhost"), "--security-protocol", "SASL_SSL",
                    "--sasl-mechanism", "PLAIN", "--sasl-username", probe_broker.user, "--sasl-password",
                    probe_broker.password, "--ssl-cafile", str(probe_broker.ca.cert_path), "--json")
    assert run.code == 0, run.stdout
    assert _layers(run, "broker") == ["dns", "tcp", "tls", "api-versions", "sasl", "metadata"]


# ---- acceptance 5: topics and groups ---------------------------------------------------------------------------

def _list_topics(bootstrap: str) -> set[str]:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return set(admin.list_topics())
    finally:
        admin.close()


def test_missing_topic_is_reported_and_left_missing(probe_broker, probe_cli):
    bootstrap = probe_broker.at("PLAIN")
    run = probe_cli("-b", bootstrap, "--topic", "cdc.orders.missing", "--json")
    assert run.code == 66
    assert run.data["topics"] == [{"name": "cdc.orders.missing", "exists": False,
                                   "error": "UNKNOWN_TOPIC_OR_PARTITION", "partitions": []}]
    assert run.data["verdict"].startswith("topic cdc.orders.missing does not exist")
    assert "cdc.orders.missing" not in _list_topics(bootstrap)


def test_existing_topic_reports_partitions_and_leaders(probe_broker, probe_cli):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    bootstrap = probe_broker.at("PLAIN")
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("cdc.orders", 3, 1)])
    admin.close()
    run = probe_cli("-b", bootstrap, "--topic", "cdc.orders", "--json")
    assert run.code == 0, run.stdout
    [topic] = run.data["topics"]
    assert topic["exists"] and [p["leader"] for p in topic["partitions"]] == [1, 1, 1]
    assert "3 partitions, leaders on broker 1" in [c for c in run.data["checks"] if c["role"] == "topic"][0]["detail"]


def test_group_coordinator_found_and_probed(probe_broker, probe_cli):
    run = probe_cli("-b", probe_broker.at("PLAIN"), "--group", "cdcsync-probe-test", "--json")
    assert run.code == 0, run.stdout
    assert run.data["group"]["id"] == 1 and run.data["group"]["reachable"] is True
    assert [c["status"] for c in run.data["checks"] if c["role"] == "group"] == ["ok"]


def test_coordinator_unavailable_exits_75(no_coordinator_broker, probe_cli):
    run = probe_cli("-b", no_coordinator_broker.at("PLAIN"), "--group", "g1", "--timeout", "2", "--json")
    assert run.code == 75, run.stdout
    assert [c["role"] for c in run.failures()] == ["group"]
    assert "COORDINATOR_NOT_AVAILABLE" in run.data["verdict"]
    assert "offsets.topic.replication.factor" in run.data["verdict"]


# ---- config files, secrets, and no JVM -------------------------------------------------------------------------

def _config(tmp_path: Path, bootstrap: str, properties: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f"""
[source]
bootstrap_servers = "{bootstrap}"
format = "debezium-json"
topics = ["cdc.orders"]

[source.properties]
{properties}

[sink]
path = "{tmp_path / 'table'}"
table_name = "orders"
""")
    return path


def _scram_props(user: str, password: str) -> str:
    return ('"security.protocol" = "SASL_PLAINTEXT"\n"sasl.mechanism" = "SCRAM-SHA-256"\n'
            '"sasl.jaas.config" = \'org.apache.kafka.common.security.scram.ScramLoginModule required '
            f'username="{user}" password="{password}";\'')


def test_config_file_security_settings_ok_and_password_never_printed(probe_broker, probe_cli, tmp_path):
    cfg = _config(tmp_path, probe_broker.at("SASL"), _scram_props(probe_broker.user, probe_broker.password))
    for extra in ([], ["--json"]):
        run = probe_cli("--config", str(cfg), *extra)
        assert run.code == 0, run.stdout + run.stderr
        assert probe_broker.password not in run.stdout + run.stderr
    assert "authenticated as alice with SCRAM-SHA-256" in run.stdout
    assert run.data["security"]["sasl_password"] == "****"


def test_config_file_wrong_password_exits_77_and_is_never_printed(probe_broker, probe_cli, tmp_path):
    wrong = "Wr0ng-config-Secret-99"
    cfg = _config(tmp_path, probe_broker.at("SASL"), _scram_props(probe_broker.user, "${PROBE_TEST_PW}"))
    for extra in ([], ["--json"]):
        run = probe_cli("--config", str(cfg), *extra, env={"PROBE_TEST_PW": wrong})
        assert run.code == 77, run.stdout + run.stderr
        assert wrong not in run.stdout + run.stderr
        assert "SASL authentication" in run.stdout


def test_bad_config_exits_78_before_connecting(probe_broker, probe_cli, tmp_path):
    cfg = _config(tmp_path, probe_broker.at("PLAIN"), '"security.protocol" = "PLAINTXT"')
    run = probe_cli("--config", str(cfg))
    assert run.code == 78
    assert "security.protocol" in run.stderr and run.stdout == ""
    as_json = probe_cli("--config", str(cfg), "--json")
    assert as_json.code == 78 and as_json.data["exit_code"] == 78


def test_probe_starts_no_jvm(probe_broker, probe_cli):
    java_dirs = {str(Path(p).parent) for p in filter(None, [shutil.which("java")])}
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if d not in java_dirs)
    env = {"PATH": path, "JAVA_HOME": "/nonexistent", "SPARK_HOME": "/nonexistent"}
    run = probe_cli("-b", probe_broker.at("PLAIN"), "--json", env=env, python_flags=("-X", "importtime"))
    assert run.code == 0, run.stdout + run.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert "cdcsync.probe.walk" in imported  # importtime really recorded the probe's imports
    assert not [m for m in imported if m.split(".")[0] in ("pyspark", "py4j")]
