"""[source] on_drop_table: read by the formats that carry a DROP TABLE event, with or without [[route]] (a drop of
the one source table counts too); refused where no record can be one (exit 78 naming the key)."""

from __future__ import annotations

import pytest

from cdcsync.errors import ConfigError
from cdcsync.exit_codes import ExitCode
from tests.unit.config.test_upsert_config import load


@pytest.mark.parametrize("fmt, sink", [("debezium-json", 'primary_key = ["id"]\n'), ("canal-json", ""),
                                       ("maxwell-json", "")])
def test_on_drop_table_is_read_for_the_formats_that_carry_a_drop(tmp_path, fmt, sink):
    assert load(tmp_path, fmt, sink=sink).source.on_drop_table == "keep"  # the default, and no [[route]] needed
    assert load(tmp_path, fmt, 'on_drop_table = "fail"\n', sink).source.on_drop_table == "fail"


@pytest.mark.parametrize("fmt", ["json", "csv", "raw", "avro-envelope", "avro-confluent"])
def test_on_drop_table_is_refused_where_no_record_is_a_drop(tmp_path, fmt):
    with pytest.raises(ConfigError) as e:
        load(tmp_path, fmt, 'on_drop_table = "keep"\n', 'primary_key = ["id"]\n')
    assert e.value.exit_code == ExitCode.CONFIG and e.value.facts["key"] == "source.on_drop_table"
    assert "debezium-json, canal-json, maxwell-json" in e.value.message and e.value.hint == "remove the key"


def test_on_drop_table_takes_only_keep_and_fail(tmp_path):
    with pytest.raises(ConfigError) as e:
        load(tmp_path, "canal-json", 'on_drop_table = "delete"\n')
    assert "on_drop_table" in e.value.message
