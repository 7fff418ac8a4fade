"""The columns of stage 3 (classified.py): every typed record gets its class (upserted, deleted, skipped, bad)
and, when bad, a reason code and detail. Also decides the table's primary key when the config names none."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.errors import ConfigError
from cdcsync.formats import vocabulary
from cdcsync.formats.spark.key_fields import key_object, key_text
from cdcsync.formats.spec import format_spec
from cdcsync.formats.vocabulary import CHANGE_OPS, OP_DELETE, OP_SKIP, OP_UPSERT
from cdcsync.model.batch import TableState
from cdcsync.schema.spark.columns import NAME, Col
from cdcsync.sinks import hudi

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from cdcsync.config.model import Config


def resolve_primary_key(cfg: Config, env: DataFrame, state: TableState) -> list[str]:
    if cfg.sink.primary_key:
        return list(cfg.sink.primary_key)
    if state.spec.primary_key:
        return list(state.spec.primary_key)
    if cfg.source.key_fields:  # the columns the key carries identify the row, as Flink's upsert-kafka has it
        return list(cfg.source.key_fields)
    fmt, traits = cfg.source.format, format_spec(cfg.source.format)
    if traits.key_columns_from == "message":
        live = F.col(C.OP).isin(*CHANGE_OPS)  # a bad or skipped message's key says nothing about the table
        row = env.where(live & F.col(C.PK).isNotNull() & (F.size(C.PK) > 0)).select(C.PK).first()
        if row:
            return list(row[0])
    if traits.key_columns_from == "kafka_key":
        keys = F.json_object_keys(key_object(key_text(env)))
        row = (env.where(F.col(C.OP).isin(*CHANGE_OPS) & F.col(C.KEY).isNotNull()).select(keys.alias("k"))
               .where(F.col("k").isNotNull() & (F.size("k") > 0)).first())
        if row:
            return list(row[0])
    if state.committed and (kept := hudi.record_key_fields(env.sparkSession, state.spec.path)):
        return kept  # a batch with no change that names the key (a truncate alone): the table's own key
    if traits.changes:
        raise ConfigError(
            f"{cfg.path}: no primary key for table '{cfg.sink.table_name}': the {fmt} messages name none",
            hint="set sink.primary_key = [\"id\"] (the source table's key columns)", key="sink.primary_key",
        )
    return []  # json/csv/raw without a key: insert-only


def unnamable_columns_are_bad(cols: list[Col], env: DataFrame, existing: list[str]) -> tuple[list[Col], DataFrame]:
    """A column name Hudi cannot store, or one that differs from another only by case (Spark resolves names
    case-insensitively: "ambiguous reference"), would fail the whole commit every time it is retried; the records
    carrying one are bad instead. The first-seen spelling (the table's own first) keeps its column."""
    seen = {n.lower() for n in existing}
    bad = []
    for c in cols:
        if not NAME.fullmatch(c.name) or (c.name not in existing and c.name.lower() in seen):
            bad.append(c.name)
        else:
            seen.add(c.name.lower())
    if not bad:
        return cols, env
    carries = F.exists(F.json_object_keys(F.coalesce(C.ROW, C.KEY_ROW)), lambda k: k.isin(bad))
    hit = F.col(C.BAD).isNull() & F.coalesce(F.col(C.OP) != OP_SKIP, F.lit(False)) & F.coalesce(carries, F.lit(False))
    detail = (f"column name(s) {', '.join(map(repr, bad))} cannot be stored in a Hudi table (letters, digits and _ "
              "only, not starting with a digit, and not another column's name in other letter case): rename the "
              "column upstream, or replay after a fix")
    env = env.withColumns({C.BAD: F.when(hit, vocabulary.BAD_COLUMN_NAME).otherwise(F.col(C.BAD)),  # one projection:
                           C.BAD_DETAIL: F.when(hit, F.lit(detail)).otherwise(F.col(C.BAD_DETAIL)),  # `hit`
                           C.OP: F.when(hit, None).otherwise(F.col(C.OP))})  # reads the columns as they were
    return [c for c in cols if c.name not in bad], env


def classified(df: DataFrame, pk: list[str], schema_err: Column, ordering_field: str | None,
               transform_err: Column | None = None) -> DataFrame:
    """`df` (with the typed row `_t` and `_cast_bad`) plus `_class`, `_reason` and `_reason_detail`;
    `ordering_field`: a custom one, which an upsert must fill (Hudi cannot order a null: 0.x refused it, 1.x fails
    the merge or, in a MERGE_ON_READ log, every read after it)."""
    key_cols = [F.col(f"{C.TYPED}.`{k}`") for k in pk]
    unordered = ((F.col(C.OP) != OP_DELETE) & F.col(f"{C.TYPED}.`{ordering_field}`").isNull() if ordering_field
                 else F.lit(False))
    reason = (F.when(F.col(C.OP) == OP_SKIP, F.lit(None))
              .when(F.col(C.BAD).isNotNull(), F.col(C.BAD))
              .when(schema_err.isNotNull(), vocabulary.SCHEMA_VALIDATION)
              .when(F.size(C.CAST_BAD) > 0, vocabulary.BAD_VALUE)
              .when(_any_null(key_cols) if pk else F.lit(False), vocabulary.MISSING_KEY)
              .when(unordered, vocabulary.MISSING_ORDERING_VALUE)
              .when(_upsert_failed(transform_err), vocabulary.TRANSFORM_FAILED))
    detail = (F.when(F.col(C.BAD).isNotNull(), F.col(C.BAD_DETAIL))
              .when(schema_err.isNotNull(), schema_err)
              .when(F.size(C.CAST_BAD) > 0, F.concat(F.lit("cannot convert column(s) "),
                                                       F.array_join(C.CAST_BAD, ", "),
                                                       F.lit(" to the table's type")))
              .when(reason == vocabulary.MISSING_KEY, F.lit(f"primary key ({', '.join(pk)}) is missing or null"))
              .when(reason == vocabulary.MISSING_ORDERING_VALUE,
                    F.lit(f"ordering_field {ordering_field!r} is null, so the change cannot be ordered against its "
                          "key's others: fill it upstream, or leave [sink] ordering_field unset to order by the "
                          "source's log"))
              .when(reason == vocabulary.TRANSFORM_FAILED, transform_err))
    klass = (F.when(F.col(C.OP) == OP_SKIP, "skipped").when(reason.isNotNull(), "bad")
             .when(F.col(C.OP) == OP_DELETE, "deleted").otherwise("upserted"))
    return df.select("*", klass.alias(C.CLASS), reason.alias(C.REASON), detail.alias(C.REASON_DETAIL))


def _upsert_failed(transform_err: Column | None) -> Column:
    """An upsert [transform] sql cannot compute (a delete passes by its key: its other columns may be NULL)."""
    return F.lit(False) if transform_err is None else (F.col(C.OP) != OP_DELETE) & transform_err.isNotNull()


def _any_null(cols: list[Column]) -> Column:
    out = F.lit(False)
    for c in cols:
        out = out | c.isNull()
    return out


def schema_check(cfg: Config) -> Column:
    """[schema] validate_with: each row image checked with jsonschema. Opt-in, and the one Python step on the
    path (a UDF): jsonschema has no JVM twin; expect it to cost throughput."""
    if not cfg.schema.validate_with:
        return F.lit(None).cast("string")
    from pathlib import Path

    from jsonschema import Draft202012Validator

    path = Path(cfg.schema.validate_with)
    if not path.is_absolute():
        path = Path(cfg.path).parent / path
    try:
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{cfg.path}: schema.validate_with = {cfg.schema.validate_with!r} cannot be used: {e}",
                          hint="point it at a readable JSON Schema file (draft 2020-12)",
                          key="schema.validate_with") from None
    text = json.dumps(schema)

    def check(row: str | None) -> str | None:
        if row is None:
            return None
        v = _validator(text)
        err = next(iter(v.iter_errors(json.loads(row))), None)
        return None if err is None else f"JSON Schema: {'/'.join(map(str, err.absolute_path)) or '(row)'}: " \
            f"{err.message[:300]}"

    udf = F.udf(check, "string")
    return F.when(F.col(C.OP) == OP_UPSERT, udf(F.col(C.ROW)))


_VALIDATORS: dict[str, Draft202012Validator] = {}


def _validator(text: str) -> Draft202012Validator:
    if text not in _VALIDATORS:  # once per Python worker
        from jsonschema import Draft202012Validator

        _VALIDATORS[text] = Draft202012Validator(json.loads(text))
    return _VALIDATORS[text]
