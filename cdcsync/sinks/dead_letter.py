"""The dead-letter table: a Hudi table of every record that could not be written, with its coordinates, the raw
bytes, the reason, and the batch. Written in the same micro-batch as the good rows, before their commit."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import __version__
from cdcsync.sinks import hudi

KEY = ["topic", "partition", "offset", "row_index"]


def path_for(cfg) -> str:
    return cfg.run.dead_letter_path or f"{cfg.sink.path.rstrip('/')}_dead_letter"


def spec_for(cfg) -> hudi.TableSpec:
    return hudi.TableSpec(
        path=path_for(cfg), table_name=f"{cfg.sink.table_name}_dead_letter", table_type="COPY_ON_WRITE",
        primary_key=KEY, partition_by=[], ordering_fields=["batch_id"], options={},
    )


def rows(bad: DataFrame, batch_id: int, table: str) -> DataFrame:
    """`bad`: classified rows with _class == 'bad' (see engine.batch)."""
    return bad.select(
        F.col("_kafka_topic").alias("topic"), F.col("_kafka_partition").alias("partition"),
        F.col("_kafka_offset").alias("offset"), F.col("_pos").cast("int").alias("row_index"),
        F.col("_kafka_timestamp").alias("kafka_timestamp"), F.col("_kafka_key").alias("key"),
        F.col("_raw_value").alias("value"),
        # text only when the bytes are valid UTF-8 (decoding replaced nothing)
        F.when(F.encode(F.col("_value"), "UTF-8") == F.col("_raw_value"), F.col("_value")).alias("value_text"),
        F.col("_reason").alias("reason"), F.col("_reason_detail").alias("error"),
        F.lit(batch_id).cast("long").alias("batch_id"), F.lit(table).alias("target_table"),
        F.lit(__version__).alias("cdcsync_version"), F.current_timestamp().alias("first_seen"),
        F.lit(False).alias("replayed"), F.lit(None).cast("timestamp").alias("replayed_at"),
        F.lit(False).alias(hudi.DELETED),
    )


def write(cfg, bad: DataFrame, batch_id: int) -> None:
    spec = spec_for(cfg)
    hudi.write_batch(rows(bad, batch_id, cfg.sink.table_name), spec, {hudi.META_BATCH: str(batch_id)})
