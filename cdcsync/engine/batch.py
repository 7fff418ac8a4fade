"""One micro-batch: a bounded Kafka read → envelope → columns → typed rows → classify → one Hudi commit.

Every record ends in exactly one class (upserted, deleted, skipped, bad); the counts per partition form the
batch's ledger, which travels in the Hudi commit with the offsets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import __version__
from cdcsync.engine import masking, routing
from cdcsync.engine.batch_schema import infer_batch_columns
from cdcsync.engine.columns import NAME, Col, schema_to_json, typed_row
from cdcsync.engine.envelope import decode_envelope
from cdcsync.engine.evolution import Change, merge
from cdcsync.engine.faults import maybe_crash
from cdcsync.engine.routing import shard_columns
from cdcsync.errors import CdcsyncError, ConfigError, DecodeError, LedgerError, SourceError
from cdcsync.kafka.header_filter import parse as parse_header_filter
from cdcsync.kafka.offsets import Offsets
from cdcsync.sinks import hudi

# Kafka client properties Spark's source manages itself (it rejects some of them outright).
_SPARK_MANAGED = {"auto.offset.reset", "enable.auto.commit", "group.id", "key.deserializer", "value.deserializer",
                  "interceptor.classes"}
_META_NAMES = {"topic": "_kafka_topic", "partition": "_kafka_partition", "offset": "_kafka_offset",
               "timestamp": "_kafka_timestamp", "timestamp-type": "_kafka_timestamp_type",
               "headers": "_kafka_headers", "key": "_kafka_key"}
CLASSES = ("upserted", "deleted", "skipped", "bad")


@dataclass
class TableState:
    """What the engine knows of the target table between batches."""

    spec: hudi.TableSpec
    columns: list[Col] = field(default_factory=list)
    key_known: bool = False


@dataclass
class BatchResult:
    batch_id: int
    start: Offsets
    end: Offsets
    instant: str | None
    ledger: dict[str, dict[str, int]]  # "topic/partition" -> counts
    changes: list[Change]
    bad_samples: list[dict]
    tables: dict[str, dict] = field(default_factory=dict)  # routed runs: table -> {"instant", counts}
    unrouted: int = 0  # routed runs: rows no route matched, counted as skipped

    def totals(self) -> dict[str, int]:
        out = {k: 0 for k in ("messages", "rows", *CLASSES)}
        for counts in self.ledger.values():
            for k in out:
                out[k] += counts.get(k, 0)
        return out


def read_range(spark, source, start: Offsets, end: Offsets) -> DataFrame:
    """A bounded batch read of [start, end) per partition with Spark's Kafka source."""
    opts = {
        "kafka.bootstrap.servers": source.bootstrap_servers,
        "assign": json.dumps({t: sorted(parts) for t, parts in start.items()}),
        "startingOffsets": json.dumps({t: {str(p): o for p, o in parts.items()} for t, parts in start.items()}),
        "endingOffsets": json.dumps({t: {str(p): o for p, o in parts.items()} for t, parts in end.items()}),
        "failOnDataLoss": "true",
        "includeHeaders": "true",
    }
    for k, v in source.properties.items():
        if k not in _SPARK_MANAGED:
            opts[f"kafka.{k}"] = v
    return spark.read.format("kafka").options(**opts).load()


def _any_null(cols: list[Column]) -> Column:
    out = F.lit(False)
    for c in cols:
        out = out | c.isNull()
    return out


def resolve_primary_key(cfg, env: DataFrame, state: TableState) -> list[str]:
    if cfg.sink.primary_key:
        return list(cfg.sink.primary_key)
    if state.spec.primary_key:
        return list(state.spec.primary_key)
    fmt = cfg.source.format
    if fmt in ("canal-json", "maxwell-json"):
        live = F.col("_op").isin("u", "d")  # a bad or skipped message's key says nothing about the table
        row = env.where(live & F.col("_pk").isNotNull() & (F.size("_pk") > 0)).select("_pk").first()
        if row:
            return list(row[0])
    if fmt == "debezium-json":
        key = F.col("_kafka_key").cast("string")
        keys = F.json_object_keys(F.coalesce(F.get_json_object(key, "$.payload"), key))
        row = (env.where(F.col("_op").isin("u", "d") & F.col("_kafka_key").isNotNull()).select(keys.alias("k"))
               .where(F.col("k").isNotNull() & (F.size("k") > 0)).first())
        if row:
            return list(row[0])
    if fmt in ("debezium-json", "canal-json", "maxwell-json"):
        raise ConfigError(
            f"{cfg.path}: no primary key for table '{cfg.sink.table_name}': the {fmt} messages name none",
            hint="set sink.primary_key = [\"id\"] (the source table's key columns)", key="sink.primary_key",
        )
    return []  # json/csv/raw without a key: insert-only


def _decode(spark, cfg, start: Offsets, end: Offsets, raw: DataFrame | None) -> DataFrame:
    """Kafka read → envelope, with the oversized and header-filter verdicts applied."""
    if raw is None:
        raw = read_range(spark, cfg.source, start, end)
    env = decode_envelope(raw, cfg.source.format, cfg.source.csv_columns, cfg.source.csv_field_delimiter)
    if cfg.source.max_message_bytes:
        too_big = F.octet_length("_raw_value") > cfg.source.max_message_bytes
        env = (env.withColumn("_bad", F.when(too_big, "oversized").otherwise(F.col("_bad")))
               .withColumn("_bad_detail", F.when(too_big, F.format_string(
                   f"value is %d bytes, more than source.max_message_bytes = {cfg.source.max_message_bytes}",
                   F.octet_length("_raw_value"))).otherwise(F.col("_bad_detail")))
               .withColumn("_op", F.when(too_big, None).otherwise(F.col("_op"))))
    if cfg.source.header_filter:  # a record for other consumers is skipped (counted), never dead-lettered
        keep = parse_header_filter(cfg.source.header_filter).spark_condition(F.col("_kafka_headers"))
        env = (env.withColumn("_skip", F.when(~keep, "filtered").otherwise(F.col("_skip")))
               .withColumn("_bad", F.when(~keep, None).otherwise(F.col("_bad")))
               .withColumn("_op", F.when(~keep, "s").otherwise(F.col("_op"))))
    return env


def run_batch(spark, cfg, state: TableState, batch_id: int, start: Offsets, end: Offsets, reporter,
              on_bad=None, record_offsets: bool = True, raw: DataFrame | None = None,
              expect_messages: dict[str, int] | None = None) -> BatchResult:
    """`record_offsets=False` (replays) writes the range under `_cdcsync.replay` so the pipeline's own resume
    point, the newest commit carrying `_cdcsync.offsets`, never moves. `raw` (rows shaped like Spark's Kafka
    source, e.g. from the dead-letter table) replaces the Kafka read; its offsets are not a contiguous range.
    `expect_messages` ({"topic/partition": n}): the ledger must count exactly these, checked before any write."""
    env = _decode(spark, cfg, start, end, raw)
    env = env.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return _process(spark, cfg, state, batch_id, start, end, env, reporter, on_bad, record_offsets,
                        expect_messages=expect_messages)
    except CdcsyncError:
        raise
    except Exception as e:  # a JVM-side failure: name the stage and keep the first line; the log has the rest
        raise _classify_jvm_error(e, cfg, batch_id, start, end) from e
    finally:
        env.unpersist()


def run_routed_batch(spark, cfg, states: dict[str, TableState], batch_id: int, start: Offsets, end: Offsets,
                     reporter, on_bad=None, redo: bool = False, record_offsets: bool = True,
                     schema_base: str | None = None) -> BatchResult:
    """[[route]]: one Kafka read, split by target table in Spark SQL, one Hudi commit per table that has rows.
    Records no route matches are counted as skipped (reason 'unrouted'), or go to [sink]'s table as the
    default route; a record whose table cannot be told (undecodable) is bad when no default route takes it.
    `redo`: the batch was cut short by a crash; tables whose newest commit is this very batch are not rewritten.
    `record_offsets=False` and `schema_base` (replays): commits carry `_cdcsync.replay`, and a table new to this
    process takes its columns from the table of that name under `schema_base` (the main tables)."""
    env = _decode(spark, cfg, start, end, None)
    idx = routing.route_index(cfg.routes)
    if cfg.sink.unrouted == "default":
        idx = F.coalesce(idx, F.lit(routing.DEFAULT))
    env = env.withColumn("_route", idx)
    env = env.withColumn("_target", routing.sink_name(cfg.routes, cfg.sink.table_name))
    env = env.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        # a table with only skipped records in this batch (DDL, filtered) gets no commit: its key may be unknown
        live = F.col("_target").isNotNull() & (F.col("_op").isin("u", "d") | F.col("_bad").isNotNull())
        targets = sorted((r[1], r[0]) for r in env.where(live).select("_route", "_target").distinct().collect())
        names = [n for n, _ in targets]
        parts, changes, samples, tables = [], [], [], {}
        idle = env.where(F.col("_target").isNotNull() & ~F.col("_target").isin(names)).select(
            "*", F.lit("skipped").alias("_class"), F.lit(None).cast("string").alias("_reason"),
            F.col("_skip").alias("_reason_detail"))
        parts.append(_ledger(idle))
        unknown = F.col("_bad").isNotNull() & (F.coalesce(F.col("_table"), F.lit("")) == "")
        rest = env.where(F.col("_target").isNull()).select(
            "*", F.when(unknown, "bad").otherwise("skipped").alias("_class"),
            F.when(unknown, F.col("_bad")).alias("_reason"),
            F.when(unknown, F.col("_bad_detail")).otherwise(F.lit("unrouted")).alias("_reason_detail"))
        rest_ledger = _ledger(rest)
        parts.append(rest_ledger)
        bad_rest = sum(c["bad"] for c in rest_ledger.values())
        if bad_rest and on_bad is not None:
            every_mask = {m.column: m for m in cfg.masks}
            samples += on_bad(masking.scrub_raw(rest.where(F.col("_class") == "bad"), every_mask, cfg.source.format),
                              batch_id, bad_rest)
        for name, index in targets:
            rcfg = routing.route_config(cfg, index, name)
            state = states.get(name) or _routed_state(spark, rcfg, schema_base)
            states[name] = state
            source_column = cfg.routes[index].source_column if index != routing.DEFAULT else None
            last = hudi.last_checkpoint(spark, rcfg.sink.path) if redo else None
            done = bool(last) and last["batch_id"] == batch_id and last["offsets"] == end
            r = _process(spark, rcfg, state, batch_id, start, end, env.where(F.col("_target") == name), reporter,
                         on_bad, record_offsets, routed=True, source_column=source_column, write=not done)
            parts.append(r.ledger)
            changes += [Change(c.kind, f"{name}.{c.column}", c.old, c.new) for c in r.changes]
            samples += r.bad_samples
            tables[name] = {"instant": r.instant, **r.totals()}
            maybe_crash("routed_between_tables", batch_id)
        ledger = _sum_ledgers(parts)
        _check_ledger(ledger, start, end)
        unrouted = sum(c["skipped"] for c in rest_ledger.values())
        instant = ",".join(f"{n}@{t['instant']}" for n, t in tables.items()) or None
        return BatchResult(batch_id, start, end, instant, ledger, changes, samples, tables, unrouted)
    except CdcsyncError:
        raise
    except Exception as e:
        raise _classify_jvm_error(e, cfg, batch_id, start, end) from e
    finally:
        env.unpersist()


def _routed_state(spark, rcfg, schema_base: str | None = None) -> TableState:
    """A routed table seen for the first time in this run: its columns from its newest commit."""
    from cdcsync.config.model import routed_path
    from cdcsync.engine.columns import schema_from_json
    from cdcsync.engine.runner import table_spec

    state = TableState(spec=table_spec(rcfg))
    source = routed_path(schema_base, rcfg.sink.table_name) if schema_base else rcfg.sink.path
    last = hudi.last_checkpoint(spark, source)
    if last:
        state.columns = schema_from_json(last["schema"])
    return state


def _sum_ledgers(parts: list[dict]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for ledger in parts:
        for tp, c in ledger.items():
            acc = out.get(tp)
            if acc is None:
                out[tp] = dict(c)
                continue
            for k, v in c.items():
                acc[k] = min(acc[k], v) if k == "min_offset" else max(acc[k], v) if k == "max_offset" else acc[k] + v
    return out


def _classify_jvm_error(e: Exception, cfg, batch_id: int, start, end) -> CdcsyncError:
    text = str(e)
    first = next((ln.strip() for ln in text.splitlines() if "Exception" in ln or "Error" in ln), text[:300])[:400]
    if any(s in text for s in ("org.apache.kafka", "KafkaConsumer", "kafka.bootstrap", "OffsetOutOfRange")):
        return SourceError(
            f"batch {batch_id}: reading Kafka failed: {first}",
            hint=f"nothing was committed; check the brokers ('cdcsync probe --bootstrap-servers "
            f"{cfg.source.bootstrap_servers}') and run again", offsets=_range_text(start, end) if start else None,
        )
    return CdcsyncError(f"batch {batch_id}: Spark failed: {first}",
                        hint="nothing was committed; the Spark log above has the details")


def _process(spark, cfg, state, batch_id, start, end, env, reporter, on_bad, record_offsets,
             routed: bool = False, source_column: str | None = None, write: bool = True,
             expect_messages: dict[str, int] | None = None) -> BatchResult:
    """`write=False`: classify and count only (a routed table that committed this batch before a crash)."""
    masks = masking.for_table(cfg.masks, state.spec.table_name)
    if not state.key_known:
        pk = resolve_primary_key(cfg, env, state)
        state.spec = _with_key(state.spec, pk)
        state.key_known = True
        masking.check_key(masks, pk, state.spec.table_name)
    # shards routed to one table widen to their common types; one table's schemas keep the first-seen rule
    batch_cols = (shard_columns if routed else infer_batch_columns)(env, cfg.source.format)
    batch_cols, env = _unnamable_columns_are_bad(batch_cols, env, [c.name for c in state.columns or []])
    cols, changes = merge(state.columns, batch_cols, cfg.schema.columns)
    cols = masking.retype(cols, masks)
    incompatible = [c for c in changes if c.kind == "incompatible"]
    if incompatible:
        from cdcsync.errors import SchemaError

        first = incompatible[0]
        raise SchemaError(
            f"batch {batch_id}: {first.describe()} (topic offsets {_range_text(start, end)})",
            hint="declare the column's type in [schema.columns], or widen it in the table by hand",
            column=first.column, old=first.old, new=first.new,
        )
    typed, cast_bad = typed_row(F.coalesce("_row", "_key_row"), cols)
    pk = state.spec.primary_key
    # a key column no row image has shown is NULL (missing_key), and Spark rejects a struct of no fields
    typed += [F.lit(None).cast("string").alias(k) for k in pk if k not in {c.name for c in cols}]
    typed = typed or [F.lit(None).cast("string").alias("_no_columns")]
    df = env.select("*", F.struct(*typed).alias("_t"), cast_bad.alias("_cast_bad"))
    key_cols = [F.col(f"_t.`{k}`") for k in pk]
    schema_err = _schema_check(cfg, df)
    reason = (F.when(F.col("_op") == "s", F.lit(None))
              .when(F.col("_bad").isNotNull(), F.col("_bad"))
              .when(schema_err.isNotNull(), "schema_validation")
              .when(F.size("_cast_bad") > 0, "bad_value")
              .when(_any_null(key_cols) if pk else F.lit(False), "missing_key"))
    detail = (F.when(F.col("_bad").isNotNull(), F.col("_bad_detail"))
              .when(schema_err.isNotNull(), schema_err)
              .when(F.size("_cast_bad") > 0, F.concat(F.lit("cannot convert column(s) "),
                                                       F.array_join("_cast_bad", ", "),
                                                       F.lit(" to the table's type")))
              .when(reason == "missing_key", F.lit(f"primary key ({', '.join(pk)}) is missing or null")))
    klass = (F.when(F.col("_op") == "s", "skipped").when(reason.isNotNull(), "bad")
             .when(F.col("_op") == "d", "deleted").otherwise("upserted"))
    df = df.select("*", klass.alias("_class"), reason.alias("_reason"), detail.alias("_reason_detail"))
    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        ledger = _ledger(df)
        _check_ledger(ledger, start, end, contiguous=record_offsets)
        if expect_messages is not None:
            got = {tp: c["messages"] for tp, c in ledger.items()}
            if got != expect_messages:
                raise LedgerError(f"ledger mismatch: messages classified per partition {got}, expected "
                                  f"{expect_messages}", hint="nothing was committed; please report this with the log")
        bad_total = sum(c["bad"] for c in ledger.values())
        samples = []
        if not write:
            return BatchResult(batch_id, start, end, hudi.latest_instant(spark, state.spec.path), ledger, [], [])
        if bad_total and on_bad is not None:
            samples = on_bad(masking.scrub_raw(df.where(F.col("_class") == "bad"), masks, cfg.source.format), batch_id,
                             bad_total)
        good = _table_rows(df.where(F.col("_class").isin("upserted", "deleted")), cols, cfg.source.metadata_columns,
                           masks, source_column)
        instant = None
        offsets = {t: {str(p): o for p, o in parts.items()} for t, parts in end.items()}
        meta = {
            **({hudi.META_OFFSETS: offsets} if record_offsets else {hudi.META_REPLAY: {
                "from": {t: {str(p): o for p, o in parts.items()} for t, parts in start.items()}, "to": offsets}}),
            hudi.META_BATCH: str(batch_id),
            hudi.META_LEDGER: ledger,
            hudi.META_SCHEMA: schema_to_json(cols),
            hudi.META_VERSION: __version__,
        }
        if changes:
            meta[hudi.META_SCHEMA_CHANGES] = [c.describe() for c in changes]
        reporter.event("writing", batch=batch_id, table=state.spec.table_name, rows=sum(
            c["upserted"] + c["deleted"] for c in ledger.values()))
        maybe_crash("before_write", batch_id)
        instant = hudi.write_batch(good, state.spec, meta)
        state.columns = cols
        return BatchResult(batch_id, start, end, instant, ledger, changes, samples)
    finally:
        df.unpersist()


def _unnamable_columns_are_bad(cols: list[Col], env: DataFrame,
                               existing: list[str] = ()) -> tuple[list[Col], DataFrame]:
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
    carries = F.exists(F.json_object_keys(F.coalesce("_row", "_key_row")), lambda k: k.isin(bad))
    hit = F.col("_bad").isNull() & F.coalesce(F.col("_op") != "s", F.lit(False)) & F.coalesce(carries, F.lit(False))
    detail = (f"column name(s) {', '.join(map(repr, bad))} cannot be stored in a Hudi table (letters, digits and _ "
              "only, not starting with a digit, and not another column's name in other letter case): rename the "
              "column upstream, or replay after a fix")
    env = env.withColumns({"_bad": F.when(hit, "bad_column_name").otherwise(F.col("_bad")),  # one projection:
                           "_bad_detail": F.when(hit, F.lit(detail)).otherwise(F.col("_bad_detail")),  # `hit`
                           "_op": F.when(hit, None).otherwise(F.col("_op"))})  # reads the columns as they were
    return [c for c in cols if c.name not in bad], env


def _schema_check(cfg, df: DataFrame) -> Column:
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
    return F.when(F.col("_op") == "u", udf(F.col("_row")))


_VALIDATORS: dict[str, object] = {}


def _validator(text: str):
    if text not in _VALIDATORS:  # once per Python worker
        from jsonschema import Draft202012Validator

        _VALIDATORS[text] = Draft202012Validator(json.loads(text))
    return _VALIDATORS[text]


def _with_key(spec: hudi.TableSpec, pk: list[str]) -> hudi.TableSpec:
    from dataclasses import replace

    return replace(spec, primary_key=pk)


def _table_rows(df: DataFrame, cols: list[Col], metadata: list[str], masks: dict | None = None,
                source_column: str | None = None) -> DataFrame:
    masks = masks or {}
    data = [(masking.apply(F.col(f"_t.`{c.name}`"), masks[c.name]) if c.name in masks
             else F.col(f"_t.`{c.name}`")).cast(c.type).alias(c.name) for c in cols]
    if source_column:  # shards merged into one table: which source table each row came from
        data.append(F.col("_table").alias(source_column))
    meta = [F.col(_META_NAMES[m]).alias(_META_NAMES[m]) for m in metadata if _META_NAMES[m] != "_kafka_offset"]
    if "offset" in metadata:
        meta.append(F.col("_kafka_offset"))
    return df.select(
        *data, *meta,
        F.format_string("%016d.%019d.%05d", F.greatest(F.col("_ts_ms"), F.lit(0)).cast("long"),
                        F.col("_kafka_offset"), F.col("_pos").cast("int")).alias(hudi.ORDER),
        (F.col("_class") == "deleted").alias(hudi.DELETED),
    )


def _ledger(df: DataFrame) -> dict[str, dict[str, int]]:
    aggs = [F.count(F.when(F.col("_pos") == 0, 1)).alias("messages"), F.count(F.lit(1)).alias("rows"),
            F.min("_kafka_offset").alias("min_offset"), F.max("_kafka_offset").alias("max_offset")]
    aggs += [F.count(F.when(F.col("_class") == k, 1)).alias(k) for k in CLASSES]
    out = {}
    for r in df.groupBy("_kafka_topic", "_kafka_partition").agg(*aggs).collect():
        out[f"{r['_kafka_topic']}/{r['_kafka_partition']}"] = {
            k: int(r[k]) for k in ("messages", "rows", "min_offset", "max_offset", *CLASSES)
        }
    return out


def _check_ledger(ledger: dict, start: Offsets | None, end: Offsets | None, contiguous: bool = True) -> None:
    """Every row lands in one class, and every message read lies inside the planned range."""
    for tp, c in ledger.items():
        topic, part = tp.rsplit("/", 1)
        classified = sum(c[k] for k in CLASSES)
        if start is None or end is None or not contiguous:
            lo, hi = c["min_offset"], c["max_offset"] + 1
        else:
            lo, hi = start[topic][int(part)], end[topic][int(part)]
        if classified != c["rows"] or c["messages"] > hi - lo or c["min_offset"] < lo or c["max_offset"] >= hi:
            raise LedgerError(
                f"ledger mismatch on {tp}: read {c['messages']} messages ({c['rows']} rows) in offsets "
                f"[{c['min_offset']}, {c['max_offset']}] for planned range [{lo}, {hi}); classified {classified}",
                hint="nothing was committed; please report this with the log",
            )


def _range_text(start: Offsets, end: Offsets) -> str:
    return "; ".join(f"{t}/{p}: {start[t][p]}..{end[t][p]}" for t in end for p in end[t])


def bad_error(sample: dict) -> DecodeError:
    value = sample.get("value_preview", "")
    return DecodeError(
        f"bad record at {sample['topic']}/{sample['partition']} offset {sample['offset']}: "
        f"{sample['reason']}: {sample['detail']}\n  value (first 200 bytes): {value}",
        hint='fix the producer or the config; or set [run] on_bad_record = "dead-letter" to set such records '
        "aside and keep going",
        **sample,
    )
