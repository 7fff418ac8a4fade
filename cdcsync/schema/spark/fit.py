"""Columns kept between batches: a schemaless batch whose every row fits the columns already known is typed with
them, without Spark's JSON inference over all its records (and without caching the decoded batch for it).

"Fits" is decided per row, in the same pass that types and counts the batch, and errs towards "does not fit":
a batch is typed with known columns only when inference over all its records would have given the same columns
(the same names, types and encodings, so the same merge, pins and typed values). Otherwise it is typed again the
full way. Known columns are the table's, or, for a table's first batch, those inferred from its first rows, with
[schema.columns]' types over them (as merge puts them over any batch's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats.spec import format_spec
from cdcsync.formats.vocabulary import CHANGE_OPS
from cdcsync.schema.spark.columns import NAME, PLAIN, Col
from cdcsync.schema.spark.evolution import merge
from cdcsync.schema.spark.infer import infer_batch_columns

if TYPE_CHECKING:
    from cdcsync.config.model import Config

SAMPLE_ROWS = 10_000  # rows a table's first batch infers its columns from before the check over all of them
# the types Spark's JSON inference gives schemaless values (DECIMAL only for integers past BIGINT: not kept)
_CHECKABLE = ("BIGINT", "DOUBLE", "BOOLEAN", "STRING")


def kept_columns(env: DataFrame, cfg: Config, table: list[Col]) -> list[Col] | None:
    """The columns to try this batch with, or None when the batch must be inferred the full way: a format whose
    rows may carry their schema, a [schema]/[source] option that reshapes the inferred columns, a declared column
    the known ones lack, or a declared type the typed parse cannot check ([schema.columns] types win over the
    data's: the columns are checked as merge will type them)."""
    s = cfg.source
    if not format_spec(s.format).schemaless or s.key_fields \
            or cfg.schema.flatten_nested_columns or cfg.schema.primitive_as_string:
        return None
    cols = table
    if not cols:
        sample = env.limit(SAMPLE_ROWS).persist()  # read once for the several small jobs that look at it
        try:
            found = infer_batch_columns(sample, s.format)
            if not found.from_rows:
                return None
            cols = found.columns
        finally:
            sample.unpersist()
    declared = cfg.schema.columns
    if not declared.keys() <= {c.name for c in cols}:  # merge would put it last, inference over the batch in name order
        return None
    return cols if checkable(merge(table, cols, declared)[0]) else None


def checkable(cols: list[Col]) -> bool:
    """Can `misfit` tell whether a row fits `cols`? (A name Hudi cannot store, or two differing only by case,
    makes records bad: the full way sorts them out.)"""
    storable = all(NAME.fullmatch(c.name) for c in cols) and len({c.name.lower() for c in cols}) == len(cols)
    return bool(cols) and storable and all(c.encoding == PLAIN and c.type in _CHECKABLE for c in cols)


# the typed parse's corrupt-record field: not a storable column name (NAME), so never one of the columns
_NOT_FITTING = "#not fitting"
PARSED = C.PARSED  # the column with_typed_parse adds; the caller drops it once the rows are typed and checked


def with_typed_parse(env: DataFrame, cols: list[Col]) -> DataFrame:
    """`env` plus PARSED: each row image parsed once into the columns' own types, the way a declared schema reads
    it; a value of another JSON kind than its column's (a quoted number, 1.5 for a BIGINT, past BIGINT) fails the
    parse and sets its corrupt-record field. A column of its own, so that the typing and the fit check read one
    parse (Spark keeps an expensive expression that several others read in a projection of its own)."""
    schema = "STRUCT<" + ", ".join(f"`{c.name}`: {c.type}" for c in cols) + f", `{_NOT_FITTING}`: STRING>"
    parse = F.from_json(_row_text(), schema, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _NOT_FITTING})
    return env.withColumn(PARSED, parse)


def typed(cols: list[Col]) -> list[Column]:
    """The typed columns of a row that fits `cols` (with_typed_parse's): each value converts, by the fit check."""
    return [F.col(PARSED)[c.name].alias(c.name) for c in cols]


def misfit(cols: list[Col]) -> Column:
    """True for a change record that inference over the batch would type differently from `cols`: a schema in
    its envelope, a field `cols` lacks, or a value whose JSON kind is not its column's (with_typed_parse's)."""
    parsed = F.col(PARSED)
    wrong = [parsed[_NOT_FITTING].isNotNull()]
    for c in cols:
        value = parsed[c.name]
        if c.type == "STRING":  # any JSON value reads as text; an object or array would infer as nested
            wrong.append(F.ltrim(value).startswith("{") | F.ltrim(value).startswith("["))
        elif c.type == "DOUBLE":  # a DOUBLE reads "NaN" and "Infinity" quoted, which infer as STRING
            wrong.append(F.isnan(value) | value.isin(float("inf"), float("-inf")))
    extra = F.size(F.array_except(F.json_object_keys(_row_text()), F.array(*(F.lit(c.name) for c in cols)))) > 0
    carries_schema = F.col(C.SCHEMA).isNotNull() | F.col(C.TYPES).isNotNull()
    return F.coalesce(F.col(C.OP).isin(*CHANGE_OPS) & (carries_schema | extra | _any(wrong)), F.lit(False))


def _row_text() -> Column:
    return F.coalesce(C.ROW, C.KEY_ROW)


def _any(conditions: list[Column]) -> Column:
    out = F.lit(False)
    for c in conditions:
        out = out | F.coalesce(c, F.lit(False))
    return out
