"""infer-schema against a real Kafka broker: every CDC file of a corpus produced to a fresh topic, sampled by the
command. Here the in-repo files (tests/fixtures/cdc), with expected schemas from the generator's model;
tests/conformance/test_infer_schema_cli.py runs the tests that take `corpus` on the real-tool corpus.

Uses the session broker of tests/integration/conftest.py (one broker, a fresh topic per test); it fails, never
skips, when Java or the broker jars are missing.
"""

from __future__ import annotations

import json
import tomllib

import pytest
from jsonschema import Draft202012Validator

from cdcsync.formats import get_decoder
from tests.cli import infer_schema
from tests.corpus import IN_REPO, corpus_fixture, pytest_generate_tests  # noqa: F401 (the fixture, the module hook)

pytestmark = pytest.mark.integration

CORPUS = IN_REPO


def test_infers_each_fixture_topic(corpus, cdc_file, bootstrap, make_topic, produce):
    topic = make_topic(partitions=2)
    n = corpus.produce(produce, topic, cdc_file)  # keys and tombstones as sent
    proc = infer_schema("--bootstrap-servers", bootstrap, "--topic", topic, "--format", corpus.format_of(cdc_file),
                        "--output", "toml")
    assert proc.returncode == 0, proc.stderr
    table, _, types, _ = corpus.expected_schema(cdc_file)
    assert tomllib.loads(proc.stdout)["schema"]["columns"] == types
    assert f"records={n}" in proc.stderr and table in proc.stderr


def test_json_schema_validates_every_record_on_the_topic(corpus, bootstrap, make_topic, produce):
    from kafka import KafkaConsumer

    name = corpus.with_schema
    topic = make_topic(partitions=3)
    n = corpus.produce(produce, topic, name)
    proc = infer_schema("-b", bootstrap, "-t", topic, "-f", "debezium-json", "-f", "json-schema")
    assert proc.returncode == 0, proc.stderr
    validator = Draft202012Validator(json.loads(proc.stdout))

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None,
                             enable_auto_commit=False, consumer_timeout_ms=5000)
    values = [r.value for r in consumer]
    consumer.close()
    assert len(values) == n
    decoder = get_decoder("debezium-json")
    rows = [ch.row for v in values for ch in decoder.parse(v) if ch.row is not None]
    assert len(rows) == len(corpus.messages(name))  # one row per message; tombstones carry none
    for row in rows:
        assert validator.is_valid(row), row


def test_reads_at_most_n_records_per_partition_from_the_beginning(bootstrap, make_topic, produce):
    topic = make_topic(partitions=1)
    produce(topic, [{"id": i} for i in range(10)] + [{"id": i, "late": "x"} for i in range(10, 30)])
    proc = infer_schema("-b", bootstrap, "-t", topic, "-f", "json", "-o", "toml", "--max-records-per-partition", 10)
    assert proc.returncode == 0, proc.stderr
    assert tomllib.loads(proc.stdout)["schema"]["columns"] == {"id": "BIGINT"}  # "late" starts at offset 10
    assert "records=10" in proc.stderr


def test_samples_every_partition(bootstrap, make_topic, produce):
    topic = make_topic(partitions=2)
    produce(topic, [{"a": 1}] * 5, partition=0)
    produce(topic, [{"b": "2024-01-01"}] * 5, partition=1)
    proc = infer_schema("-b", bootstrap, "-t", topic, "-f", "json", "-o", "toml", "-n", 3)
    assert proc.returncode == 0, proc.stderr
    assert tomllib.loads(proc.stdout)["schema"]["columns"] == {"a": "BIGINT", "b": "DATE"}
    assert "records=6" in proc.stderr


def test_missing_topic_exits_66_and_is_not_created(bootstrap):
    from kafka import KafkaAdminClient

    proc = infer_schema("-b", bootstrap, "-t", "no_such_topic_for_infer_schema", "-f", "json")
    assert proc.returncode == 66 and proc.stdout == ""
    assert "no_such_topic_for_infer_schema" in proc.stderr and "does not exist" in proc.stderr
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        assert "no_such_topic_for_infer_schema" not in admin.list_topics()
    finally:
        admin.close()


def test_empty_topic_exits_66(bootstrap, make_topic):
    proc = infer_schema("-b", bootstrap, "-t", make_topic(), "-f", "json")
    assert proc.returncode == 66 and "empty" in proc.stderr


def test_unreachable_broker_exits_69():
    from devtools.local_kafka import free_port

    proc = infer_schema("-b", f"127.0.0.1:{free_port()}", "-t", "t", "-f", "json", timeout=90)
    assert proc.returncode == 69 and "no Kafka broker answers" in proc.stderr


def test_the_config_s_header_filter_leaves_other_consumers_records_out(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=1)
    produce(topic, [{"id": 1, "mine": "yes"}], headers=[[("team", b"orders")]])
    produce(topic, [{"id": "not mine", "other": 1.5}], headers=[[("team", b"billing")]])
    config = tmp_path / "config.toml"
    config.write_text(f'[source]\nbootstrap_servers = "{bootstrap}"\ntopics = ["{topic}"]\nformat = "json"\n'
                      f'header_filter = "team:orders"\n\n[sink]\npath = "{tmp_path / "t"}"\ntable_name = "t"\n')
    proc = infer_schema(config, "--output", "toml")
    assert proc.returncode == 0, proc.stderr
    assert tomllib.loads(proc.stdout)["schema"]["columns"] == {"id": "BIGINT", "mine": "STRING"}
    assert "records=1 " in proc.stderr and "filtered=1 " in proc.stderr
    config.write_text(config.read_text().replace("team:orders", "team:shipping"))
    proc = infer_schema(config, "--output", "toml")
    assert proc.returncode == 66 and "source.header_filter left out all 2 records" in proc.stderr, proc.stderr


def test_the_config_s_transform_gives_the_table_s_columns_from_a_debezium_topic(corpus, bootstrap, make_topic,
                                                                                produce, tmp_path):
    """[transform] sql over a Debezium topic: the table's columns after it, typed without a JVM, column by column
    as Spark 3.5 types the same SELECT over the run's view."""
    name = corpus.with_schema
    topic = make_topic(partitions=2)
    corpus.produce(produce, topic, name)
    sql = ("SELECT id, upper(customer) AS customer_uc, amount * 2 AS double_amount, amount / 3 AS third, "
           "to_date(created_at) AS created_day, note, _kafka_partition, _kafka_offset FROM source "
           "WHERE status <> 'cancelled'")
    config = tmp_path / "config.toml"
    config.write_text(f'[source]\nbootstrap_servers = "{bootstrap}"\ntopics = ["{topic}"]\nformat = "debezium-json"\n'
                      f'\n[sink]\npath = "{tmp_path / "t"}"\ntable_name = "t"\n\n[transform]\nsql = "{sql}"\n')
    proc = infer_schema(config, "--output", "spark-ddl")
    assert proc.returncode == 0, proc.stderr
    columns = [c.split(" ", 1) for c in proc.stdout.strip().split(", ")]
    assert columns == [
        ["`id`", "BIGINT NOT NULL"], ["`customer_uc`", "STRING"], ["`double_amount`", "DECIMAL(12,2)"],
        ["`third`", "DECIMAL(14,6)"], ["`created_day`", "DATE"], ["`note`", "STRING"],
        ["`_kafka_partition`", "INT NOT NULL"], ["`_kafka_offset`", "BIGINT NOT NULL"]]
    assert "left untyped" not in proc.stderr
    proc = infer_schema(config, "--output", "toml")  # the source's columns, which the transform reads
    assert tomllib.loads(proc.stdout)["schema"]["columns"] == corpus.expected_schema(name)[2]
