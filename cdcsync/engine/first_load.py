"""A batch into a table with no commit yet is written with Hudi's bulk_insert: no index to look up and nothing to
merge with. Its changes are settled in Spark first, as an upsert into the empty table would settle them: each key
keeps its newest change by the table's ordering, and a key whose newest change is a delete gets no row."""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from cdcsync.sinks import hudi

BULK_INSERT = {"hoodie.datasource.write.operation": "bulk_insert"}


def settle(rows: DataFrame, spec: hudi.TableSpec) -> tuple[DataFrame, hudi.TableSpec]:
    """(the rows to bulk-insert, the spec that writes them so); a keyless table is insert-only already, and a
    [sink.options] operation wins. Rows without every key column (no row image showed one: each was bad) stay an
    upsert, which is empty."""
    if not spec.primary_key or not set(spec.primary_key) <= set(rows.columns):
        return rows, spec
    newest = Window.partitionBy(*[F.col(f"`{k}`") for k in spec.primary_key]).orderBy(
        F.col(f"`{spec.ordering_fields[0]}`").desc_nulls_last())
    kept = (rows.withColumn("_newest", F.row_number().over(newest))
            .where((F.col("_newest") == 1) & ~F.col(hudi.DELETED)).drop("_newest"))
    return kept, replace(spec, options={**BULK_INSERT, **spec.options})
