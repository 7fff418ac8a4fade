"""canal-json and maxwell-json: ops, DDL and markers, keys, times, and Canal's mysqlType typing."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from cdcsync.formats import BadRecord, get_decoder
from cdcsync.formats.mysql_types import decode_text, mysql_type
from cdcsync.schema.types import BIGINT, BOOLEAN, DATE, DOUBLE, STRING, TIME, TIMESTAMP, ColumnType

canal = get_decoder("canal-json")
maxwell = get_decoder("maxwell-json")


def canal_msg(kind, data, mysql=None, **extra):
    return json.dumps({"data": data, "database": "shop", "table": "orders", "type": kind, "isDdl": False,
                       "es": 1000, "ts": 2000, "pkNames": ["id"], "mysqlType": mysql, **extra}).encode()


def test_canal_emits_one_change_per_row_with_the_primary_key():
    changes = canal.parse(canal_msg("INSERT", [{"id": "1"}, {"id": "2"}], {"id": "int(11)"}))
    assert [(c.op, c.row, c.key_columns, c.table, c.ts_ms) for c in changes] == [
        ("upsert", {"id": "1"}, ["id"], "shop.orders", 1000),
        ("upsert", {"id": "2"}, ["id"], "shop.orders", 1000),
    ]
    assert changes[0].declared == {"id": BIGINT} and changes[0].declared_source == "hint"
    assert changes[0].text_values is True


def test_canal_update_takes_the_new_image_and_delete_the_old_one():
    [up] = canal.parse(canal_msg("UPDATE", [{"id": "1", "v": "new"}], old=[{"v": "old"}]))
    [de] = canal.parse(canal_msg("DELETE", [{"id": "1", "v": "new"}]))
    assert (up.op, up.row, de.op, de.row) == ("upsert", {"id": "1", "v": "new"}, "delete", {"id": "1", "v": "new"})


def test_canal_ddl_is_skipped():
    ddl = json.dumps({"data": None, "database": "d", "table": "t", "isDdl": True, "type": "CREATE",
                      "sql": "CREATE TABLE t (a int)", "ts": 5}).encode()
    assert [(c.op, c.skip_reason, c.ts_ms) for c in canal.parse(ddl)] == [("skip", "ddl", 5)]
    alter = json.dumps({"data": None, "database": "d", "table": "t", "type": "ALTER"}).encode()
    assert canal.parse(alter)[0].skip_reason == "ddl"
    assert canal.parse(canal_msg("TRUNCATE", None, isDdl=True))[0].skip_reason == "truncate"
    assert canal.parse(canal_msg("INSERT", [{"id": "1"}], isDdl=True))[0].skip_reason == "ddl"


def test_canal_values_that_are_json_numbers_are_read_like_their_text():
    [ch] = get_decoder("canal-json", typed=True).parse(canal_msg("INSERT", [{"id": 5}], {"id": "int(11)"}))
    assert ch.row == {"id": 5}


@pytest.mark.parametrize("value, code", [
    (canal_msg("INSERT", None), "missing_field"),
    (canal_msg("INSERT", []), "missing_field"),
    (canal_msg("INSERT", {"id": "1"}), "bad_value"),
    (canal_msg("INSERT", [5]), "bad_value"),
    (canal_msg("INSERT", [{"id": "1"}, None]), "bad_value"),  # one malformed row makes the message bad
    (canal_msg("BOGUS", [{"id": "1"}]), "bad_op"),
    (canal_msg(5, [{"id": "1"}]), "bad_op"),
    (b'{"data": []}', "missing_field"),
])
def test_canal_bad_records(value, code):
    with pytest.raises(BadRecord) as e:
        canal.parse(value)
    assert e.value.reason_code == code


def test_canal_typed_rows_convert_text_by_mysql_type():
    mysql = {"id": "bigint unsigned", "price": "decimal(10,2)", "d": "date", "t": "datetime", "f": "float",
             "ok": "boolean", "name": "varchar(20)"}
    row = {"id": "18446744073709551615", "price": "12.30", "d": "2024-02-29", "t": "2024-02-29 10:00:01",
           "f": "5.17", "ok": "1", "name": None}
    [ch] = get_decoder("canal-json", typed=True).parse(canal_msg("INSERT", [row], mysql))
    assert ch.row == {"id": Decimal("18446744073709551615"), "price": Decimal("12.30"), "d": dt.date(2024, 2, 29),
                      "t": dt.datetime(2024, 2, 29, 10, 0, 1), "f": 5.17, "ok": True, "name": None}
    with pytest.raises(BadRecord):
        get_decoder("canal-json", typed=True).parse(canal_msg("INSERT", [{"price": "abc"}], mysql))


@pytest.mark.parametrize("text, expected", [
    ("int(11)", BIGINT), ("INTEGER", BIGINT), ("bigint(20)", BIGINT), ("tinyint(1)", BIGINT),
    ("bigint unsigned", ColumnType.decimal(20, 0)), ("bigint(20) unsigned zerofill", ColumnType.decimal(20, 0)),
    ("decimal(10,2)", ColumnType.decimal(10, 2)), ("DECIMAL", ColumnType.decimal(10, 0)),
    ("decimal(65,30)", STRING),  # wider than 38 digits: only text keeps it exact
    ("float", DOUBLE), ("double precision", DOUBLE), ("varchar(255)", STRING), ("text", STRING),
    ("date", DATE), ("datetime(3)", TIMESTAMP), ("timestamp", TIMESTAMP), ("time", TIME), ("bool", BOOLEAN),
    ("json", STRING), ("enum('a','b')", STRING), ("geometry", STRING), ("something new", STRING),
])
def test_mysql_types(text, expected):
    assert mysql_type(text) == expected


def test_decode_text_refuses_text_that_is_not_of_the_type():
    with pytest.raises(ValueError):
        decode_text(BOOLEAN, "yes")
    assert decode_text(TIME, "10:00:01") == dt.time(10, 0, 1)


def maxwell_msg(kind, data, **extra):
    return json.dumps({"database": "test", "table": "product", "type": kind, "ts": 1596684883, "xid": 1,
                       "data": data, "primary_key_columns": ["id"], **extra}).encode()


@pytest.mark.parametrize("kind, op", [("insert", "upsert"), ("update", "upsert"), ("delete", "delete"),
                                      ("bootstrap-insert", "upsert")])
def test_maxwell_row_types(kind, op):
    [ch] = maxwell.parse(maxwell_msg(kind, {"id": 1, "w": 0.5}, commit=True))
    assert (ch.op, ch.row, ch.key_columns, ch.table, ch.ts_ms) == (
        op, {"id": 1, "w": 0.5}, ["id"], "test.product", 1596684883000)


def test_maxwell_non_row_messages_are_skipped():
    assert maxwell.parse(maxwell_msg("bootstrap-start", {}))[0].skip_reason == "bootstrap_marker"
    assert maxwell.parse(maxwell_msg("bootstrap-complete", {}))[0].skip_reason == "bootstrap_marker"
    ddl = json.dumps({"type": "table-alter", "database": "test", "table": "product", "sql": "ALTER TABLE …",
                      "ts": 1}).encode()
    assert maxwell.parse(ddl)[0].skip_reason == "ddl"


@pytest.mark.parametrize("value, code", [
    (maxwell_msg("insert", None), "missing_field"),
    (maxwell_msg("insert", [1]), "bad_value"),
    (maxwell_msg("upsert-ish", {"id": 1}), "bad_op"),
    (maxwell_msg("INSERT", {"id": 1}), "bad_op"),
    (maxwell_msg(5, {"id": 1}), "bad_op"),
    (b'{"data": {"id": 1}}', "missing_field"),
])
def test_maxwell_bad_records(value, code):
    with pytest.raises(BadRecord) as e:
        maxwell.parse(value)
    assert e.value.reason_code == code
