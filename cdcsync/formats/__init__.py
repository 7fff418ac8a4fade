"""Message formats parsed in Python (no JVM): one decoder per envelope behind `Decoder.parse`. Their Spark SQL
twins are in formats/spark/."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdcsync.formats import avro
from cdcsync.formats.base import BadRecord, Change, Coord, Decoder
from cdcsync.formats.key_fields import KeyedDecoder
from cdcsync.formats.spec import FORMATS, format_spec
from cdcsync.formats.state import final_state
from cdcsync.formats.upserts import Upserts

if TYPE_CHECKING:
    from cdcsync.config.model import SourceConfig
    from cdcsync.formats.registry import RegistryClient


def get_decoder(fmt: str, **options: object) -> Decoder:
    """The decoder for a `source.format` name (formats/spec.py). Options: typed, max_bytes, columns,
    field_delimiter (csv), schema (avro: the .avsc text), registry (avro-confluent: a RegistryClient)."""
    return format_spec(fmt).decoder_class()(**options)


def decoder_for(src: SourceConfig, registry: RegistryClient | None = None,
                primary_key: list[str] | None = None) -> Decoder:
    """The decoder a [source] reads with, its key included (key_format, key_fields) and the deletes of keyed rows
    (tombstones, deleted_field; `primary_key`: [sink]'s, which decides the tombstones' default); `registry`: a
    RegistryClient for the avro-confluent sides."""
    options: dict[str, object] = {"max_bytes": src.max_message_bytes}
    if src.format == "csv":
        options.update(columns=src.csv_columns, field_delimiter=src.csv_field_delimiter)
    if format_spec(src.format).writer_schema == "file":
        options["schema"] = src.avsc()
    if format_spec(src.format).writer_schema == "registry":
        options["registry"] = registry
    value = get_decoder(src.format, **{k: v for k, v in options.items() if v is not None})
    read_key = avro.key_reader(src.key_format, src.avsc(key=True), registry)
    upserts = Upserts.of(src, primary_key)
    return KeyedDecoder(value, read_key, src.key_fields, upserts) if read_key or src.key_fields or upserts else value


__all__ = ["FORMATS", "BadRecord", "Change", "Coord", "Decoder", "KeyedDecoder", "decoder_for", "get_decoder",
           "final_state"]
