"""Each key's newest change in a batch, chosen in Spark before Hudi sees it, as an upsert would choose it: by the
table's ordering field, then by log position (`_cdc_order`), so a custom ordering field's ties go the same way on
every run.

- Into a table with no commit yet, the batch is a bulk_insert: no index to look up and nothing to merge with, and a
  key whose newest change is a delete gets no row. A partitioned one is first shuffled by partition path, so that
  each path is written by one task into one file (Hudi's default has every task open a file in every path it meets).
- Into a committed table, an upsert. Hudi settles its keys itself (its combine: a reduceByKey over Avro records,
  each size sample of which Spark's SizeEstimator takes by walking the records' objects), which grows costly with
  the batch; from SPARK_FROM changes, and whenever a custom ordering field can tie (Hudi keeps either of two
  changes with equal values), the window in Spark settles them and Hudi's combine is turned off.
"""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.sinks import hudi

BULK_INSERT = {"hoodie.datasource.write.operation": "bulk_insert"}
# a 1M-change first load into 30 day partitions wrote 30 files instead of 120, its write stage 3.1 s of task CPU
# instead of 5.7 s (bench/HISTORY.md); the cost is one task per path: a skewed path is one large task
BY_PATH = {"hoodie.bulkinsert.sort.mode": "PARTITION_PATH_REPARTITION_AND_SORT"}
SETTLED = {"hoodie.combine.before.upsert": "false"}  # every key arrives once: Hudi need not combine again
# changes in a batch from which the window beats Hudi's combine: an upsert of 50,000 and of 250,000 changes was
# 5-15 % faster; one of 5,000 3-7 % slower (the window's extra stage and plan)
SPARK_FROM = 20_000


def settle(rows: DataFrame, spec: hudi.TableSpec, committed: bool, changes: int) -> tuple[DataFrame, hudi.TableSpec]:
    """(the rows to write, the spec that writes them so) into a table that has (`committed`) or has no commit yet;
    `changes`: how many upserts and deletes the batch holds. Keyless tables are insert-only and a [sink.options]
    operation other than upsert wins: their rows are written as they are, and so are rows without every key column
    (no row image showed one: each was bad)."""
    operation = hudi.write_options(spec)["hoodie.datasource.write.operation"]
    if operation != "upsert" or not set(spec.primary_key) <= set(rows.columns):
        return rows, spec
    if not first_load(spec, committed):  # a configured upsert stays one
        if changes < SPARK_FROM and spec.custom_ordering is None:  # no ties: Hudi's combine is as good
            return rows, spec
        return _newest(rows, spec), replace(spec, options={**SETTLED, **spec.options})
    kept = _newest(rows, spec).where(~F.col(hudi.DELETED))
    return kept, replace(spec, options={**BULK_INSERT, **(BY_PATH if spec.partition_by else {}), **spec.options})


def first_load(spec: hudi.TableSpec, committed: bool) -> bool:
    """Is a batch into this table a bulk_insert of each key's newest change (no commit yet, no configured operation)?"""
    return not committed and "hoodie.datasource.write.operation" not in spec.options and \
        hudi.write_options(spec)["hoodie.datasource.write.operation"] == "upsert"


def place_valueless(rows: DataFrame, spec: hudi.TableSpec, committed: bool) -> DataFrame:
    """`rows` with each delete that lacks `spec`'s custom ordering field's value placed where the source's log has
    it: as new as the newest version of its key before it — in the batch (by `_cdc_order`), and in the table when
    the table's row is older in the log than the delete (a replayed delete must not remove a later re-insert). It
    then removes that version, and loses to a later change only by the field's rule. A delete with no version before
    it removes nothing and is left out (the ledger still counts it deleted)."""
    field = spec.custom_ordering
    if field is None:  # `_cdc_order` orders the table, and no change lacks it
        return rows
    value = F.col(f"`{field}`")
    valueless = F.col(hudi.DELETED) & value.isNull()
    if rows.where(valueless).isEmpty():
        return rows
    columns, kind = rows.columns, rows.schema[field].dataType
    key = [f"`{k}`" for k in spec.primary_key]
    before = Window.partitionBy(*key).orderBy(hudi.ORDER).rowsBetween(Window.unboundedPreceding, -1)
    placed = F.max(value).over(before)
    if committed:  # only the keys of the batch's valueless deletes: a broadcast beside every row of the batch
        held = (hudi.snapshot(rows.sparkSession, spec.path, [*spec.primary_key, field, hudi.ORDER])
                .withColumnsRenamed({field: C.HELD, hudi.ORDER: C.HELD_AT})
                .join(rows.where(valueless).select(*key).distinct(), spec.primary_key, "left_semi"))
        # read in a job of its own: planned inside the write's broadcast, Hudi's data skipping (un)persists a
        # Dataset under the cache lock the write holds while it builds the persisted batch, and both wait forever
        rows = rows.join(F.broadcast(held.localCheckpoint()), spec.primary_key, "left")
        placed = F.greatest(placed, F.when(F.col(C.HELD_AT) < F.col(hudi.ORDER), F.col(C.HELD)))
    rows = rows.withColumn(field, F.when(valueless, placed.cast(kind)).otherwise(value))
    return rows.where(~valueless).select(*[f"`{c}`" for c in columns])  # the join put the key first


def _newest(rows: DataFrame, spec: hudi.TableSpec) -> DataFrame:
    order = [F.col(f"`{f}`").desc() for f in dict.fromkeys([*spec.ordering_fields, hudi.ORDER]) if f in rows.columns]
    newest = Window.partitionBy(*[F.col(f"`{k}`") for k in spec.primary_key]).orderBy(*order)
    return rows.withColumn(C.NEWEST, F.row_number().over(newest)).where(F.col(C.NEWEST) == 1).drop(C.NEWEST)
