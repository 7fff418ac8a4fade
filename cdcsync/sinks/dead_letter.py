"""The dead-letter table: a Hudi table of every record that could not be written, with its coordinates, the raw
bytes, the reason, and the batch. Written in the same micro-batch as the good rows, before their commit.

Keyed by (topic, partition, offset, row_index), so writing the same bad record twice (a batch re-read after a
crash) keeps one row. `cdcsync dead-letter replay` re-ingests rows and sets `replayed` / `replayed_at`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import __version__
from cdcsync import columns as C
from cdcsync.config.model import dead_letter_path as path_for
from cdcsync.sinks import hudi
from cdcsync.sinks.dead_letter_view import KEY

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config

HEADERS_TYPE = "array<struct<key:string,value:binary>>"
META_REPLAY_INSTANT = hudi.META_PREFIX + "replayed_into"  # on a marking commit: the main table's instant




# [sink.options] that are about how a process writes, not about the table's layout: the dead-letter table takes them
# too (multi-writer locking: run and dead-letter replay both write it; the metadata table's settings)
SHARED_OPTIONS = ("hoodie.write.concurrency.", "hoodie.write.lock.", "hoodie.clean.failed.writes.policy",
                  "hoodie.cleaner.policy.failed.writes", "hoodie.metadata.")


def spec_for(cfg: Config) -> hudi.TableSpec:
    shared = {k: v for k, v in cfg.sink.options.items() if k.startswith(SHARED_OPTIONS)}
    return hudi.TableSpec(
        path=path_for(cfg), table_name=f"{cfg.sink.table_name}_dead_letter", table_type="COPY_ON_WRITE",
        primary_key=KEY, partition_by=[], ordering_fields=["batch_id"], options=shared,
    )


def rows(bad: DataFrame, batch_id: int, table: str) -> DataFrame:
    """`bad`: classified rows with _class == 'bad' (see engine.batch). Routed rows carry their own target table
    (`_target`); one whose table could not be told (undecodable) has none: NULL, not a guess."""
    target = F.col(C.TARGET) if C.TARGET in bad.columns else F.lit(table)
    return bad.select(
        F.col(C.TOPIC).alias("topic"), F.col(C.PARTITION).alias("partition"),
        F.col(C.OFFSET).alias("offset"), F.col(C.POS).cast("int").alias("row_index"),
        F.col(C.TIMESTAMP).alias("kafka_timestamp"),
        F.col(C.TIMESTAMP_TYPE).cast("int").alias("timestamp_type"), F.col(C.KEY).alias("key"),
        F.col(C.RAW_VALUE).alias("value"),
        # text only when the bytes are valid UTF-8 (decoding replaced nothing)
        F.when(F.encode(F.col(C.VALUE), "UTF-8") == F.col(C.RAW_VALUE), F.col(C.VALUE)).alias("value_text"),
        # kept so a replay sees what a header filter saw
        F.col(C.HEADERS).cast(HEADERS_TYPE).alias("headers"),
        F.col(C.REASON).alias("reason"), F.col(C.REASON_DETAIL).alias("error"),
        F.lit(batch_id).cast("long").alias("batch_id"), target.cast("string").alias("target_table"),
        F.lit(__version__).alias("cdcsync_version"), F.current_timestamp().alias("first_seen"),
        F.lit(False).alias("replayed"), F.lit(None).cast("timestamp").alias("replayed_at"),
        F.lit(False).alias(hudi.DELETED),
    )


def write(cfg: Config, bad: DataFrame, batch_id: int) -> None:
    spec = spec_for(cfg)
    out = rows(bad, batch_id, cfg.sink.table_name)
    spark = bad.sparkSession
    if hudi.table_exists(spark, spec.path):  # a batch re-read after a crash: keep when each was first seen
        seen = read(spark, cfg).select(*KEY, F.col("first_seen").alias(C.SEEN))
        out = (out.join(seen, KEY, "left").withColumn("first_seen", F.coalesce(C.SEEN, "first_seen"))
               .select(*out.columns))
    reasons = {r[0]: r[1] for r in bad.groupBy(C.REASON).count().collect()}
    hudi.write_batch(out, spec, {hudi.META_BATCH: str(batch_id),
                                 hudi.META_DL_REASONS: json.dumps(reasons, sort_keys=True)}, sum(reasons.values()))


def exists(spark: SparkSession, cfg: Config) -> bool:
    return hudi.table_exists(spark, path_for(cfg))


def read(spark: SparkSession, cfg: Config) -> DataFrame:
    """The table's rows without Hudi's meta columns; columns added later (headers) read as NULL from old tables."""
    df = spark.read.format("hudi").load(path_for(cfg))
    df = df.select(*[c for c in df.columns if not c.startswith(C.HOODIE_PREFIX) or c == hudi.DELETED])
    for name, typ in (("headers", HEADERS_TYPE), ("timestamp_type", "int")):
        if name not in df.columns:
            df = df.withColumn(name, F.lit(None).cast(typ))
    return df


def as_kafka_rows(dl: DataFrame) -> DataFrame:
    """Dead-letter rows as Spark's Kafka source shapes them, one per message (row_index collapses)."""
    return dl.dropDuplicates(["topic", "partition", "offset"]).select(
        F.col("key"), F.col("value"), F.col("topic"), F.col("partition").cast("int").alias("partition"),
        F.col("offset").cast("long").alias("offset"), F.col("kafka_timestamp").alias("timestamp"),
        F.coalesce(F.col("timestamp_type"), F.lit(0)).alias("timestampType"),
        F.col("headers").cast(HEADERS_TYPE).alias("headers"),
    )


def mark_replayed(cfg: Config, chosen: DataFrame, count: int, replay_instant: str, batch_id: int) -> None:
    """Upsert the `count` chosen rows back with replayed = true; same key and ordering value, so the new image
    wins."""
    marked = (chosen.withColumn("replayed", F.lit(True))
              .withColumn("replayed_at", F.current_timestamp()))
    hudi.write_batch(marked, spec_for(cfg), {hudi.META_BATCH: str(batch_id), META_REPLAY_INSTANT: replay_instant,
                                             hudi.META_DL_REPLAYED: str(count)}, count)
