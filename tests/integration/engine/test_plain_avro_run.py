"""Issue 16: plain Avro (`format = "avro"`, the writer schema in an .avsc file, no registry) whose values lack the
key column, taken from the Kafka key with `key_fields` — an Avro key (`key_format = "avro"`) or a JSON one — lands
exact MOR and COW tables (Spark and hudi-rs) with its logical types; a body that does not decode is dead-lettered;
infer-schema reads the same topic without a JVM."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from cdcsync.formats import vocabulary as v
from tests import cli
from tests.fixtures.avro_cases import KEY, avro
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

ORDER = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "customer", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
    {"name": "placed_at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "note", "type": ["null", "string"], "default": None}]}


def order(i: int, amount: str, note: str | None = None) -> dict:
    return {"customer": f"c{i}", "amount": Decimal(amount),
            "placed_at": dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.UTC) + dt.timedelta(hours=i),
            "day": dt.date(2024, 5, 6) + dt.timedelta(days=i), "note": note}


def as_table(i: int, r: dict) -> dict:
    return {"id": i, **r, "placed_at": r["placed_at"].replace(tzinfo=None)}


@pytest.mark.parametrize("key_format, table_type", [("avro", "MERGE_ON_READ"), ("json", "COPY_ON_WRITE")])
def test_plain_avro_rows_take_their_key_column_from_the_kafka_key(key_format, table_type, spark, bootstrap,
                                                                  make_topic, produce, tmp_path):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "order.avsc").write_text(json.dumps(ORDER))
    (tmp_path / "schemas" / "key.avsc").write_text(json.dumps(KEY))
    topic = make_topic()
    changes = [(1, order(1, "12.34")), (2, order(2, "0.50", "gift")), (3, order(3, "99.99")),
               (1, order(1, "13.00", "changed"))]
    values = [avro(r, ORDER) for _, r in changes] + [avro(order(4, "1.00"), ORDER)[:7], None]
    ids = [i for i, _ in changes] + [4, 2]
    keys = [avro({"id": i}, KEY) if key_format == "avro" else json.dumps({"id": i}).encode() for i in ids]
    produce(topic, values, keys=keys, partition=0)
    extra = {"source.avro_schema_file": "schemas/order.avsc", "source.key_fields": ["id"],
             "run.on_bad_record": "dead-letter"}  # no sink.primary_key: the key fields are the key
    if key_format == "avro":
        extra |= {"source.key_format": "avro", "source.key_avro_schema_file": "schemas/key.avsc"}
    cfg = write_config(tmp_path, bootstrap, topic, "avro", table_type, **extra)

    result = run_once(cfg, spark)

    # the tombstone deletes key 2: Avro rows with key_fields are an upsert topic ([source] tombstones, issue 44)
    assert result.totals == {"messages": 6, "rows": 6, "upserted": 4, "deleted": 1, "skipped": 0, "bad": 1}
    want = by_key([as_table(i, r) for i, r in changes[1:] if i != 2], ["id"])
    assert by_key(spark_rows(spark, str(tmp_path / "table")), ["id"]) == want
    assert by_key(hudi_rs_rows(str(tmp_path / "table")), ["id"]) == want
    dead = spark.read.format("hudi").load(str(tmp_path / "table_dead_letter")).select("reason", "offset").collect()
    assert [(r["reason"], r["offset"]) for r in dead] == [(v.AVRO_DECODE_FAILED, 4)]
    types = dict(spark.read.format("hudi").load(str(tmp_path / "table")).dtypes)
    assert (types["id"], types["amount"], types["placed_at"], types["day"]) == (
        "bigint", "decimal(12,2)", "timestamp", "date")

    p = cli.cdcsync("infer-schema", cfg, "--json", jvm_free=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    (table,) = json.loads(p.stdout)["tables"]
    assert {c["name"]: c["type"] for c in table["columns"]} == {
        "id": "BIGINT", "customer": "STRING", "amount": "DECIMAL(12,2)", "placed_at": "TIMESTAMP", "day": "DATE",
        "note": "STRING"}
