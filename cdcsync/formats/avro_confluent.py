"""avro-confluent in Python (infer-schema, the parity tests): the wire header, the writer schema by id from the
registry, then the Debezium decoder on the text JsonConverter would have written — what formats/spark/avro.py does
in the JVM. A plain (non-Debezium) record is a row, upserted."""

from __future__ import annotations

from cdcsync.formats import vocabulary as v
from cdcsync.formats.avro_connect import connect_json
from cdcsync.formats.base import BadRecord, Change
from cdcsync.formats.debezium import DebeziumDecoder
from cdcsync.formats.registry import HEADER_BYTES, RegistryClient, UnknownSchemaId, schema_id


class AvroConfluentDecoder:
    name = "avro-confluent"

    def __init__(self, registry: RegistryClient, key_avro: bool = False, typed: bool = False,
                 max_bytes: int | None = None):
        """`key_avro`: the Kafka key is in the wire format too (key_format = "avro-confluent")."""
        self.registry = registry
        self.key_avro = key_avro
        self._debezium = DebeziumDecoder(typed=typed, max_bytes=None)
        self.max_bytes = max_bytes

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if self.max_bytes is not None and value is not None and len(value) > self.max_bytes:
            raise BadRecord(v.OVERSIZED, f"value is {len(value)} bytes, more than {self.max_bytes}")
        key_text = self._key(key) if self.key_avro and key is not None else key
        return self._debezium.parse(None if value is None else self._text(value, change=True), key_text)

    def _key(self, key: bytes) -> bytes | None:
        """A key that does not decode is no key (as in the JVM): a delete then needs its 'before' image."""
        try:
            return self._text(key, change=False)
        except BadRecord:
            return None

    def _text(self, message: bytes, change: bool) -> bytes:
        sid = schema_id(message)
        try:
            schema = self.registry.schema(sid)
        except UnknownSchemaId:
            raise BadRecord(v.UNKNOWN_SCHEMA_ID, f"{v.BAD_REASONS[v.UNKNOWN_SCHEMA_ID]}: {sid}") from None
        try:
            return connect_json(message[HEADER_BYTES:], schema, change).encode()
        except (EOFError, ValueError, IndexError, TypeError, StopIteration, OverflowError, UnicodeDecodeError):
            raise BadRecord(v.AVRO_DECODE_FAILED, v.BAD_REASONS[v.AVRO_DECODE_FAILED]) from None
