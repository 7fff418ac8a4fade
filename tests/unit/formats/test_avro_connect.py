"""Avro as JsonConverter would have written it: a Debezium AvroConverter schema (connect.* properties) and a plain
producer's logical types become the Kafka Connect schema, values keep their wire form, and the Debezium decoder
then gives the same typed row as for the JSON message of the same change."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from cdcsync.formats.avro_connect import connect_json, connect_schema, wire_schema
from cdcsync.formats.debezium import DebeziumDecoder
from tests.fixtures.avro_cases import ENVELOPE, avro


def test_the_connect_schema_keeps_debeziums_semantic_types():
    s = connect_schema(ENVELOPE)
    assert s["type"] == "struct" and s["name"] == "dbserver1.inventory.orders.Envelope"
    after = next(f for f in s["fields"] if f["field"] == "after")
    assert after["optional"] is True and after["name"] == "dbserver1.inventory.orders.Value"  # by its named type
    fields = {f["field"]: f for f in after["fields"]}
    assert fields["price"] == {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
                               "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "optional": True,
                               "field": "price"}
    assert fields["day"]["name"] == "io.debezium.time.Date" and fields["small"]["type"] == "int16"
    assert fields["id"] == {"type": "int32", "optional": False, "field": "id"}


@pytest.mark.parametrize("logical, name", [("date", "org.apache.kafka.connect.data.Date"),
                                           ("timestamp-micros", "io.debezium.time.MicroTimestamp"),
                                           ("timestamp-millis", "org.apache.kafka.connect.data.Timestamp")])
def test_a_plain_producers_logical_types_map_to_connect_types(logical, name):
    base = "int" if logical == "date" else "long"
    s = connect_schema({"type": "record", "name": "r", "fields": [{"name": "c", "type": {"type": base,
                                                                                         "logicalType": logical}}]})
    assert s["fields"][0]["name"] == name
    dec = connect_schema({"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 3})
    assert dec == {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "optional": False,
                   "parameters": {"scale": "3", "connect.decimal.precision": "5"}}  # the precision kept: DECIMAL(5,3)


def test_wire_schema_drops_logical_types_only():
    w = json.loads(wire_schema(ENVELOPE))
    assert "logicalType" not in json.dumps(w) and w["fields"][0]["type"][1]["fields"][1]["type"][1]["scale"] == 2


def test_an_avro_change_decodes_as_its_json_twin():
    at = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)
    after = {"id": 7, "price": Decimal("12.34"), "day": 19000, "at": int((at - dt.datetime(1970, 1, 1)) /
                                                                            dt.timedelta(microseconds=1)),
             "zoned": "2024-05-06T07:08:09Z", "small": 3}
    record = {"before": None, "after": after, "op": "c", "ts_ms": 1700000000000,
              "source": {"db": "inventory", "table": "orders", "ts_ms": 1700000000000, "file": "binlog.000003",
                         "pos": 154, "row": 0}}
    text = connect_json(avro(record, ENVELOPE), ENVELOPE)
    doc = json.loads(text)
    assert doc["payload"]["after"]["price"] == "BNI="  # 1234 unscaled, as JsonConverter's base64 decimals
    (change,) = DebeziumDecoder(typed=True).parse(text.encode())
    assert change.op == "upsert" and change.table == "inventory.orders"
    assert change.row == {"id": 7, "price": Decimal("12.34"), "day": dt.date(2022, 1, 8), "at": at,
                          "zoned": dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.UTC), "small": 3,
                          "stamp": None}


VARIABLE = {"type": "record", "name": "VariableScaleDecimal", "namespace": "io.debezium.data", "fields": [
    {"name": "scale", "type": "int"}, {"name": "value", "type": "bytes"}],
    "connect.doc": "Variable scaled decimal", "connect.version": 1,
    "connect.name": "io.debezium.data.VariableScaleDecimal"}


def test_a_variable_scale_decimal_struct_decodes_to_its_exact_value():
    """Debezium's AvroConverter writes NUMERIC without a scale as a struct of scale and unscaled bytes."""
    from cdcsync.formats.avro import AvroDecoder

    row = {"type": "record", "name": "Value", "fields": [
        {"name": "id", "type": "int"}, {"name": "n", "type": ["null", VARIABLE], "default": None}]}
    body = avro({"id": 1, "n": {"scale": 3, "value": (12345).to_bytes(2, "big", signed=True)}}, row)
    (change,) = AvroDecoder(json.dumps(row), typed=True).parse(body)
    assert change.row == {"id": 1, "n": "12.345"}  # its exact digits, as for the JSON converter's message
    (negative,) = AvroDecoder(json.dumps(row), typed=True).parse(
        avro({"id": 2, "n": {"scale": 0, "value": (-7).to_bytes(1, "big", signed=True)}}, row))
    assert negative.row["n"] == "-7"
