"""Where a config's sync stands, decided in one place (Hudi Streamer's getCheckpointToResumeFrom): the end offsets of
the last batch done and its id, read from the table's newest commit, or with [[route]] from the run-level progress
record (model/progress.py), which also names a batch a crash cut short and the tables set aside. `run` resumes
there, `replay-from-offset --from committed` and `status` read it, a dead-letter replay numbers its batch after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from cdcsync.engine import checkpoint
from cdcsync.kafka.offsets import Gap, Offsets
from cdcsync.model.progress import DONE, Isolated, Progress
from cdcsync.sinks import hudi

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config


@dataclass(frozen=True)
class ResumePoint:
    """`offsets` None: nothing committed yet (then `decided` may hold the start an earlier run decided and read
    nothing from, so a `--once` run does not re-resolve `latest-offset` and skip what arrived since)."""

    offsets: Offsets | None  # where every table not set aside stands: the end of the last batch done
    batch_id: int | None  # the last batch done
    data_loss: tuple[Gap, ...] = ()  # every gap earlier runs went past ([run] on_data_loss = "skip"), carried on
    redo_end: Offsets | None = None  # [[route]]: a batch a crash cut short ends here; it is done again
    isolated: dict[str, Isolated] = field(default_factory=dict)  # [[route]]: tables set aside, by name
    decided: tuple[Offsets, str] | None = None  # no commit yet: a start decided earlier, and how

    @property
    def next_batch_id(self) -> int:
        return 0 if self.batch_id is None else self.batch_id + 1

    @classmethod
    def of_progress(cls, rec: Progress | None) -> ResumePoint:
        """A routed run's: a batch still "writing" was cut short, so the last one done is the one before it."""
        if rec is None:
            return cls(None, None)
        done = rec.state == DONE
        return cls(rec.standing.fresh, rec.batch_id - (0 if done else 1), rec.data_loss,
                   None if done else rec.end, dict(rec.standing.tables))

    @classmethod
    def of_commit(cls, last: hudi.Checkpoint | None) -> ResumePoint:
        if last is None:
            return cls(None, None)
        return cls(last["offsets"], last["batch_id"], last["data_loss"])


def resume_point(spark: SparkSession, cfg: Config,
                 last_commit: Callable[[str], hudi.Checkpoint | None] | None = None) -> ResumePoint:
    """Where `cfg`'s sync stands; `last_commit`: how the table's newest commit is read (the pipeline's, which keeps
    the first read so the run's start and its table's columns come from one read), else read here."""
    if cfg.routes:
        from cdcsync.engine import routing  # Spark's side: `status` reads ResumePoint without a JVM

        point = ResumePoint.of_progress(routing.read_progress(spark, cfg.run.checkpoint_dir))
    else:
        read = last_commit or (lambda path: hudi.last_checkpoint(spark, path))
        point = ResumePoint.of_commit(read(cfg.sink.path))
    if not point.offsets and (pending := checkpoint.read_start(spark, cfg.run.checkpoint_dir)):
        return replace(point, decided=pending)
    return point
