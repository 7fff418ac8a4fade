"""Message formats parsed in Python (no JVM): one decoder per envelope behind `Decoder.parse`. Their Spark SQL
twins are in formats/spark/."""

from cdcsync.formats import avro, canal, debezium, delimited, maxwell, plain_json, raw
from cdcsync.formats.base import BadRecord, Change, Coord, Decoder
from cdcsync.formats.key_fields import KeyedDecoder
from cdcsync.formats.state import final_state
from cdcsync.formats.upserts import Upserts

_REGISTRY = {
    "debezium-json": debezium.DebeziumDecoder,
    "canal-json": canal.CanalDecoder,
    "maxwell-json": maxwell.MaxwellDecoder,
    "json": plain_json.JsonDecoder,
    "csv": delimited.CsvDecoder,
    "raw": raw.RawDecoder,
    "avro": avro.AvroDecoder,  # needs schema=<.avsc text>
    "avro-confluent": avro.AvroConfluentDecoder,  # needs registry=RegistryClient(…)
}
FORMATS = tuple(_REGISTRY)


def get_decoder(fmt: str, **options) -> Decoder:
    """The decoder for a `source.format` name. Options: typed, max_bytes, columns, field_delimiter (csv), schema
    (avro), registry (avro-confluent)."""
    if fmt not in _REGISTRY:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(_REGISTRY)}")
    return _REGISTRY[fmt](**options)


def decoder_for(src, registry=None, primary_key: list[str] | None = None) -> Decoder:
    """The decoder a [source] reads with, its key included (key_format, key_fields) and the deletes of keyed rows
    (tombstones, deleted_field; `primary_key`: [sink]'s, which decides the tombstones' default); `registry`: a
    RegistryClient for the avro-confluent sides."""
    options = {"max_bytes": src.max_message_bytes}
    if src.format == "csv":
        options.update(columns=src.csv_columns, field_delimiter=src.csv_field_delimiter)
    if src.format == "avro":
        options["schema"] = src.avsc()
    if src.format == "avro-confluent":
        options["registry"] = registry
    value = get_decoder(src.format, **{k: v for k, v in options.items() if v is not None})
    read_key = avro.key_reader(src.key_format, src.avsc(key=True), registry)
    upserts = Upserts.of(src, primary_key)
    return KeyedDecoder(value, read_key, src.key_fields, upserts) if read_key or src.key_fields or upserts else value


__all__ = ["FORMATS", "BadRecord", "Change", "Coord", "Decoder", "KeyedDecoder", "decoder_for", "get_decoder",
           "final_state"]
