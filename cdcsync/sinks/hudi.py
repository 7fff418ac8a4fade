"""The Hudi sink: write options from the config, one upsert per micro-batch carrying its offsets in the commit
metadata, and reading those offsets back from the timeline (the only place a run resumes from)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict, cast

from cdcsync import __version__, jvm_errors
from cdcsync import columns as C
from cdcsync.errors import SinkError
from cdcsync.kafka.offsets import Gap, Offsets
from cdcsync.sinks import compaction

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from cdcsync.config.model import Config
    from cdcsync.kafka.offsets import GapJson

META_PREFIX = "_cdcsync."  # hoodie.datasource.write.commitmeta.key.prefix is "_": such options land in the commit
META_OFFSETS = META_PREFIX + "offsets"  # {"topic": {"partition": next_offset}}
META_BATCH = META_PREFIX + "batch_id"
META_LEDGER = META_PREFIX + "ledger"
META_SCHEMA = META_PREFIX + "schema"
META_SCHEMA_CHANGES = META_PREFIX + "schema_changes"  # the schema history: changes applied by this commit
META_VERSION = META_PREFIX + "version"
META_REPLAY = META_PREFIX + "replay"  # a replayed range: {"from": offsets, "to": offsets}; never a resume point
META_ORDERING = META_PREFIX + "ordering"  # how _cdc_order is built; absent on tables of earlier versions
# {source table: ordering value of its newest truncate}, carried by every later commit (stages/truncate.py)
META_TRUNCATED = META_PREFIX + "truncated"
# where the batch's types came from: "rows" (their JSON values) or "schema" (a schema the records carried)
META_TYPED_FROM = META_PREFIX + "typed_from"
# the index the table's keys were placed by ("SIMPLE", "BUCKET:4"); a bucket count never changes (index_change)
META_INDEX = META_PREFIX + "index"
# every offset gap the table's run went past ([run] on_data_loss = "skip"): [{topic, partition, from, to, ...}]
META_DATA_LOSS = META_PREFIX + "data_loss"
META_DL_REASONS = META_PREFIX + "reasons"  # on a dead-letter commit: {reason: records}, read by `status`
META_DL_REPLAYED = META_PREFIX + "replayed"  # on a dead-letter marking commit: how many records it marked
# the source's log position, a MySQL binlog one only within its server's run, then Kafka coordinates (position.py)
ORDERING = "server-log-position"
ORDERING_LOG = "log-position"  # earlier versions: binlog positions compared across servers; such tables keep it
# {"topic/partition/connector": [[first offset, server id], ...]}: where each MySQL server's run began (position.py)
META_SERVERS = META_PREFIX + "servers"
ORDERING_LEGACY = "event-time"  # earlier versions: event time, Kafka offset, row; such tables keep it

# One ordering field, because hudi-rs (the independent reader) takes only one: fixed-width text that sorts in the
# source's log order (formats/spark/position.py).
ORDER = C.ORDER
DELETED = C.DELETED
COLUMN_STATS = "hoodie.metadata.index.column.stats.enable"


@dataclass(frozen=True)
class TableSpec:
    path: str
    table_name: str
    table_type: str
    primary_key: list[str]
    partition_by: list[str]
    ordering_fields: list[str]
    options: dict[str, str]

    @staticmethod
    def from_config(cfg: Config) -> TableSpec:
        """The table a config's [sink] names."""
        sink = cfg.sink
        return TableSpec(path=sink.path, table_name=sink.table_name, table_type=sink.table_type,
                         primary_key=list(sink.primary_key or []), partition_by=list(sink.partition_by),
                         ordering_fields=[sink.ordering_field] if sink.ordering_field else [ORDER],
                         options=dict(sink.options))

    @property
    def custom_ordering(self) -> str | None:
        """[sink] ordering_field, a column that may be null; None when `_cdc_order` (never null) orders the table."""
        return None if self.ordering_fields == [ORDER] else self.ordering_fields[0]


def write_options(spec: TableSpec) -> dict[str, str]:
    opts = {
        "hoodie.table.name": spec.table_name,
        "hoodie.datasource.write.table.name": spec.table_name,
        "hoodie.datasource.write.table.type": spec.table_type,
        "hoodie.datasource.write.operation": "upsert" if spec.primary_key else "insert",
        "hoodie.datasource.write.partitionpath.field": ",".join(spec.partition_by),
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.precombine.field": ",".join(spec.ordering_fields),
        "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
        # a delete may only know the key (Debezium without a before image): find the record in any partition
        "hoodie.index.type": "GLOBAL_SIMPLE" if spec.partition_by else "SIMPLE",
        "hoodie.simple.index.update.partition.path": "true",
        # every column's statistics into the metadata table with each commit cost small batches ~9 %
        # (docs/configuration.md, Column statistics): built when [sink.options] ask, or kept by a table that has
        # them (keep_column_stats)
        COLUMN_STATS: "false",
    }
    # the DataFrame writer never compacts on its own: its writes schedule, a background thread executes (compaction)
    opts.update(compaction.write_options(compaction.compaction_mode(spec.table_type, spec.options)))
    if spec.primary_key:  # keyless json/raw topics are insert-only and Hudi generates the keys
        opts["hoodie.datasource.write.recordkey.field"] = ",".join(spec.primary_key)
        complex_key = spec.partition_by or len(spec.primary_key) > 1
        opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen." + (
            "ComplexKeyGenerator" if complex_key else "NonpartitionedKeyGenerator")
    elif not spec.partition_by:
        opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    opts.update(spec.options)  # [sink.options] win: any hoodie.* option passes through
    return opts


def keep_column_stats(spark: SparkSession, spec: TableSpec) -> TableSpec:
    """`spec` for a committed table that has Hudi's column statistics index, unless [sink.options] say otherwise: a
    write with the index off drops it from the metadata table, and its readers' data skipping with it."""
    if COLUMN_STATS in spec.options:
        return spec
    if "column_stats" not in set(_meta_client(spark, spec.path).getTableConfig().getMetadataPartitions()):
        return spec
    return replace(spec, options={**spec.options, COLUMN_STATS: "true"})


def index_of(spec: TableSpec) -> str:
    """The index a write of `spec` places keys by, as META_INDEX records it (Hudi's own default count: 256)."""
    opts = write_options(spec)
    index = opts.get("hoodie.index.type", "").upper()
    return f"{index}:{opts.get('hoodie.bucket.index.num.buckets', '256')}" if index == "BUCKET" else index


def index_change(recorded: str | None, wanted: str) -> str | None:
    """Why a table whose commits recorded `recorded` cannot be written with `wanted`; None when it can. A bucket index
    names each key's file group by its hash over a fixed count: a change into, out of or within it would split a key
    across two file groups. A table of an earlier cdcsync recorded none: its config is trusted, as it was then."""
    if recorded is None or recorded == wanted or "BUCKET" not in f"{recorded} {wanted}":
        return None
    return f"its commits were written with {recorded}"


def commit_metadata(batch_id: int, end: Offsets, replayed_from: Offsets | None,
                    ledger: dict[str, dict[str, int]], schema: str,
                    changes: list[str]) -> dict[str, Any]:
    """What a batch's commit carries: its end offsets (the resume point), or for a replay the range it re-applied
    (never a resume point); the batch id, ledger and schema; and the schema changes it applied, if any."""
    meta: dict[str, Any] = {META_OFFSETS: end.to_json()} if replayed_from is None else \
        {META_REPLAY: {"from": replayed_from.to_json(), "to": end.to_json()}}
    meta |= {META_BATCH: str(batch_id), META_LEDGER: ledger, META_SCHEMA: schema, META_VERSION: __version__}
    if changes:
        meta[META_SCHEMA_CHANGES] = changes
    return meta


def data_loss_metadata(gaps: tuple[Gap, ...]) -> dict[str, list[GapJson]]:
    """Beside commit_metadata: the offset gaps the run went past, if any (on_data_loss = "skip")."""
    return {META_DATA_LOSS: [g.to_json() for g in gaps]} if gaps else {}


# what a second attempt can cure: another writer won the commit, the lock was busy, the storage did not answer
TRANSIENT_WRITE_FAILURES = ("org.apache.hudi.exception.HoodieWriteConflictException",
                            "org.apache.hudi.exception.HoodieLockException", "java.net.SocketTimeoutException",
                            "java.net.ConnectException", "java.net.SocketException",
                            "software.amazon.awssdk.core.exception.SdkClientException",
                            "com.amazonaws.SdkClientException")


# in one JVM (a local master) Hudi's embedded timeline server only serves file-system views and markers over HTTP to
# its own process, and starts with each write: 20 batches of 5,000 took ~10 % less without it. On a cluster it spares
# every executor building those views, and stays.
SAME_JVM = {"hoodie.embed.timeline.server": "false", "hoodie.write.markers.type": "DIRECT"}


# Hudi's shuffles (its combine, the index's joins, the write) as wide as the session's own, which the operator sizes
# to the cluster's cores (docs/cluster.md, Sizing)
SHUFFLES = ("hoodie.upsert.shuffle.parallelism", "hoodie.insert.shuffle.parallelism")
# a batch's rows per task of Hudi's shuffles, up to the session's width: its RDD shuffles get no adaptive execution to
# coalesce small tasks. 25 upserts of 4,000 took ~5 % less time with one task than four; 20 of 50,000 the same
ROWS_PER_TASK = 50_000


def options_for(spec: TableSpec, spark: SparkSession, rows: int | None = None) -> dict[str, str]:
    """write_options for this session: Hudi's SHUFFLES as wide as `spark.sql.shuffle.partitions` (a task per
    ROWS_PER_TASK of a write of `rows`, when fewer), and SAME_JVM's on a local master; [sink.options] win over both."""
    width = int(cast(str, spark.conf.get("spark.sql.shuffle.partitions")))  # Spark's default: 200
    if rows is not None:
        width = max(1, min(width, -(-rows // ROWS_PER_TASK)))
    own = dict.fromkeys(SHUFFLES, str(width))
    if cast(str, spark.sparkContext.master).startswith("local"):  # a running session has its master
        own |= SAME_JVM
    return write_options(spec) | {k: v for k, v in own.items() if k not in spec.options}


# what a write names for itself: its table, the table's type, key, ordering and partition columns, their key
# generator and folder layout, and the operation (a contender's own approach: cdcsync's first load a bulk_insert)
NAMING = ("hoodie.table.name", "hoodie.datasource.write.table.name", "hoodie.datasource.write.table.type",
          "hoodie.datasource.write.operation", "hoodie.datasource.write.recordkey.field",
          "hoodie.datasource.write.precombine.field", "hoodie.datasource.write.partitionpath.field",
          "hoodie.datasource.write.hive_style_partitioning", "hoodie.datasource.write.keygenerator.class")


def tuning(spec: TableSpec, spark: SparkSession, rows: int | None = None) -> dict[str, str]:
    """How cdcsync sets Hudi for a write of `spec` (`rows` of them) in this session: options_for less the NAMING
    options, [sink.options] included. Another writer of a like table takes these to be compared with cdcsync on
    Hudi's own settings (the bench's peer and bound, bench/fair.py)."""
    return {k: v for k, v in options_for(spec, spark, rows).items() if k not in NAMING}


def write_batch(df: DataFrame, spec: TableSpec, metadata: dict[str, object], rows: int | None = None) -> str:
    """Upsert `df` (with _hoodie_is_deleted; `rows` of them, when known) as one Hudi commit carrying `metadata`;
    returns the instant."""
    writer = df.write.format("hudi").options(**options_for(spec, df.sparkSession, rows))
    for k, v in metadata.items():
        writer = writer.option(k, v if isinstance(v, str) else json.dumps(v, sort_keys=True))
    try:
        writer.mode("append").save(spec.path)
    except Exception as e:  # py4j wraps the JVM exception: name it and its root cause; the log has the rest
        raise SinkError(
            f"Hudi write to {spec.path} failed: {jvm_errors.summary(e)}",
            hint="the batch was not committed and will be re-read on restart; check the table path and the "
            "Spark log above", transient=jvm_errors.caused_by(e, *TRANSIENT_WRITE_FAILURES) is not None,
            path=spec.path,
        ) from e
    return latest_instant(df.sparkSession, spec.path) or ""


def snapshot(spark: SparkSession, path: str, columns: list[str]) -> DataFrame:
    """The table's rows as a snapshot query reads them (a MERGE_ON_READ table's logs merged), these columns only."""
    return spark.read.format("hudi").load(path).select(*[f"`{c}`" for c in columns])


def _meta_client(spark: SparkSession, path: str) -> Any:
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration())
    return jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder().setConf(conf).setBasePath(path).build()


def record_key_fields(spark: SparkSession, path: str) -> list[str]:
    """The key the table was created with ([] when there is no table or it has none)."""
    if not table_exists(spark, path):
        return []
    fields = _meta_client(spark, path).getTableConfig().getRecordKeyFields()
    return list(fields.get()) if fields.isPresent() else []


def table_exists(spark: SparkSession, path: str) -> bool:
    jvm: Any = spark._jvm  # py4j's view: set once a session exists
    p = jvm.org.apache.hadoop.fs.Path(path.rstrip("/") + "/.hoodie/hoodie.properties")
    return bool(p.getFileSystem(spark._jsc.hadoopConfiguration()).exists(p))


def latest_instant(spark: SparkSession, path: str) -> str | None:
    if not table_exists(spark, path):
        return None
    tl = _meta_client(spark, path).getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    last = tl.lastInstant()
    return last.get().requestedTime() if last.isPresent() else None


class Checkpoint(TypedDict):
    """What a batch's commit recorded (commit_metadata), read back by `last_checkpoint`."""

    instant: str
    offsets: Offsets  # the batch's end: where the next run resumes
    batch_id: int
    schema: Any  # the table's columns as JSON (schema.spark.columns.schema_from_json), None when not recorded
    ledger: Any  # the batch's ledger ({"topic/partition": counts}), None when not recorded
    ordering: str
    schemaless: bool
    servers: dict[str, list[list[int]]]
    truncated: dict[str, str]
    data_loss: tuple[Gap, ...]


def last_checkpoint(spark: SparkSession, path: str) -> Checkpoint | None:
    """The newest completed commit that carries cdcsync's offsets (compactions and clusterings carry none)."""
    for inst, md in _commits_newest_first(spark, path):
        raw = md.getMetadata(META_OFFSETS)
        if raw:
            return {
                "instant": inst.requestedTime(),
                "offsets": Offsets.from_json(raw),
                "batch_id": int(md.getMetadata(META_BATCH) or 0),
                "schema": json.loads(md.getMetadata(META_SCHEMA) or "null"),
                "ledger": json.loads(md.getMetadata(META_LEDGER) or "null"),
                "ordering": md.getMetadata(META_ORDERING) or ORDERING_LEGACY,
                "schemaless": md.getMetadata(META_TYPED_FROM) != "schema",  # absent before: try the known columns
                "servers": json.loads(md.getMetadata(META_SERVERS) or "{}"),
                "truncated": json.loads(md.getMetadata(META_TRUNCATED) or "{}"),
                "data_loss": tuple(Gap.from_json(g) for g in json.loads(md.getMetadata(META_DATA_LOSS) or "[]")),
            }
    return None


def recorded_index(spark: SparkSession, path: str) -> str | None:
    """The index the newest commit that recorded one was written with (replays' commits too; compactions carry
    none); None when no commit did (a table of an earlier cdcsync, or none yet)."""
    return next((index for _, md in _commits_newest_first(spark, path) if (index := md.getMetadata(META_INDEX))),
                None)


def _commits_newest_first(spark: SparkSession, path: str) -> Iterator[tuple[Any, Any]]:
    """(instant, commit metadata) of the table's completed commits, newest first; none when there is no table."""
    if not table_exists(spark, path):
        return
    tl = _meta_client(spark, path).getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    it = tl.getReverseOrderedInstants().iterator()
    while it.hasNext():
        inst = it.next()
        yield inst, tl.readCommitMetadata(inst)


def pending_compactions(spark: SparkSession, path: str) -> list[str]:
    """The instants of the compaction plans requested or inflight on the table at `path`."""
    if not table_exists(spark, path):
        return []
    pending = _meta_client(spark, path).getActiveTimeline().filterPendingCompactionTimeline().getInstants()
    return [pending.get(i).requestedTime() for i in range(pending.size())]


def complete_pending_compactions(spark: SparkSession, path: str) -> list[str]:
    """Run the compactions a killed writer left requested or inflight (inline compaction only runs on a write, so
    a run with nothing to read would leave them pending); returns their instants."""
    instants = pending_compactions(spark, path)
    if instants:
        spark.sql(f"CALL run_compaction(op => 'run', path => '{path}')").collect()
    return instants
