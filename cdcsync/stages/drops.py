"""DROP TABLE events ([source] on_drop_table). The JSON CDC formats read one as a skipped record of its own reason
(vocabulary.DROP_TABLE: a Debezium schema change whose tableChanges hold a DROP, Canal ERASE, Maxwell table-drop),
named by the dropped source table. Here it is counted (the ledger tally DROPPED), said once per table and batch
(event `drop_table`) and, under "fail", it stops the run before anything of its batch is committed (exit 65).

cdcsync never deletes a table: under "keep" the Hudi table and its rows stay as they are, readable, and changes that
arrive later under the same source table's name (the table created again) go on into the same table. Debezium's
PostgreSQL connector emits no DDL: a table dropped there simply stops appearing, and its Hudi table stays as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.errors import DecodeError
from cdcsync.formats import vocabulary
from cdcsync.formats.spec import format_spec
from cdcsync.kafka.offsets import tp_key
from cdcsync.model.batch import DROPPED_TABLE

if TYPE_CHECKING:
    from cdcsync.config.model import Config
    from cdcsync.model.batch import BatchInput
    from cdcsync.model.context import PipelineContext
    from cdcsync.reporting import Reporter

DROPPED = DROPPED_TABLE  # ledger: DROP TABLE events (their records are counted skipped: they carry no row)


def applies(cfg: Config) -> bool:
    """Only the JSON change envelopes carry a DROP TABLE (Debezium's Avro schema changes are not read as one)."""
    return format_spec(cfg.source.format).drop_events


def flag() -> Column:
    return F.coalesce(F.col(C.SKIP) == vocabulary.DROP_TABLE, F.lit(False))


def tally(cfg: Config) -> dict[str, Column]:
    """The ledger tally of a table's share of a batch (ledger.count_flagged's `tallies`)."""
    return {DROPPED: flag()} if applies(cfg) else {}


def said(reporter: Reporter, cfg: Config, batch: BatchInput, df: DataFrame, table: Column) -> None:
    """The batch's drops (records of `df` the tally counted), each source table's said once with the Hudi table
    `table` names, or under on_drop_table = "fail" refused before anything is committed. A job of its own: it only
    runs for a batch that holds a drop."""
    first = F.min(F.struct(C.OFFSET, C.TOPIC, C.PARTITION)).alias("at")
    rows = (df.where(flag()).groupBy(C.TABLE, table.alias("target")).agg(first, F.count(F.lit(1)).alias("n"))
            .orderBy(C.TABLE, "target").collect())
    for r in rows:
        topic, partition, offset = r["at"][C.TOPIC], r["at"][C.PARTITION], r["at"][C.OFFSET]
        if cfg.source.on_drop_table == "fail":
            _refuse(cfg, batch, r, topic, partition, offset)
        reporter.event("drop_table", batch=batch.batch_id, source_table=r[C.TABLE] or "(not named)",
                       table=r["target"], events=r["n"], topic=topic, partition=partition, offset=offset,
                            on_drop_table=cfg.source.on_drop_table,
                            effect="the table and its rows are kept; later changes of the source table go on into it")


def routed(pipe: PipelineContext, batch: BatchInput, env: DataFrame) -> dict[str, dict[str, int]]:
    """[[route]]: the drops of the batch's routed records (`env`, persisted, with `_target`), said (or refused)
    before any table is written, whether or not their table has other changes in the batch; their ledger tally
    per partition, for the batch's ledger (ledger.add)."""
    if not applies(pipe.cfg):
        return {}
    mine = env.where(flag() & F.col(C.TARGET).isNotNull())
    counts = mine.groupBy(C.TOPIC, C.PARTITION).count().collect()
    if not counts:
        return {}
    said(pipe.reporter, pipe.cfg, batch, mine, F.col(C.TARGET))
    return {tp_key(r[C.TOPIC], r[C.PARTITION]): {DROPPED: int(r["count"])} for r in counts}


def _refuse(cfg: Config, batch: BatchInput, r: Row, topic: str, partition: int, offset: int) -> None:
    raise DecodeError(
        f"batch {batch.batch_id}: a DROP TABLE of {r[C.TABLE] or 'a table'} (table {r['target']}) at {topic}/"
        f"{partition} offset {offset}, and {cfg.path}: source.on_drop_table = 'fail'",
        hint='nothing of this batch was committed; set source.on_drop_table = "keep" to keep the table and go on '
             "(cdcsync never deletes it), or remove the table from the route and the topics",
        key="source.on_drop_table", table=r["target"], source_table=r[C.TABLE], topic=topic, partition=partition,
        offset=offset)
