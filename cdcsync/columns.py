"""Every column name a batch carries on its way to the table, spelled once.

A batch flows one way: decoded (formats/spark/) → typed (stages/typed.py, schema/spark/) → classified
(stages/classified.py: classes, the ledger) → the write set (stages/write_set.py, sinks/). Each stage adds the
columns listed under it here and reads those of the stages before; the working columns one step adds and drops
again are listed with it. tests/unit/test_columns.py keeps every other module of cdcsync/ free of these names as
string literals.
"""

from __future__ import annotations

# The Kafka record, as spark-sql-kafka (or a given row set) delivers it, renamed (formats/spark/envelope.py).
KAFKA_PREFIX = "_kafka_"
TOPIC = "_kafka_topic"
PARTITION = "_kafka_partition"
OFFSET = "_kafka_offset"
TIMESTAMP = "_kafka_timestamp"
TIMESTAMP_TYPE = "_kafka_timestamp_type"
HEADERS = "_kafka_headers"
KEY = "_kafka_key"
RAW_VALUE = "_raw_value"  # the value's bytes as received (dead letters, max_message_bytes)
VALUE = "_value"  # the value as text
KEY_TEXT = "_key_text"  # the key as text
# [source] metadata_columns: the table's name of each the user may keep
METADATA = {"topic": TOPIC, "partition": PARTITION, "offset": OFFSET, "timestamp": TIMESTAMP,
            "timestamp-type": TIMESTAMP_TYPE, "headers": HEADERS, "key": KEY}

# The decoded batch: one row per change (formats/spark/envelope.py, key_fields.py, upserts.py, avro.py).
OP = "_op"  # vocabulary.SPARK_OP's code; NULL: bad
SKIP = "_skip"  # why a record is skipped (vocabulary.SKIP_REASONS)
BAD = "_bad"  # why a record is bad (vocabulary's reasons)
BAD_DETAIL = "_bad_detail"
ROW = "_row"  # the row image, JSON text (or a struct for Avro)
ROW_NESTED = "_row_nested"  # the row image before flattening
KEY_ROW = "_key_row"  # the key's columns, when the key carries them (deletes of keyed formats)
SCHEMA = "_schema"  # the schema the record carries (Debezium's JSON envelope schema)
TYPES = "_types"  # the source's column types (Canal's mysqlType, Maxwell's)
PK = "_pk"  # the primary key the record names (Canal pkNames, Maxwell primary_key_columns)
TABLE = "_table"  # the source table the record names
TS_MS = "_ts_ms"  # the source's change time
POS = "_pos"  # the change's place within its Kafka record (a Canal/Maxwell message holds several)
POSITION = "_position"  # the log position (binlog file and offset, LSN) ordering changes of one server
SERVER = "_server"  # the source server the position belongs to (a failover switches it)
SOURCE_NAME = "_source_name"
CSV_FIELD = "_c"  # a CSV field's name without csv_columns: _c0, _c1, … (as Spark's CSV reader names them)
UTF8_BAD = "_utf8_bad"  # the value was not UTF-8
ENVELOPE = "_e"  # the parsed envelope, while it is decoded
ELEMENT = "_elem"  # one row image of a message that holds several, while they are exploded
TOMBSTONE_KEY = "_tomb_key"  # formats/spark/upserts.py: the key a tombstone deletes
FLAG = "_flag"  # formats/spark/upserts.py: the deleted_field's value
STREAM = "_stream"  # formats/spark/position.py: one log's changes (topic, partition, source)
ROW_NUMBER = "_n"  # formats/spark/position.py
BEFORE = "_b"  # formats/spark/position.py: the server of the change before

# Routing (engine/routing.py): which route and table each record goes to.
ROUTE = "_route"
TARGET = "_target"

# The typed batch (schema/spark/, stages/typed.py).
TYPED = "_t"  # the row image typed as the table's columns, a struct
CAST_BAD = "_cast_bad"  # the columns whose value did not convert
MISFIT = "_misfit"  # the row does not fit the columns already known (the batch is typed again, inferred)
NO_COLUMNS = "_no_columns"  # stands in for a struct of no fields, which Spark rejects
PARSED = "_fit"  # schema/spark/fit.py: the typed parse, dropped once the rows are typed and checked
CORRUPT_RECORD = "_corrupt_record"  # Spark's JSON reader's column for text it could not parse
FIRST = "_first"  # schema/spark/infer.py: the first record of each type variant
HASH = "_hash"  # schema/spark/infer.py

# The classified batch (stages/classify.py, ledger.py): one class per record, the reason of a bad one.
CLASS = "_class"  # upserted, deleted, skipped or bad
REASON = "_reason"
REASON_DETAIL = "_reason_detail"
TRUNCATED_AT = "_truncated_at"  # stages/truncate.py: where a truncate of the record's table came
KEEP = "_keep"  # transform/spark.py: the WHERE's verdict on the row's image (True without a WHERE)
TRANSFORM_FAILED = "_transform_failed"  # transform/spark.py: what the SELECT could not compute (ANSI), else NULL
VIEW = "_v"  # transform/: the struct the bound expressions read the view's columns from

# The write set (sinks/hudi.py, stages/newest.py, deletes.py, unavailable.py).
ORDER = "_cdc_order"  # the table's ordering value: the change's place in its source's log
HOODIE_PREFIX = "_hoodie_"  # Hudi's own columns
DELETED = "_hoodie_is_deleted"  # Hudi's delete flag
SOFT_DELETED = "_cdc_deleted"  # soft deletes: the flag readers filter on
MARKER_KEY = "_cdc_key"  # a delete marker's key: JSON of the key columns, so a widened key type still matches
MARKED_KEY = "_m_key"  # stages/deletes.py: the marker's key while it is joined
MARKED_ORDER = "_m_order"  # stages/deletes.py
HELD = "_held"  # stages/newest.py, unavailable.py: the value the table holds
HELD_AT = "_held_at"
NEWEST = "_newest"
UNAVAILABLE_PARTITION = "_unavailable_tp"  # "topic/partition" carried while TOAST placeholders are filled
PREVIOUS_PREFIX = "_prev_"  # stages/unavailable.py: a column's earlier value
UNRESOLVED = "_unresolved"  # stages/unavailable.py

# The dead letters (sinks/dead_letter.py).
SEEN = "_seen"

# What a [transform] sql may not name: Hudi's columns and ours.
RESERVED_PREFIXES = ("_hoodie", ORDER, "_cdcsync", UNAVAILABLE_PARTITION)
