"""The Avro wire format decoded in the JVM (`from_avro`, one writer schema per id, two versions in one batch) gives
the same verdict and row image as the Python decoder for every record, bad bytes included: a wrong magic byte, an
id the registry does not know, a truncated body; a tombstone is skipped."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from cdcsync.formats import vocabulary as v
from cdcsync.formats.avro_connect import connect_json
from cdcsync.formats.debezium import DebeziumDecoder
from cdcsync.formats.spark.avro import AvroSchemas, WriterSchemas
from cdcsync.formats.spark.envelope import decode_envelope
from tests.fixtures.avro_cases import ENVELOPE, ENVELOPE_V2, KEY, avro, change, wire
from tests.integration.engine.helpers import kafka_rows

pytestmark = pytest.mark.integration

V1 = {"id": 1, "price": Decimal("12.34"), "day": 19000, "at": 1_715_000_000_123_456, "zoned": "2024-05-06T07:08:09Z",
      "small": 3}
V2 = {**V1, "id": 2, "small": 2**40, "note": "widened"}
SCHEMAS = {1: json.dumps(ENVELOPE), 2: json.dumps(ENVELOPE_V2)}


def test_the_jvm_decodes_avro_as_the_python_decoder_does(spark):
    good = [wire(1, avro(change("c", None, V1, 0), ENVELOPE)),
            wire(2, avro(change("u", {**V2, "note": None}, V2, 1), ENVELOPE_V2)),
            wire(1, avro(change("d", V1, None, 2), ENVELOPE))]
    values = [*good, b"\x01" + good[0][1:], wire(99, good[0][5:]), good[1][:20], b"\x00\x00", None]
    keys = [wire(7, avro({"id": i}, KEY)) for i in (1, 2, 1, 1, 1, 2, 1, 1)]
    writers = WriterSchemas(AvroSchemas(SCHEMAS), AvroSchemas({7: json.dumps(KEY)}))
    rows = decode_envelope(kafka_rows(spark, values, keys), "avro-confluent",
                           writers=writers).orderBy("_kafka_offset").collect()

    assert [r["_bad"] for r in rows] == [None, None, None, v.NOT_AVRO_WIRE_FORMAT, v.UNKNOWN_SCHEMA_ID,
                                         v.AVRO_DECODE_FAILED, v.NOT_AVRO_WIRE_FORMAT, None]
    assert [r["_op"] for r in rows] == ["u", "u", "d", None, None, None, None, "s"]
    assert rows[4]["_bad_detail"].endswith(": 99") and rows[7]["_skip"] == v.TOMBSTONE
    assert all(r["_raw_value"] == values[i] for i, r in enumerate(rows)), "bad bytes are kept for the dead letters"
    for r, raw, schema in zip(rows, good, (ENVELOPE, ENVELOPE_V2, ENVELOPE), strict=False):
        (py,) = DebeziumDecoder().parse(connect_json(raw[5:], schema).encode())
        assert json.loads(r["_row"]) == py.row  # the same image, wire-typed: base64 decimal, days, micros
        assert r["_table"] == py.table == "inventory.orders" and r["_ts_ms"] == py.ts_ms
        assert json.loads(r["_schema"]) == json.loads(connect_json(raw[5:], schema))["schema"]
    assert json.loads(rows[1]["_row"])["small"] == 2**40 and json.loads(rows[1]["_row"])["note"] == "widened"
    assert json.loads(rows[0]["_row"])["price"] == "BNI="
    assert rows[2]["_position"] is not None and rows[2]["_position"] > rows[1]["_position"]
