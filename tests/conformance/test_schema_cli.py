"""infer-schema on a real Canal file with a second table added: one schema per source table (moved unchanged
from tests/unit/schema/test_schema_cli.py, whose in-repo version uses tests/fixtures/cdc)."""

from __future__ import annotations

import json

import pytest

from tests.cli import infer_schema
from tests.conformance.cdc_fixtures import clean_copy


@pytest.fixture
def cli():
    def run(*args) -> tuple[int, str, str]:
        p = infer_schema(*args, timeout=60)
        return p.returncode, p.stdout, p.stderr

    return run


def test_a_topic_with_several_tables_gets_one_schema_each(cli, tmp_path):
    path = clean_copy("canal.txt", tmp_path)
    extra = tmp_path / "more.txt"
    extra.write_text(path.read_text() + json.dumps({
        "data": [{"k": "a", "ts": "2024-01-01 10:00:00"}], "database": "inventory", "table": "other",
        "type": "INSERT", "isDdl": False, "mysqlType": {"k": "varchar(3)", "ts": "datetime"}, "pkNames": ["k"],
    }) + "\n")
    code, out, _ = cli("--from-file", extra, "-f", "canal-json", "-f", "json-schema")
    doc = json.loads(out)
    assert code == 0 and set(doc["$defs"]) == {"inventory.products2", "inventory.other"}
    assert doc["$defs"]["inventory.other"]["x-primary-key"] == ["k"]
    code, out, _ = cli("--from-file", extra, "-f", "canal-json")
    assert "inventory.products2" in out and "inventory.other" in out and "primary key: k" in out
