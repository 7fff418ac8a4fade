"""Issue 44, points 2 and 3: upsert topics whose tombstones delete their key ([source] tombstones), and flattened
streams (Debezium's ExtractNewRecordState, delete.handling.mode = rewrite) whose `__deleted` flag deletes it
([source] deleted_field). Each lands in two runs against the real broker — deletes and re-inserts inside one batch,
then against the table — and is read back by Spark and hudi-rs; `validate` accepts the keys where they apply and
refuses them (exit 78 naming the key) where they cannot."""

from __future__ import annotations

import json

import pytest

from tests.cli import cdcsync
from tests.configs import minimal, write
from tests.integration.engine.helpers import Events, both, by_key, hudi_rs_rows, run_once, write_config

pytestmark = pytest.mark.integration


def _key(i: int) -> str:
    return json.dumps({"id": i})


def _land(spark, cfg, produce, topic, changes: list[tuple[int, dict | None]], reporter=None):
    """Produce (id, value) changes, a None value as a tombstone, and run once."""
    produce(topic, [v for _, v in changes], keys=[_key(i) for i, _ in changes])
    return run_once(cfg, spark, reporter)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_tombstones_of_an_upsert_topic_delete_their_key(spark, bootstrap, make_topic, produce, tmp_path, table_type):
    topic = make_topic()
    cfg = write_config(tmp_path, bootstrap, topic, "json", table_type, **{"source.key_fields": ["id"]})
    first = [(1, {"name": "a", "qty": 1}), (2, {"name": "b", "qty": 2}), (3, {"name": "c", "qty": 3}),
             (4, {"name": "d", "qty": 4}), (5, {"name": "e", "qty": 5}), (2, {"name": "b2", "qty": 20}),
             (3, None), (4, None), (4, {"name": "d2", "qty": 40}), (6, {"name": "f", "qty": 6}), (6, None),
             (9, None)]  # a key never seen: deletes nothing
    summary = _land(spark, cfg, produce, topic, first)
    assert summary.totals["deleted"] == 4 and summary.totals["skipped"] == 0 and summary.totals["bad"] == 0
    want = {1: ("a", 1), 2: ("b2", 20), 4: ("d2", 40), 5: ("e", 5)}
    _assert_table(spark, tmp_path / "table", want)

    second = [(1, None), (3, {"name": "c2", "qty": 30}), (5, None), (5, {"name": "e2", "qty": 50}),
              (4, {"name": "d3", "qty": 400}), (6, None)]
    summary = _land(spark, cfg, produce, topic, second)
    assert summary.totals["deleted"] == 3 and summary.totals["bad"] == 0
    _assert_table(spark, tmp_path / "table", {2: ("b2", 20), 3: ("c2", 30), 4: ("d3", 400), 5: ("e2", 50)})


def _assert_table(spark, path, want: dict[int, tuple]) -> None:
    expected = by_key([{"id": i, "name": n, "qty": q} for i, (n, q) in want.items()], ["id"])
    from_spark, from_rs = both(spark, path)
    assert from_spark == expected and from_rs == expected, (from_spark, from_rs)


def _flat(i: int, name: str, ts: int, deleted: str = "false") -> dict:
    """A row as ExtractNewRecordState writes it with add.fields=source.ts_ms and delete.handling.mode=rewrite."""
    return {"id": i, "name": name, "__source_ts_ms": ts, "__deleted": deleted}


@pytest.mark.parametrize("table_type, ordering_field", [("MERGE_ON_READ", None), ("COPY_ON_WRITE", None),
                                                        ("MERGE_ON_READ", "__source_ts_ms")])
def test_a_flattened_stream_deletes_the_rows_it_flags(spark, bootstrap, make_topic, produce, tmp_path, table_type,
                                                      ordering_field):
    topic = make_topic()
    cfg = write_config(tmp_path, bootstrap, topic, "json", table_type, **{
        "sink.primary_key": ["id"], "source.deleted_field": "__deleted", "sink.ordering_field": ordering_field})
    first = [(1, _flat(1, "a", 100)), (2, _flat(2, "b", 101)), (3, _flat(3, "c", 102)), (4, _flat(4, "d", 103)),
             (2, _flat(2, "b2", 104)), (3, _flat(3, "c", 105, "true")),
             (3, None),  # drop.tombstones=false: the tombstone after the delete deletes the key again
             (4, _flat(4, "d", 106, "true")), (4, _flat(4, "d2", 107))]
    summary = _land(spark, cfg, produce, topic, first)
    assert summary.totals["bad"] == 0 and summary.totals["deleted"] == 3
    _assert_flat(spark, tmp_path / "table", {1: ("a", 100), 2: ("b2", 104), 4: ("d2", 107)})

    events = Events()
    second = [(1, _flat(1, "a", 200, "true")), (3, _flat(3, "c2", 201)), (2, _flat(2, "b3", 202)),
              (2, _flat(2, "b3", 203, "true")), (5, _flat(5, "e", 204))]
    summary = _land(spark, cfg, produce, topic, second, events)
    assert summary.totals["bad"] == 0 and summary.totals["deleted"] == 2
    assert not events.of("columns_inferred")  # the flag is no column, so rows fit the table's: one pass
    _assert_flat(spark, tmp_path / "table", {3: ("c2", 201), 4: ("d2", 107), 5: ("e", 204)})


def _assert_flat(spark, path, want: dict[int, tuple]) -> None:
    columns = spark.read.format("hudi").load(str(path)).columns
    assert "__deleted" not in columns and "__source_ts_ms" in columns, columns
    assert all("__deleted" not in r for r in hudi_rs_rows(str(path)))
    expected = by_key([{"id": i, "name": n, "__source_ts_ms": ts} for i, (n, ts) in want.items()], ["id"])
    from_spark, from_rs = both(spark, path)
    assert from_spark == expected and from_rs == expected, (from_spark, from_rs)


@pytest.mark.parametrize("fmt, source, sink, refused", [
    ("json", 'tombstones = "delete"\nkey_fields = ["id"]\n', "", None),
    ("json", 'deleted_field = "__deleted"\n', 'primary_key = ["id"]\nordering_field = "__source_ts_ms"\n', None),
    ("csv", 'csv_columns = ["id", "__deleted"]\ndeleted_field = "__deleted"\n', 'primary_key = ["id"]\n', None),
    ("debezium-json", 'tombstones = "delete"\n', "", "source.tombstones"),
    ("json", 'tombstones = "delete"\n', "", "source.tombstones"),
    ("raw", 'tombstones = "delete"\n', 'primary_key = ["id"]\n', "source.tombstones"),
    ("canal-json", 'deleted_field = "__deleted"\n', 'primary_key = ["id"]\n', "source.deleted_field"),
    ("json", 'deleted_field = "__deleted"\n', "", "source.deleted_field"),
    ("debezium-json", 'on_truncate = "fail"\nunavailable_value_placeholder = "__u__"\n', "", None),
    ("json", 'on_truncate = "apply"\n', "", "source.on_truncate"),
    ("canal-json", 'unavailable_value_placeholder = "__u__"\n', "", "source.unavailable_value_placeholder"),
    ("json", "", '[run]\non_data_loss = "skip"\n', None),
    ("json", "", '[run]\non_data_loss = "later"\n', "on_data_loss"),
])
def test_validate_accepts_the_keys_where_they_apply(tmp_path, fmt, source, sink, refused):
    config = write(tmp_path, minimal(fmt=fmt).replace("[sink]", source + "\n[sink]") + sink)
    p = cdcsync("validate", config, jvm_free=True)
    if refused is None:
        assert p.returncode == 0, p.stderr
        assert "valid" in p.stdout
    else:
        assert p.returncode == 78 and refused in p.stderr, (p.returncode, p.stderr)
