"""Stage 2 of a table's batch: the decoded records typed as the table's columns (`TypedBatch`).

The batch's columns are found (or taken from the table when every row fits them), merged into the table's along
the widening lattice with the type-conflict policy applied and masked columns retyped; each row image becomes the
struct `columns.TYPED`, beside the names of the values that did not convert (`CAST_BAD`) and whether the row fits
the known columns at all (`MISFIT`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.errors import ConfigError, SchemaError
from cdcsync.formats.spark import position
from cdcsync.model.batch import TableBatch, TableState
from cdcsync.schema.spark import fit, shape
from cdcsync.schema.spark.columns import Col, typed_row
from cdcsync.schema.spark.evolution import ColumnChange, merge
from cdcsync.schema.spark.infer import BatchColumns
from cdcsync.sinks import hudi
from cdcsync.stages import classify, masking, type_conflicts, unavailable

if TYPE_CHECKING:
    from cdcsync.config.model import Config, MaskConfig
    from cdcsync.model.batch import TableContext


@dataclass(frozen=True)
class DecodedBatch:
    """A table's share of a decoded batch (formats/spark/envelope.py's columns), and how its rows are typed."""

    env: DataFrame
    kept: BatchColumns | None = None  # the columns known before the batch, if every row fits them (else inferred)


@dataclass(frozen=True)
class TypedBatch:
    """The decoded columns plus TYPED, CAST_BAD and MISFIT, and the table's columns after the batch."""

    df: DataFrame
    columns: list[Col]
    changes: list[ColumnChange]  # what the batch changed of the table's columns
    pins: list[type_conflicts.Pin]  # columns that kept their type: their outliers are bad (incompatible_type)
    from_rows: bool  # the types came from the row images, not a schema the records carry
    key: list[str]  # the table's primary key
    ordering: str | None  # the table's custom ordering field
    toast: list[Col]  # columns that may carry Debezium's unavailable-value placeholder

    @property
    def key_and_ordering(self) -> list[str]:
        return [*self.key, *filter(None, [self.ordering])]


def typed_batch(ctx: TableContext, job: TableBatch, decoded: DecodedBatch) -> TypedBatch:
    """`decoded` typed as the table's columns, merged with what it carries."""
    cfg, state = job.cfg, job.state
    kept = decoded.kept
    ctx.describe(job.batch, "columns")  # a batch typed again the full way infers them here
    # schema versions (and routed shards) widen to one type
    env, found = shape.batch_columns(decoded.env, cfg) if kept is None else (decoded.env, kept)
    batch_cols, env = classify.unnamable_columns_are_bad(found.columns, env, [c.name for c in state.columns or []])
    batch_cols, pins = type_conflicts.pin(env, state.columns, batch_cols, cfg, state.spec.primary_key)
    for p in pins:  # its outliers are counted bad (incompatible_type); say which column held its type and why
        ctx.reporter.event("type_kept", batch=job.batch.batch_id, table=state.spec.table_name, pin=p.describe())
    cols, changes = merge(state.columns, batch_cols, cfg.schema.columns)
    cols = masking.retype(cols, job.masks)
    _refuse_incompatible(job, changes)
    if kept:  # the known columns are the table's (merge changed none): one typed parse types and checks the rows
        env = fit.with_typed_parse(env, cols)
        typed, cast_bad = fit.typed(cols), F.array().cast("array<string>")  # a value that cannot convert misfits
    else:
        typed, cast_bad = typed_row(F.coalesce(C.ROW, C.KEY_ROW), cols, found.versions)
    pk, ordering = state.spec.primary_key, _ordering_field(job, cols)
    df = env.select("*", F.struct(*_with_key(typed, cols, [*pk, *filter(None, [ordering])])).alias(C.TYPED),
                    cast_bad.alias(C.CAST_BAD), (fit.misfit(cols) if kept else F.lit(False)).alias(C.MISFIT)
                    ).drop(C.PARSED)
    toast = unavailable.cells(cols, pk) if unavailable.applies(cfg) else []
    return TypedBatch(df, cols, changes, pins, found.from_rows, list(pk), ordering, toast)


def _with_key(typed: list[Column], cols: list[Col], key: list[str]) -> list[Column]:
    """A key (or ordering) column no row image has shown is NULL (missing_key), and Spark rejects a struct of no
    fields."""
    names = {c.name for c in cols}
    typed = typed + [F.lit(None).cast("string").alias(k) for k in dict.fromkeys(key) if k not in names]
    return typed or [F.lit(None).cast("string").alias(C.NO_COLUMNS)]


def _refuse_incompatible(job: TableBatch, changes: list[ColumnChange]) -> None:
    incompatible = [c for c in changes if c.kind == "incompatible"]
    if incompatible:
        first, batch = incompatible[0], job.batch
        raise SchemaError(
            f"batch {batch.batch_id}: {first.describe()} (topic offsets {batch.start.range_text(batch.end)})",
            hint="declare the column's type in [schema.columns], or widen it in the table by hand",
            column=first.column, old=first.old, new=first.new,
        )


def _ordering_field(job: TableBatch, cols: list[Col]) -> str | None:
    """The table's custom ordering field, which must be one of its columns once row images have shown any."""
    state, cfg = job.state, job.cfg
    field, names = state.spec.custom_ordering, [c.name for c in cols]
    if field is None or not names or field in names:
        return field
    close = difflib.get_close_matches(field, names, n=1, cutoff=0.6)
    raise ConfigError(
        f"{cfg.path}: sink.ordering_field = {field!r} is not a column of table '{state.spec.table_name}' "
        f"(its columns: {', '.join(names)})" + (f"; did you mean {close[0]!r}?" if close else ""),
        hint="name one of the table's columns, or declare the field's type in [schema.columns] when no change so "
             "far carried it", key="sink.ordering_field", column=field)


def meta_names(cfg: Config) -> list[str]:
    """The configured metadata columns, as the table names them (the offset last)."""
    metadata = cfg.source.metadata_columns
    return [C.METADATA[m] for m in metadata if m != "offset"] + ([C.OFFSET] if "offset" in metadata else [])


def view(cols: list[Col], masks: dict[str, MaskConfig], cfg: Config) -> list[Column]:
    """The view `source` of [transform] sql over the classified batch: each column masked and typed as the table
    would hold it, then the metadata columns."""
    return [masked(F.col(f"{C.TYPED}.`{c.name}`"), masks.get(c.name), None).cast(c.type).alias(c.name)
            for c in cols] + [F.col(n) for n in meta_names(cfg)]


def masked(value: Column, mask: MaskConfig | None, placeholder: str | None) -> Column:
    """`value` masked (a placeholder, when given, passes unmasked: it is filled later, stages/unavailable.py)."""
    if mask is None:
        return value
    if placeholder is None:
        return masking.apply(value, mask)
    return F.when(unavailable.is_placeholder(value, placeholder), value.cast("string")).otherwise(
        masking.apply(value, mask))


def ordering_value(state: TableState) -> Column:
    """Each change's ordering value in `state`'s table: its place in its source's log."""
    if state.ordering == hudi.ORDERING_LEGACY:
        return position.legacy_order(F.col(C.TS_MS), F.col(C.OFFSET), F.col(C.POS))
    runs = state.runs if state.ordering == hudi.ORDERING else None  # ORDERING_LOG tables compare binlogs as before
    return position.order(F.col(C.POSITION), F.col(C.PARTITION), F.col(C.OFFSET), F.col(C.POS), runs)
