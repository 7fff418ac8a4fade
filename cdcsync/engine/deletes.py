"""[sink] deletes: what a delete leaves behind, so that an older change to its key read in a later batch (a late
event, a replay of an applied range that ends before the delete) never brings the row back.

- soft: the row stays, flagged `_cdc_deleted = true`, with the delete's row image; Hudi's ordering merge then keeps
  it against every older change, as it keeps any newer row.
- hard: the row goes, and a delete marker (the key and the delete's ordering value) is upserted into a small Hudi
  table beside the target, `<path>_cdcsync_deletes`, before the target's commit. Upserts whose key has a marker at
  least as new are dropped from the batch (the ledger still counts them upserted: the merge would have dropped
  them). The marker table keeps each key's newest delete, so markers only ever grow newer: writing them again after
  a crash between the two commits changes nothing, and markers already there are not written again.
"""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync.sinks import hudi

SOFT = "_cdc_deleted"  # soft deletes: the flag readers filter on
SUFFIX = "_cdcsync_deletes"  # the marker table: beside the target, as the checkpoint and dead-letter folders are
KEY = "_cdc_key"  # the marker's key: JSON of the key columns, so a widened key type still matches


def markers_path(path: str) -> str:
    return path.rstrip("/") + SUFFIX


def settle(rows: DataFrame, spec: hudi.TableSpec, mode: str, counts: dict) -> DataFrame:
    """The rows to commit to `spec`'s table under deletes = `mode` (hard: the batch's markers are written first);
    `counts`: the batch's ledger, which says whether it holds deletes and upserts."""
    if mode == "soft":
        return rows.withColumns({SOFT: F.col(hudi.DELETED), hudi.DELETED: F.lit(False)})
    if not spec.primary_key:  # insert-only tables get no deletes
        return rows
    spark = rows.sparkSession
    marks = _marker_spec(spec)
    exists = hudi.table_exists(spark, marks.path)
    if exists and hudi.latest_instant(spark, spec.path) is None:
        _remove(spark, marks.path)  # the target has no commit: these markers belong to an earlier table at its path
        exists = False
    order = F.col(f"`{spec.ordering_fields[0]}`")
    key = F.to_json(F.struct(*[F.col(f"`{k}`") for k in spec.primary_key]))
    deleted, upserted = (sum(c[k] for c in counts.values()) for k in ("deleted", "upserted"))
    known = _markers(spark, marks.path, order) if exists else None
    covered = (key == F.col("_m_key")) & (F.col("_m_order") >= order)  # a marker at least as new as the row
    if deleted:  # a delete without an ordering value (a key-only image and a custom ordering_field) marks nothing
        new = rows.where(F.col(hudi.DELETED) & order.isNotNull())
        new = (new if known is None else new.join(known, covered, "left_anti")).select(key.alias(KEY), order)
        if not new.isEmpty():  # replays and re-reads find their markers written: no commit for them
            hudi.write_batch(new, marks, {})
            known = _markers(spark, marks.path, order)
    if not upserted or known is None:
        return rows
    return rows.join(known, covered & ~F.col(hudi.DELETED), "left_anti")


def _markers(spark, path: str, order):
    return spark.read.format("hudi").load(path).select(F.col(KEY).alias("_m_key"), order.alias("_m_order"))


def _marker_spec(spec: hudi.TableSpec) -> hudi.TableSpec:
    # a small one-folder table read whole: Hudi's metadata table would cost more than listing it
    return replace(spec, path=markers_path(spec.path), table_name=spec.table_name + SUFFIX,
                   table_type="COPY_ON_WRITE", primary_key=[KEY], partition_by=[],
                   options={**spec.options, "hoodie.metadata.enable": "false"})


def _remove(spark, path: str) -> None:
    jvm = spark._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    p.getFileSystem(spark._jsc.hadoopConfiguration()).delete(p, True)
