"""Values a change did not carry: PostgreSQL TOAST under REPLICA IDENTITY DEFAULT. An update that leaves a large
(TOASTed) text, bytea, jsonb or array value alone carries Debezium's `unavailable.value.placeholder` instead of it,
which means "unchanged". Each such cell takes the value its key held just before the change: an earlier change of
the same batch (by the table's `_cdc_order`), else the table's row. The placeholder never lands as data: a cell
with no earlier value anywhere (a table started mid-stream, a first load beginning with the update) is written
NULL and counted in the ledger as `unavailable` per partition. Hudi's own PostgresDebeziumAvroPayload keeps the
stored value the same way; this does it in Spark so that MERGE_ON_READ, COPY_ON_WRITE, the first load's bulk_insert
and the batch's own newest-change window all see filled rows.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats.spec import format_spec
from cdcsync.schema.spark.columns import Col
from cdcsync.sinks import hudi

if TYPE_CHECKING:
    from cdcsync.config.model import Config

SEEN = "placeholders"  # ledger: rows that carried a placeholder (each filled, or counted below)
UNAVAILABLE = "unavailable"  # ledger: rows with a placeholder no earlier value could replace (written NULL)
PARTITION = C.UNAVAILABLE_PARTITION  # "topic/partition" carried through the table's rows while they are filled
_TYPES = ("STRING", "BINARY")  # the only types Debezium puts the placeholder in (arrays and json are text here)


def applies(cfg: Config) -> bool:
    """Only Debezium's envelope has the placeholder (its JSON and Avro forms)."""
    return format_spec(cfg.source.format).reads_as == "debezium-json"


def forms(placeholder: str) -> list[str]:
    """The placeholder as a text column holds it: itself, as a JSON string (json/jsonb), as a one-element array,
    and as the base64 text of its bytes (binary.handling.mode = base64 without the schema envelope)."""
    return [placeholder, f'"{placeholder}"', f'["{placeholder}"]', base64.b64encode(placeholder.encode()).decode()]


def cells(cols: list[Col], primary_key: list[str]) -> list[Col]:
    """The columns a placeholder can stand in: text and binary ones outside the key."""
    return [c for c in cols if c.type in _TYPES and c.name not in primary_key]


def is_placeholder(value: Column, placeholder: str) -> Column:
    """True where `value` (text, or bytes read as UTF-8) is one of the placeholder's forms."""
    return F.coalesce(value.cast("string").isin(*forms(placeholder)), F.lit(False))


def flag(typed: str, candidates: list[Col], placeholder: str) -> Column:
    """For the one pass: does a live row's typed struct `typed` carry the placeholder in any candidate column?"""
    out = F.lit(False)
    for c in candidates:
        out = out | is_placeholder(F.col(f"{typed}.`{c.name}`"), placeholder)
    return F.col(C.CLASS).isin("upserted", "deleted") & out


def fill(rows: DataFrame, candidates: list[Col], spec: hudi.TableSpec, committed: bool,
         placeholder: str) -> tuple[DataFrame, dict[str, int]]:
    """`rows` (the table's rows of a batch, with PARTITION) with every placeholder replaced, and the count per
    partition of rows where one had no earlier value. One window over the batch's keys, and a read of the table's
    rows for the keys still missing a value (a broadcast beside the batch)."""
    names = [c.name for c in candidates if c.name in rows.columns]
    key = [F.col(f"`{k}`") for k in spec.primary_key]
    seen = {n: is_placeholder(F.col(f"`{n}`"), placeholder) for n in names}
    before = Window.partitionBy(*key).orderBy(hudi.ORDER).rowsBetween(Window.unboundedPreceding, Window.currentRow)
    # the newest value of the key up to this change that is not a placeholder (a struct, since NULL is a value)
    rows = rows.withColumns({f"{C.PREVIOUS_PREFIX}{n}": F.last(F.when(~seen[n], F.struct(F.col(f"`{n}`").alias("v"))),
                                                  ignorenulls=True).over(before) for n in names})
    missing = F.lit(False)
    for n in names:
        missing = missing | (seen[n] & F.col(f"{C.PREVIOUS_PREFIX}{n}").isNull())
    held_cols = {n: F.lit(None) for n in names}
    if committed:
        held = (hudi.snapshot(rows.sparkSession, spec.path, [*spec.primary_key, *names])
                .withColumnsRenamed({n: f"{C.HELD}_{n}" for n in names}).withColumn(C.HELD, F.lit(True))
                .join(rows.where(missing).select(*key).distinct(), spec.primary_key, "left_semi"))
        # read in a job of its own, as newest.place_valueless does: planned inside the write it could deadlock
        rows = rows.join(F.broadcast(held.localCheckpoint()), spec.primary_key, "left")
        held_cols = {n: F.col(f"{C.HELD}_{n}") for n in names}
        found = F.coalesce(F.col(C.HELD), F.lit(False))
    else:
        found = F.lit(False)
    unresolved = missing & ~found
    rows = rows.withColumn(C.UNRESOLVED, unresolved)
    lost = {r[0]: int(r[1]) for r in rows.where(C.UNRESOLVED).groupBy(PARTITION).count().collect()}
    previous = {n: F.col(f"{C.PREVIOUS_PREFIX}{n}") for n in names}
    filled = {n: F.when(~seen[n], F.col(f"`{n}`")).when(previous[n].isNotNull(), previous[n]["v"])
              .otherwise(held_cols[n]).cast(rows.schema[n].dataType) for n in names}
    helpers = [c for c in rows.columns if c.startswith((C.PREVIOUS_PREFIX, C.HELD)) or c in (C.UNRESOLVED, PARTITION)]
    return rows.withColumns(filled).drop(*helpers), lost


def partition_of() -> Column:
    """The "topic/partition" text the ledger is keyed by."""
    return F.concat_ws("/", F.col(C.TOPIC), F.col(C.PARTITION).cast("string"))
