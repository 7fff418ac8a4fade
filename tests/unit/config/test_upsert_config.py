"""[source] tombstones and deleted_field: the default each format gets (SourceConfig.tombstone_mode, the one rule
every command reads), and the settings refused where they cannot apply (exit 78 naming the key)."""

from __future__ import annotations

import json

import pytest

from cdcsync.config import load_config
from cdcsync.errors import ConfigError
from cdcsync.exit_codes import ExitCode
from tests.configs import minimal, write
from tests.fixtures.avro_cases import ENVELOPE

ROW = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"},
                                                 {"name": "__deleted", "type": ["null", "string"]}]}
AVRO = {"avro-rows": 'avro_schema_file = "row.avsc"\n', "avro-envelope": 'avro_schema_file = "envelope.avsc"\n',
        "avro-confluent": 'schema_registry_url = "http://r:8081"\n', "csv": 'csv_columns = ["id", "__deleted"]\n'}


def load(tmp_path, fmt: str, source: str = "", sink: str = ""):
    (tmp_path / "row.avsc").write_text(json.dumps(ROW))
    (tmp_path / "envelope.avsc").write_text(json.dumps(ENVELOPE))
    text = minimal(fmt=fmt.removesuffix("-rows").removesuffix("-envelope"))
    text = text.replace("[sink]", AVRO.get(fmt, "") + source + "\n[sink]") + sink
    return load_config(write(tmp_path, text))


@pytest.mark.parametrize("fmt, source, sink, mode", [
    ("debezium-json", "", 'primary_key = ["id"]\n', "skip"),
    ("canal-json", "", "", "skip"),
    ("maxwell-json", "", "", "skip"),
    ("avro-envelope", "", 'primary_key = ["id"]\n', "skip"),
    ("json", "", "", "skip"),  # no key to delete by
    ("json", "", 'primary_key = ["id"]\n', "delete"),
    ("json", 'key_fields = ["id"]\n', "", "delete"),
    ("csv", "", 'primary_key = ["id"]\n', "delete"),
    ("raw", "", 'primary_key = ["id"]\n', "skip"),  # a text value: the key names a row only through key_fields
    ("raw", 'key_fields = ["id"]\n', "", "delete"),
    ("avro-rows", "", 'primary_key = ["id"]\n', "delete"),
    ("avro-rows", "", "", "skip"),
    ("avro-confluent", "", 'primary_key = ["id"]\n', "skip"),  # Debezium envelopes, unless the config says rows
    ("avro-confluent", 'key_fields = ["id"]\n', "", "delete"),
    ("avro-confluent", 'deleted_field = "__deleted"\n', 'primary_key = ["id"]\n', "delete"),
    ("json", 'tombstones = "skip"\n', 'primary_key = ["id"]\n', "skip"),
    ("avro-confluent", 'tombstones = "delete"\n', 'primary_key = ["id"]\n', "delete"),
])
def test_each_format_gets_its_tombstone_default(tmp_path, fmt, source, sink, mode):
    cfg = load(tmp_path, fmt, source, sink)
    assert cfg.source.tombstone_mode(cfg.sink.primary_key) == mode


@pytest.mark.parametrize("fmt, source, sink, key, words", [
    ("debezium-json", 'tombstones = "delete"\n', "", "source.tombstones", "carries its own delete events"),
    ("canal-json", 'tombstones = "delete"\n', "", "source.tombstones", "carries its own delete events"),
    ("avro-envelope", 'tombstones = "delete"\n', "", "source.tombstones", "is a Debezium envelope"),
    ("json", 'tombstones = "delete"\n', "", "source.tombstones", "no key is read"),
    ("csv", 'tombstones = "delete"\n', "", "source.tombstones", "no key is read"),
    ("raw", 'tombstones = "delete"\n', 'primary_key = ["id"]\n', "source.tombstones", "source.key_fields"),
    ("debezium-json", 'deleted_field = "__deleted"\n', "", "source.deleted_field", "not such rows"),
    ("maxwell-json", 'deleted_field = "__deleted"\n', "", "source.deleted_field", "not such rows"),
    ("raw", 'deleted_field = "__deleted"\nkey_fields = ["id"]\n', "", "source.deleted_field", "not such rows"),
    ("avro-envelope", 'deleted_field = "__deleted"\n', "", "source.deleted_field", "not such rows"),
    ("json", 'deleted_field = "__deleted"\n', "", "source.deleted_field", "no key is read"),
    ("json", 'deleted_field = "id"\n', 'primary_key = ["id"]\n', "source.deleted_field", "also a key"),
    ("json", 'deleted_field = "__deleted"\n', 'primary_key = ["id"]\nordering_field = "__deleted"\n',
     "source.deleted_field", "ordering column"),
    ("csv", 'deleted_field = "gone"\n', 'primary_key = ["id"]\n', "source.deleted_field", "csv_columns"),
    ("json", 'deleted_field = "a-b"\n', 'primary_key = ["id"]\n', "source.deleted_field", "does not match"),
    ("json", 'tombstones = "always"\n', 'primary_key = ["id"]\n', "source.tombstones", "delete, skip"),
])
def test_settings_that_cannot_apply_are_refused(tmp_path, fmt, source, sink, key, words):
    with pytest.raises(ConfigError) as e:
        load(tmp_path, fmt, source, sink)
    assert e.value.exit_code == ExitCode.CONFIG
    assert e.value.facts.get("key") == key and words in e.value.render(), (e.value.facts, e.value.render())
    assert "hint" in e.value.render().lower() or e.value.hint


@pytest.mark.parametrize("fmt, source, sink", [
    ("json", 'tombstones = "delete"\ndeleted_field = "__deleted"\n', 'primary_key = ["id"]\n'),
    ("json", 'deleted_field = "__deleted"\nkey_fields = ["id"]\n', 'ordering_field = "__source_ts_ms"\n'),
    ("csv", 'deleted_field = "__deleted"\n', 'primary_key = ["id"]\n'),
    ("avro-rows", 'deleted_field = "__deleted"\ntombstones = "delete"\n', 'primary_key = ["id"]\n'),
    ("avro-confluent", 'deleted_field = "__deleted"\ntombstones = "delete"\n', 'primary_key = ["id"]\n'),
    ("debezium-json", 'tombstones = "skip"\n', ""),
])
def test_settings_that_apply_are_accepted(tmp_path, fmt, source, sink):
    cfg = load(tmp_path, fmt, source, sink)
    assert cfg.source.deleted_field in (None, "__deleted")


@pytest.mark.parametrize("fmt", ["canal-json", "maxwell-json", "json", "csv", "raw"])
@pytest.mark.parametrize("source", ['on_truncate = "skip"\n', 'unavailable_value_placeholder = "__u__"\n'])
def test_debezium_only_keys_are_refused_for_other_formats(tmp_path, fmt, source):
    with pytest.raises(ConfigError) as e:
        load(tmp_path, fmt, source)
    key = source.split(" ")[0]
    assert e.value.exit_code == ExitCode.CONFIG and e.value.facts["key"] == f"source.{key}"
    assert "Debezium" in e.value.message


@pytest.mark.parametrize("fmt", ["debezium-json", "avro-envelope", "avro-confluent"])
def test_debezium_only_keys_are_read_for_debezium_events(tmp_path, fmt):
    cfg = load(tmp_path, fmt, 'on_truncate = "fail"\nunavailable_value_placeholder = "__u__"\n',
               'primary_key = ["id"]\n')
    assert (cfg.source.on_truncate, cfg.source.unavailable_value_placeholder) == ("fail", "__u__")


def test_on_data_loss_takes_its_two_values(tmp_path):
    assert load(tmp_path, "json", sink='[run]\non_data_loss = "skip"\n').run.on_data_loss == "skip"
    with pytest.raises(ConfigError) as e:
        load(tmp_path, "json", sink='[run]\non_data_loss = "ignore"\n')
    assert "on_data_loss" in e.value.message
