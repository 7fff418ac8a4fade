"""The words both decoders speak, spelled once: op codes, skip reasons, bad-record reasons, and per envelope where
the operation, table, key, row image and log position live.

The JVM-free decoders (formats/*.py) check membership in these tables; the Spark SQL decoder
(formats/spark/envelope.py) builds its when-chains from the same tables. tests/integration/formats/
test_decoder_parity.py holds the two to the same verdict for every fixture record and for generated messy ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# A decoded record's kind: Python's Change.op, and its one-letter code in the Spark `_op` column (NULL: bad).
UPSERT, DELETE, SKIP = "upsert", "delete", "skip"

SPARK_OP = MappingProxyType({UPSERT: "u", DELETE: "d", SKIP: "s"})
OP_UPSERT, OP_DELETE, OP_SKIP = SPARK_OP[UPSERT], SPARK_OP[DELETE], SPARK_OP[SKIP]
CHANGE_OPS = (OP_UPSERT, OP_DELETE)  # the `_op` codes of a row image (not skipped, not bad)

TOMBSTONE_DELETE = "delete"  # [source] tombstones: a keyed null value deletes its key (Flink's upsert-kafka)
DELETED_TEXT = "true"  # deleted_field's value that marks a delete: JSON true, or this text (Debezium writes "true")

# Why a record is skipped: counted in the ledger, never written, never dead-lettered.
TOMBSTONE = "tombstone"
DDL = "ddl"
DROP_TABLE = "drop_table"
TRUNCATE = "truncate"
HEARTBEAT = "heartbeat"
TRANSACTION = "transaction"
MESSAGE = "message"
BOOTSTRAP_MARKER = "bootstrap_marker"
FILTERED = "filtered"
UNROUTED = "unrouted"
SKIP_REASONS = MappingProxyType({
    TOMBSTONE: "a null value: log compaction's delete marker (Debezium sends one after each delete)",
    DDL: "a schema change (Canal/Maxwell DDL, a Debezium schema-change event): it carries no row",
    DROP_TABLE: "a DROP TABLE (a Debezium schema change whose tableChanges hold a DROP, Canal ERASE, Maxwell "
                "table-drop): no row; counted, and [source] on_drop_table (default \"keep\") says what follows",
    TRUNCATE: "Debezium op 't' (applied to the table by [source] on_truncate, default \"apply\") or Canal TRUNCATE "
              "(no log position to apply it by: the table keeps its rows)",
    HEARTBEAT: "a Debezium heartbeat ({\"ts_ms\": …} only) or a Canal MHEARTBEAT: liveness, no row",
    TRANSACTION: "Debezium transaction metadata (status BEGIN/END) or a Canal GTID/XA marker: no row",
    MESSAGE: "a Debezium logical-decoding message (op 'm'): no row",
    BOOTSTRAP_MARKER: "Maxwell bootstrap-start / bootstrap-complete (bootstrap-insert rows are upserted)",
    FILTERED: "its headers do not match [source] header_filter",
    UNROUTED: "no [[route]] matches its table and [sink] unrouted = \"skip\"",
})

# Why a record is bad: the stable codes of the dead-letter table and of `on_bad_record = "fail"`, with their detail.
INVALID_JSON = "invalid_json"
INVALID_UTF8 = "invalid_utf8"
NOT_AN_OBJECT = "not_an_object"
MISSING_FIELD = "missing_field"
BAD_OP = "bad_op"
BAD_VALUE = "bad_value"
MISSING_KEY = "missing_key"
MISSING_ORDERING_VALUE = "missing_ordering_value"
INVALID_CSV = "invalid_csv"
BAD_FIELD_COUNT = "bad_field_count"
OVERSIZED = "oversized"
SCHEMA_VALIDATION = "schema_validation"
BAD_COLUMN_NAME = "bad_column_name"
NOT_AVRO_WIRE_FORMAT = "not_avro_wire_format"
UNKNOWN_SCHEMA_ID = "unknown_schema_id"
AVRO_DECODE_FAILED = "avro_decode_failed"
TRANSFORM_FAILED = "transform_failed"
BAD_REASONS = MappingProxyType({
    INVALID_JSON: "value is not valid JSON (truncated, binary garbage, text after the object, a raw control "
                  "character inside a string)",
    INVALID_UTF8: "value is not valid UTF-8",
    NOT_AN_OBJECT: "value (or the schema envelope's payload) is not a JSON object",
    MISSING_FIELD: "a field the envelope needs is missing or null",
    BAD_OP: "an operation the format does not define",
    BAD_VALUE: "a field has the wrong JSON type (a row image that is not an object …)",
    MISSING_KEY: "a delete with neither a 'before' image nor a Kafka key that is a JSON object",
    MISSING_ORDERING_VALUE: "an upsert whose [sink] ordering_field is null",
    INVALID_CSV: "not one CSV record: a quoted field is not closed, text follows its closing quote, or a line break "
                 "outside quotes starts a second record",
    BAD_FIELD_COUNT: "not as many CSV fields as csv_columns",
    OVERSIZED: "more bytes than [source] max_message_bytes",
    SCHEMA_VALIDATION: "the row image fails [schema] validate_with",
    BAD_COLUMN_NAME: "a column name a Hudi table cannot hold",
    NOT_AVRO_WIRE_FORMAT: "not the Confluent wire format: shorter than 5 bytes, or a first byte other than 0",
    UNKNOWN_SCHEMA_ID: "the schema registry does not know the writer schema id",
    AVRO_DECODE_FAILED: "the body does not decode with its writer schema (truncated or written with another)",
    TRANSFORM_FAILED: "[transform] sql cannot compute the row: a cast or arithmetic that fails in ANSI mode, or a "
                      "column it computes from that carried the unavailable-value placeholder",
})


@dataclass(frozen=True)
class Envelope:
    """Where one CDC envelope keeps its parts (field paths are dotted) and what its operation values mean."""

    format: str
    label: str  # the name error details use
    op_field: str
    upsert: frozenset[str]
    delete: frozenset[str]
    skip: Mapping[str, str]  # operation value → skip reason
    table: tuple[str, ...]  # name parts joined with "." (empty ones left out); the last is the table, required
    key: str | None  # the field naming the primary key columns (None: Debezium, the Kafka key's fields)
    row: str  # the row image of an upsert
    old_row: str  # the row image of a delete
    position: tuple[str, ...] = ()  # the change's place in the source's log, when the envelope carries one
    skip_prefixes: Mapping[str, str] = field(default_factory=dict)  # operation value prefix → skip reason

    def skip_reason(self, op: str) -> str | None:
        if op in self.skip:
            return self.skip[op]
        return next((r for p, r in self.skip_prefixes.items() if op.startswith(p)), None)


DEBEZIUM = Envelope(
    "debezium-json", "Debezium", "op", frozenset({"c", "r", "u"}), frozenset({"d"}),
    MappingProxyType({"t": TRUNCATE, "m": MESSAGE}),
    # Postgres, SQL Server, Oracle, Db2 name a schema too: db.schema.table, as Debezium's own topic names do
    ("source.db", "source.schema", "source.table"), None, "after", "before",
    ("source.file", "source.pos", "source.row", "source.lsn", "source.commit_lsn", "source.change_lsn",
     "source.event_serial_no", "source.scn", "source.server_id", "source.name"),  # server, connector: position.py
)
# Debezium events without `op` that carry no row; any other op-less value is bad (missing_field).
DBZ_TRANSACTION_STATUS = ("BEGIN", "END")  # in `status`
DBZ_SCHEMA_CHANGE_FIELDS = ("ddl", "tableChanges", "historyRecord", "databaseName")  # any one present
DBZ_HEARTBEAT_FIELDS = ("ts_ms",)  # exactly these
# A schema change drops the table its first `tableChanges` element of type "DROP" names by `id` ('"db"."table"',
# parts in double quotes, a quote in a name doubled; Debezium writes one event per dropped table), unless
# `source.snapshot` is set: the DROP TABLE IF EXISTS a MySQL snapshot restates before each CREATE drops nothing.
DBZ_TABLE_CHANGES, DBZ_DROP, DBZ_SNAPSHOT = "tableChanges", "DROP", "snapshot"
DBZ_NOT_SNAPSHOT = "false"  # source.snapshot's value (or a JSON false or null) outside a snapshot
DBZ_ID_PART = r'"((?:[^"]|"")*)"'  # one quoted part of a TableId; its name with "" read as "

CANAL = Envelope(
    "canal-json", "Canal", "type", frozenset({"INSERT", "UPDATE"}), frozenset({"DELETE"}),
    MappingProxyType({"TRUNCATE": TRUNCATE, "MHEARTBEAT": HEARTBEAT, "GTID": TRANSACTION, "XACOMMIT": TRANSACTION,
                      "XAROLLBACK": TRANSACTION, "ERASE": DROP_TABLE,  # ERASE: Canal's DROP TABLE
                      **{t: DDL for t in ("CREATE", "ALTER", "RENAME", "QUERY", "CINDEX", "DINDEX")}}),
    ("database", "table"), "pkNames", "data", "data",  # data[]: one row each
)
CANAL_DDL_FLAG = "isDdl"  # true: a DDL whatever its type says

MAXWELL = Envelope(
    "maxwell-json", "Maxwell", "type", frozenset({"insert", "update", "bootstrap-insert"}), frozenset({"delete"}),
    MappingProxyType({"bootstrap-start": BOOTSTRAP_MARKER, "bootstrap-complete": BOOTSTRAP_MARKER, "ddl": DDL,
                      "table-drop": DROP_TABLE}),  # a value here wins over a prefix below
    ("database", "table"), "primary_key_columns", "data", "data", ("position", "xoffset", "server_id"),
    MappingProxyType({"table-": DDL, "database-": DDL}),
)
