"""kafka/client_keys.py's list of consumer properties is the one of the Kafka client Spark reads with."""

from __future__ import annotations

import pytest

from cdcsync.kafka.client_keys import CONSUMER, MANAGED

pytestmark = pytest.mark.integration


def test_the_consumer_names_are_those_of_spark_s_kafka_client(spark):
    names = set(spark._jvm.org.apache.kafka.clients.consumer.ConsumerConfig.configNames())
    assert names == CONSUMER, f"only in the JVM's: {names - CONSUMER}; only in ours: {CONSUMER - names}"
    assert set(MANAGED) <= names
