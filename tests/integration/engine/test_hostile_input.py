"""Messages that once failed a batch on every retry (a poison pill) or were silently mis-decoded, found by a review
of the Spark decode path. Each must now end upserted, deleted, skipped or bad with a reason, and the batch commits."""

from __future__ import annotations

import pytest

from tests.integration.engine.helpers import kafka_rows, sync_rows, write_config

pytestmark = pytest.mark.integration


def batch(spark, tmp_path, fmt, values, keys=None, **extra):
    """One batch of `values` through the batch harness. Returns (totals, {offset: reason of a bad record}, table
    rows by id, table columns)."""
    from cdcsync.config import load_config

    tmp_path.mkdir(parents=True, exist_ok=True)
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", fmt, "COPY_ON_WRITE",
                                   **{"run.on_bad_record": "skip", **extra}))
    raw = kafka_rows(spark, values, keys)
    bad = {}

    def on_bad(df, _b, _n):
        bad.update({r[0]: r[1] for r in df.select("_kafka_offset", "_reason").collect()})
        return []

    res = sync_rows(spark, cfg, raw, on_bad)
    df = spark.read.format("hudi").load(cfg.sink.path)
    rows = {r["id"]: r.asDict() for r in df.collect()}
    return res.totals(), bad, rows, [c for c in df.columns if not c.startswith("_")]


def test_names_differing_only_by_case_and_unstorable_names_are_bad(spark, tmp_path):
    totals, bad, rows, cols = batch(spark, tmp_path, "json", [
        {"id": 1, "v": "ok"}, {"id": 2, "ID": 3}, {"id": 4, "x\n": 5}, {"id": 6, "V": "case"}],
        **{"sink.primary_key": ["id"]})
    assert bad == {1: "bad_column_name", 2: "bad_column_name", 3: "bad_column_name"}
    assert set(rows) == {1} and cols == ["id", "v"]


def dbz_schema(fields):
    return {"type": "struct", "fields": [{"field": "after", "type": "struct", "fields": fields},
                                         {"field": "op", "type": "string"}]}


def test_junk_debezium_schemas_fall_back_to_the_row_images(spark, tmp_path):
    good = {"schema": dbz_schema([{"field": "id", "type": "int64"}]), "payload": {"op": "c", "after": {"id": 1}}}
    junk_name = {"schema": dbz_schema([{"field": 5, "type": "int64"}]), "payload": {"op": "c", "after": {"id": 2}}}
    junk_scale = {"schema": dbz_schema([{"field": "id", "type": "int64"}, {
        "field": "d", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
        "parameters": {"scale": "10000000"}}]), "payload": {"op": "c", "after": {"id": 3, "d": "AQ=="}}}
    for i, msg in enumerate((junk_name, junk_scale)):
        totals, bad, rows, _ = batch(spark, tmp_path / str(i), "debezium-json", [msg, good],
                                     **{"sink.primary_key": ["id"]})
        assert totals["upserted"] == 2 and not bad, (i, bad)


def test_a_fraction_in_an_integer_column_is_a_bad_value_not_truncated(spark, tmp_path):
    schema = dbz_schema([{"field": "id", "type": "int64"}, {"field": "n", "type": "int32"}])
    totals, bad, rows, _ = batch(spark, tmp_path, "debezium-json", [
        {"schema": schema, "payload": {"op": "c", "after": {"id": 1, "n": 2}}},
        {"schema": schema, "payload": {"op": "c", "after": {"id": 2, "n": 2.7}}},
        {"schema": schema, "payload": {"op": "c", "after": {"id": 3, "n": 4.0}}}], **{"sink.primary_key": ["id"]})
    assert bad == {1: "bad_value"} and {i: r["n"] for i, r in rows.items()} == {1: 2, 3: 4}


def test_raw_control_characters_are_invalid_json_not_an_empty_row(spark, tmp_path):
    totals, bad, rows, cols = batch(spark, tmp_path, "json", [
        '{"id": 1, "name": "a\tb"}', '{"id": 2, "name": "fine"}\n', '{"id": 3, "name": "c"}'])
    assert bad == {0: "invalid_json"} and totals["upserted"] == 2  # a trailing newline is JSON whitespace
    assert sorted(r["name"] for r in rows.values()) == ["c", "fine"] and "_corrupt_record" not in cols


def test_a_non_object_row_image_adds_no_columns(spark, tmp_path):
    totals, bad, rows, cols = batch(spark, tmp_path, "debezium-json", [
        {"op": "c", "after": [{"id": 9, "evil": 3}]}, {"op": "c", "after": "abc"}, {"op": "c", "after": {"id": 1}}],
        **{"sink.primary_key": ["id"]})
    assert set(bad) == {0, 1} and set(rows) == {1} and cols == ["id"]


def test_the_key_is_taken_from_good_messages_only(spark, tmp_path):
    totals, bad, rows, cols = batch(spark, tmp_path, "debezium-json", [
        "garbage", {"op": "c", "after": {"id": 1, "v": "a"}}, {"op": "u", "after": {"id": 1, "v": "b"}},
        {"op": "c", "after": {"id": 2, "v": "c"}}, {"op": "d", "before": {"id": 2, "v": "c"}, "after": None}],
        keys=[{"x": 1}, {}, {"id": 1}, {"id": 2}, {"id": 2}])
    assert bad == {0: "invalid_json"}
    assert {i: r["v"] for i, r in rows.items()} == {1: "b"}  # keyed by id: the update and the delete applied
