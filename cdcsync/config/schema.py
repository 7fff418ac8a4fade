"""The JSON Schema of config.toml: the contract operators' files are checked against before Spark starts."""

from __future__ import annotations

from cdcsync.config.model import LOG_LEVELS
from cdcsync.formats.spec import FORMATS, KEY_FORMATS

STARTUP_MODES = ["earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets"]
DELETES = ["hard", "soft"]  # what a delete leaves in the table: nothing (plus a side marker), or the flagged row
TOMBSTONES = ["delete", "skip"]  # a keyed record with a null value: deletes its key, or is skipped (counted)
ON_TRUNCATE = ["apply", "skip", "fail"]  # a Debezium truncate (op "t"): empties its table, is skipped, or stops the run
ON_DATA_LOSS = ["fail", "skip"]  # offsets the table still needs are gone from the topic: stop, or go on and record
ON_TABLE_FAILURE = ["isolate", "stop"]  # a routed table's write failed after its retries: set it aside, or stop
ON_DROP_TABLE = ["keep", "fail"]  # a DROP TABLE event: the Hudi table is kept (counted, logged), or the run stops
METADATA_COLUMNS = ["topic", "partition", "offset", "timestamp", "timestamp-type", "headers", "key"]

_str_list = {"type": "array", "items": {"type": "string", "minLength": 1}}
_scalar = {"type": ["string", "integer", "number", "boolean"]}
_NAME = r"^[A-Za-z_][A-Za-z0-9_]*\Z"  # names Hudi and the environment take; \Z: jsonschema's "$" allows a final \n

SOURCE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["bootstrap_servers", "format"],
    "properties": {
        "bootstrap_servers": {"type": "string", "minLength": 1},
        "topics": {**_str_list, "minItems": 1},
        "topic_pattern": {"type": "string", "minLength": 1},
        "format": {"enum": list(FORMATS)},
        "group_id": {"type": "string"},
        "startup_mode": {"enum": STARTUP_MODES},
        "startup_timestamp_ms": {"type": "integer", "minimum": 0},
        "specific_offsets": {"type": "string"},
        "metadata_columns": {"type": "array", "items": {"enum": METADATA_COLUMNS}, "uniqueItems": True},
        "header_filter": {"type": "string"},
        "max_message_bytes": {"type": "integer", "minimum": 1},
        "csv_columns": _str_list,
        "csv_field_delimiter": {"type": "string", "minLength": 1, "maxLength": 1, "pattern": r'^[^"\r\n]$'},
        "properties": {"type": "object", "additionalProperties": _scalar},
        "key_format": {"enum": list(KEY_FORMATS)},
        "key_fields": {"type": "array", "items": {"type": "string", "pattern": _NAME}, "minItems": 1,
                       "uniqueItems": True},
        "avro_schema_file": {"type": "string", "minLength": 1},
        "key_avro_schema_file": {"type": "string", "minLength": 1},
        "schema_registry_url": {"type": "string", "pattern": r"^https?://\S+\Z"},
        "schema_registry_user_info": {"type": "string", "minLength": 1},
        "schema_registry_ca_file": {"type": "string", "minLength": 1},
        "unavailable_value_placeholder": {"type": "string", "minLength": 1},
        "tombstones": {"enum": TOMBSTONES},
        "deleted_field": {"type": "string", "pattern": _NAME},
        "on_truncate": {"enum": ON_TRUNCATE},
        "on_drop_table": {"enum": ON_DROP_TABLE},
    },
    "oneOf": [{"required": ["topics"]}, {"required": ["topic_pattern"]}],
}

SINK = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "table_name"],
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "table_name": {"type": "string", "pattern": _NAME},
        "table_type": {"enum": ["MERGE_ON_READ", "COPY_ON_WRITE"]},
        "primary_key": _str_list,
        "ordering_field": {"type": "string"},
        "partition_by": _str_list,
        "options": {"type": "object", "additionalProperties": _scalar},
        "unrouted": {"enum": ["skip", "default"]},
        "deletes": {"enum": DELETES},
    },
}

# [[route]]: whole-database sync; one table per route (or per source table with a "<>" template).
ROUTE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["source_table", "sink_table"],
    "properties": {
        "source_table": {"type": "string", "minLength": 1},
        "sink_table": {"type": "string", "pattern": "^[A-Za-z0-9_]*(<>)?[A-Za-z0-9_]*$", "minLength": 1},
        "primary_key": _str_list,
        "partition_by": _str_list,
        "table_type": {"enum": ["MERGE_ON_READ", "COPY_ON_WRITE"]},
        "source_column": {"type": "string", "pattern": _NAME},
        "options": {"type": "object", "additionalProperties": _scalar},
        "deletes": {"enum": DELETES},
        "transform_sql": {"type": "string", "minLength": 1},
    },
}

# [transform]: one Spark SQL SELECT over each change (the view `source`); cdcsync/transform/sql.py checks it.
TRANSFORM = {
    "type": "object",
    "additionalProperties": False,
    "required": ["sql"],
    "properties": {"sql": {"type": "string", "minLength": 1}},
}

MASK_METHODS = ["hash", "redact", "encrypt"]

# [[mask]]: a column transformed in Spark SQL before it reaches any table or log.
MASK = {
    "type": "object",
    "additionalProperties": False,
    "required": ["column", "method"],
    "properties": {
        "column": {"type": "string", "minLength": 1},
        "method": {"enum": MASK_METHODS},
        "salt_env": {"type": "string", "pattern": _NAME},
        "key_env": {"type": "string", "pattern": _NAME},
        "value": {"type": "string"},
        "tables": {"type": "string", "minLength": 1},
    },
}

RUN = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "checkpoint_dir": {"type": "string", "minLength": 1},
        "trigger_interval": {"type": "string", "pattern": r"^\d+(\.\d+)?\s*(ms|s|m|min|h)$"},
        "max_records_per_batch": {"type": "integer", "minimum": 1},
        "max_records_per_second": {"type": "integer", "minimum": 1},
        "on_bad_record": {"enum": ["fail", "skip", "dead-letter"]},
        "max_bad_records": {"type": "integer", "minimum": 0},
        "dead_letter_path": {"type": "string", "minLength": 1},
        "metrics_port": {"type": "integer", "minimum": 0, "maximum": 65535},
        "metrics_host": {"type": "string", "minLength": 1},
        "stuck_after": {"type": "string", "pattern": r"^\d+(\.\d+)?\s*(ms|s|m|min|h)$"},
        "source_unavailable_timeout": {"type": "string", "pattern": r"^\d+(\.\d+)?\s*(ms|s|m|min|h)$"},
        "write_retries": {"type": "integer", "minimum": 0, "maximum": 20},
        "log_level": {"enum": list(LOG_LEVELS)},
        "on_data_loss": {"enum": ON_DATA_LOSS},
        "table_parallelism": {"type": "integer", "minimum": 1, "maximum": 64},
        "on_table_failure": {"enum": ON_TABLE_FAILURE},
    },
}

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "columns": {"type": "object", "additionalProperties": {"type": "string"}},
        "flatten_nested_columns": {"type": "boolean"},
        "primitive_as_string": {"type": "boolean"},
        "on_incompatible": {"enum": ["fail", "dead-letter"]},
        "on_type_conflict": {"enum": ["widen", "dead-letter"]},
        "validate_with": {"type": "string"},
    },
}

# [storage]: how Spark and the writer lock reach s3a:// paths (Hadoop's S3A); absent keys use AWS's defaults.
STORAGE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "endpoint": {"type": "string", "pattern": r"^https?://[^\s/]+/?\Z"},
        "region": {"type": "string", "minLength": 1},
        "path_style_access": {"type": "boolean"},
        "access_key_id": {"type": "string", "minLength": 1},
        "secret_access_key": {"type": "string", "minLength": 1},
        "session_token": {"type": "string", "minLength": 1},
    },
}

# [catalog]: every table written is registered by name in a Hive metastore-compatible catalog.
CATALOG = {
    "type": "object",
    "additionalProperties": False,
    "required": ["database"],
    "properties": {
        "database": {"type": "string", "pattern": _NAME},
        "metastore_uri": {"type": "string", "pattern": r"^thrift://\S+\Z"},
        "metastore_dir": {"type": "string", "minLength": 1},
    },
    "oneOf": [{"required": ["metastore_uri"]}, {"required": ["metastore_dir"]}],
}

SPARK = {
    "type": "object",
    "properties": {"master": {"type": "string"}},
    "patternProperties": {r"^spark\.": _scalar},
    "additionalProperties": False,
}

CONFIG_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["source", "sink"],
    "properties": {"source": SOURCE, "sink": SINK, "run": RUN, "schema": SCHEMA, "spark": SPARK,
                   "storage": STORAGE, "catalog": CATALOG, "transform": TRANSFORM,
                   "route": {"type": "array", "items": ROUTE}, "mask": {"type": "array", "items": MASK}},
}

# Tables whose keys are free-form and arrive dotted (TOML turns `a.b = 1` into nested tables).
FREE_FORM = {("source", "properties"), ("sink", "options"), ("spark",), ("schema", "columns")}
