"""Typed view of a validated config.toml."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_METADATA = ["topic", "partition", "offset", "timestamp"]


@dataclass(frozen=True)
class SourceConfig:
    bootstrap_servers: str
    format: str
    topics: list[str] | None = None
    topic_pattern: str | None = None
    group_id: str | None = None
    startup_mode: str = "group-offsets"
    startup_timestamp_ms: int | None = None
    specific_offsets: str | None = None
    metadata_columns: list[str] = field(default_factory=lambda: list(DEFAULT_METADATA))
    header_filter: str | None = None
    max_message_bytes: int | None = None
    csv_columns: list[str] | None = None
    csv_field_delimiter: str = ","
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SinkConfig:
    path: str
    table_name: str
    table_type: str = "MERGE_ON_READ"
    primary_key: list[str] | None = None
    ordering_field: str | None = None
    partition_by: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunConfig:
    checkpoint_dir: str
    trigger_interval: str = "10s"
    max_records_per_batch: int | None = None
    max_records_per_second: int | None = None
    on_bad_record: str = "dead-letter"
    max_bad_records: int | None = None
    dead_letter_path: str | None = None


@dataclass(frozen=True)
class SchemaConfig:
    columns: dict[str, str] = field(default_factory=dict)
    flatten_nested_columns: bool = False
    primitive_as_string: bool = False
    on_incompatible: str = "fail"
    validate_with: str | None = None


@dataclass(frozen=True)
class Config:
    path: Path
    source: SourceConfig
    sink: SinkConfig
    run: RunConfig
    schema: SchemaConfig
    spark: dict[str, str]  # "master" plus spark.* keys
