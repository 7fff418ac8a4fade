"""Columns kept between batches: a schemaless batch whose every row fits the columns already known is typed with
them, without Spark's JSON inference over all its records (and without caching the decoded batch for it).

"Fits" is decided per row, in the same pass that types and counts the batch, and errs towards "does not fit":
a batch is typed with known columns only when inference over all its records would have given the same columns
(the same names, types and encodings, so the same merge, pins and typed values). Otherwise it is typed again the
full way. Known columns are the table's, or, for a table's first batch, those inferred from its first rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync.schema.spark.columns import NAME, PLAIN, Col, convert, parsed_row
from cdcsync.schema.spark.infer import infer_batch_columns

SAMPLE_ROWS = 10_000  # rows a table's first batch infers its columns from before the check over all of them
_SCHEMALESS = ("json", "debezium-json", "canal-json", "maxwell-json")  # Avro always carries a schema
# the types Spark's JSON inference gives schemaless values (DECIMAL only for integers past BIGINT: not kept)
_CHECKABLE = ("BIGINT", "DOUBLE", "BOOLEAN", "STRING")


def kept_columns(env: DataFrame, cfg, table: list[Col]) -> list[Col] | None:
    """The columns to try this batch with, or None when the batch must be inferred the full way: a format whose
    rows may carry their schema, or a [schema]/[source] option that reshapes the inferred columns."""
    s = cfg.source
    if s.format not in _SCHEMALESS or s.key_fields or cfg.schema.columns \
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
    return cols if checkable(cols) else None


def checkable(cols: list[Col]) -> bool:
    """Can `misfit` tell whether a row fits `cols`? (A name Hudi cannot store, or two differing only by case,
    makes records bad: the full way sorts them out.)"""
    storable = all(NAME.fullmatch(c.name) for c in cols) and len({c.name.lower() for c in cols}) == len(cols)
    return bool(cols) and storable and all(c.encoding == PLAIN and c.type in _CHECKABLE for c in cols)


def misfit(cols: list[Col]) -> Column:
    """True for a change record that inference over the batch would type differently from `cols`: a schema in
    its envelope, a field `cols` lacks, or a value whose JSON kind is not its column's. Read from the text
    parse typed_row makes (Spark computes the same expression once) and one regex over the row."""
    text = F.coalesce("_row", "_key_row")
    raw = parsed_row(text, [c.name for c in cols])  # typed_row's parse
    wrong = []
    for c in cols:
        value = raw[c.name]
        if c.type == "STRING":  # any JSON value reads as text; an object or array would infer as nested
            wrong.append(F.ltrim(value).startswith("{") | F.ltrim(value).startswith("["))
        elif c.type == "BIGINT":  # 1.0 reads as BIGINT 1, yet infers as DOUBLE; typed_row's conversion, shared
            wrong.append(value.isNotNull() & (convert(value, c).isNull() | value.contains(".")))
        elif c.type == "DOUBLE":
            wrong.append(value.isNotNull() & convert(value, c).isNull())
        else:
            wrong.append(value.isNotNull() & ~value.isin("true", "false"))
    typed = [c.name for c in cols if c.type != "STRING"]
    if typed:  # a quoted value ("5") of a typed column infers as STRING; a \u escape could spell a name
        names = "|".join(r"\Q" + n.replace(r"\E", r"\E\\E\Q") + r"\E" for n in typed)
        wrong.append(text.rlike(f'"(?:{names})"\\s*:\\s*"|\\\\u'))
    extra = F.size(F.array_except(F.json_object_keys(text), F.array(*(F.lit(c.name) for c in cols)))) > 0
    carries_schema = F.col("_schema").isNotNull() | F.col("_types").isNotNull()
    return F.coalesce(F.col("_op").isin("u", "d") & (carries_schema | extra | _any(wrong)), F.lit(False))


def _any(conditions: list[Column]) -> Column:
    out = F.lit(False)
    for c in conditions:
        out = out | F.coalesce(c, F.lit(False))
    return out
