"""Acceptance (issue 18, point 3): `run` against secured listeners of the session broker — SASL_PLAINTEXT with
PLAIN, SASL_SSL with SCRAM-SHA-512, mutual TLS with JKS stores (written by keytool) and with PEM — lands exact
tables, the offset planner (kafka-python) and Spark's reader (Java) reading one [source.properties]. Wrong
credentials exit 77 and an unknown CA 76 with the message `probe` gives, before Spark starts."""

from __future__ import annotations

import json

import pytest

from tests.cli import cdcsync, noise
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

STORE_PW = "Store-pw-3e9b1c"


def _plain(s) -> str:
    return f'org.apache.kafka.common.security.plain.PlainLoginModule required username="{s.user}" ' \
           f'password="{s.password}";'


def _scram(s, password=None) -> str:
    return f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{s.user}" ' \
           f'password="{password or s.password}";'


def _jks(s) -> dict:
    from devtools.tls import java_stores

    keystore, truststore = java_stores(s.client, s.ca, s.directory / "client-jks", STORE_PW)
    assert keystore.read_bytes()[:4] == b"\xfe\xed\xfe\xed"  # really JKS (keytool's default is PKCS12)
    return {"security.protocol": "SSL", "ssl.keystore.location": str(keystore), "ssl.keystore.password": STORE_PW,
            "ssl.key.password": STORE_PW, "ssl.truststore.location": str(truststore),
            "ssl.truststore.password": STORE_PW}


LISTENERS = {
    "sasl-plaintext-plain": ("SASL", lambda s: {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                                                "sasl.jaas.config": _plain(s)}),
    "sasl-ssl-scram-sha-512": ("SASLSSL", lambda s: {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": _scram(s),
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(s.ca.cert_path)}),
    "mtls-jks": ("MTLS", _jks),
    "mtls-pem": ("MTLS", lambda s: {
        "security.protocol": "SSL", "ssl.keystore.type": "PEM", "ssl.keystore.location": str(s.client.keystore),
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(s.ca.cert_path)}),
}


def _topic_with_rows(make_topic, produce) -> tuple[str, dict]:
    topic = make_topic(partitions=2)
    rows = [{"id": i, "v": f"v{i}"} for i in range(20)] + [{"id": i, "v": f"w{i}"} for i in range(0, 20, 3)]
    produce(topic, rows, keys=[str(r["id"]) for r in rows])  # keyed: one key's changes stay in one partition
    final = {r["id"]: r for r in rows}
    return topic, by_key(list(final.values()), ["id"])


@pytest.mark.parametrize("case", list(LISTENERS))
def test_run_lands_an_exact_table_through_a_secured_listener(case, secured, spark, make_topic, produce, tmp_path):
    listener, props = LISTENERS[case]
    topic, want = _topic_with_rows(make_topic, produce)
    config = write_config(tmp_path, secured.at(listener), topic, "json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"], "source.group_id": f"g-{case}",
                             "source.properties": props(secured)})
    summary = run_once(config, spark)
    assert summary.totals["upserted"] == 27
    table = str(tmp_path / "table")
    assert by_key(spark_rows(spark, table), ["id"]) == want
    assert by_key(hudi_rs_rows(table), ["id"]) == want
    v = cdcsync("validate", config, jvm_free=True)  # the same settings pass the offline check
    assert v.returncode == 0, v.stderr


@pytest.mark.parametrize("listener, props, code, layer", [
    ("SASL", lambda s: {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                        "sasl.jaas.config": _plain(s).replace(s.password, "not-the-Password-1")}, 77, "sasl"),
    ("SASLSSL", lambda s: {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                           "sasl.jaas.config": _scram(s, "not-the-Password-2"), "ssl.truststore.type": "PEM",
                           "ssl.truststore.location": str(s.ca.cert_path)}, 77, "sasl"),
    ("SASLSSL", lambda s: {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                           "sasl.jaas.config": _scram(s), "ssl.truststore.type": "PEM",
                           "ssl.truststore.location": str(s.other_ca.cert_path)}, 76, "tls"),
    ("MTLS", lambda s: {"security.protocol": "SSL", "ssl.truststore.type": "PEM",  # no client certificate
                        "ssl.truststore.location": str(s.ca.cert_path)}, 76, "api-versions"),  # TLS 1.3: post-handshake
], ids=["plain-wrong-password", "scram-wrong-password", "unknown-ca", "mtls-without-client-certificate"])
def test_a_refused_run_exits_like_probe(listener, props, code, layer, secured, make_topic,
                                                              tmp_path):
    topic = make_topic()
    config = write_config(tmp_path, secured.at(listener), topic, "json", "MERGE_ON_READ",
                          **{"sink.primary_key": ["id"], "source.properties": props(secured)})
    probe = cdcsync("probe", "--config", config, "--json", jvm_free=True)
    run = cdcsync("run", "--once", config)
    assert (probe.returncode, run.returncode) == (code, code), (probe.stdout, run.stderr)
    failed = next(c for c in json.loads(probe.stdout)["checks"] if c["status"] == "fail")
    assert failed["layer"] == layer, failed
    if listener == "MTLS":
        assert "requires mutual TLS and refused no client certificate" in failed["finding"], failed
    assert f"error: {failed['finding'] or failed['detail']}" in run.stderr and failed["hint"] in run.stderr
    assert not noise(run.stderr) and "Spark" not in run.stderr, run.stderr  # refused before Spark started
    for out in (probe.stdout, probe.stderr, run.stdout, run.stderr):
        assert secured.password not in out and "not-the-Password" not in out
