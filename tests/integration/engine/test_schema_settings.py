"""Issue 14, point 4 and its type outliers: every `[schema]` key has its effect in `run` — flatten_nested_columns
and primitive_as_string give the columns infer-schema gives; on_incompatible = "dead-letter" and on_type_conflict
turn values that do not fit their column into bad records (reason incompatible_type) and keep the column's type."""

from __future__ import annotations

import json
import tomllib

import pytest

from cdcsync.config import load_config
from cdcsync.sinks import dead_letter
from tests.cli import infer_schema
from tests.integration.engine.helpers import (
    hudi_rs_rows,
    kafka_rows,
    run_once,
    spark_rows,
    sync_rows,
    write_config,
)

pytestmark = pytest.mark.integration


def table_types(spark, tmp_path) -> dict[str, str]:
    df = spark.read.format("hudi").load(str(tmp_path / "table"))
    return {n: t for n, t in df.dtypes if not n.startswith(("_hoodie", "_kafka", "_cdc"))}


def inferred(bootstrap, topic, cfg) -> dict[str, str]:
    """What infer-schema (no JVM) says the columns are, from the same config."""
    proc = infer_schema(cfg, "-b", bootstrap, "-t", topic, "-o", "toml")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {n: t.lower() for n, t in tomllib.loads(proc.stdout)["schema"]["columns"].items()}


def dead_reasons(spark, cfg) -> dict[int, tuple[str, str]]:
    return {r["offset"]: (r["reason"], r["error"]) for r in dead_letter.read(spark, load_config(cfg)).collect()}


def test_flatten_nested_columns_gives_infer_schemas_columns(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": 1, "user": {"name": "ann", "address": {"zip": "0123", "n": 5}}, "tags": [1, 2]},
                    {"id": 2, "user": {"name": "bob", "address": None}, "tags": []},
                    {"id": 3, "user": None, "price": 2.5}])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "schema.flatten_nested_columns": True})
    assert run_once(cfg, spark).totals["upserted"] == 3
    types = table_types(spark, tmp_path)
    assert types == {"id": "bigint", "user_name": "string", "user_address_zip": "string",
                     "user_address_n": "bigint", "tags": "string", "price": "double"}
    assert types == inferred(bootstrap, topic, cfg)
    rows = {r["id"]: r for r in hudi_rs_rows(str(tmp_path / "table"))}
    assert (rows[1]["user_name"], rows[1]["user_address_zip"], rows[1]["user_address_n"]) == ("ann", "0123", 5)
    assert rows[1]["tags"] == "[1,2]" and rows[2]["user_address_n"] is None and rows[3]["price"] == 2.5
    # replay-from-offset goes through the same batch path: its side table has the same columns
    from cdcsync.engine.replay import Replayer
    from cdcsync.reporting import PlainReporter

    r = Replayer(load_config(cfg), PlainReporter(), "earliest", None, str(tmp_path / "side"), spark=spark)
    assert r.run(r.plan()).summary.totals["upserted"] == 3
    side = spark.read.format("hudi").load(str(tmp_path / "side"))
    assert {n: t for n, t in side.dtypes if n in types} == types


def test_primitive_as_string_gives_infer_schemas_columns(spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, ['{"id": 1, "price": 1.50, "ok": true, "big": 123456789012345678901234567890, "n": {"a": 1}}',
                    {"id": 2, "price": 3, "ok": False, "n": None}])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "schema.primitive_as_string": True})
    assert run_once(cfg, spark).totals["upserted"] == 2
    types = table_types(spark, tmp_path)
    assert types == {"id": "string", "price": "string", "ok": "string", "big": "string", "n": "string"}
    assert types == inferred(bootstrap, topic, cfg)
    rows = {r["id"]: r for r in spark_rows(spark, str(tmp_path / "table"))}
    # a fraction reaches a STRING column through Spark's JSON parser as a double's text (1.50 → "1.5"), as in any
    # STRING column run writes; integers and booleans keep their exact text
    assert (rows["1"]["price"], rows["1"]["ok"], rows["1"]["big"]) == ("1.5", "true", "123456789012345678901234567890")
    assert (rows["2"]["price"], rows["2"]["ok"]) == ("3", "false")


def test_on_incompatible_dead_letter_keeps_the_column_and_commits(spark, bootstrap, make_topic, produce, tmp_path):
    from cdcsync.sinks.hudi import last_checkpoint

    topic = make_topic()
    produce(topic, [{"id": i, "flag": i % 2 == 0} for i in range(4)] + [{"id": 9, "flag": "maybe"},
                                                                        {"id": 10, "flag": True}])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.max_records_per_batch": 4,
                          "run.on_bad_record": "dead-letter", "schema.on_incompatible": "dead-letter"})
    summary = run_once(cfg, spark)  # with "fail" this batch stops the run (test_schema_evolution)
    assert (summary.batches, summary.totals["upserted"], summary.totals["bad"]) == (2, 5, 1)
    assert not summary.schema_changes
    assert table_types(spark, tmp_path)["flag"] == "boolean"
    assert sorted(r["id"] for r in spark_rows(spark, str(tmp_path / "table"))) == [0, 1, 2, 3, 10]
    ((reason, error),) = dead_reasons(spark, cfg).values()
    assert reason == "incompatible_type" and "flag keeps BOOLEAN" in error and "on_incompatible" in error
    assert "maybe" not in error  # the detail names types, never the value
    assert last_checkpoint(spark, str(tmp_path / "table"))["offsets"] == {topic: {0: 6}}


GOOD, OUTLIERS = 4000, 50


def outlier_topic(make_topic, produce, column: str) -> str:
    """4,000 good events with integer `id` and `qty`, and 50 whose `column` holds a string, spread among them."""
    topic = make_topic()
    events = [{"id": i, "qty": i % 7} for i in range(GOOD)]
    for j in range(OUTLIERS):
        bad = {"id": f"k-{j}", "qty": 1} if column == "id" else {"id": GOOD + j, "qty": "n/a"}
        events.insert(j * 80 + 40, bad)
    produce(topic, events)
    return topic


def test_outliers_in_an_integer_key_are_dead_lettered(spark, bootstrap, make_topic, produce, tmp_path, capfd):
    topic = outlier_topic(make_topic, produce, "id")
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ",
                       **{"sink.primary_key": ["id"], "run.on_bad_record": "dead-letter"})
    summary = run_once(cfg, spark)
    assert (summary.batches, summary.totals["upserted"], summary.totals["bad"]) == (1, GOOD, OUTLIERS)
    assert table_types(spark, tmp_path)["id"] == "bigint"
    dead = dead_reasons(spark, cfg)
    assert len(dead) == OUTLIERS and {r for r, _ in dead.values()} == {"incompatible_type"}
    assert all("id keeps BIGINT" in e and "key columns keep their type" in e for _, e in dead.values())
    assert "type_kept" in capfd.readouterr().err  # the progress output says which column held its type
    # the key keeps its type when the table exists too: a later batch of string keys is bad as well
    produce(topic, [{"id": "late", "qty": 1}, {"id": 7, "qty": 70}])
    later = run_once(cfg, spark)
    assert (later.totals["upserted"], later.totals["bad"]) == (1, 1)
    assert {r["id"]: r["qty"] for r in spark_rows(spark, str(tmp_path / "table"))}[7] == 70


@pytest.mark.parametrize("policy", ["widen", "dead-letter"])
def test_outliers_in_another_column_follow_on_type_conflict(spark, bootstrap, make_topic, produce, tmp_path, policy):
    topic = outlier_topic(make_topic, produce, "qty")
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.on_bad_record": "dead-letter",
                          "schema.on_type_conflict": policy})
    summary = run_once(cfg, spark)
    rows = {r["id"]: r["qty"] for r in spark_rows(spark, str(tmp_path / "table"))}
    if policy == "widen":  # today's lattice: the column becomes STRING and every event lands
        assert (summary.totals["upserted"], summary.totals["bad"]) == (GOOD + OUTLIERS, 0)
        assert table_types(spark, tmp_path)["qty"] == "string" and rows[GOOD] == "n/a" and rows[8] == "1"
    else:
        assert (summary.totals["upserted"], summary.totals["bad"]) == (GOOD, OUTLIERS)
        assert table_types(spark, tmp_path)["qty"] == "bigint" and GOOD not in rows and rows[8] == 1
        dead = dead_reasons(spark, cfg)
        assert len(dead) == OUTLIERS and all(r == "incompatible_type" and "on_type_conflict" in e
                                             for r, e in dead.values())


def cdc_event(fmt: str, key, qty: int) -> tuple[str | None, dict]:
    """(Kafka key, value) of one insert in a schemaless CDC envelope."""
    row = {"id": key, "qty": qty}
    if fmt == "maxwell-json":
        return None, {"database": "db", "table": "t", "type": "insert", "ts": 1, "data": row}
    return json.dumps({"id": key}), {"before": None, "after": row, "op": "c", "ts_ms": 1,
                                     "source": {"db": "db", "table": "t", "ts_ms": 1}}


@pytest.mark.parametrize("fmt", ["maxwell-json", "debezium-json"])
def test_outliers_in_a_key_of_schemaless_cdc_row_images(spark, bootstrap, tmp_path, fmt):
    """Maxwell's and schemaless Debezium's row images are JSON like plain json: the same rule (batch harness)."""
    events = [cdc_event(fmt, i, i) for i in range(200)]
    for j in range(5):
        events.insert(j * 40 + 7, cdc_event(fmt, f"k-{j}", 1))
    cfg = load_config(write_config(tmp_path, bootstrap, "t", fmt, "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"], "run.on_bad_record": "dead-letter"}))
    seen: list = []

    def on_bad(bad_df, _batch_id, _count):
        seen.extend(bad_df.select("_kafka_offset", "_reason").collect())
        return []

    result = sync_rows(spark, cfg, kafka_rows(spark, [v for _, v in events], [k for k, _ in events]), on_bad)
    assert (result.totals()["upserted"], result.totals()["bad"]) == (200, 5)
    assert {r["_reason"] for r in seen} == {"incompatible_type"}
    assert table_types(spark, tmp_path)["id"] == "bigint"
