"""Replay the dead-letter table: re-ingest chosen records after the config or the upstream is fixed.

A replay feeds the chosen records to the same sync loop as `run`, as one batch of given rows, committed under
`_cdcsync.replay` so the pipeline's resume offsets never move; then the records that landed are marked
replayed. Records still bad stay un-replayed and are reported.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.config.model import dead_letter_path
from cdcsync.engine.pipeline import Pipeline
from cdcsync.engine.resume import resume_point
from cdcsync.engine.sync import Summary, sync
from cdcsync.kafka.offsets import Offsets, tp_key
from cdcsync.model.batch import BatchInput, BatchResult, CommitMode
from cdcsync.sinks import dead_letter, hudi
from cdcsync.sinks.dead_letter_view import KEY, Selection

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config
    from cdcsync.reporting import Reporter


@dataclass
class DeadLetterReplayResult:
    table: str
    dead_letter_path: str
    selected: int = 0  # dead-letter rows chosen
    messages: int = 0  # distinct Kafka messages re-read from them
    replayed: int = 0  # rows now marked replayed
    still_bad: list[dict[str, Any]] = field(default_factory=list)
    instant: str | None = None
    ledger: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def selected(spark: SparkSession, cfg: Config, sel: Selection) -> DataFrame | None:
    if not dead_letter.exists(spark, cfg):
        return None
    return dead_letter.read(spark, cfg).where(sel.condition())


class _StillBad:
    """The bad-record handler of a dead-letter replay: records still bad are collected, not dead-lettered again."""

    policy = "collect"

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def __call__(self, bad_df: DataFrame, _batch_id: int, _count: int) -> list[dict[str, Any]]:
        rows = [r.asDict() for r in bad_df.select(
            F.col(C.TOPIC).alias("topic"), F.col(C.PARTITION).alias("partition"),
            F.col(C.OFFSET).alias("offset"), F.col(C.POS).cast("int").alias("row_index"),
            F.col(C.REASON).alias("reason"), F.col(C.REASON_DETAIL).alias("error")).collect()]
        self.rows += rows
        return rows[:5]


class _DeadLetterBatch:
    """The batch source of a dead-letter replay: the chosen records as one batch of given rows."""

    def __init__(self, batch: BatchInput):
        self.batch = batch
        self.result: BatchResult | None = None

    def batches(self) -> Iterator[BatchInput]:
        yield self.batch

    def committed(self, result: BatchResult, seconds: float) -> None:
        self.result = result

    def pause(self, seconds: float) -> None:
        """Its one batch is the last: nothing to pace."""


def replay(spark: SparkSession, cfg: Config, sel: Selection, reporter: Reporter) -> DeadLetterReplayResult:
    """Re-ingest the chosen, not yet replayed dead-letter records into the main table, then mark them."""
    t0 = time.monotonic()
    _check_replayable(cfg)
    sel = replace(sel, include_replayed=False)  # a replayed record is never replayed twice
    result = DeadLetterReplayResult(cfg.sink.table_name, dead_letter_path(cfg))
    # its records were all bad once: those still bad are reported, not held against max_bad_records (which would stop
    # every replay of a large dead-letter table before it marks anything replayed)
    cfg = replace(cfg, run=replace(cfg.run, max_bad_records=None))
    still_bad = _StillBad()
    pipe = Pipeline(cfg, reporter, mode=CommitMode.REPLAY, spark=spark, on_bad=still_bad)
    pipe.lock_table("cdcsync dead-letter replay")
    try:
        chosen = selected(spark, cfg, sel)
        if chosen is None:
            return result
        chosen = chosen.persist()
        try:
            _replay(pipe, still_bad, chosen, result)
        finally:
            chosen.unpersist()
        return result
    finally:
        pipe.close()
        result.seconds = round(time.monotonic() - t0, 3)


def _replay(pipe: Pipeline, still_bad: _StillBad, chosen: DataFrame, result: DeadLetterReplayResult) -> None:
    """`chosen` synced through `pipe`, whose bad-record handler is `still_bad`; the result's counts filled in."""
    spark, cfg = pipe.spark, pipe.cfg
    result.selected = chosen.count()
    if not result.selected:
        return
    raw = dead_letter.as_kafka_rows(chosen)
    per_part = {(r["topic"], r["partition"]): (r["lo"], r["hi"], r["n"]) for r in raw.groupBy("topic", "partition")
                .agg(F.min("offset").alias("lo"), F.max("offset").alias("hi"), F.count(F.lit(1)).alias("n")).collect()}
    result.messages = sum(n for _, _, n in per_part.values())
    start = Offsets.from_entries((t, p, lo) for (t, p), (lo, _, _) in per_part.items())
    end = Offsets.from_entries((t, p, hi + 1) for (t, p), (_, hi, _) in per_part.items())
    state = pipe.table_state()
    if not state.spec.primary_key:  # a key inferred by an earlier run is in the table's own config
        state.spec = replace(state.spec, primary_key=hudi.record_key_fields(spark, cfg.sink.path))
    batch_id = resume_point(spark, cfg).batch_id or 0  # numbered as the last batch done: a replay of it
    pipe.reporter.event("replay", table=cfg.sink.table_name, records=result.selected, messages=result.messages,
                        dead_letter=result.dead_letter_path)
    # every chosen message read back exactly once, checked before the commit (each row in one class: the ledger)
    want = {tp_key(t, p): n for (t, p), (_, _, n) in per_part.items()}
    source = _DeadLetterBatch(BatchInput(batch_id, start, end, rows=raw, expect_messages=want))
    sync(pipe, source, Summary(cfg.sink.table_name, cfg.sink.path, "dead-letter"))
    assert source.result is not None  # sync() commits the one batch, or raises
    result.instant, result.ledger = source.result.instant, source.result.ledger
    bad_rows = still_bad.rows
    result.still_bad = sorted(bad_rows, key=lambda r: (r["topic"], r["partition"], r["offset"], r["row_index"]))
    landed = chosen
    if bad_rows:
        bad_keys = spark.createDataFrame([(r["topic"], r["partition"], r["offset"], r["row_index"])
                                          for r in bad_rows], "topic string, partition int, offset long, row_index int")
        landed = chosen.join(bad_keys, KEY, "left_anti")
    result.replayed = landed.count()
    if result.replayed:
        dead_letter.mark_replayed(cfg, landed, result.replayed, result.instant or "", batch_id)
    for r in result.still_bad[:3]:
        pipe.reporter.warn(f"still bad, left un-replayed: {r['topic']}/{r['partition']}@{r['offset']}: "
                           f"{r['reason']}: {r['error']}")


def _check_replayable(cfg: Config) -> None:
    from cdcsync.errors import ConfigError

    if getattr(cfg, "routes", None):
        raise ConfigError(f"{cfg.path}: dead-letter replay does not support [[route]] configs yet",
                          hint="replay with a config whose [sink] is the one target table", key="route")
    if getattr(cfg, "masks", None):  # the dead-letter values were masked: replaying them would mask twice
        raise ConfigError(f"{cfg.path}: dead-letter replay refuses a config with [[mask]]: the dead-lettered "
                          "values are masked, not the originals", hint="re-read the originals from Kafka with "
                          "'cdcsync replay-from-offset' instead", key="mask")
