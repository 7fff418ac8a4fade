"""[sink] deletes: what a delete leaves behind, so that an older change to its key read in a later batch (a late
event, a replay of an applied range that ends before the delete) never brings the row back.

- soft: the row stays, flagged `_cdc_deleted = true`, with the delete's row image; Hudi's ordering merge then keeps
  it against every older change, as it keeps any newer row.
- hard: the row goes, and a delete marker (the key and the delete's ordering value) is appended to a folder of
  Parquet files beside the target, `<path>_cdcsync_delete_markers`, before the target's commit. Upserts whose key
  has a marker at least as new are dropped from the batch (the ledger still counts them upserted: the merge would
  have dropped them). A marker is a fact about the source's log, so a copy written twice (a crash between the two
  writes, then the batch again) or an older marker beside a newer one for the same key changes no answer: the
  folder needs no commit protocol of its own. Markers already there are not written again, and past
  CONSOLIDATE_AT files the smaller ones are rewritten as one holding each key's newest marker, sorted by order.
  A marker covers only changes no newer than itself, so a batch reads only the markers at least as new as its oldest
  change: Parquet's row-group statistics skip the rest, and with changes ordered by log position a run's batches
  read the newest markers only, however many deletes lie behind them.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DateType,
    FractionalType,
    IntegralType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from cdcsync import columns as C
from cdcsync.model.batch import TableState
from cdcsync.sinks import hudi
from cdcsync.stages import newest

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import SparkSession
    from pyspark.sql.types import DataType

SOFT = C.SOFT_DELETED  # soft deletes: the flag readers filter on
SUFFIX = "_cdcsync_delete_markers"  # beside the target, as the checkpoint and dead-letter folders are
LEGACY_SUFFIX = "_cdcsync_deletes"  # earlier versions kept the markers in a Hudi table: moved over on first use
KEY = C.MARKER_KEY  # the marker's key: JSON of the key columns, so a widened key type still matches
CONSOLIDATE_AT = 32  # marker files; each batch with new deletes adds one
# bytes of markers past which Spark no longer broadcasts them but shuffles them all into a sort-merge join, and
# reading only those at least as new as the batch's oldest change pays for the job finding it (~0.2 s)
PRUNE_FROM = 10 << 20
ROW_GROUP = 1 << 20  # bytes in memory of a consolidated file's row group (~10,000 markers): the least a batch reads
# a marker file is whole once it appears (one task writes it) and a copy changes no answer, so Hadoop's v2 commit
# moves it once instead of twice, and no _SUCCESS file is made: ~35 % less time per write, the move a copy on S3
_WRITE = {"mapreduce.fileoutputcommitter.algorithm.version": "2",
          "mapreduce.fileoutputcommitter.marksuccessfuljobs": "false"}


def markers_path(path: str) -> str:
    return path.rstrip("/") + SUFFIX


def settle(rows: DataFrame, state: TableState, mode: str, counts: dict[str, dict[str, int]],
           new_range: bool = False) -> DataFrame:
    """The rows to commit to `state`'s table under deletes = `mode` (hard: the batch's markers are written first);
    `counts`: the batch's ledger, which says whether it holds deletes and upserts; `new_range`: the batch's range
    was never applied (a run's next batch), so its markers are written without looking for them first (only a crash
    before its commit leaves copies, which change no answer)."""
    spec = state.spec
    if mode == "soft":
        return rows.withColumns({SOFT: F.col(hudi.DELETED), hudi.DELETED: F.lit(False)})
    if not spec.primary_key:  # insert-only tables get no deletes
        return rows
    name = spec.ordering_fields[0]
    order = F.col(f"`{name}`")
    store = _Store(rows.sparkSession, spec.path, name, rows.schema[name].dataType)
    if not state.committed:
        store.remove()  # the target has no commit: markers found belong to an earlier table at its path
    elif _widened(state, name, store.order_type):
        store.retype()
    key = F.to_json(F.struct(*[F.col(f"`{k}`") for k in spec.primary_key]))
    deleted, upserted = (sum(c[k] for c in counts.values()) for k in ("deleted", "upserted"))
    if not (deleted or upserted):  # nothing to mark or to look up: no job to find the oldest change
        return rows
    since = functools.cache(lambda: _oldest(rows, name))
    known = None if deleted and new_range else store.read(since=since)  # a run's batch appends first, then reads
    covered = (key == F.col(C.MARKED_KEY)) & (F.col(C.MARKED_ORDER) >= order)  # a marker at least as new as the row
    if deleted:  # every delete has its ordering value here (newest.place_valueless)
        new = rows.where(F.col(hudi.DELETED))
        if new_range or known is None:
            files = store.append(new.select(key.alias(KEY), order.alias(hudi.ORDER)))
            known = store.read(files, since) if upserted else None
        else:
            known = _append_unknown(store, new.join(known, covered, "left_anti"), key, order, since) or known
    # a first load's markers are its own (the folder was emptied above), and keeping each key's newest change by
    # `_cdc_order`, which no two changes share, already drops every upsert they cover
    if not upserted or known is None or (newest.first_load(spec, state.committed) and spec.custom_ordering is None):
        return rows
    return rows.join(known, covered & ~F.col(hudi.DELETED), "left_anti")


def _oldest(rows: DataFrame, name: str) -> Column | None:
    """The oldest ordering value of `rows` as a literal: no marker older than it covers any of them. None when they
    have none, or when its type does not pass exactly through Python (a timestamp goes as microseconds: a datetime
    would pass through a time zone). Found in one task over the cached batch, which for a batch of 7,500 took
    ~0.15 s against ~0.2 s with a shuffle."""
    col, kind = F.col(f"`{name}`"), rows.schema[name].dataType
    stamp = isinstance(kind, TimestampType)
    if not (stamp or isinstance(kind, (StringType, IntegralType, FractionalType, DateType))):  # DECIMAL: fractional
        return None
    row = rows.coalesce(1).agg(F.min(F.unix_micros(col) if stamp else col)).first()
    assert row is not None  # an aggregate without grouping has exactly one row
    value = row[0]
    if value is None:
        return None
    return F.timestamp_micros(F.lit(value)) if stamp else F.lit(value).cast(kind)


def to_merge(files: dict[str, int]) -> dict[str, int]:
    """Of a folder's files (path: bytes), those a consolidation rewrites as one: all but the largest ones that each
    outweigh every smaller file together (at least the two smallest). A marker is then rewritten about log2(folder /
    batch) times over its life, not with every CONSOLIDATE_AT batches; a key keeps at most one marker per such file."""
    by_size = sorted(files.items(), key=lambda f: -f[1])
    smaller, kept = sum(files.values()), 0
    for _, size in by_size[:-2]:
        smaller -= size
        if size <= smaller:
            break
        kept += 1
    return dict(by_size[kept:])


def _widened(state: TableState, name: str, now: DataType) -> bool:
    """Has the ordering column `name` a wider type (`now`) in this batch than in the table's last commit?"""
    was = next((c.type for c in state.columns if c.name == name), None)
    return was is not None and was.lower() != now.simpleString()


def _append_unknown(store: _Store, new: DataFrame, key: Column, order: Column,
                    since: Callable[[], Column | None]) -> DataFrame | None:
    """A replay's markers that the folder lacks, appended (replays find theirs written: nothing to add); the
    folder's markers after it, or None when nothing was added."""
    new = new.select(key.alias(KEY), order.alias(hudi.ORDER)).persist()  # the look and the write: one anti-join
    try:
        return None if new.isEmpty() else store.read(store.append(new), since)
    finally:
        new.unpersist()


class _Store:
    """The marker folder of the table at `path`: Parquet files of (KEY, ORDER), the order typed as the table's
    ordering column `order_name`."""

    def __init__(self, spark: SparkSession, path: str, order_name: str, order_type: DataType) -> None:
        self.spark, self.order_name, self.order_type = spark, order_name, order_type
        self.dir = markers_path(path)
        self.legacy = path.rstrip("/") + LEGACY_SUFFIX
        jvm: Any = spark._jvm  # py4j's view: set once a session exists
        self._path = jvm.org.apache.hadoop.fs.Path
        self._fs = self._path(self.dir).getFileSystem(spark._jsc.hadoopConfiguration())
        if hudi.table_exists(spark, self.legacy):
            self._move_legacy()

    def files(self) -> dict[str, int]:
        """The folder's data files and their sizes (Spark's `_temporary` and `_SUCCESS`, and a crashed write's
        leftovers, are not)."""
        folder = self._path(self.dir)
        if not self._fs.exists(folder):
            return {}
        return dict(sorted((s.getPath().toString(), s.getLen()) for s in self._fs.listStatus(folder)
                           if s.isFile() and s.getPath().getName().endswith(".parquet")
                           and not s.getPath().getName().startswith(("_", "."))))

    def read(self, files: dict[str, int] | None = None,
             since: Callable[[], Column | None] | None = None) -> DataFrame | None:
        """The markers in `files` (None: the folder's); with `since`, a function giving the oldest order its reader
        compares them with, only those at least as new once the folder is large enough to be worth skipping."""
        files = self.files() if files is None else files
        if not files:
            return None
        schema = StructType([StructField(KEY, StringType()), StructField(hudi.ORDER, self.order_type)])
        markers = self.spark.read.schema(schema).parquet(*files).select(
            F.col(KEY).alias(C.MARKED_KEY), F.col(hudi.ORDER).alias(C.MARKED_ORDER))
        oldest = since() if since is not None and sum(files.values()) >= PRUNE_FROM else None
        return markers if oldest is None else markers.where(F.col(C.MARKED_ORDER) >= oldest)

    def append(self, markers: DataFrame) -> dict[str, int]:
        """`markers` (KEY, ORDER) as one more file; past CONSOLIDATE_AT files, the smaller ones rewritten as one
        (to_merge). Returns the folder's files after it."""
        self._write(markers)
        old = self.files()
        if len(old) <= CONSOLIDATE_AT:
            return old
        merged = to_merge(old)
        consolidated = self.read(merged)
        assert consolidated is not None  # to_merge keeps at least two files
        newest = (consolidated.groupBy(C.MARKED_KEY).agg(F.max(C.MARKED_ORDER).alias(C.MARKED_ORDER))
                  .select(F.col(C.MARKED_KEY).alias(KEY), F.col(C.MARKED_ORDER).alias(hudi.ORDER)))
        self._replace(merged, newest)
        return self.files()

    def retype(self) -> None:
        """The folder's files rewritten as one with the order in `order_type`, the ordering column having widened
        since some were written; each file is read with its own type (a crash mid-way leaves files of both)."""
        files = self.files()
        parts = [self.spark.read.parquet(f) for f in files]
        if all(p.schema[hudi.ORDER].dataType == self.order_type for p in parts):
            return
        typed = [p.select(KEY, F.col(hudi.ORDER).cast(self.order_type)) for p in parts]
        self._replace(files, functools.reduce(DataFrame.unionByName, typed))

    def _replace(self, files: dict[str, int], markers: DataFrame) -> None:
        """`files` replaced by one file holding `markers`, sorted by order in small row groups for readers to skip."""
        self._write(markers, ordered=True)
        for f in files:  # a reader between the two steps sees each marker twice, which answers the same
            self._fs.delete(self._path(f), False)

    def _write(self, markers: DataFrame, ordered: bool = False) -> None:
        one = markers.coalesce(1)  # sorted after coalescing: sorting first would leave one sorted run per task
        if ordered:
            one = one.sortWithinPartitions(hudi.ORDER)
        options = _WRITE | ({"parquet.block.size": str(ROW_GROUP)} if ordered else {})
        one.write.options(**options).mode("append").parquet(self.dir)

    def remove(self) -> None:
        for folder in (self.dir, self.legacy):
            self._fs.delete(self._path(folder), True)

    def _move_legacy(self) -> None:
        """An earlier version's marker table (Hudi, COPY_ON_WRITE), copied into the folder, then deleted."""
        old = self.spark.read.format("hudi").load(self.legacy).select(
            KEY, F.col(f"`{self.order_name}`").cast(self.order_type).alias(hudi.ORDER))
        if not old.isEmpty():
            self._write(old)
        self._fs.delete(self._path(self.legacy), True)
