"""debezium-json: envelopes, ops, keys, non-row events, and the logical-type decoding."""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal

import pytest

from cdcsync.formats import BadRecord, get_decoder
from cdcsync.formats.debezium_types import decode_decimal, decode_value, field_type
from cdcsync.schema.types import BIGINT, BINARY, DATE, DOUBLE, STRING, TIME, TIMESTAMP, TIMESTAMP_LTZ, ColumnType

SOURCE = {"db": "shop", "table": "orders", "ts_ms": 1700000000000}


def env(op, before=None, after=None, **extra):
    return json.dumps({"before": before, "after": after, "source": SOURCE, "op": op, "ts_ms": 1, **extra}).encode()


def with_schema(payload: dict, fields: list[dict]) -> bytes:
    struct = {"type": "struct", "fields": fields, "optional": True}
    schema = {"type": "struct", "fields": [{**struct, "field": "before"}, {**struct, "field": "after"}]}
    return json.dumps({"schema": schema, "payload": payload}).encode()


dec = get_decoder("debezium-json")


@pytest.mark.parametrize("op", ["c", "r", "u"])
def test_create_read_update_are_upserts_of_the_after_image(op):
    [ch] = dec.parse(env(op, before={"id": 1, "v": "old"}, after={"id": 1, "v": "new"}))
    assert (ch.op, ch.table, ch.row, ch.ts_ms) == ("upsert", "shop.orders", {"id": 1, "v": "new"}, 1700000000000)


def test_delete_is_keyed_by_the_before_image():
    [ch] = dec.parse(env("d", before={"id": 7, "v": "x"}))
    assert (ch.op, ch.row) == ("delete", {"id": 7, "v": "x"})


def test_delete_without_before_uses_the_kafka_key_and_names_the_key_columns():
    [ch] = dec.parse(env("d"), key=b'{"id": 7}')
    assert (ch.op, ch.row, ch.key_columns) == ("delete", {"id": 7}, ["id"])
    key = json.dumps({"schema": {"type": "struct", "fields": [{"field": "id", "type": "int32"}]},
                      "payload": {"id": 8}}).encode()
    [ch] = dec.parse(env("d"), key=key)
    assert (ch.row, ch.key_columns) == ({"id": 8}, ["id"])


@pytest.mark.parametrize("key", [None, b"not json", b"{}", b"[1]", b'{"payload": 5}'])
def test_delete_without_before_or_a_usable_key_is_a_bad_record(key):
    with pytest.raises(BadRecord) as e:
        dec.parse(env("d"), key=key)
    assert e.value.reason_code == "missing_key"


def test_tombstones_and_non_row_events_are_skipped():
    assert [(c.op, c.skip_reason) for c in dec.parse(None)] == [("skip", "tombstone")]
    assert dec.parse(b'{"schema": null, "payload": null}')[0].skip_reason == "tombstone"
    marker = {"status": "BEGIN", "id": "571:53195829", "event_count": None, "data_collections": None}
    assert dec.parse(json.dumps(marker).encode())[0].skip_reason == "transaction"
    ddl = {"source": {"server": "s"}, "databaseName": "shop", "ddl": "ALTER TABLE t ADD c INT", "tableChanges": []}
    assert dec.parse(json.dumps(ddl).encode())[0].skip_reason == "ddl"
    assert dec.parse(b'{"ts_ms": 1}')[0].skip_reason == "heartbeat"
    heartbeat = {"schema": {"type": "struct", "name": "io.debezium.connector.common.Heartbeat"},
                 "payload": {"ts_ms": 1}}
    assert dec.parse(json.dumps(heartbeat).encode())[0].skip_reason == "heartbeat"
    assert dec.parse(env("t"))[0].skip_reason == "truncate"
    assert dec.parse(env("m"))[0].skip_reason == "message"


def test_snapshot_rows_with_zero_source_time_fall_back_to_the_envelope_time():
    msg = json.dumps({"before": None, "after": {"id": 1}, "source": {"db": "d", "table": "t", "ts_ms": 0},
                      "op": "r", "ts_ms": 42}).encode()
    assert dec.parse(msg)[0].ts_ms == 42


def test_postgres_table_names_include_the_schema():
    msg = json.dumps({"after": {"id": 1}, "op": "c",
                      "source": {"db": "postgres", "schema": "inventory", "table": "products"}}).encode()
    assert dec.parse(msg)[0].table == "postgres.inventory.products"


@pytest.mark.parametrize("value, code", [
    (b"\xff\xfe", "invalid_utf8"),
    (b"{not json", "invalid_json"),
    (b"[1, 2]", "not_an_object"),
    (b'{"op": "c", "after": 5}', "bad_value"),
    (b'{"op": "x", "after": {}}', "bad_op"),
    (b'{"op": 5, "after": {}}', "bad_op"),
    (b'{"op": "d", "before": [1]}', "bad_value"),
    (b'{"schema": {}, "payload": 5}', "not_an_object"),
    (b'{}', "missing_field"),
    (b'{"op": "c"}', "missing_field"),
    (b'{"before": null, "after": {"id": 1}}', "missing_field"),
])
def test_bad_records_carry_a_reason_code(value, code):
    with pytest.raises(BadRecord) as e:
        dec.parse(value)
    assert e.value.reason_code == code


def test_oversized_records_are_refused_before_parsing():
    with pytest.raises(BadRecord) as e:
        get_decoder("debezium-json", max_bytes=10).parse(env("c", after={"id": 1}))
    assert e.value.reason_code == "oversized"


def test_schema_envelope_declares_types_and_not_null_columns():
    fields = [
        {"type": "int64", "optional": False, "field": "id"},
        {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
         "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "field": "price"},
        {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "field": "day"},
    ]
    payload = {"before": None, "after": {"id": 1, "price": "AMs=", "day": 1}, "op": "c", "source": SOURCE}
    [ch] = dec.parse(with_schema(payload, fields))
    assert ch.declared == {"id": BIGINT, "price": ColumnType.decimal(10, 2), "day": DATE}
    assert ch.declared_source == "envelope" and ch.not_null == frozenset({"id"})
    [typed] = get_decoder("debezium-json", typed=True).parse(with_schema(payload, fields))
    assert typed.row == {"id": 1, "price": Decimal("2.03"), "day": dt.date(1970, 1, 2)}


def test_typed_decoding_of_a_value_that_does_not_match_its_schema_is_a_bad_record():
    fields = [{"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
               "parameters": {"scale": "2"}, "field": "price"}]
    payload = {"after": {"price": "not base64!"}, "op": "c", "source": SOURCE}
    with pytest.raises(BadRecord) as e:
        get_decoder("debezium-json", typed=True).parse(with_schema(payload, fields))
    assert e.value.reason_code == "bad_value"


def _b64(n: int, length: int) -> str:
    return base64.b64encode(n.to_bytes(length, "big", signed=True)).decode()


@pytest.mark.parametrize("unscaled, scale, expected", [
    (11, 1, "1.1"),
    (-11, 1, "-1.1"),
    (-1, 0, "-1"),
    (0, 3, "0.000"),
    (10**37 + 7, 10, "1000000000000000000000000000.0000000007"),  # beyond Decimal's 28-digit default context
    (-(2**127), 0, str(-(2**127))),
])
def test_decimal_is_big_endian_twos_complement_with_scale(unscaled, scale, expected):
    length = max(1, (unscaled.bit_length() + 8) // 8)
    d = decode_decimal(_b64(unscaled, length), scale)
    assert d == Decimal(expected) and str(d) == expected


@pytest.mark.parametrize("schema, wire, expected", [
    ({"type": "int32", "name": "io.debezium.time.Date"}, -1, dt.date(1969, 12, 31)),
    ({"type": "int64", "name": "io.debezium.time.Timestamp"}, 1500, dt.datetime(1970, 1, 1, 0, 0, 1, 500000)),
    ({"type": "int64", "name": "io.debezium.time.MicroTimestamp"}, 1_000_001, dt.datetime(1970, 1, 1, 0, 0, 1, 1)),
    ({"type": "int64", "name": "io.debezium.time.NanoTimestamp"}, 1_000_001_999,
     dt.datetime(1970, 1, 1, 0, 0, 1, 1)),
    ({"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, "2023-03-23T22:00:10+02:00",
     dt.datetime(2023, 3, 23, 22, 0, 10, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
    ({"type": "int64", "name": "io.debezium.time.MicroTime"}, 3_600_000_001, dt.time(1, 0, 0, 1)),
    ({"type": "int32", "name": "io.debezium.time.Time"}, 61_000, dt.time(0, 1, 1)),
    ({"type": "int64", "name": "io.debezium.time.NanoTime"}, 1_000, dt.time(0, 0, 0, 1)),
    ({"type": "int32", "name": "io.debezium.time.Year"}, 2023, 2023),
    ({"type": "bytes"}, "AAE=", b"\x00\x01"),
    ({"type": "struct", "name": "io.debezium.data.VariableScaleDecimal"}, {"scale": 2, "value": "AMs="}, "2.03"),
    ({"type": "struct", "name": "io.debezium.data.geometry.Point"}, {"x": 1.0, "y": 2.0}, '{"x":1.0,"y":2.0}'),
    ({"type": "string", "name": "io.debezium.data.Json"}, '{"a": 1}', '{"a": 1}'),
    ({"type": "int32"}, None, None),
])
def test_decode_value_by_debezium_type(schema, wire, expected):
    assert decode_value(schema, wire) == expected


@pytest.mark.parametrize("schema, expected", [
    ({"type": "int16"}, BIGINT),
    ({"type": "float"}, DOUBLE),
    ({"type": "bytes"}, BINARY),
    ({"type": "struct", "name": "io.debezium.data.geometry.Point"}, STRING),
    ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "3"}},
     ColumnType.decimal(38, 3)),
    ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
      "parameters": {"scale": "3", "connect.decimal.precision": "40"}}, STRING),
    ({"type": "int64", "name": "io.debezium.time.MicroTimestamp"}, TIMESTAMP),
    ({"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, TIMESTAMP_LTZ),
    ({"type": "int64", "name": "io.debezium.time.MicroTime"}, TIME),
    ({"type": "string", "name": "io.debezium.data.EnumSet"}, STRING),
    ({"type": "bytes", "name": "io.debezium.data.Bits"}, BINARY),
])
def test_field_types(schema, expected):
    assert field_type(schema) == expected
