"""The bench workload as Debezium's Avro converter writes it: the Confluent wire format, key and value schemas
registered in a real registry (Apicurio's Confluent API), bodies written with fastavro."""

from __future__ import annotations

import io
import json
import struct

_ROW = {"type": "record", "name": "Value", "namespace": "bench.bench.customer", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"}, {"name": "segment", "type": "string"},
    {"name": "balance_cents", "type": "long"}, {"name": "updated_at", "type": "long"}],
    "connect.name": "bench.bench.customer.Value"}
ENVELOPE = {"type": "record", "name": "Envelope", "namespace": "bench.bench.customer", "fields": [
    {"name": "before", "type": ["null", _ROW], "default": None},
    {"name": "after", "type": ["null", "Value"], "default": None},
    {"name": "op", "type": "string"}, {"name": "ts_ms", "type": ["null", "long"], "default": None},
    {"name": "source", "type": {"type": "record", "name": "Source", "namespace": "io.debezium.connector.mysql",
                                "fields": [*({"name": f, "type": "string"} for f in (
                                    "version", "connector", "name", "snapshot", "db", "table")),
                                           {"name": "ts_ms", "type": "long"}]}}],
    "connect.name": "bench.bench.customer.Envelope"}
KEY = {"type": "record", "name": "Key", "namespace": "bench.bench.customer",
       "fields": [{"name": "id", "type": "long"}], "connect.name": "bench.bench.customer.Key"}


class AvroEncoder:
    """(key, change event) → Confluent wire-format bytes, with the schemas registered under `<topic>-key/-value`."""

    def __init__(self, registry_url: str, topic: str):
        from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
        from fastavro import parse_schema

        client = SchemaRegistryClient({"url": registry_url})
        self._key_id = client.register_schema(f"{topic}-key", Schema(json.dumps(KEY), "AVRO"))
        self._value_id = client.register_schema(f"{topic}-value", Schema(json.dumps(ENVELOPE), "AVRO"))
        self._key, self._value = parse_schema(KEY), parse_schema(json.loads(json.dumps(ENVELOPE)))

    def __call__(self, key: dict, value: dict) -> tuple[bytes, bytes]:
        return _wire(self._key_id, self._key, key), _wire(self._value_id, self._value, value)


def _wire(schema_id: int, schema, record: dict) -> bytes:
    from fastavro import schemaless_writer

    out = io.BytesIO()
    out.write(b"\x00" + struct.pack(">I", schema_id))
    schemaless_writer(out, schema, record)
    return out.getvalue()
