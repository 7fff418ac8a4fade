"""Debezium's truncate (op "t"; [source] on_truncate). Under `apply` a truncate removes every row of its source
table whose change came before it by the table's ordering (`_cdc_order`), and keeps the changes after it, in the same
batch too:
- the batch's own changes of that source table older than the truncate are dropped;
- the table's rows older than it are deleted in the batch's commit (a delete per key, as new as the truncate, so a
  key changed again after the truncate keeps that change: each key's newest change wins as usual);
- the truncate's ordering value is kept per source table in every later commit (`_cdcsync.truncated`), so a late
  event or a replay of a range before it never brings a truncated row back, as delete markers do for deletes.
Under a route whose table merges several source tables, `source_column` tells which rows came from the truncated
one; without it every row of the table older than the truncate goes (the table is its source's image).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.errors import DecodeError
from cdcsync.formats import vocabulary
from cdcsync.formats.spec import format_spec
from cdcsync.sinks import hudi

if TYPE_CHECKING:
    from cdcsync.config.model import Config

APPLIED = "truncated"  # ledger: truncates applied (their records are counted skipped: they carry no row)


def applies(cfg: Config) -> bool:
    """Only Debezium's envelope has an op "t"; Canal's TRUNCATE carries no log position to compare with."""
    return format_spec(cfg.source.format).reads_as == "debezium-json"


def flag() -> Column:
    return F.coalesce(F.col(C.SKIP) == vocabulary.TRUNCATE, F.lit(False))


def found(df: DataFrame, order: Column) -> dict[str, str]:
    """The batch's truncates as {source table: the newest one's ordering value} (a newer one covers an older)."""
    rows = df.where(flag()).groupBy(C.TABLE).agg(F.max(order).alias("at")).collect()
    return {r[C.TABLE]: r["at"] for r in rows if r[C.TABLE] is not None}


def refuse(df: DataFrame, batch_id: int, cfg: Config) -> None:
    """on_truncate = "fail": stop before anything of the batch is committed, naming where the truncate is."""
    first = df.where(flag()).select(C.TABLE, C.TOPIC, C.PARTITION, C.OFFSET).first()
    assert first is not None  # called for a batch whose counts hold a truncate
    raise DecodeError(
        f"batch {batch_id}: a truncate of {first[C.TABLE] or 'a table'} at {first[C.TOPIC]}/"
        f"{first[C.PARTITION]} offset {first[C.OFFSET]}, and {cfg.path}: source.on_truncate = 'fail'",
        hint='set source.on_truncate = "apply" to empty the table up to it, or "skip" to keep the rows; nothing of '
             "this batch was committed", key="source.on_truncate", topic=first[C.TOPIC],
        partition=first[C.PARTITION], offset=first[C.OFFSET])


def merged(known: dict[str, str], new: dict[str, str]) -> dict[str, str]:
    """Each source table's newest truncate."""
    return {t: max(v for v in (known.get(t), new.get(t)) if v is not None) for t in {*known, *new}}


def drop_older(rows: DataFrame, truncated: dict[str, str], order: Column) -> DataFrame:
    """`rows` (decoded, with `_table`) without the changes a truncate of their source table came after."""
    older = F.lit(False)
    for table, at in sorted(truncated.items()):
        older = older | ((F.col(C.TABLE) == table) & (order < F.lit(at)))
    return rows.where(~F.coalesce(older, F.lit(False)))


def table_deletes(rows: DataFrame, spec: hudi.TableSpec, truncated: dict[str, str],
                  source_column: str | None) -> DataFrame:
    """A delete for each of the table's rows older than a truncate of its source, shaped as `rows` (the table's
    rows of the batch): the key, the truncate's ordering value, and a custom ordering field's own value (the
    version it removes, so Hudi's merge takes the delete)."""
    field = spec.custom_ordering
    kept = [*spec.primary_key, *spec.partition_by, *([field] if field else [])]  # the delete finds its row by these
    wanted = [*kept, hudi.ORDER, *([source_column] if source_column else [])]
    table = hudi.snapshot(rows.sparkSession, spec.path, list(dict.fromkeys(wanted)))
    at = F.lit(None).cast("string")
    for source, value in sorted(truncated.items()):
        mine = F.col(f"`{source_column}`") == source if source_column else F.lit(True)
        at = F.when(mine & (F.col(hudi.ORDER) < value), F.lit(value)).otherwise(at)
    table = table.withColumn(C.TRUNCATED_AT, at).where(F.col(C.TRUNCATED_AT).isNotNull())
    given = set(kept)
    out = []
    for f in rows.schema.fields:
        if f.name in given:
            out.append(F.col(f"`{f.name}`").cast(f.dataType).alias(f.name))
        elif f.name == hudi.ORDER:
            out.append(F.col(C.TRUNCATED_AT).alias(hudi.ORDER))
        elif f.name == hudi.DELETED:
            out.append(F.lit(True).alias(hudi.DELETED))
        else:
            out.append(F.lit(None).cast(f.dataType).alias(f.name))
    # read in a job of its own, as newest.place_valueless does: planned inside the write it could deadlock
    return table.select(*out).localCheckpoint()


def to_json(truncated: dict[str, str]) -> str:
    return json.dumps(truncated, sort_keys=True, separators=(",", ":"))
