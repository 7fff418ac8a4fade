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

A failover moves a MySQL connector to another server, whose binlog files and positions are its own (usually lower):
positions compare only within one server's run. Under ORDERING ("server-log-position") a binlog position is
prefixed by its run's start, the Kafka offset where its server's changes began in that partition (for one connector:
Debezium source.name), so a later run wins whatever its positions, and a key's changes (one partition of a keyed
topic) fall back to their Kafka order across a failover. Server id 0 or none (a Debezium snapshot row) starts no
run. The run starts are kept in each commit (sinks/hudi.py META_SERVERS), so a batch, a restart and a replay of any
old range give a record the same value; tables written with ORDERING_LOG keep that rule.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from cdcsync import columns as C
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


def server(text: Column) -> Column:
    """A MySQL server id (Debezium source.server_id, Maxwell server_id), NULL for none or 0 (a snapshot row)."""
    return F.when(_num(text, 10) != "0" * 10, _num(text, 10).cast("long"))


def stream(topic: Column, partition: Column, connector: Column) -> Column:
    """Where server runs are told apart: a Kafka partition and the connector (Debezium source.name) writing it."""
    return F.concat_ws("/", topic, partition.cast("string"), F.coalesce(connector, F.lit("")))


# per Kafka partition, over its binlog rows: how many, the first offset, the connectors and servers seen (min and
# max), and how many carry a server; read by switches_from, aggregated in the batch's one pass (stages/ledger.py)
_ROWS, _FIRST, _SOURCES, _SERVERS, _SERVED = "binlog_rows", "binlog_first", "binlog_sources", "binlog_servers", \
    "binlog_served"


def switch_facts() -> dict[str, Column]:
    """The aggregates, per Kafka partition, that switches_from reads."""
    binlog = F.col(C.POSITION).startswith("b")
    source, srv = F.when(binlog, F.coalesce(F.col(C.SOURCE_NAME), F.lit(""))), F.when(binlog, F.col(C.SERVER))
    return {_ROWS: F.count(F.when(binlog, 1)), _FIRST: F.min(F.when(binlog, F.col(C.OFFSET))),
            _SOURCES: F.array(F.min(source), F.max(source)), _SERVERS: F.array(F.min(srv), F.max(srv)),
            _SERVED: F.count(srv)}


def switches_from(facts: dict[str, dict[str, Any]]) -> list[tuple[str, int, int | None]] | None:
    """server_switches without its window job, from each partition's switch_facts: when every partition's binlog
    rows come from one connector and either all name one server or none names any, a stream's one switch is its
    first row. None when a partition holds a failover, two connectors or rows with and without a server: the
    window decides."""
    out: list[tuple[str, int, int | None]] = []
    for tp, f in facts.items():
        if not f[_ROWS]:
            continue
        (first_source, last_source), (low, high) = f[_SOURCES], f[_SERVERS]
        if first_source != last_source or f[_SERVED] not in (0, f[_ROWS]) or low != high:
            return None
        name = f"{tp}/{first_source}"  # what stream() names it: topic/partition/connector
        out.append((name, int(f[_FIRST]), None if low is None else int(low)))
    return out


def server_switches(df: DataFrame) -> list[tuple[str, int, int | None]]:
    """The binlog changes of decoded rows where a server's run may begin, as (stream, offset, server id): each
    stream's first one (its server may be NULL) and each whose server differs from the one before it."""
    w = Window.partitionBy(C.STREAM).orderBy(C.OFFSET, C.POS)
    before = F.last(C.SERVER, ignorenulls=True).over(w.rowsBetween(Window.unboundedPreceding, -1))
    rows = (df.where(F.col(C.POSITION).startswith("b"))
            .select(stream(F.col(C.TOPIC), F.col(C.PARTITION), F.col(C.SOURCE_NAME)).alias(C.STREAM),
                    C.OFFSET, C.POS, C.SERVER)
            .select(C.STREAM, C.OFFSET, C.SERVER, F.row_number().over(w).alias(C.ROW_NUMBER), before.alias(C.BEFORE))
            .where((F.col(C.ROW_NUMBER) == 1)
                   | F.col(C.SERVER).isNotNull() & ~F.col(C.SERVER).eqNullSafe(F.col(C.BEFORE))))
    return [(r[0], r[1], r[2]) for r in rows.collect()]


def merge_runs(known: dict[str, list[list[int]]], found: list[tuple[str, int, int | None]]
               ) -> tuple[dict[str, list[list[int]]], dict[str, list[list[int]]]]:
    """`known` runs ({stream: [[first offset, server id], ...]} by offset) with the batch's `found` switches, and
    the runs of the streams the batch holds. A switch begins a run unless the run before its offset is of its
    server already (a replay of a range the runs hold, a batch of given rows); a run already known at an offset
    stays as it is, so a record's value never changes."""
    runs = {s: [list(e) for e in entries] for s, entries in known.items()}
    for name, offset, server_id in sorted(found, key=lambda r: (r[0], r[1])):
        entries = runs.setdefault(name, [])
        at = bisect_right([e[0] for e in entries], offset)
        if server_id is None or (at and (entries[at - 1][0] == offset or entries[at - 1][1] == server_id)):
            continue
        entries.insert(at, [offset, server_id])
    return runs, {name: runs[name] for name in sorted({r[0] for r in found})}


def _run_start(runs: dict[str, list[list[int]]], name: Column, offset: Column) -> Column:
    """run_start in Spark SQL for the batch's streams `runs` (a few entries: one a stream, one more a failover)."""
    out = F.lit(0).cast("long")
    for s, entries in runs.items():
        inner = F.lit(0).cast("long")
        for first, _ in entries:  # ascending: each later start overrides
            inner = F.when(offset >= first, F.lit(first).cast("long")).otherwise(inner)
        out = F.when(name == s, inner).otherwise(out)
    return out


def order(position: Column, kafka_partition: Column, kafka_offset: Column, row_index: Column,
          runs: dict[str, list[list[int]]] | None = None) -> Column:
    """The table's ordering value: log position (or "0"), then partition, offset and row inside the message. With
    `runs` (ORDERING) a binlog position is prefixed by its server run's start (the module doc)."""
    if runs is not None:
        name = stream(F.col(C.TOPIC), kafka_partition, F.col(C.SOURCE_NAME))
        start = F.format_string("%019d", _run_start(runs, name, kafka_offset))
        position = F.when(position.startswith("b"), F.concat(F.lit("b"), start, position.substr(2, 40))) \
            .otherwise(position)
    return F.concat(F.coalesce(position, F.lit("0")), F.lit("."),
                    F.format_string("%010d.%019d.%05d", kafka_partition, kafka_offset, row_index.cast("int")))


def legacy_order(ts_ms: Column, kafka_offset: Column, row_index: Column) -> Column:
    """The rule of tables written before log-position ordering, kept for them so old and new values compare."""
    return F.format_string("%016d.%019d.%05d", F.greatest(ts_ms, F.lit(0)).cast("long"), kafka_offset,
                           row_index.cast("int"))
