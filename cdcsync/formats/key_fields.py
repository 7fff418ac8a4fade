"""The Kafka key in Python: read as JSON text, or (key_format avro / avro-confluent) decoded into the text Kafka
Connect's JsonConverter writes; and `key_fields` (Flink's `key.fields`): columns taken from the key's row for each
row image that lacks them (the row's own value wins, as with Flink's value.fields-include = ALL).
formats/spark/key_fields.py is the JVM twin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cdcsync.formats.base import BadRecord, Change, Decoder, load_json
from cdcsync.formats.upserts import Upserts, flattened, tombstone_delete
from cdcsync.formats.vocabulary import DELETE, UPSERT

KeyReader = Callable[[bytes], bytes | None]  # key bytes → JSON text (None: a key that does not decode)


def key_row(key: bytes | None) -> dict[str, Any] | None:
    """The key's row (its `payload` when JsonConverter wraps one); None when it is not a JSON object."""
    try:
        doc = load_json(key) if key is not None else None
    except BadRecord:
        return None
    if isinstance(doc, dict) and doc.get("payload") is not None:
        doc = doc["payload"]
    return doc if isinstance(doc, dict) and doc else None


class KeyedDecoder:
    """A value decoder that reads the key with `read_key` (None: the key's bytes are its JSON text), takes the
    columns `key_fields` from it, and reads deletes of keyed rows as `upserts` says (formats/upserts.py)."""

    def __init__(self, decoder: Decoder, read_key: KeyReader | None = None, key_fields: list[str] | None = None,
                 upserts: Upserts | None = None):
        self.decoder, self.read_key, self.key_fields = decoder, read_key, list(key_fields or [])
        self.upserts = upserts or Upserts()
        self.name = decoder.name

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        text = self.read_key(key) if self.read_key is not None and key is not None else key
        if value is None and self.upserts.tombstones:
            return tombstone_delete(key_row(text), self.key_fields)
        changes = self.decoder.parse(value, text)
        if self.key_fields:
            row = key_row(text) or {}
            given = {n: row[n] for n in self.key_fields if row.get(n) is not None}
            for c in changes:
                if c.op in (UPSERT, DELETE) and c.row is not None and given:
                    c.row = {**given, **c.row}
        if self.upserts.deleted_field:
            changes = [flattened(c, self.upserts.deleted_field) for c in changes]
        return changes
