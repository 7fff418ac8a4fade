"""Where a change sits in its source's log, as fixed-width text that sorts in log order (Hudi's
MySqlDebeziumAvroPayload / PostgresDebeziumAvroPayload rule): the table's ordering value is this position, then the
Kafka coordinates as the tie-breaker. A record whose envelope carries no position orders by Kafka alone, which is
the log order of a keyed topic, and before every positioned one: a Maxwell bootstrap row has no position, and any
binlog change to its key is at least as new as the state the bootstrap read.

Kinds (the first character; a connector writes one kind, plus "0" for rows it could not place):
  b  MySQL/MariaDB binlog: file number, position, row in the event (Debezium source.file/pos/row, Maxwell
     position + xoffset). Snapshot rows carry the position the snapshot started from, so streamed changes win.
  l  PostgreSQL LSN (Debezium source.lsn).
  s  SQL Server / Db2: commit LSN, change LSN, event serial number (Debezium source.commit_lsn/change_lsn/…).
  o  Oracle SCN (Debezium source.scn).
  0  none: Kafka (partition, offset) only.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from cdcsync.formats import vocabulary

# Debezium's source block, every field as text: a connector's number that overflows or arrives quoted still reads
SOURCE_FIELDS = tuple(path.removeprefix("source.") for path in vocabulary.DEBEZIUM.position)


def _num(text: Column, width: int) -> Column:
    """A non-negative integer's text left-padded to `width` digits; NULL unless it is one."""
    digits = F.regexp_extract(F.trim(text), rf"^\+?0*([0-9]{{1,{width}}})$", 1)
    return F.when(text.isNotNull() & (digits != ""), F.lpad(digits, width, "0"))


def _binlog(file: Column, pos: Column, row: Column) -> Column:
    number = F.regexp_extract(file, r"([0-9]+)$", 1)
    return F.concat(F.lit("b"), F.coalesce(_num(number, 10), F.lit("0" * 10)), _num(pos, 20),
                    F.coalesce(_num(row, 10), F.lit("0" * 10)))


def _lsn(text: Column) -> Column:
    """SQL Server's hex LSN "0000002b:00000318:0003" is fixed-width already; lower case makes it sort."""
    return F.when(F.trim(text).rlike(r"^[0-9A-Fa-f:]+$"), F.lpad(F.lower(F.trim(text)), 24, "0"))


def debezium(src: Column) -> Column:
    """The position a Debezium `source` block carries (struct of SOURCE_FIELDS text), NULL when none."""
    sqlserver = F.concat(F.lit("s"), _lsn(src["commit_lsn"]), F.coalesce(_lsn(src["change_lsn"]), F.lit("0" * 24)),
                         F.coalesce(_num(src["event_serial_no"], 20), F.lit("0" * 20)))
    return F.coalesce(_binlog(src["file"], src["pos"], src["row"]),
                      F.concat(F.lit("l"), _num(src["lsn"], 20)),
                      sqlserver,
                      F.concat(F.lit("o"), _num(src["scn"], 30)))


def maxwell(position: Column, xoffset: Column) -> Column:
    """Maxwell's "mysql-bin.000004:1234" (output_binlog_position = true) and the row's index in its transaction."""
    file, pos = F.regexp_extract(position, r"^(.*):", 1), F.regexp_extract(position, r":([0-9]+)$", 1)
    return F.when(pos != "", _binlog(file, pos, xoffset))


def order(position: Column, kafka_partition: Column, kafka_offset: Column, row_index: Column) -> Column:
    """The table's ordering value: log position (or "0"), then partition, offset and row inside the message."""
    return F.concat(F.coalesce(position, F.lit("0")), F.lit("."),
                    F.format_string("%010d.%019d.%05d", kafka_partition, kafka_offset, row_index.cast("int")))


def legacy_order(ts_ms: Column, kafka_offset: Column, row_index: Column) -> Column:
    """The rule of tables written before log-position ordering, kept for them so old and new values compare."""
    return F.format_string("%016d.%019d.%05d", F.greatest(ts_ms, F.lit(0)).cast("long"), kafka_offset,
                           row_index.cast("int"))
