"""The floor: Spark alone reads the topic, parses each Debezium value with from_json and appends plain Parquet.
No keys, no merge, no deletes: what any upsert pipeline on the same Spark pays at least.

    python -m bench.floor BOOTSTRAP TOPIC OUT_DIR
"""

from __future__ import annotations

import json
import sys
import time

ROW = "id: BIGINT, name: STRING, segment: STRING, balance_cents: BIGINT, updated_at: BIGINT"
ENVELOPE = f"before STRUCT<{ROW}>, after STRUCT<{ROW}>, op STRING, ts_ms BIGINT"


def main(bootstrap: str, topic: str, out: str, master: str = "local[2]") -> dict:
    from pyspark.sql import functions as F

    from cdcsync.runtime.session import build_session

    t0 = time.monotonic()
    spark = build_session("bench-parquet-floor", master)
    df = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
          .option("startingOffsets", "earliest").option("endingOffsets", "latest").load())
    env = F.from_json(F.col("value").cast("string"), ENVELOPE)
    rows = df.select(env.alias("e"), "partition", "offset").select(
        F.coalesce("e.after.id", "e.before.id").alias("id"), "e.after.name", "e.after.segment",
        "e.after.balance_cents", "e.after.updated_at", "e.op", "partition", "offset")
    rows.write.mode("append").parquet(out)
    n = spark.read.parquet(out).count()
    spark.stop()
    return {"rows": n, "seconds": round(time.monotonic() - t0, 2)}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
