"""infer-schema against the real Kafka broker on every real fixture file (moved unchanged from
tests/integration/test_infer_schema_cli.py, whose in-repo version uses tests/fixtures/cdc)."""

from __future__ import annotations

import json
import tomllib

import pytest
from jsonschema import Draft202012Validator

from cdcsync.formats import get_decoder
from tests.cli import infer_schema
from tests.conformance.cdc_fixtures import FORMAT_OF, fixture_names, messages
from tests.conformance.expected_schemas import EXPECTED

pytestmark = pytest.mark.integration

@pytest.mark.parametrize("name", fixture_names())
def test_infers_each_fixture_topic(name, bootstrap, make_topic, produce):
    topic = make_topic(partitions=2)
    msgs = messages(name)
    produce(topic, msgs)
    proc = infer_schema("--bootstrap-servers", bootstrap, "--topic", topic, "--format", FORMAT_OF[name],
                        "--output", "toml")
    assert proc.returncode == 0, proc.stderr
    table, _, types, _ = EXPECTED[name]
    assert tomllib.loads(proc.stdout)["schema"]["columns"] == types
    assert f"records={len(msgs)}" in proc.stderr and table in proc.stderr


def test_json_schema_validates_every_record_on_the_topic(bootstrap, make_topic, produce):
    from kafka import KafkaConsumer

    name = "debezium-mysql-with-schema.txt"
    topic = make_topic(partitions=3)
    produce(topic, messages(name))
    proc = infer_schema("-b", bootstrap, "-t", topic, "-f", "debezium-json", "-f", "json-schema")
    assert proc.returncode == 0, proc.stderr
    validator = Draft202012Validator(json.loads(proc.stdout))

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None,
                             enable_auto_commit=False, consumer_timeout_ms=5000)
    values = [r.value for r in consumer]
    consumer.close()
    assert len(values) == len(messages(name))
    decoder = get_decoder("debezium-json")
    rows = [ch.row for v in values for ch in decoder.parse(v) if ch.row is not None]
    assert len(rows) == len(values)
    for row in rows:
        assert validator.is_valid(row), row
