"""The toolchain end to end: real broker → Spark's Kafka source → Hudi COW and MOR → Spark and hudi-rs read back."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.integration

ROWS = [{"id": i, "name": f"name-{i}", "amount": i * 1.25} for i in range(12)]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_kafka_to_hudi_read_back_by_spark_and_hudi_rs(spark, bootstrap, make_topic, produce, tmp_path, table_type):
    from hudi import HudiTableBuilder
    from pyspark.sql import functions as F

    topic = make_topic(partitions=2)
    # Rows land on either partition, so offsets alone do not order them: the update is stamped a second later.
    base_ms = int(time.time() * 1000)
    produce(topic, ROWS, timestamps_ms=[base_ms] * len(ROWS))
    # An update to id 3 in a later message: the upsert must keep only the newer image.
    produce(topic, [{"id": 3, "name": "name-3-updated", "amount": 99.5}], partition=0, timestamps_ms=[base_ms + 1000])

    raw = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
           .option("subscribe", topic).option("startingOffsets", "earliest").load())
    assert raw.count() == 13
    rows = raw.select(
        F.from_json(F.col("value").cast("string"), "id BIGINT, name STRING, amount DOUBLE").alias("r"),
        (F.col("timestamp").cast("long") * 1000000 + F.col("offset")).alias("_order"),
    ).select("r.*", "_order")
    path = str(tmp_path / "t")
    (rows.write.format("hudi")
     .option("hoodie.table.name", "smoke")
     .option("hoodie.datasource.write.recordkey.field", "id")
     .option("hoodie.datasource.write.precombine.field", "_order")
     .option("hoodie.datasource.write.table.type", table_type)
     .option("hoodie.datasource.write.operation", "upsert")
     .option("hoodie.datasource.write.keygenerator.class", "org.apache.hudi.keygen.NonpartitionedKeyGenerator")
     .mode("append").save(path))

    expected = {r["id"]: (r["name"], r["amount"]) for r in ROWS}
    expected[3] = ("name-3-updated", 99.5)

    by_spark = {r["id"]: (r["name"], r["amount"]) for r in spark.read.format("hudi").load(path).collect()}
    assert by_spark == expected

    table = HudiTableBuilder.from_base_uri(path).build()
    assert table.table_type == table_type
    import pyarrow as pa

    arrow = pa.Table.from_batches(table.read())
    by_rs = {i: (n, a) for i, n, a in zip(arrow["id"].to_pylist(), arrow["name"].to_pylist(),
                                           arrow["amount"].to_pylist(), strict=True)}
    assert by_rs == expected
