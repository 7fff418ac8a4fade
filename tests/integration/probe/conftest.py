"""Real brokers for the probe tests: one broker with a listener per failure mode, and one whose group coordinator
can never come up. Module-scoped; they fail (never skip) when Java or the broker jars are missing."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import pytest

from devtools.local_kafka import BrokerSpec, Listener, LocalBroker, free_port
from devtools.tls import CertFiles, kafka_ssl_props, make_ca, make_server_cert
from tests.cli import cdcsync

USER, PASSWORD = "alice", "Alice-pw-7f3c9e"  # a password distinctive enough to grep outputs for
PLAIN_JAAS = f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{USER}="{PASSWORD}";'


@dataclass
class ProbeBroker:
    broker: LocalBroker
    ports: dict[str, int]
    ca: CertFiles | None = None
    other_ca: CertFiles | None = None
    user: str = USER
    password: str = PASSWORD

    def at(self, listener: str, host: str = "127.0.0.1") -> str:
        return f"{host}:{self.ports[listener]}"


@pytest.fixture(scope="module")
def probe_broker(tmp_path_factory) -> ProbeBroker:
    """PLAIN (healthy), BADDNS (advertises broker-1.invalid), CLOSED (advertises a closed port on 127.0.0.1),
    SASL (SASL_PLAINTEXT: PLAIN + SCRAM-SHA-256), TLS (SSL, certificate for 'localhost' only), SASLSSL."""
    d = tmp_path_factory.mktemp("probe-kafka")
    ca = make_ca(d / "ca", "cdcsync probe test CA")
    other_ca = make_ca(d / "other-ca", "an unrelated CA")
    server = make_server_cert(ca, d / "server", dns=["localhost"])
    ports = {name: free_port() for name in ("PLAIN", "BADDNS", "CLOSED", "SASL", "TLS", "SASLSSL")}
    closed = free_port()  # nothing ever listens here
    listeners = [
        Listener("PLAIN", ports["PLAIN"]),
        Listener("BADDNS", ports["BADDNS"], advertise=f"broker-1.invalid:{ports['BADDNS']}"),
        Listener("CLOSED", ports["CLOSED"], advertise=f"127.0.0.1:{closed}"),
        Listener("SASL", ports["SASL"], "SASL_PLAINTEXT"),
        Listener("TLS", ports["TLS"], "SSL", advertise=f"localhost:{ports['TLS']}"),
        Listener("SASLSSL", ports["SASLSSL"], "SASL_SSL", advertise=f"localhost:{ports['SASLSSL']}"),
    ]
    props = {
        "listener.name.sasl.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.sasl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl.scram-sha-256.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.saslssl.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.saslssl.plain.sasl.jaas.config": PLAIN_JAAS,
        **kafka_ssl_props("TLS", server),
        **kafka_ssl_props("SASLSSL", server),
    }
    broker = LocalBroker(BrokerSpec(d / "broker", listeners, extra_props=props,
                                    scram_users=[("SCRAM-SHA-256", USER, PASSWORD)]))
    broker.start()  # BrokerError (a test error, not a skip) when java or the jars are missing
    yield ProbeBroker(broker, ports, ca, other_ca)
    _stop(broker)


@pytest.fixture(scope="module")
def no_coordinator_broker(tmp_path_factory) -> ProbeBroker:
    """A healthy single broker whose __consumer_offsets can never be created (replication factor 3 > 1 broker)."""
    d = tmp_path_factory.mktemp("probe-kafka-nocoord")
    port = free_port()
    props = {"offsets.topic.replication.factor": "3"}
    broker = LocalBroker(BrokerSpec(d, [Listener("PLAIN", port)], extra_props=props))
    broker.start()
    yield ProbeBroker(broker, {"PLAIN": port})
    _stop(broker)


def _stop(broker: LocalBroker) -> None:
    broker.stop()
    assert broker.proc is not None and broker.proc.poll() is not None, "the broker JVM is still running"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def data(self) -> dict:
        return json.loads(self.stdout)

    def failures(self) -> list[dict]:
        return [c for c in self.data["checks"] if c["status"] == "fail"]


def run_probe(*args: str, env: dict | None = None, python_flags: tuple[str, ...] = ()) -> Run:
    """`cdcsync probe ...` as a real process (real exit code, real stdout/stderr)."""
    t0 = time.perf_counter()
    p = cdcsync("probe", *args, env=env, timeout=120, python_flags=python_flags)
    return Run(p.returncode, p.stdout, p.stderr, time.perf_counter() - t0)


@pytest.fixture
def probe_cli():
    return run_probe
