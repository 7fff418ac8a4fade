"""The values the one sync loop passes around: a batch to sync, what it did, and what is known of a table."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from cdcsync import jvm_errors
from cdcsync.errors import CdcsyncError
from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.offsets import Gap, Offsets
from cdcsync.model.progress import Isolation, error_line
from cdcsync.schema.spark.columns import Col
from cdcsync.schema.spark.evolution import ColumnChange
from cdcsync.sinks.hudi import ORDERING, TableSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import DataFrame, SparkSession

    from cdcsync.config.model import Config, MaskConfig
    from cdcsync.reporting import Reporter

CLASSES = ("upserted", "deleted", "skipped", "bad")  # every record ends in exactly one
# ledger counts beside the classes, kept only where non-zero: truncates applied (counted skipped: they carry no
# row), rows that carried Debezium's unavailable-value placeholder, and those of them no earlier value could fill,
# and upserts [transform] sql's WHERE rejected (written as deletes of their keys), and DROP TABLE events (drops.py)
FILTERED = "filtered"
DROPPED_TABLE = "dropped_table"
TALLIES = ("truncated", "placeholders", "unavailable", FILTERED, DROPPED_TABLE)


class CommitMode(Enum):
    """PIPELINE commits carry the batch's end offsets (the resume point); REPLAY commits carry the replayed range
    under `_cdcsync.replay` and never move the pipeline's offsets."""

    PIPELINE = "pipeline"
    REPLAY = "replay"


@dataclass
class TableState:
    """What the engine knows of a target table between batches."""

    spec: TableSpec
    columns: list[Col] = field(default_factory=list)
    key_known: bool = False
    ordering: str = ORDERING  # how this table's _cdc_order is built (sinks/hudi.py)
    committed: bool = True  # the table has a completed commit: False writes the next batch as a first load
    schemaless: bool = True  # the last batch's types came from its row images, not a schema it carried
    truncated: dict[str, str] = field(default_factory=dict)  # source table -> its newest truncate's ordering value
    # where MySQL servers' runs began ({stream: [[offset, server id], ...]}, position.py), kept in every commit
    servers: dict[str, list[list[int]]] = field(default_factory=dict)
    runs: dict[str, list[list[int]]] = field(default_factory=dict)  # those of the batch's streams (ORDERING only)
    left_out: set[str] = field(default_factory=set)  # source columns an explicit [transform] SELECT left out (said)


@dataclass(frozen=True)
class BatchInput:
    """One batch for `Pipeline.sync_once`: a Kafka range [start, end), or given `rows` shaped like Spark's Kafka
    source (the dead-letter table's records), whose offsets are not a contiguous range."""

    batch_id: int
    start: Offsets
    end: Offsets
    rows: DataFrame | None = None
    expect_messages: dict[str, int] | None = None  # {"topic/partition": n}, checked before anything is written
    redo: bool = False  # a routed batch cut short by a crash: tables whose newest commit is this batch are skipped
    # every gap the run knows ([run] on_data_loss = "skip"), carried by each commit so archiving never hides one
    data_loss: tuple[Gap, ...] = ()
    # a routed run's: where each table stands before the batch (its rows from there on) and the isolated ones retried
    standing: Isolation | None = None


@dataclass
class BatchResult:
    batch_id: int
    start: Offsets
    end: Offsets
    instant: str | None
    ledger: dict[str, dict[str, int]]  # "topic/partition" -> counts
    changes: list[ColumnChange] = field(default_factory=list)
    bad_samples: list[dict[str, Any]] = field(default_factory=list)
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)  # routed runs: table -> {"instant", counts}
    unrouted: int = 0  # routed runs: rows no route matched, counted as skipped
    stages: dict[str, float] = field(default_factory=dict)  # seconds: read_decode, dead_letter, write
    # routed runs: tables whose write failed and was set aside ([run] on_table_failure), table -> table_failure(e)
    failed: dict[str, str] = field(default_factory=dict)
    standing: Isolation | None = None  # a routed run's: where each table stands after the batch

    def totals(self) -> dict[str, int]:
        out = {k: 0 for k in ("messages", "rows", *CLASSES)}
        for counts in self.ledger.values():
            for k in out:
                out[k] += counts.get(k, 0)
        for k in TALLIES:  # shown only where a batch had any
            if n := sum(counts.get(k, 0) for counts in self.ledger.values()):
                out[k] = n
        return out


def table_failure(e: BaseException) -> str:
    """How BatchResult.failed records a table's error, one line (progress.error_line): "<reason>: <what failed>",
    the reason the name of the exit code the run would have stopped with (sink_write, …), counted by the metrics."""
    if isinstance(e, CdcsyncError):
        return error_line(f"{e.exit_code.name.lower()}: {e.message}")
    return error_line(f"{ExitCode.INTERNAL.name.lower()}: {jvm_errors.summary(e)}")


@dataclass(frozen=True)
class Route:
    """How a routed table's share of a batch is written (None for a run without [[route]])."""

    source_column: str | None = None  # shards merged into one table: the column naming each row's source table
    write: bool = True  # False: this table committed the batch before a crash; classify and count only


@dataclass
class TableBatch:
    """One table's share of one batch, as its stages see it: the table's config and state, and the batch."""

    cfg: Config
    state: TableState
    batch: BatchInput
    route: Route | None = None
    masks: dict[str, MaskConfig] = field(default_factory=dict)  # the table's [[mask]] entries, by column


class OnBad(Protocol):
    """A batch's bad records, handed over with the batch id and their count ([run] on_bad_record's BadRecords, a
    dead-letter replay's collector); returns the samples the summary shows."""

    def __call__(self, bad: DataFrame, batch_id: int, count: int, /) -> list[dict[str, Any]]: ...


class Compacting(Protocol):
    """A table's background compactor (runtime/compactor.py), as a write sees it."""

    def before_write(self) -> None: ...
    def poke(self) -> None: ...


@dataclass(frozen=True)
class TableContext:
    """What a table's batch stages use of the run: Spark, the reporter, the bad-record handler, the table's
    compactor and the commit mode."""

    spark: SparkSession
    reporter: Reporter
    on_bad: OnBad | None
    compactor: Callable[[TableSpec], Compacting | None]
    mode: CommitMode

    def describe(self, batch: BatchInput, stage: str | None) -> None:
        """Name the Spark jobs that follow, in the Spark UI and event log, by the batch and `stage` (None: no
        name), rather than leave them the last description Hudi set on this thread."""
        text = None if stage is None else f"cdcsync batch {batch.batch_id}: {stage}"
        self.spark.sparkContext.setJobDescription(text)  # type: ignore[arg-type]  # None clears it (Spark's own use)
