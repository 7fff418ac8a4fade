"""[source] key_format, key_fields and the Avro schema files: each read where a format needs it, refused where none
would read it, and a schema file found relative to the config and checked before anything starts."""

from __future__ import annotations

import json

import pytest

from cdcsync.config import load_config
from cdcsync.errors import ConfigError
from tests.configs import minimal, write

ROW = {"type": "record", "name": "R", "fields": [{"name": "v", "type": "string"}]}


def load(tmp_path, fmt: str, text: str):
    source = minimal(fmt=fmt).replace("[sink]", text + "\n[sink]")
    return load_config(write(tmp_path, source))


def test_schema_files_resolve_against_the_config_folder(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "row.avsc").write_text(json.dumps(ROW))
    (tmp_path / "s" / "key.avsc").write_text('"string"')
    src = load(tmp_path, "avro", 'avro_schema_file = "s/row.avsc"\nkey_format = "avro"\n'
                                 'key_avro_schema_file = "s/key.avsc"\nkey_fields = ["k"]\n').source
    assert src.avro_schema_file == str(tmp_path / "s" / "row.avsc")
    assert json.loads(src.avsc()) == ROW and src.avsc(key=True) == '"string"' and src.key_fields == ["k"]


def test_an_avro_key_may_come_with_a_json_value(tmp_path):
    src = load(tmp_path, "json", 'key_format = "avro-confluent"\nschema_registry_url = "http://r:8081"\n'
                                 'key_fields = ["id"]\n').source
    assert (src.format, src.key_format, src.key_fields) == ("json", "avro-confluent", ["id"])


@pytest.mark.parametrize("fmt, text, key, words", [
    ("avro", "", "source.avro_schema_file", "format = 'avro' needs the writer schema"),
    ("json", 'key_format = "avro"\n', "source.key_avro_schema_file", "key_format = 'avro' needs the writer schema"),
    ("json", 'avro_schema_file = "row.avsc"\n', "source.avro_schema_file", "read only with format = 'avro'"),
    ("avro", 'avro_schema_file = "row.avsc"\nkey_avro_schema_file = "row.avsc"\n', "source.key_avro_schema_file",
     "read only with key_format = 'avro'"),
    ("avro", 'avro_schema_file = "missing.avsc"\n', "source.avro_schema_file", "cannot be read"),
    ("avro", 'avro_schema_file = "junk.avsc"\n', "source.avro_schema_file", "is not an Avro schema"),
    ("avro", 'avro_schema_file = "config.toml"\n', "source.avro_schema_file", "is not an Avro schema"),
    ("debezium-json", 'key_fields = ["id"]\n', "source.key_fields", "already carry their key columns"),
    ("json", 'key_fields = ["a-b"]\n', "source.key_fields[0]", "does not match"),
    ("json", 'key_format = "avro-confluent"\n', "source.schema_registry_url", "needs 'source.schema_registry_url'"),
    ("json", 'key_format = "protobuf"\n', "source.key_format", "json, avro, avro-confluent"),
])
def test_key_and_avro_mistakes_are_refused(tmp_path, fmt, text, key, words):
    (tmp_path / "row.avsc").write_text(json.dumps(ROW))
    (tmp_path / "junk.avsc").write_text('["int", "string"]')  # a union Kafka Connect has no type for
    with pytest.raises(ConfigError) as e:
        load(tmp_path, fmt, text)
    assert e.value.facts.get("key") == key and words in e.value.render(), (e.value.facts, e.value.render())
