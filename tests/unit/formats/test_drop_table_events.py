"""DROP TABLE events of each tool that writes one (tests/fixtures/drop_events.py) are skipped records of their own
reason, `drop_table`, named by the dropped source table; what only looks like one (a snapshot's restated DROP TABLE
IF EXISTS, other schema changes, a dropped database) stays `ddl`. The Spark decoder's verdicts on the same messages
are held to these by tests/integration/formats/test_decoder_parity.py."""

from __future__ import annotations

import json

import pytest

from cdcsync.formats import get_decoder
from cdcsync.formats import vocabulary as v
from tests.fixtures.drop_events import canal_erase, debezium_drop, maxwell_drop


def verdicts(fmt: str, records) -> list[tuple]:
    dec = get_decoder(fmt)
    return [(c.op, c.skip_reason, c.table) for key, value in records
            for c in dec.parse(value.encode(), None if key is None else key.encode())]


def test_a_debezium_drop_names_each_table_of_the_statement_not_the_source_block_list():
    # DROP TABLE a, b: one schema change per table, whose source.table is "a,b"
    assert verdicts("debezium-json", debezium_drop("app", ["a", "b"], 570)) == [
        ("skip", v.DROP_TABLE, "app.a"), ("skip", v.DROP_TABLE, "app.b")]


@pytest.mark.parametrize("snapshot", ["true", "first", "last", "incremental"])
def test_the_drop_table_if_exists_a_snapshot_restates_is_no_drop(snapshot):
    assert verdicts("debezium-json", debezium_drop("app", ["a"], 1, snapshot=snapshot)) == [("skip", v.DDL, "app.a")]


def test_other_debezium_schema_changes_stay_ddl():
    assert verdicts("debezium-json", debezium_drop("app", ["a"], 1, alter=True)) == [("skip", v.DDL, "app.a")]


@pytest.mark.parametrize("table_id, want", [
    ('"shop"."public"."orders"', "shop.public.orders"),  # a schema level (SQL Server, Db2)
    ('"we""ird"."t"', 'we"ird.t'),  # a quote in a name is doubled
    ('"".""."t"', "t"),  # empty parts are left out, as in the envelope's name
    ("shop.t", "env.tbl"), ('"a".""', "env.tbl"), (7, "env.tbl"), ({"a": "b"}, "env.tbl"),  # no name: the envelope's
])
def test_the_dropped_table_is_named_by_the_drop_elements_id(table_id, want):
    doc = {"source": {"db": "env", "table": "tbl", "snapshot": False}, "ddl": "DROP TABLE x",
           "tableChanges": [{"type": "ALTER", "id": '"other"."x"'}, {"type": "DROP", "id": table_id, "table": None}]}
    assert verdicts("debezium-json", [(None, json.dumps(doc))]) == [("skip", v.DROP_TABLE, want)]


def test_canal_erase_is_a_drop_of_its_table():
    assert verdicts("canal-json", [canal_erase("shop", "users", 1589373566000)]) == [
        ("skip", v.DROP_TABLE, "shop.users")]


def test_maxwell_table_drop_is_a_drop_and_other_ddl_is_not():
    dropped = verdicts("maxwell-json", [maxwell_drop("test", "e", 1477053308000, 804398)])
    database = {"type": "database-drop", "database": "test", "sql": "drop database test", "ts": 1477053308000}
    created = {"type": "table-create", "database": "test", "table": "e", "def": {}, "ts": 1477053126000}
    others = verdicts("maxwell-json", [(None, json.dumps(m)) for m in (database, created)])
    assert dropped == [("skip", v.DROP_TABLE, "test.e")]
    assert others == [("skip", v.DDL, None), ("skip", v.DDL, "test.e")]  # a dropped database names no table
