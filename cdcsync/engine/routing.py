"""[[route]]: whole-database sync. One Kafka read per batch, split in Spark SQL by the envelope's "db.table"
into one Hudi table per route (or per source table with a "<>" template), each with its own commit.

Progress: every table's commit carries the batch's offsets, and [run] checkpoint_dir holds one run-level record
{batch_id, start, end, state}. It says "writing" before the first table of a batch is written and "done" after
the last; a restart that finds "writing" re-applies exactly that range to the tables that did not commit it
(tables whose newest commit already carries that batch id are left alone).
"""

from __future__ import annotations

import json
from dataclasses import replace

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync.config.model import routed_path
from cdcsync.engine import checkpoint
from cdcsync.engine.batch_schema import from_debezium_schema, infer_batch_columns
from cdcsync.engine.columns import DBZ_DECIMAL, NAME, PLAIN, Col
from cdcsync.errors import ConfigError
from cdcsync.formats.mysql_types import mysql_type
from cdcsync.schema.types import parse_type, widen

PROGRESS_FILE = "routes-progress.json"
DEFAULT = -1  # route index of the default route ([sink] unrouted = "default")


def _anchored(source_table: str) -> str:
    return "^(?:" + source_table + r")\z"  # the whole name; \z: Java's $ also matches before a final \n


def check_patterns(spark, cfg) -> None:
    r"""source_table runs as a Java regex (rlike), a dialect Python's re does not share (\p{Lower} is Java only,
    (?P<name>…) Python only): compile each in the JVM before the first batch."""
    pattern = spark._jvm.java.util.regex.Pattern
    for i, r in enumerate(cfg.routes):
        try:
            pattern.compile(_anchored(r.source_table))
        except Exception as e:  # py4j wraps java.util.regex.PatternSyntaxException
            first = str(e).split("PatternSyntaxException:", 1)[-1].strip().splitlines()[0][:200]
            raise ConfigError(f"{cfg.path}: route[{i}].source_table = {r.source_table!r} is not a Java regular "
                              f"expression: {first}", file=str(cfg.path), key=f"route[{i}].source_table",
                              hint="routes match in Spark SQL, with Java regex syntax (java.util.regex.Pattern): "
                              "no (?#…) comments, named groups as (?<name>…)") from None


def route_index(routes) -> Column:
    """The first route whose source_table matches "db.table" in full; NULL when none does."""
    out = None
    for i, r in enumerate(routes):
        cond = F.col("_table").rlike(_anchored(r.source_table))
        out = F.when(cond, F.lit(i)) if out is None else out.when(cond, F.lit(i))
    return out


def sink_name(routes, default_name: str) -> Column:
    """The target table name per record: the template with "<>" replaced by the source table's name."""
    table_part = F.regexp_extract(F.col("_table"), r"([^.]*)$", 1)
    out = F.when(F.col("_route") == DEFAULT, F.lit(default_name))
    for i, r in enumerate(routes):
        head, sym, tail = r.sink_table.partition("<>")
        name = F.concat(F.lit(head), table_part, F.lit(tail)) if sym else F.lit(r.sink_table)
        out = out.when(F.col("_route") == i, name)
    return out


def route_config(cfg, index: int, name: str):
    """The config one routed table is processed with: the route's key, partitioning and type over [sink]'s."""
    if not NAME.fullmatch(name):  # fullmatch: a trailing newline is no name
        raise ConfigError(f"route[{index}] gives table name {name!r}, which is not a valid Hudi table name",
                          hint="sink_table must give letters, digits and '_' only", key=f"route[{index}].sink_table")
    base = cfg.sink
    path = routed_path(base.path, name)
    if index == DEFAULT:
        return replace(cfg, sink=replace(base, path=path, table_name=name))
    r = cfg.routes[index]
    sink = replace(base, path=path, table_name=name, primary_key=r.primary_key, partition_by=list(r.partition_by),
                   table_type=r.table_type or base.table_type, options={**base.options, **r.options})
    return replace(cfg, sink=sink)


def _widest(lists: list[list[Col]]) -> list[Col]:
    """Columns of several shards merged on the widening lattice, in first-seen order."""
    seen: dict[str, Col] = {}
    for cols in lists:
        for c in cols:
            old = seen.get(c.name)
            if old is None:
                seen[c.name] = c
                continue
            if DBZ_DECIMAL in (old.encoding, c.encoding) and (old.encoding, old.scale) != (c.encoding, c.scale):
                # one column decodes every row with one scale: shards with other scales would come out wrong
                from cdcsync.errors import SchemaError

                raise SchemaError(
                    f"column {c.name}: shards carry Debezium decimals of different scales ({old.type} scale "
                    f"{old.scale}, {c.type} scale {c.scale}); they cannot share one table column",
                    hint="set decimal.handling.mode=string (or double) in the Debezium connector, or route the "
                    "shards to separate tables", column=c.name)
            if old.type == c.type:
                continue
            wide = widen(parse_type(old.type), parse_type(c.type))
            wide_t = wide.spark_ddl() if wide else "STRING"
            enc = old.encoding if wide_t == old.type else c.encoding if wide_t == c.type else PLAIN
            seen[c.name] = Col(c.name, wide_t, enc, max(old.scale, c.scale))
    return list(seen.values())


def shard_columns(env: DataFrame, fmt: str, max_schemas: int = 64) -> list[Col]:
    """Like batch_schema.infer_batch_columns, but shards with different schemas widen instead of first-wins.
    (JSON inference over the row images already widens across rows.)"""
    rows = env.filter(F.col("_op").isin("u", "d"))
    source = {"debezium-json": "_schema", "canal-json": "_types"}.get(fmt)
    if source:
        texts = [r[0] for r in rows.select(source).where(F.col(source).isNotNull()).distinct()
                 .limit(max_schemas).collect()]
        if texts:
            if fmt == "debezium-json":
                return _widest([from_debezium_schema(t) or [] for t in texts])
            return _widest([[Col(k, mysql_type(v).spark_ddl()) for k, v in json.loads(t).items()] for t in texts])
    return infer_batch_columns(env, fmt)


# --- the run-level progress record -------------------------------------------------------------------------


def read_progress(spark, directory: str) -> dict | None:
    data = checkpoint.read_json(spark, directory, PROGRESS_FILE)
    if data is not None:
        data["start"], data["end"] = checkpoint.int_keys(data["start"]), checkpoint.int_keys(data["end"])
    return data


def write_progress(spark, directory: str, batch_id: int, start, end, state: str) -> None:
    checkpoint.write_json(spark, directory, PROGRESS_FILE, {"batch_id": batch_id, "state": state,
                                                            "start": checkpoint.text_keys(start),
                                                            "end": checkpoint.text_keys(end)})
