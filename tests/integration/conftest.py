"""One real Kafka broker and one SparkSession for the whole test session (per xdist worker); a fresh topic per test.

These fixtures fail (never skip) when Java, the bundles/ jars or the broker are missing.
"""

from __future__ import annotations

import itertools
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.local_kafka import BrokerSpec, Listener, LocalBroker, free_port
from devtools.oidc import OidcServer
from devtools.tls import CertFiles, make_ca, make_server_cert

USER, PASSWORD = "carol", "Carol-pw-51d0a7"  # distinctive, so outputs can be searched for it
OIDC_CLIENT, OIDC_SECRET = "cdcsync-planner", "Oidc-secret-9f2b64"  # the token endpoint's one client
OIDC_AUDIENCE = "kafka-test"


@dataclass
class Secured:
    """The session broker's secured listeners: SASL (PLAIN), SASLSSL (SCRAM-SHA-512), MTLS (client certificate),
    OAUTH (SASL_PLAINTEXT with OAUTHBEARER: JWTs of `oidc`, checked against its JWKS)."""
    ports: dict[str, int]
    ca: CertFiles
    client: CertFiles  # signed by `ca` for mutual TLS
    other_ca: CertFiles  # trusted by nobody
    directory: Path
    oidc: OidcServer
    user: str = USER
    password: str = PASSWORD

    def at(self, listener: str) -> str:
        return f"localhost:{self.ports[listener]}"


@pytest.fixture(scope="session")
def oidc():
    """The OIDC token endpoint and JWKS the broker's OAUTH listener trusts: started before the broker, which fetches
    the JWKS as it starts."""
    server = OidcServer({OIDC_CLIENT: OIDC_SECRET}, audience=OIDC_AUDIENCE).start()
    yield server
    server.stop()


def _oauth_props(oidc: OidcServer) -> dict[str, str]:
    """Kafka 4's JWT validator on the OAUTH listener: signatures from the JWKS, audience and issuer as issued."""
    return {
        # 4.1's default (DefaultJwtValidator built without a key resolver) checks claims only, never the signature
        "sasl.oauthbearer.jwt.validator.class": "org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator",
        "listener.name.oauth.sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.oauth.oauthbearer.sasl.server.callback.handler.class":
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
        "listener.name.oauth.oauthbearer.sasl.jaas.config":
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
        "sasl.oauthbearer.jwks.endpoint.url": oidc.jwks_url,
        "sasl.oauthbearer.expected.audience": oidc.audience,
        "sasl.oauthbearer.expected.issuer": oidc.issuer,
    }


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory, oidc):
    d = tmp_path_factory.mktemp("kafka")
    ca, other_ca = make_ca(d / "ca", "cdcsync test CA"), make_ca(d / "other-ca", "an unrelated CA")
    server = make_server_cert(ca, d / "server", dns=["localhost"])
    client = make_server_cert(ca, d / "client", dns=["cdcsync-client"], client=True)
    ports = {name: free_port() for name in ("SASL", "SASLSSL", "MTLS", "OAUTH")}
    listeners = [Listener("PLAINTEXT", free_port()), Listener("SASL", ports["SASL"], "SASL_PLAINTEXT"),
                 Listener("SASLSSL", ports["SASLSSL"], "SASL_SSL", advertise=f"localhost:{ports['SASLSSL']}"),
                 Listener("MTLS", ports["MTLS"], "SSL", advertise=f"localhost:{ports['MTLS']}"),
                 Listener("OAUTH", ports["OAUTH"], "SASL_PLAINTEXT")]
    props = {
        "log.retention.ms": "-1",  # tests stamp records with fixed past times, which a 7-day retention would delete
        "listener.name.sasl.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl.plain.sasl.jaas.config":
            f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{USER}="{PASSWORD}";',
        "listener.name.saslssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.saslssl.scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    }
    for name in ("saslssl", "mtls"):
        props |= {f"listener.name.{name}.ssl.keystore.type": "PEM",
                  f"listener.name.{name}.ssl.keystore.location": str(server.keystore)}
    props |= {"listener.name.mtls.ssl.client.auth": "required", "listener.name.mtls.ssl.truststore.type": "PEM",
              "listener.name.mtls.ssl.truststore.location": str(ca.cert_path)}
    props |= _oauth_props(oidc)
    broker = LocalBroker(BrokerSpec(d, listeners, extra_props=props, scram_users=[("SCRAM-SHA-512", USER, PASSWORD)],
                                    jvm_props={"org.apache.kafka.sasl.oauthbearer.allowed.urls":
                                               f"{oidc.jwks_url},{oidc.token_url}"}))
    broker.start()  # raises BrokerError (a test error, not a skip) when java or the jars are missing
    broker.secured = Secured(ports, ca, client, other_ca, d, oidc)
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def secured(kafka_broker) -> Secured:
    return kafka_broker.secured


@pytest.fixture(scope="session")
def bootstrap(kafka_broker) -> str:
    return kafka_broker.bootstrap


@dataclass
class S3Server:
    """A real S3-compatible server (moto_server) on localhost, with one bucket."""
    endpoint: str
    bucket: str = "lake"
    access_key_id: str = "cdcsync-test"
    secret_access_key: str = "S3-secret-7c41e9"  # distinctive, so outputs can be searched for it

    def storage(self) -> dict:
        """write_config's extra keys for [storage]."""
        return {"storage.endpoint": self.endpoint, "storage.region": "us-east-1", "storage.path_style_access": True,
                "storage.access_key_id": self.access_key_id, "storage.secret_access_key": self.secret_access_key}

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=self.access_key_id, aws_secret_access_key=self.secret_access_key)

    def reader_options(self) -> dict:
        return {"aws_endpoint_url": self.endpoint, "aws_allow_http": "true", "aws_region": "us-east-1",
                "aws_access_key_id": self.access_key_id, "aws_secret_access_key": self.secret_access_key}

    def keys(self, prefix: str) -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """One moto_server per test session (per xdist worker); fails, never skips, when it cannot start."""
    import subprocess
    import sys
    import time
    import urllib.request

    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    server = subprocess.Popen([str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
                              stdout=log.open("w"), stderr=subprocess.STDOUT)
    s3 = S3Server(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{s3.endpoint}/moto-api/", timeout=2)
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto_server did not start: {log.read_text()[-2000:]}") from None
            time.sleep(0.2)
    s3.client().create_bucket(Bucket=s3.bucket)
    yield s3
    server.terminate()
    server.wait(timeout=30)


@pytest.fixture(scope="session")
def registry(tmp_path_factory):
    """One Apicurio Registry (Confluent API) per test session (per xdist worker); fails, never skips."""
    from devtools.local_registry import LocalRegistry

    reg = LocalRegistry(tmp_path_factory.mktemp("registry")).start()
    yield reg
    reg.stop()


@pytest.fixture
def produce_avro(bootstrap, registry):
    """produce_avro(topic, value_schema, values, key_schema=None, keys=None): the real Confluent serializer
    (confluent-kafka's AvroSerializer) registers the schemas under <topic>-value / -key and writes the wire format;
    a value of None is a tombstone."""
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": registry.url})
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})

    def send(topic, value_schema, values, key_schema=None, keys=None):
        value_ser = AvroSerializer(client, json.dumps(value_schema), conf={"auto.register.schemas": True})
        key_ser = AvroSerializer(client, json.dumps(key_schema)) if key_schema else None
        for i, v in enumerate(values):
            k = keys[i] if keys else None
            producer.produce(topic, partition=0,
                             key=key_ser(k, SerializationContext(topic, MessageField.KEY)) if key_ser and k else None,
                             value=None if v is None else value_ser(v, SerializationContext(topic,
                                                                                            MessageField.VALUE)))
        producer.flush(30)

    yield send


@pytest.fixture(scope="session")
def spark():
    from cdcsync.runtime.session import build_session

    session = build_session("cdcsync-tests", master="local[2]", conf={"spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


_counter = itertools.count()


@pytest.fixture
def make_topic(bootstrap, request):
    """make_topic(partitions=1) -> a new, unique topic name on the session broker."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)

    def make(partitions: int = 1, name: str | None = None) -> str:
        base = name or request.node.name
        topic = "".join(c if c.isalnum() else "_" for c in base)[:80] + f"_{next(_counter)}_{uuid.uuid4().hex[:6]}"
        admin.create_topics([NewTopic(topic, partitions, 1)])
        return topic

    yield make
    admin.close()


@pytest.fixture
def produce(bootstrap):
    """produce(topic, values, keys=None, partition=None, timestamps_ms=None, headers=None) with real Kafka."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)

    def send(topic, values, keys=None, partition=None, timestamps_ms=None, headers=None):
        for i, v in enumerate(values):
            if isinstance(v, (dict, list)):
                v = json.dumps(v).encode()
            elif isinstance(v, str):
                v = v.encode()
            k = keys[i] if keys else None
            k = k.encode() if isinstance(k, str) else k
            producer.send(topic, value=v, key=k, partition=partition,
                          timestamp_ms=timestamps_ms[i] if timestamps_ms else None,
                          headers=headers[i] if headers else None)
        producer.flush()

    yield send
    producer.close()
