"""Each message format's traits, declared once (as dlt declares a destination's capabilities): every check that
depends on the format (config rules, keys, typing, ordering, masking, replays) reads a trait here, never a tuple
of names. A new format is one `FormatSpec` in SPECS plus its two decoders: the Python one (`decoder`, formats/) and
the Spark SQL one (`spark_decoder`, a function of formats/spark/envelope.py), held to one verdict by
tests/integration/formats/test_decoder_parity.py; tests/unit/formats/test_format_spec.py checks both exist.

Importing this module imports no decoder and no Spark: `config/` reads it before anything else runs."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from cdcsync.formats.base import Decoder


class Body(Enum):
    """What one message's value holds."""

    CHANGES = "changes"  # a change envelope: its own op, table, key and row images (deletes included)
    ROWS = "rows"  # the row itself, as a plain table's (deletes only by tombstones or [source] deleted_field)
    EITHER = "either"  # Avro: a Debezium envelope or a row, as its writer schema says (.avsc, or each record's)


class Types(Enum):
    """Where a batch's column types come from."""

    JSON_VALUES = "json_values"  # sampled from the JSON row images (Debezium: unless its schema envelope says)
    MYSQL_TYPES = "mysql_types"  # Canal's mysqlType map, else the row images
    WRITER_SCHEMA = "writer_schema"  # Avro: the writer schema
    TEXT = "text"  # csv and raw: every value a string unless [schema.columns] types it


@dataclass(frozen=True)
class FormatSpec:
    name: str  # source.format
    body: Body
    types: Types
    reads_as: str  # the envelope its records are decoded into: Avro records become Debezium's JSON text
    decoder: str  # the Python decoder, "module:Class" under cdcsync.formats (imported when asked for)
    spark_decoder: str  # its Spark SQL twin: a function of cdcsync.formats.spark.envelope
    named_fields: bool  # rows with named fields, which [source] deleted_field can name
    drop_events: bool = False  # reads DROP TABLE events ([source] on_drop_table)
    key_columns_from: str = "config"  # who names the key columns: "message" (Canal pkNames, Maxwell
    # primary_key_columns), "kafka_key" (Debezium: the key's fields), "config" (rows: [sink] primary_key, key_fields)
    binlog_positions: bool = False  # its log positions may be binlog file/offset pairs (ordering by position)
    writer_schema: str | None = None  # where its writer schema is given: "file" (.avsc) or "registry"

    @property
    def changes(self) -> bool:
        """Do its records (may) carry change envelopes, whose messages name the table's key?"""
        return SPECS[self.reads_as].body is Body.CHANGES

    @property
    def schemaless(self) -> bool:
        """Are its values JSON text whose types are sampled (no schema rides along)?"""
        return self.types in (Types.JSON_VALUES, Types.MYSQL_TYPES)

    @property
    def field_names_in_body(self) -> bool:
        """Does the message body name its fields (JSON, Avro as JSON), so a mask can find them in the text?"""
        return self.types is not Types.TEXT

    def decoder_class(self) -> Callable[..., Decoder]:
        module, name = self.decoder.split(":")
        cls: Callable[..., Decoder] = getattr(importlib.import_module(f"cdcsync.formats.{module}"), name)
        return cls


SPECS = MappingProxyType({s.name: s for s in (
    FormatSpec("debezium-json", Body.CHANGES, Types.JSON_VALUES, "debezium-json", "debezium:DebeziumDecoder",
               "debezium", named_fields=False, drop_events=True, key_columns_from="kafka_key", binlog_positions=True),
    FormatSpec("canal-json", Body.CHANGES, Types.MYSQL_TYPES, "canal-json", "canal:CanalDecoder", "canal",
               named_fields=False, drop_events=True, key_columns_from="message"),
    FormatSpec("maxwell-json", Body.CHANGES, Types.JSON_VALUES, "maxwell-json", "maxwell:MaxwellDecoder", "maxwell",
               named_fields=False, drop_events=True, key_columns_from="message", binlog_positions=True),
    FormatSpec("json", Body.ROWS, Types.JSON_VALUES, "json", "plain_json:JsonDecoder", "plain_json",
               named_fields=True),
    FormatSpec("csv", Body.ROWS, Types.TEXT, "csv", "delimited:CsvDecoder", "csv", named_fields=True),
    FormatSpec("raw", Body.ROWS, Types.TEXT, "raw", "raw:RawDecoder", "raw", named_fields=False),
    # Avro is decoded into Debezium's envelope (formats/avro_connect.py), the Debezium rules applying to it
    FormatSpec("avro", Body.EITHER, Types.WRITER_SCHEMA, "debezium-json", "avro:AvroDecoder", "debezium_avro",
               named_fields=True, key_columns_from="kafka_key", binlog_positions=True, writer_schema="file"),
    FormatSpec("avro-confluent", Body.EITHER, Types.WRITER_SCHEMA, "debezium-json", "avro:AvroConfluentDecoder",
               "debezium_avro", named_fields=True, key_columns_from="kafka_key", binlog_positions=True,
               writer_schema="registry"),
)})
FORMATS = tuple(SPECS)
KEY_FORMATS = ("json", "avro", "avro-confluent")  # [source] key_format: JSON text, plain Avro, the wire format


def format_spec(fmt: str) -> FormatSpec:
    """The spec of a `source.format` name (one the config schema admitted)."""
    try:
        return SPECS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}") from None


def with_trait(**traits: object) -> tuple[str, ...]:
    """The formats whose traits equal `traits` (for messages that list them), in SPECS order."""
    return tuple(s.name for s in SPECS.values() if all(getattr(s, k) == want for k, want in traits.items()))
