"""Avro in Python (infer-schema, the parity tests): the record as the text JsonConverter would have written, then
the Debezium decoder — what formats/spark/avro.py does in the JVM. `avro` is plain Avro binary written with one
schema (an .avsc file); `avro-confluent` carries the Confluent wire header and its writer schema comes from the
registry by id. A plain (non-Debezium) record is a row, upserted."""

from __future__ import annotations

from cdcsync.formats import vocabulary as v
from cdcsync.formats.avro_connect import connect_json
from cdcsync.formats.base import BadRecord, Change
from cdcsync.formats.debezium import DebeziumDecoder
from cdcsync.formats.key_fields import KeyReader
from cdcsync.formats.registry import HEADER_BYTES, RegistryClient, UnknownSchemaId, schema_id

_DECODE_ERRORS = (EOFError, ValueError, IndexError, TypeError, StopIteration, OverflowError, UnicodeDecodeError)


class AvroDecoder:
    name = "avro"

    def __init__(self, schema: str, typed: bool = False, max_bytes: int | None = None):
        self.schema = schema
        self._debezium = DebeziumDecoder(typed=typed, max_bytes=None)
        self.max_bytes = max_bytes

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if self.max_bytes is not None and value is not None and len(value) > self.max_bytes:
            raise BadRecord(v.OVERSIZED, f"value is {len(value)} bytes, more than {self.max_bytes}")
        return self._debezium.parse(None if value is None else self.text(value, change=True), key)

    def text(self, message: bytes, change: bool) -> bytes:
        return _connect_json(message, self.schema, change)


class AvroConfluentDecoder(AvroDecoder):
    name = "avro-confluent"

    def __init__(self, registry: RegistryClient, typed: bool = False, max_bytes: int | None = None):
        super().__init__("", typed, max_bytes)
        self.registry = registry

    def text(self, message: bytes, change: bool) -> bytes:
        sid = schema_id(message)
        try:
            schema = self.registry.schema(sid)
        except UnknownSchemaId:
            raise BadRecord(v.UNKNOWN_SCHEMA_ID, f"{v.BAD_REASONS[v.UNKNOWN_SCHEMA_ID]}: {sid}") from None
        return _connect_json(message[HEADER_BYTES:], schema, change)


def _connect_json(body: bytes, schema: str, change: bool) -> bytes:
    try:
        return connect_json(body, schema, change).encode()
    except _DECODE_ERRORS:
        raise BadRecord(v.AVRO_DECODE_FAILED, v.BAD_REASONS[v.AVRO_DECODE_FAILED]) from None


def key_reader(key_format: str, schema: str | None = None, registry: RegistryClient | None = None) -> KeyReader | None:
    """How a key in `key_format` becomes JSON text (None for "json": its bytes are). A key that does not decode is
    no key, as in the JVM: a delete then needs its 'before' image."""
    if key_format == "json":
        return None
    decoder: AvroDecoder
    if key_format == "avro":
        if schema is None:
            raise ValueError("key_format 'avro' needs the keys' writer schema (source.key_avro_schema_file)")
        decoder = AvroDecoder(schema)
    elif registry is None:
        raise ValueError("key_format 'avro-confluent' needs a schema registry (source.schema_registry_url)")
    else:
        decoder = AvroConfluentDecoder(registry)

    def read(key: bytes) -> bytes | None:
        try:
            return decoder.text(key, change=False)
        except BadRecord:
            return None

    return read
