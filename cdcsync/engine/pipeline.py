"""The facade every sync goes through: the config, the Spark session, Kafka look-ups, the target tables' state,
the writer locks and the bad-record handler; and `sync_once`, which lands one batch input in the table(s).
`run`, `replay-from-offset` and `dead-letter replay` differ only in the batch inputs they feed it (engine.sync)."""

from __future__ import annotations

import copy
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pyspark import StorageLevel

from cdcsync import jvm_errors, storage
from cdcsync.config.model import routed_path
from cdcsync.engine import routing
from cdcsync.engine.batch import decode, sync_table
from cdcsync.errors import CdcsyncError, ConfigError, SourceError
from cdcsync.formats.registry import RegistryClient
from cdcsync.formats.spark.avro import AvroSchemas, WriterSchemas
from cdcsync.kafka import view
from cdcsync.kafka.spark_source import RangeReads
from cdcsync.kafka.view import KafkaView
from cdcsync.model.batch import BatchInput, BatchResult, CommitMode, OnBad, TableState
from cdcsync.model.progress import DONE, WRITING, Isolation
from cdcsync.runtime.compactor import Compactor
from cdcsync.runtime.faults import maybe_crash
from cdcsync.runtime.lock import WriterLock, multi_writer_configured
from cdcsync.schema.spark.columns import schema_from_json
from cdcsync.sinks import dead_letter, hudi
from cdcsync.sinks.catalog import Catalog
from cdcsync.sinks.compaction import ASYNC, compaction_mode
from cdcsync.stages.bad_records import BadRecords

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdcsync.config.model import Config
    from cdcsync.reporting import Reporter

_KAFKA_CODE = ("org.apache.kafka.", "org.apache.spark.sql.kafka010.")


class Pipeline:
    def __init__(self, cfg: Config, reporter: Reporter, *, mode: CommitMode = CommitMode.PIPELINE,
                 spark: SparkSession | None = None, schema_from: str | None = None,
                 on_bad: OnBad | None = None) -> None:
        """`schema_from`: the main table path whose columns a table starts with (replays into side tables land
        the same types as run); `on_bad`: the bad-record handler, by default [run] on_bad_record's."""
        self.cfg = cfg
        # called from several threads: the routed tables a batch writes at once (engine/routing.py), a compaction
        self.reporter = one_at_a_time(reporter)
        self.mode = mode
        self.schema_from = schema_from
        # one dead-letter table for every routed table: its commits (and the read before each) one at a time
        self.on_bad: OnBad = one_at_a_time(on_bad if on_bad is not None else BadRecords(cfg, self.reporter))
        self._spark = spark
        self._protected = False
        self._states: dict[str, TableState] = {}
        self._locks: list[WriterLock] = []
        self._registry: RegistryClient | None = None
        self._avsc: dict[str, AvroSchemas] = {}  # plain Avro's writer schema per side, read once
        self._first_checkpoints: dict[str, hudi.Checkpoint | None] = {}
        self._catalog: Catalog | None = None
        self._compactors: dict[str, Compactor] = {}
        self._reads: RangeReads | None = None
        self._main_path = cfg.sink.path  # a replay --into writes elsewhere (writing_to): side tables stay unregistered

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            from cdcsync.runtime.session import for_config

            self._spark = for_config(self.cfg, "" if self.mode is CommitMode.PIPELINE else "replay")
        if not self._protected:
            self._protected = True
            storage.apply(self._spark, self.cfg.storage)  # a session handed in was built without them
            if self.cfg.catalog:  # opened now: a metastore that cannot be opened stops the run before any batch
                self._catalog = Catalog(self._spark, self.cfg.catalog)
            if self.cfg.masks:  # salts and keys stay out of every plan Spark prints or records
                from cdcsync.stages.masking import protect_plans

                protect_plans(self._spark, self.cfg.masks)
        return self._spark

    @property
    def kafka_reads(self) -> RangeReads:
        """The batches' Kafka reads, each decoded by one plan re-pointed from range to range."""
        if self._reads is None:
            self._reads = RangeReads(self.spark, self.cfg.source)
        return self._reads

    @property
    def dead_letters(self) -> bool:
        """Does this pipeline's bad-record handler dead-letter? (A replay's skips, whatever the config says.)"""
        return getattr(self.on_bad, "policy", None) == "dead-letter"

    def register_tables(self, result: BatchResult) -> None:
        """[catalog]: the tables this batch wrote, registered by name (again when their columns changed)."""
        cfg = self.cfg
        if self._catalog is None or cfg.sink.path != self._main_path:
            return
        changed = bool(result.changes)
        if cfg.routes:
            for name in result.tables:
                self._catalog.sync(name, routed_path(cfg.sink.path, name), changed)
        elif result.instant:
            self._catalog.sync(cfg.sink.table_name, cfg.sink.path, changed)
        if result.totals()["bad"] and self.dead_letters:
            spec = dead_letter.spec_for(cfg)
            self._catalog.sync(spec.table_name, spec.path, False)

    def writer_schemas(self, batch: BatchInput) -> WriterSchemas | None:
        """The Avro writer schemas of the batch's values and keys: a plain-Avro side's .avsc, read once; for the wire
        format every version registered under `<topic>-value` (`-key`), asked when the batch is planned, so every
        record in its range was registered before."""
        src = self.cfg.source
        sides = [self._avro_side(src.format, batch, "value"), self._avro_side(src.key_format, batch, "key")]
        return WriterSchemas(*sides) if sides != [None, None] else None

    def _avro_side(self, fmt: str, batch: BatchInput, side: str) -> AvroSchemas | None:
        if fmt == "avro":
            if side not in self._avsc:
                self._avsc[side] = AvroSchemas(plain=self.cfg.source.avsc(key=side == "key"))
            return self._avsc[side]
        if fmt != "avro-confluent":
            return None
        if self._registry is None:
            registry = self.cfg.source.registry()
            assert registry is not None  # the loader refuses avro-confluent without schema_registry_url
            self._registry = RegistryClient(registry)
        topics = sorted({t for t, _, _ in batch.end.entries()} | {t for t, _, _ in batch.start.entries()})
        by_id: dict[int, str] = {}
        for t in topics:
            by_id |= self._registry.subject_schemas(f"{t}-{side}")
        return AvroSchemas(by_id)

    def kafka_view(self, group: bool = True) -> KafkaView:
        """Metadata and offset look-ups (kafka-python); `group=False` for commands that commit nothing."""
        return view.for_source(self.cfg, group)

    def hold_lock(self, directory: str, what: str, table: str) -> WriterLock:
        """Take the writer lock in `directory` for this process's life (released by `close`)."""
        lock = WriterLock(self.spark, directory, what, self.cfg.storage)
        lock.acquire(table)
        self._locks.append(lock)
        return lock

    def lock_table(self, what: str) -> WriterLock | None:
        """One writer per table, unless Hudi's multi-writer locking is configured."""
        if multi_writer_configured(self.cfg.sink.options):
            return None
        return self.hold_lock(self.cfg.run.checkpoint_dir, what, self.cfg.sink.table_name)

    def heartbeat(self, every_s: float = 10.0) -> None:
        for lock in self._locks:
            lock.heartbeat(every_s)

    def compactor(self, spec: hudi.TableSpec) -> Compactor | None:
        """The background compactor of a MERGE_ON_READ table that compacts asynchronously (sinks/compaction.py)."""
        if compaction_mode(spec.table_type, spec.options) != ASYNC:
            return None
        if spec.path not in self._compactors:
            options = hudi.options_for(spec, self.spark)
            self._compactors[spec.path] = Compactor(self.spark, spec.path, options, self.reporter)
        return self._compactors[spec.path]

    def drain(self, cancel: bool = False) -> None:
        """Wait for the running compactions (`cancel`: stop them; their plans stay for the next run)."""
        for c in self._compactors.values():
            c.drain(cancel)

    def close(self) -> None:
        self.drain(cancel=True)  # a run that ended normally drained them already; a failing one does not wait
        for lock in reversed(self._locks):
            lock.release()
        self._locks.clear()

    def table_state(self, cfg: Config | None = None) -> TableState:
        """A target table as this process knows it: first sight takes the columns of its newest commit."""
        cfg = cfg or self.cfg
        name = cfg.sink.table_name
        if name not in self._states:
            state = TableState(spec=hudi.TableSpec.from_config(cfg))
            source = self._schema_source(cfg)
            last = self.first_checkpoint(source)
            if last:
                state.columns = schema_from_json(last["schema"])
                state.ordering = last["ordering"]
                state.schemaless = last["schemaless"]  # typed from a schema its records carried: no fit to try
                state.truncated = last.get("truncated", {})
                state.servers = last["servers"]  # a replay's side table starts from the run's, for the same values
            # a checkpoint of the table itself is a commit; without one, a replay may still have left one
            state.committed = (bool(last) and source == cfg.sink.path) or \
                hudi.latest_instant(self.spark, cfg.sink.path) is not None
            if state.committed:
                _keep_recorded_index(cfg, state.spec, hudi.recorded_index(self.spark, cfg.sink.path))
                state.spec = hudi.keep_column_stats(self.spark, state.spec)
            self._states[name] = state
        return self._states[name]

    def first_checkpoint(self, path: str) -> hudi.Checkpoint | None:
        """The newest commit's checkpoint of the table at `path` as this process first read it: where a run starts
        and the columns its table starts with come from one read."""
        if path not in self._first_checkpoints:
            self._first_checkpoints[path] = hudi.last_checkpoint(self.spark, path)
        return self._first_checkpoints[path]

    def writing_to(self, path: str) -> Pipeline:
        """This pipeline with its writes going to the table at `path` (replay --into): the same session, registry,
        locks and handlers; table states of its own."""
        other = copy.copy(self)
        other.cfg = replace(self.cfg, sink=replace(self.cfg.sink, path=path))
        other._states = {}
        return other

    def _schema_source(self, cfg: Config) -> str:
        if self.schema_from is None:
            return cfg.sink.path
        return routed_path(self.schema_from, cfg.sink.table_name) if self.cfg.routes else self.schema_from

    def sync_once(self, batch: BatchInput) -> BatchResult:
        """One batch into the table (or, with [[route]], the tables); nothing is committed when it raises."""
        cfg = self.cfg
        progress = bool(cfg.routes) and self.mode is CommitMode.PIPELINE  # a run's record of the batch in flight
        if progress:  # a batch without a standing: every table from its start (routing.sync_routed reads it so)
            routing.write_progress(self.spark, cfg.run.checkpoint_dir, batch, WRITING,
                                   batch.standing or Isolation(batch.start))
        env = decode(self, batch)
        if cfg.routes:  # every routed table reads its share of the one decoded batch
            env = routing.with_targets(env, cfg).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            if cfg.routes:
                result = routing.sync_routed(self, batch, env)
            else:
                result = sync_table(self, cfg, self.table_state(), batch, env)
        except CdcsyncError:
            raise
        except Exception as e:  # a JVM-side failure: name the layer from the exception chain
            raise _jvm_failure(e, cfg, batch) from e
        finally:
            if cfg.routes:
                env.unpersist()
        if progress:
            maybe_crash("routed_before_done", batch.batch_id)
            routing.write_progress(self.spark, cfg.run.checkpoint_dir, batch, DONE,
                                   result.standing or Isolation(batch.end))
        return result


_Shared = TypeVar("_Shared")


def one_at_a_time(inner: _Shared) -> _Shared:
    """`inner` (a reporter, a bad-record handler) called by one thread at a time (already so: itself)."""
    # cast: the wrapper answers every call and attribute as `inner` does
    return inner if isinstance(inner, _OneAtATime) else cast(_Shared, _OneAtATime(inner))


class _OneAtATime:
    """Lines from several threads never interleave, and the dead-letter table's commits never race; the wrapped
    object's other attributes read through."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._lock = threading.RLock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return self._inner(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_inner", "_lock"):  # copy and pickle look these up before __init__
            raise AttributeError(name)
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)

        return locked


def _keep_recorded_index(cfg: Config, spec: hudi.TableSpec, recorded: str | None) -> None:
    """A committed table keeps the index its keys were placed by (hudi.index_change), before anything is read."""
    wanted = hudi.index_of(spec)
    if recorded is not None and (why := hudi.index_change(recorded, wanted)):  # none recorded: none to keep
        raise ConfigError(
            f"{cfg.path}: the table at {spec.path} cannot be written with the index {wanted}: {why}, and a bucket "
            "index's count is fixed for the table's life", key="sink.options.hoodie.index.type", file=str(cfg.path),
            hint=f"set [sink.options] {_index_options(recorded)} as the table was written, or write a new table "
            "(replay-from-offset --into) with the new index")


def _index_options(index: str) -> str:
    kind, _, buckets = index.partition(":")
    text = f'"hoodie.index.type" = "{kind}"'
    return text + f' and "hoodie.bucket.index.num.buckets" = "{buckets}"' if buckets else text


def _jvm_failure(e: Exception, cfg: Config, batch: BatchInput) -> CdcsyncError:
    what = jvm_errors.summary(e)
    if jvm_errors.caused_by(e, *_KAFKA_CODE):
        return SourceError(
            f"batch {batch.batch_id}: reading Kafka failed: {what}",
            hint=f"nothing was committed; check the brokers ('cdcsync probe --bootstrap-servers "
            f"{cfg.source.bootstrap_servers}') and run again", offsets=batch.start.range_text(batch.end),
        )
    return CdcsyncError(f"batch {batch.batch_id}: Spark failed: {what}",
                        hint="nothing was committed; the Spark log above has the details")
