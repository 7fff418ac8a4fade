"""The peer: the short PySpark job a user would write instead of cdcsync, run on the same topic, Spark settings and
jars. Spark's Kafka source, `from_json` with a declared schema, Hudi's own streaming sink (`writeStream.format
("hudi")`) with `trigger(availableNow=True)`, upsert on the key, ordering on `ts_ms`, `_hoodie_is_deleted` for
deletes; Hudi's defaults otherwise, or the write options given (`--options`, JSON: the bench gives the peer
"tuned" cdcsync's own, bench/fair.py, and every peer the bench's --sink-option).

    python -m bench.peer BOOTSTRAP TOPIC TABLE_PATH MERGE_ON_READ|COPY_ON_WRITE [--max-offsets N] [--options JSON]
                         [--spark-conf JSON]
    python -m bench.peer BOOTSTRAP TOPIC TABLE_PATH MERGE_ON_READ --processing-time 1s   (until SIGTERM: freshness)

With --processing-time the job is a long-running service, and its session is set as `cdcsync run`'s service is
(cdcsync.runtime.session.service_conf: the driver's heap reserved and touched at start), so that the freshness run
gives both jobs the same JVM flags. --spark-conf: more Spark settings for the session (an experiment's, which
cdcsync's [spark] gets too: bench.cron --spark).
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time

from bench.floor import ENVELOPE


def main(bootstrap: str, topic: str, path: str, table_type: str, max_offsets: str = "", options: str = "",
         processing_time: str = "", spark_conf: str = "") -> dict:
    """`options`: more hoodie.* write options (JSON), over the peer's own; `processing_time`: a trigger interval
    instead of availableNow, the job running until SIGTERM as a service (the freshness run); `spark_conf`: more
    Spark settings (JSON)."""
    from pyspark.sql import functions as F

    from cdcsync.runtime.session import build_session, service_conf

    t0 = time.monotonic()
    conf = json.loads(spark_conf or "{}")
    if processing_time:  # the service's rule over the given settings, as `cdcsync run` applies it over [spark]
        conf = service_conf(conf)
    spark = build_session(f"bench-peer-{table_type.lower()}", "local[2]", conf or None)
    reader = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest"))
    if max_offsets:
        reader = reader.option("maxOffsetsPerTrigger", max_offsets)
    e = F.from_json(F.col("value").cast("string"), ENVELOPE).alias("e")
    image = F.coalesce("e.after", "e.before")
    rows = reader.load().select(e).select(
        image["id"].alias("id"), F.col("e.after.name").alias("name"), F.col("e.after.segment").alias("segment"),
        F.col("e.after.balance_cents").alias("balance_cents"), F.col("e.after.updated_at").alias("updated_at"),
        F.col("e.ts_ms").alias("ts_ms"), (F.col("e.op") == "d").alias("_hoodie_is_deleted"))
    query = (rows.writeStream.format("hudi")
             .option("hoodie.table.name", "peer")
             .option("hoodie.datasource.write.table.type", table_type)
             .option("hoodie.datasource.write.operation", "upsert")
             .option("hoodie.datasource.write.recordkey.field", "id")
             .option("hoodie.datasource.write.precombine.field", "ts_ms")
             .option("hoodie.datasource.write.partitionpath.field", "")
             .option("checkpointLocation", f"{path}_checkpoint")
             .options(**json.loads(options or "{}"))
             .outputMode("append"))
    if processing_time:
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())  # sent once the job caught up: no batch in flight
        query = query.trigger(processingTime=processing_time).start(path)
        while not query.awaitTermination(1) and not stop.is_set():
            pass
        query.stop()
    else:
        query = query.trigger(availableNow=True).start(path)
        query.awaitTermination()
    batches = len(query.recentProgress)
    consumed = sum(p["numInputRows"] for p in query.recentProgress)
    spark.stop()
    return {"messages": consumed, "batches": batches, "seconds": round(time.monotonic() - t0, 2)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="bench.peer")
    for name in ("bootstrap", "topic", "path", "table_type"):
        ap.add_argument(name)
    ap.add_argument("--max-offsets", default="", help="maxOffsetsPerTrigger: batches of at most N messages")
    ap.add_argument("--options", default="", help="more Hudi write options, a JSON object")
    ap.add_argument("--processing-time", default="")
    ap.add_argument("--spark-conf", default="", help="more Spark settings for the session, a JSON object")
    print(json.dumps(main(**vars(ap.parse_args()))))
