"""Message formats parsed in Python (no JVM): one decoder per envelope behind `Decoder.parse`. Their Spark SQL
twins are in formats/spark/."""

from cdcsync.formats import avro_confluent, canal, debezium, delimited, maxwell, plain_json, raw
from cdcsync.formats.base import BadRecord, Change, Coord, Decoder
from cdcsync.formats.state import final_state

_REGISTRY = {
    "debezium-json": debezium.DebeziumDecoder,
    "canal-json": canal.CanalDecoder,
    "maxwell-json": maxwell.MaxwellDecoder,
    "json": plain_json.JsonDecoder,
    "csv": delimited.CsvDecoder,
    "raw": raw.RawDecoder,
    "avro-confluent": avro_confluent.AvroConfluentDecoder,  # needs registry=RegistryClient(…)
}
FORMATS = tuple(_REGISTRY)


def get_decoder(fmt: str, **options) -> Decoder:
    """The decoder for a `source.format` name. Options: typed, max_bytes, columns, field_delimiter (csv)."""
    if fmt not in _REGISTRY:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(_REGISTRY)}")
    return _REGISTRY[fmt](**options)


__all__ = ["FORMATS", "BadRecord", "Change", "Coord", "Decoder", "get_decoder", "final_state"]
