"""Topics of plain keyed rows in Python: a tombstone that deletes its key (`[source] tombstones = "delete"`, Flink's
upsert-kafka), and a flattened stream's row whose `[source] deleted_field` is true or "true" (Debezium's
ExtractNewRecordState, delete.handling.mode = rewrite), which deletes its key; that field is taken out of every row
image, so it never becomes a column. formats/spark/upserts.py is the JVM twin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cdcsync.formats import vocabulary as v
from cdcsync.formats.base import BadRecord, Change

if TYPE_CHECKING:
    from cdcsync.config.model import SourceConfig


@dataclass(frozen=True)
class Upserts:
    """How a topic of keyed rows says delete (SourceConfig.tombstone_mode and deleted_field decide)."""

    tombstones: bool = False  # a keyed null value deletes its key
    deleted_field: str | None = None

    @classmethod
    def of(cls, source: SourceConfig, primary_key: list[str] | None) -> Upserts:
        """A [source]'s rules; `primary_key`: [sink]'s, which decides the tombstones' default."""
        return cls(source.tombstone_mode(primary_key) == v.TOMBSTONE_DELETE, source.deleted_field)

    def __bool__(self) -> bool:
        return self.tombstones or self.deleted_field is not None


def tombstone_delete(key: dict[str, Any] | None, key_fields: list[str]) -> list[Change]:
    """The delete a tombstone stands for: its key's row (`key_row`), or only its `key_fields` when there are some."""
    image = {n: key[n] for n in key_fields if key.get(n) is not None} if key and key_fields else key
    if not image:
        raise BadRecord(v.MISSING_KEY, missing_key_detail(key_fields))
    return [Change(v.DELETE, None, image, None, None, None)]


def missing_key_detail(key_fields: list[str] | None) -> str:
    want = f"none of the key_fields ({', '.join(key_fields)})" if key_fields else "no JSON object with fields"
    return f"a tombstone under [source] tombstones = \"delete\" whose Kafka key holds {want}: it names no row"


def flattened(c: Change, name: str) -> Change:
    """`c` without its field `name`; a delete when the field was true or "true"."""
    if c.declared and name in c.declared:  # an Avro row's schema states the field: not a column either
        c.declared = {k: t for k, t in c.declared.items() if k != name}
        c.not_null = c.not_null - {name}
    if c.op not in (v.UPSERT, v.DELETE) or c.row is None or name not in c.row:
        return c
    value = c.row[name]
    if isinstance(value, dict | list) or _scalar_members(c.row, name) != 1:
        raise BadRecord(v.BAD_VALUE, deleted_field_detail(name))
    c.row = {k: x for k, x in c.row.items() if k != name}
    if value is True or value == v.DELETED_TEXT:
        c.op = v.DELETE
    return c


def deleted_field_detail(name: str) -> str:
    return (f"[source] deleted_field '{name}' holds an object or an array, or the name is also used inside another "
            "value: the row's own flag cannot be told (true or \"true\" deletes, anything else upserts)")


def _scalar_members(doc: object, name: str) -> int:
    """Members called `name` holding no object or array, at any depth: what the Spark twin's text search finds."""
    if isinstance(doc, list):
        return sum(_scalar_members(x, name) for x in doc)
    if isinstance(doc, dict):
        return sum((k == name and not isinstance(x, dict | list)) + _scalar_members(x, name) for k, x in doc.items())
    return 0
