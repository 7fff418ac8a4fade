"""Typed view of a validated config.toml."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cdcsync.formats.registry import Registry
    from cdcsync.transform.sql import Transform

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
    properties: dict[str, str] = field(default_factory=dict, repr=False)  # may hold a JAAS line, store passwords
    key_format: str = "json"
    key_fields: list[str] | None = None  # Flink's key.fields: columns taken from the key into each row
    avro_schema_file: str | None = None  # format "avro": the values' writer schema (.avsc), an absolute path
    key_avro_schema_file: str | None = None  # key_format "avro": the keys' writer schema
    schema_registry_url: str | None = None
    schema_registry_user_info: str | None = field(default=None, repr=False)  # "user:password"
    schema_registry_ca_file: str | None = None
    # Debezium's unavailable.value.placeholder: a TOASTed value an update did not carry (the table keeps its own)
    unavailable_value_placeholder: str = "__debezium_unavailable_value"
    tombstones: str | None = None  # "delete" | "skip"; None: the format's default (see tombstone_mode)
    deleted_field: str | None = None  # flattened streams (ExtractNewRecordState): true/"true" marks a delete
    on_truncate: str = "apply"  # Debezium op "t": "apply" | "skip" | "fail"
    on_drop_table: str = "keep"  # a DROP TABLE event: "keep" the Hudi table (counted, logged) | "fail"

    def registry(self) -> Registry | None:
        """The schema registry the Avro formats read writer schemas from (None without one)."""
        from cdcsync.formats.registry import Registry

        if not self.schema_registry_url:
            return None
        return Registry(self.schema_registry_url, self.schema_registry_user_info, self.schema_registry_ca_file)

    def avsc(self, key: bool = False) -> str | None:
        """The plain-Avro writer schema (JSON text) of the values, or of the keys; None when that side is not
        plain Avro."""
        file = self.key_avro_schema_file if key else self.avro_schema_file
        return Path(file).read_text(encoding="utf-8") if file else None

    def carries_rows(self) -> bool | None:
        """Are the values plain rows (True) or change envelopes with delete events of their own (False)? None for
        avro-confluent: each record's writer schema, from the registry, says (a tombstone carries none)."""
        from cdcsync.formats.avro_connect import is_envelope
        from cdcsync.formats.spec import Body, format_spec

        traits = format_spec(self.format)
        if traits.body is not Body.EITHER:
            return traits.body is Body.ROWS
        if traits.writer_schema != "file":
            return None
        avsc = self.avsc()  # no .avsc given: nothing says it is an envelope
        return not (avsc is not None and is_envelope(avsc))

    def keyed(self, primary_key: list[str] | None) -> bool:
        """Can a record's Kafka key name its row: key_fields, or [sink] primary_key read from the key's fields (a
        raw value has no fields, so only key_fields)?"""
        return bool(self.key_fields or (primary_key and self.format != "raw"))

    def tombstone_mode(self, primary_key: list[str] | None) -> str:
        """What a keyed record with a null value does, "delete" or "skip": the one rule every command reads.
        Unset, rows with a key delete; envelopes skip (their tombstone follows their own delete event);
        avro-confluent deletes when key_fields or deleted_field say its records are rows."""
        if self.tombstones:
            return self.tombstones
        rows = self.carries_rows()
        if rows is None:
            rows = bool(self.key_fields or self.deleted_field)
        return "delete" if rows and self.keyed(primary_key) else "skip"


@dataclass(frozen=True)
class SinkConfig:
    path: str
    table_name: str
    table_type: str = "MERGE_ON_READ"
    primary_key: list[str] | None = None
    ordering_field: str | None = None
    partition_by: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict, repr=False)  # may hold a lock provider's or cloud credentials
    unrouted: str = "skip"  # with [[route]]: "skip" (counted) or "default" (into this table)
    deletes: str = "hard"  # "hard": the row goes (a delete marker stays beside the table); "soft": _cdc_deleted


def dead_letter_path(cfg: Config) -> str:
    """Where a config's dead-letter table lives: [run] dead_letter_path, else beside the table."""
    return cfg.run.dead_letter_path or f"{cfg.sink.path.rstrip('/')}_dead_letter"


def routed_path(sink_path: str, name: str) -> str:
    """Where the [[route]] table `name` lives: under [sink] path."""
    return f"{sink_path.rstrip('/')}/{name}"


@dataclass(frozen=True)
class RouteConfig:
    source_table: str  # regular expression, matched in full against "database[.schema].table"
    sink_table: str  # table name; "<>" stands for the source table's name
    primary_key: list[str] | None = None
    partition_by: list[str] = field(default_factory=list)
    table_type: str | None = None
    source_column: str | None = None  # a column holding the source "database.table"
    options: dict[str, str] = field(default_factory=dict, repr=False)  # may hold a lock provider's or cloud credentials
    deletes: str | None = None  # [sink] deletes when absent
    transform_sql: str | None = None  # [transform] sql when absent
    transform: Transform | None = field(default=None, compare=False)  # transform_sql checked (config/loader.py)


@dataclass(frozen=True)
class MaskConfig:
    column: str
    method: str  # hash | redact | encrypt
    salt_env: str | None = None
    key_env: str | None = None
    value: str | None = None  # redact: the fixed value (NULL when absent)
    tables: str | None = None  # regular expression over the target table name; all tables when absent
    secret: str | None = field(default=None, repr=False)  # salt or base64 key, read from the environment

    @property
    def stores_text(self) -> bool:
        """Masked values are text, except a NULL redaction's, which keep the column's type."""
        return not (self.method == "redact" and self.value is None)


MASKED_TEXT = "***masked***"  # a masked field's value wherever a value is shown rather than stored (dead letters)


LOG_LEVELS = ("error", "warn", "info", "debug")  # [run] log_level and run --log-level


@dataclass(frozen=True)
class RunConfig:
    checkpoint_dir: str
    trigger_interval: str = "10s"
    max_records_per_batch: int | None = None
    max_records_per_second: int | None = None
    on_bad_record: str = "dead-letter"
    max_bad_records: int | None = None
    dead_letter_path: str | None = None
    metrics_port: int | None = None  # /metrics and /healthz while `run` runs
    metrics_host: str = "0.0.0.0"
    stuck_after: str = "10min"  # /healthz fails when the loop has not moved for this long
    source_unavailable_timeout: str = "5min"  # brokers gone mid-run: wait and retry this long, then exit 69
    write_retries: int = 3  # a batch whose Hudi write failed transiently is written again this many times
    log_level: str = "warn"  # Spark, Hudi and Kafka (JVM) loggers; warn keeps the known harmless notes quiet
    on_data_loss: str = "fail"  # offsets the table still needs were removed from the topic: "fail" | "skip"
    # [[route]]: routed tables of one batch written at once; None: sized to the machine (engine/routing.py)
    table_parallelism: int | None = None
    on_table_failure: str = "isolate"  # [[route]]: a table whose write failed: "isolate" | "stop"


@dataclass(frozen=True)
class SchemaConfig:
    columns: dict[str, str] = field(default_factory=dict)
    flatten_nested_columns: bool = False
    primitive_as_string: bool = False
    on_incompatible: str = "fail"
    on_type_conflict: str = "widen"  # non-key columns of schemaless row images; key columns always keep their type
    validate_with: str | None = None


@dataclass(frozen=True)
class StorageConfig:
    """[storage]: S3A settings; no key given means AWS's default endpoint, region and credential chain."""
    endpoint: str | None = None
    region: str | None = None
    path_style_access: bool | None = None
    access_key_id: str | None = field(default=None, repr=False)
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class CatalogConfig:
    """[catalog]: a thrift:// Hive metastore, or an embedded Derby one in `metastore_dir` (one process at a time)."""
    database: str
    metastore_uri: str | None = None
    metastore_dir: str | None = None

    def spark_settings(self) -> dict[str, str]:
        """The static Spark settings of a session that sees this catalog (cdcsync's, or the user's pyspark)."""
        out = {"spark.sql.catalogImplementation": "hive"}
        if self.metastore_uri:
            return out | {"spark.hadoop.hive.metastore.uris": self.metastore_uri}
        if not self.metastore_dir:
            raise ValueError("[catalog] needs metastore_uri or metastore_dir")
        d = self.metastore_dir.rstrip("/")
        return out | {"spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={d}/metastore_db;"
                                                                      "create=true",
                      "spark.sql.warehouse.dir": f"{d}/warehouse",
                      "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
                      "spark.hadoop.hive.metastore.schema.verification": "false",
                      "spark.driver.extraJavaOptions": f"-Dderby.system.home={d}"}  # derby.log there, not in cwd


@dataclass(frozen=True)
class Config:
    path: Path
    source: SourceConfig
    sink: SinkConfig
    run: RunConfig
    schema: SchemaConfig
    spark: dict[str, str] = field(repr=False)  # "master" plus spark.* keys (spark.hadoop.*'s may be credentials)
    routes: list[RouteConfig] = field(default_factory=list)
    masks: list[MaskConfig] = field(default_factory=list)
    storage: StorageConfig | None = None
    catalog: CatalogConfig | None = None
    transform: Transform | None = field(default=None, compare=False)  # [transform] sql, checked

    def paths(self) -> list[str]:
        """Every place the config writes: the table(s), the dead-letter table and the checkpoint directory."""
        return [self.sink.path, dead_letter_path(self), self.run.checkpoint_dir]
