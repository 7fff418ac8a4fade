"""The pipeline as the drivers of a batch see it (`pipe`): engine.pipeline.Pipeline, described here because it
imports them (routing, sync, drops), so they cannot import it; in terms of model/ and the packages below it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config
    from cdcsync.formats.spark.avro import WriterSchemas
    from cdcsync.kafka.spark_source import RangeReads
    from cdcsync.model.batch import BatchInput, BatchResult, CommitMode, Compacting, OnBad, TableState
    from cdcsync.reporting import Reporter
    from cdcsync.sinks import hudi


class PipelineContext(Protocol):
    """What the drivers of a batch use of `Pipeline`."""

    # properties: read-only, so an attribute of a narrower type, or a computed one (spark), fits
    @property
    def cfg(self) -> Config: ...

    @property
    def reporter(self) -> Reporter: ...

    @property
    def mode(self) -> CommitMode: ...

    @property
    def on_bad(self) -> OnBad: ...

    @property
    def spark(self) -> SparkSession: ...

    @property
    def kafka_reads(self) -> RangeReads: ...

    @property
    def dead_letters(self) -> bool: ...

    def writer_schemas(self, batch: BatchInput) -> WriterSchemas | None: ...

    def table_state(self, cfg: Config | None = None) -> TableState: ...

    def compactor(self, spec: hudi.TableSpec) -> Compacting | None: ...

    def heartbeat(self, every_s: float = 10.0) -> None: ...

    def register_tables(self, result: BatchResult) -> None: ...

    def sync_once(self, batch: BatchInput) -> BatchResult: ...
