"""The bound: the least work that lands the topic in a correct Hudi table on the same Spark and jars, so that the
bench can tell Hudi's own cost from what cdcsync adds. The topic read once, each value parsed with `from_json` and a
declared schema, each key's newest change kept by one aggregation (`max` over a struct), the keys whose newest
change is a delete dropped, and the rest bulk-inserted into an empty table (the workload's keys, Hudi's defaults
otherwise, or the write options given: the bench gives it cdcsync's own, bench/fair.py, and its --sink-option). No
ledger, no offsets in the commit, no delete markers, no column inference, no bad-record handling: a lower bound for
a first load, not a tool.

    python -m bench.bound BOOTSTRAP TOPIC TABLE_PATH MERGE_ON_READ|COPY_ON_WRITE [OPTIONS_JSON]
"""

from __future__ import annotations

import json
import sys
import time

from bench.floor import ENVELOPE


def main(bootstrap: str, topic: str, path: str, table_type: str, options: str = "") -> dict:
    """`options`: more Hudi write options (a JSON object), over the bound's own."""
    from pyspark.sql import functions as F

    from cdcsync.runtime.session import build_session

    t0 = time.monotonic()
    spark = build_session(f"bench-bound-{table_type.lower()}", "local[2]")
    read = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            .option("startingOffsets", "earliest").option("endingOffsets", "latest").load())
    e = F.from_json(F.col("value").cast("string"), ENVELOPE)
    # a key stays in one partition and its event times increase strictly (bench/workload.py): the log position
    # after ts_ms only breaks ties a real topic might hold
    change = read.select(e.alias("e"), "partition", "offset").select(
        F.coalesce("e.after.id", "e.before.id").alias("id"),
        F.struct(F.col("e.ts_ms").alias("ts_ms"), "partition", "offset", (F.col("e.op") == "d").alias("deleted"),
                 "e.after.name", "e.after.segment", "e.after.balance_cents", "e.after.updated_at").alias("c"))
    newest = (change.groupBy("id").agg(F.max("c").alias("c")).where(~F.col("c.deleted"))
              .select("id", "c.name", "c.segment", "c.balance_cents", "c.updated_at", "c.ts_ms"))
    (newest.write.format("hudi")
     .option("hoodie.table.name", "bound")
     .option("hoodie.datasource.write.table.type", table_type)
     .option("hoodie.datasource.write.operation", "bulk_insert")
     .option("hoodie.datasource.write.recordkey.field", "id")
     .option("hoodie.datasource.write.precombine.field", "ts_ms")
     .option("hoodie.datasource.write.partitionpath.field", "")
     .option("hoodie.datasource.write.keygenerator.class", "org.apache.hudi.keygen.NonpartitionedKeyGenerator")
     .options(**json.loads(options or "{}"))
     .mode("append").save(path))
    spark.stop()  # the messages read are the topic's, from earliest to latest: the bench knows how many it produced
    return {"seconds": round(time.monotonic() - t0, 2)}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
