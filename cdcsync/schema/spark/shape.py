"""The `[schema]` options that shape a batch's columns in `run`, as infer-schema applies them:
`flatten_nested_columns` (nested objects become `parent_child` columns) and `primitive_as_string`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.errors import SchemaError
from cdcsync.formats.spark.envelope import is_object
from cdcsync.formats.spec import Types, format_spec
from cdcsync.formats.vocabulary import CHANGE_OPS
from cdcsync.schema.options import FLATTEN_SEP as SEP
from cdcsync.schema.spark.columns import JSON_TEXT, ONE_PARSE, Col
from cdcsync.schema.spark.infer import BatchColumns, from_spark_type, infer_batch_columns

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

    from cdcsync.config.model import Config


def batch_columns(env: DataFrame, cfg: Config) -> tuple[DataFrame, BatchColumns]:
    """(env, with row images flattened when asked, the batch's columns). Types are inferred from the rows as
    they came (JSON kinds intact); the flattened rows only feed the typed-row step, which reads values as text.
    Schema versions keep their own columns: typed_row casts each to the table's (shaped) type."""
    fmt, opts = cfg.source.format, cfg.schema
    found = infer_batch_columns(env, fmt, cfg.source.key_fields, cfg.source.deleted_field,
                                cfg.source.csv_columns if fmt == "csv" else None)
    cols = found.columns
    leaves: dict[str, list[Col]] = {}
    if opts.flatten_nested_columns:
        env, leaves = flatten(env)
        cols = _expand(cols, leaves)
    if opts.primitive_as_string:
        keep = set() if not envelope_typed(env, fmt) else {c.name for c in cols} - {c.name for v in leaves.values()
                                                                                   for c in v}
        cols = [c if c.name in keep or c.encoding == JSON_TEXT else Col(c.name, "STRING") for c in cols]
    return env, replace(found, columns=cols)


def envelope_typed(env: DataFrame, fmt: str) -> bool:
    """Did a Debezium schema envelope state this batch's types (authoritative, as in infer-schema)?"""
    if format_spec(fmt).reads_as != "debezium-json":
        return False
    return bool(env.where(F.col(C.OP).isin(*CHANGE_OPS) & F.col(C.SCHEMA).isNotNull()).limit(1).count())


def rows_decide_types(env: DataFrame, fmt: str) -> bool:
    """Were this batch's types inferred from the row images' JSON values (no envelope schema, no mysqlType)?"""
    traits = format_spec(fmt)
    if traits.types is Types.MYSQL_TYPES:
        return not env.where(F.col(C.OP).isin(*CHANGE_OPS) & F.col(C.TYPES).isNotNull()).limit(1).count()
    if traits.reads_as == "debezium-json":
        return not envelope_typed(env, fmt)
    return traits.types is Types.JSON_VALUES


def flatten(env: DataFrame) -> tuple[DataFrame, dict[str, list[Col]]]:
    """Row images whose top-level values hold objects rewritten with every nested object's leaves as
    `parent_child` fields, each leaf's value as its text (exact: no number is re-encoded); {parent: its leaf
    columns}. `_row_nested` keeps the rows as they came. Two paths giving one name is an error naming both."""
    from pyspark.sql import types as T

    schema = _nested_schema(env)
    if schema is None or not any(isinstance(f.dataType, T.StructType) for f in schema.fields):
        return env, {}
    paths = list(_leaves(schema, ()))
    _check_collisions([p for p, _ in paths])
    parsed = F.from_json(F.col(C.ROW), _as_text(schema), ONE_PARSE)
    fields = []
    for path, _ in paths:
        value = parsed
        for part in path:
            value = value.getField(part)
        fields.append(value.alias(SEP.join(path)))
    has_object = F.exists(F.map_values(F.from_json(F.col(C.ROW), "MAP<STRING, STRING>")),
                          lambda v: F.ltrim(v).startswith("{"))
    env = env.withColumn(C.ROW_NESTED, F.col(C.ROW)).withColumn(
        C.ROW, F.when(F.coalesce(has_object, F.lit(False)), F.to_json(F.struct(*fields))).otherwise(F.col(C.ROW)))
    leaves: dict[str, list[Col]] = {}
    for path, dt in paths:
        if len(path) > 1:
            leaves.setdefault(path[0], []).append(from_spark_type(SEP.join(path), dt))
    return env, leaves


def _as_text(struct: StructType) -> StructType:
    """The same nesting with every leaf read as its JSON text."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, _as_text(f.dataType) if isinstance(f.dataType, T.StructType)
                                       else T.StringType()) for f in struct.fields])


def _nested_schema(env: DataFrame) -> StructType | None:
    """Spark's JSON inference over the batch's object row images, with the options infer_batch_columns uses."""
    spark = env.sparkSession
    text = env.where(F.col(C.OP).isin(*CHANGE_OPS) & is_object(F.col(C.ROW))).select(C.ROW)
    jvm = spark._jvm
    assert jvm is not None  # set from the session's start (pyspark asserts the same)
    enc = jvm.org.apache.spark.sql.Encoders.STRING()
    reader = (spark._jsparkSession.read().option("dropFieldIfAllNull", "true").option("mode", "DROPMALFORMED")
              .option("prefersDecimal", "false").option("samplingRatio", "1.0"))
    inferred = reader.json(getattr(text._jdf, "as")(enc))
    schema = DataFrame(inferred, spark).schema
    return schema if schema.fields else None


def _leaves(struct: StructType, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], DataType]]:
    """(path, type) of every non-object value; an object's fields instead of the object (empty ones dropped)."""
    from pyspark.sql import types as T

    for f in struct.fields:
        if f.name == C.CORRUPT_RECORD:
            continue
        path = (*prefix, f.name)
        if isinstance(f.dataType, T.StructType):
            yield from _leaves(f.dataType, path)
        else:
            yield path, f.dataType


def _check_collisions(paths: list[tuple[str, ...]]) -> None:
    seen: dict[str, tuple[str, ...]] = {}
    for p in paths:
        name = SEP.join(p)
        if name in seen:
            other = seen[name]
            raise SchemaError(
                f"flattening nested columns gives two columns the name '{name}': from "
                f"{' → '.join(map(repr, other))} and from {' → '.join(map(repr, p))}",
                hint="turn schema.flatten_nested_columns off, or rename one of the fields at the source",
                column=name, paths=[list(other), list(p)])
        seen[name] = p


def _expand(cols: list[Col], leaves: dict[str, list[Col]]) -> list[Col]:
    """A schema envelope's object column (kept as JSON text) replaced by its flattened leaves."""
    if not leaves:
        return cols
    names = {c.name for c in cols}
    out = []
    for c in cols:
        if c.name in leaves:
            out += [leaf for leaf in leaves[c.name] if leaf.name not in names]
        else:
            out.append(c)
    return out
