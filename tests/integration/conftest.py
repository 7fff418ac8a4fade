"""One real Kafka broker and one SparkSession for the whole test session (per xdist worker); a fresh topic per test.

These fixtures fail (never skip) when Java, the bundles/ jars or the broker are missing.
"""

from __future__ import annotations

import itertools
import json
import uuid

import pytest

from devtools.local_kafka import BrokerSpec, Listener, LocalBroker, free_port


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    # no time-based retention: tests stamp records with fixed past times, which a 7-day retention would delete
    broker = LocalBroker(BrokerSpec(tmp_path_factory.mktemp("kafka"), [Listener("PLAINTEXT", free_port())],
                                    extra_props={"log.retention.ms": "-1"}))
    broker.start()  # raises BrokerError (a test error, not a skip) when java or the jars are missing
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def bootstrap(kafka_broker) -> str:
    return kafka_broker.bootstrap


@pytest.fixture(scope="session")
def spark():
    from cdcsync.engine.session import build_session

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
