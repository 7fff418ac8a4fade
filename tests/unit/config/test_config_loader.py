"""Acceptance (issue 3, point 7): a malformed config exits 78 before Spark starts, naming the file, the key and
the closest valid key; ${ENV} expansion; secrets never echoed."""

from __future__ import annotations

import json

import pytest

from cdcsync.config import load_config
from cdcsync.errors import ConfigError
from tests.cli import cdcsync
from tests.configs import minimal, write

GOOD = minimal()


@pytest.mark.parametrize("text, words", [
    (GOOD.replace("bootstrap_servers", "bootstrap_server"),
     ["unknown key 'source.bootstrap_server'", "did you mean 'source.bootstrap_servers'?",
      "missing required key 'source.bootstrap_servers'"]),
    (GOOD + "[run]\nmax_records_per_batch = \"many\"\n",
     ["'run.max_records_per_batch' must be an integer, not str 'many'"]),
    (GOOD.replace('path = "/tmp/x"\n', ""), ["missing required key 'sink.path'"]),
    (GOOD.replace('"debezium-json"', '"debezium-jsn"'), ["'source.format' is 'debezium-jsn'",
                                                         "did you mean 'debezium-json'?"]),
    (GOOD + "[sinks]\nx = 1\n", ["unknown key 'sinks'", "did you mean 'sink'?"]),
    (GOOD.replace('topics = ["t"]', 'topics = ["t"]\ntopic_pattern = "t.*"'),
     ["needs exactly one of 'topics' or 'topic_pattern'"]),
    (GOOD + "[run]\ntrigger_interval = \"10 parsecs\"\n", ["'run.trigger_interval' = '10 parsecs' does not match"]),
    (GOOD.replace('format = "debezium-json"', 'format = "debezium-json"\nstartup_mode = "timestamp"'),
     ["needs 'source.startup_timestamp_ms'"]),
    (GOOD.replace('table_name = "t"', 'table_name = "t\\n"'), ["'sink.table_name' = 't\\n' does not match"]),
    (GOOD.replace('format = "debezium-json"', 'format = "csv"\ncsv_field_delimiter = \'"\''),  # the quote character
     ["'source.csv_field_delimiter' = '\"' does not match"]),
    (GOOD + 'deletes = "hrad"\n', ["'sink.deletes' is 'hrad', expected one of hard, soft (did you mean 'hard'?)"]),
    # a partition-scoped index with partition_by would leave a key-only delete's row in another partition
    (GOOD + 'partition_by = ["region"]\n[sink.options]\n"hoodie.index.type" = "bucket"\n',
     ["sink.options 'hoodie.index.type' = 'BUCKET' looks a key up in its own partition only",
      "use a global index (GLOBAL_SIMPLE"]),
    (GOOD.replace('"localhost:9092"', '"kafka"'), ["source.bootstrap_servers: 'kafka' is not host:port"]),
    (GOOD.replace('format = "debezium-json"', 'format = "debezium-json"\nstartup_mode = "specific-offsets"\n'
                  'specific_offsets = "0:42"'), ["source.specific_offsets: cannot read '0:42'"]),
    (GOOD + '[source.properties]\n"security.protocl" = "SSL"\n',
     ["[source.properties] security.protocl is not a Kafka consumer property; did you mean security.protocol?"]),
    (GOOD + '[source.properties]\n"group.id" = "mine"\n', ["group.id is set by cdcsync or Spark's Kafka source",
                                                           "set source.group_id"]),
    (GOOD + '[source.properties]\n"bootstrap.servers" = "other:9092"\n', ["set source.bootstrap_servers"]),
    (GOOD + '[spark]\n"spak.executor.memory" = "2g"\n', ["unknown key 'spark.\"spak.executor.memory\"'",
                                                          "or keys starting with 'spark.'"]),
])
def test_mistakes_name_the_file_the_key_and_a_close_match(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    rendered = err.value.render()
    assert str(path) in rendered and int(err.value.exit_code) == 78
    for w in words:
        assert w in rendered, rendered


def test_a_global_index_or_no_partitions_takes_any_index(tmp_path):
    partitioned = GOOD + 'partition_by = ["region"]\n[sink.options]\n"hoodie.index.type" = "RECORD_INDEX"\n'
    assert load_config(write(tmp_path, partitioned)).sink.options["hoodie.index.type"] == "RECORD_INDEX"
    bucket = GOOD + '[sink.options]\n"hoodie.index.type" = "BUCKET"\n'
    assert load_config(write(tmp_path, bucket)).sink.options["hoodie.index.type"] == "BUCKET"


def test_run_exits_78_before_any_jvm(tmp_path):
    path = write(tmp_path, GOOD.replace("table_name", "table_nam"))
    p = cdcsync("run", path, "--once", timeout=60, jvm_free=True)
    assert p.returncode == 78, p.stderr
    assert str(path) in p.stderr and "did you mean 'sink.table_name'?" in p.stderr and p.stdout == ""


def test_env_variables_expand_and_an_unset_one_is_named(tmp_path, monkeypatch):
    path = write(tmp_path, GOOD.replace('"localhost:9092"', '"${CDCSYNC_TEST_BROKER}"'))
    monkeypatch.setenv("CDCSYNC_TEST_BROKER", "kafka-1:9093")
    assert load_config(path).source.bootstrap_servers == "kafka-1:9093"
    monkeypatch.delenv("CDCSYNC_TEST_BROKER")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "source.bootstrap_servers refers to ${CDCSYNC_TEST_BROKER}" in err.value.render()


def test_a_secret_is_never_echoed(tmp_path, capsys):
    secret = "s3cr3t-Pa55"
    path = write(tmp_path, GOOD + f'[source.properties]\n"sasl.password" = ["{secret}"]\n')
    p = cdcsync("validate", path, "--json", timeout=60)
    assert p.returncode == 78 and "sasl.password" in p.stdout + p.stderr
    assert secret not in p.stdout + p.stderr


@pytest.mark.parametrize("text", [
    GOOD + '[[storage]]\naccess_key_id = "AKIA"\nsecret_access_key = "{secret}"\n',  # a table given as a list
    GOOD.replace("[source]\n", '[[source]]\njaas = "PlainLoginModule required password=\\"{secret}\\";"\n'),
    GOOD.replace('format = "debezium-json"', 'format = "debezium-json"\n'  # a table given as text
                 'properties = "sasl.jaas.config=PlainLoginModule required password={secret}"'),
    GOOD.replace('format = "debezium-json"', 'format = "avro-confluent"\nschema_registry_url = "http://r:8081"\n'
                 'schema_registry_user_info = ["u:{secret}"]'),
])
def test_a_wrong_type_hides_a_value_that_may_hold_a_secret(tmp_path, text):
    secret = "s3cr3t-Pa55"
    path = write(tmp_path, text.replace("{secret}", secret))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(path) in err.value.render() and "must be a" in err.value.render() and "(hidden)" in err.value.render()
    assert secret not in json.dumps(err.value.to_dict())


def test_the_config_s_repr_holds_no_secret(tmp_path):
    cfg = load_config(write(tmp_path, GOOD + '[source.properties]\n"sasl.jaas.config" = "PlainLoginModule required '
                                      'password=\\"pw-1\\";"\n[sink.options]\n"hoodie.aws.secret.key" = "pw-2"\n'
                                      '[spark]\n"spark.hadoop.fs.s3a.secret.key" = "pw-3"\n'))
    assert not {"pw-1", "pw-2", "pw-3"} & set(repr(cfg).replace('"', " ").replace("'", " ").split())
    assert "pw-" not in repr(cfg)


def test_a_config_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(GOOD.encode() + b'[sink.options]\n"x" = "caf\xe9"\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert f"{path}: not UTF-8 (byte 0xe9 on line 10)" in err.value.render()


def test_every_kafka_consumer_property_and_librdkafka_spelling_passes(tmp_path):
    props = {"fetch.max.bytes": "1048576", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
             "sasl.username": "u", "sasl.password": "p", "ssl.ca.location": "/ca.pem", "auto.offset.reset": "earliest",
             "isolation.level": "read_committed"}
    text = GOOD + "[source.properties]\n" + "".join(f'"{k}" = "{v}"\n' for k, v in props.items())
    assert load_config(write(tmp_path, text)).source.properties == props


def test_defaults_fill_what_the_file_leaves_out(tmp_path):
    cfg = load_config(write(tmp_path, GOOD))
    assert cfg.sink.table_type == "MERGE_ON_READ" and cfg.run.on_bad_record == "dead-letter"
    assert cfg.run.checkpoint_dir == "/tmp/x_cdcsync_checkpoint" and cfg.run.trigger_interval == "10s"
    assert cfg.sink.deletes == "hard"
    assert cfg.source.metadata_columns == ["topic", "partition", "offset", "timestamp"]


@pytest.mark.parametrize("properties, key, fragment", [
    ('"security.protocol" = "SSL"\n"ssl.truststore.location" = "/nonexistent/truststore.jks"\n',
     "ssl.truststore.location", "No such file"),
    ('"security.protocol" = "SASL_SSL"\n"sasl.mechanism" = "SCRAM-SHA-512"\n', "sasl.jaas.config",
     "needs a username and a password"),
    ('"security.protocol" = "SASL_PLAINTEXT"\n"sasl.mechanism" = "GSSAPI"\n'
     '"sasl.jaas.config" = "com.sun.security.auth.module.Krb5LoginModule required;"\n', "sasl.mechanism",
     "offset planner"),
    ('"security.protocol" = "SSL"\n"ssl.certificate.location" = "client.pem"\n', "ssl.certificate.location",
     "Spark's Java Kafka client ignores it"),
])
def test_validate_checks_the_security_settings_offline(tmp_path, properties, key, fragment):
    """Files, mechanism and credentials are checked by `validate` without a broker or a JVM (exit 78)."""
    path = write(tmp_path, GOOD + "[source.properties]\n" + properties)
    p = cdcsync("validate", path, "--json", timeout=60, jvm_free=True)
    data = json.loads(p.stdout)
    assert p.returncode == 78 and data["key"] == key and fragment in data["message"], data
    assert str(path) in data["message"]


@pytest.mark.parametrize("command", [["status"], ["infer-schema"]])
def test_commands_that_read_the_security_settings_name_the_file(tmp_path, command):
    path = write(tmp_path, GOOD + '[source.properties]\n"security.protocol" = "SSL"\n'
                                  '"ssl.truststore.location" = "/nonexistent/truststore.jks"\n')
    p = cdcsync(*command, path, timeout=60, jvm_free=True)
    assert p.returncode == 78 and f"{path} [source.properties]: ssl.truststore.location" in p.stderr, p.stderr


@pytest.mark.parametrize("text, words", [
    (GOOD.replace('topics = ["t"]', 'topics = ["t"]\nspecific_offsets = "partition:0,offset:4"'),
     ["'source.specific_offsets' is read only with source.startup_mode = 'specific-offsets'", "is 'group-offsets'"]),
    (GOOD.replace('topics = ["t"]', 'topics = ["t"]\nstartup_mode = "earliest-offset"\nstartup_timestamp_ms = 1'),
     ["'source.startup_timestamp_ms' is read only with source.startup_mode = 'timestamp'", "is 'earliest-offset'"]),
    (GOOD.replace('topics = ["t"]', 'topics = ["t"]\ncsv_columns = ["a"]'),
     ["'source.csv_columns' is read only with source.format = 'csv'", "is 'debezium-json'"]),
    (GOOD.replace('topics = ["t"]', 'topics = ["t"]\ncsv_field_delimiter = ";"'),
     ["'source.csv_field_delimiter' is read only with source.format = 'csv'"]),
    (GOOD + 'unrouted = "default"\n', ["'sink.unrouted' says where the tables no [[route]] names go"]),
])
def test_a_key_no_command_would_read_is_refused(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(path) in err.value.render() and all(w in err.value.render() for w in words), err.value.render()
