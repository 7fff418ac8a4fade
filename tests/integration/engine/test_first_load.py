"""A batch into a table with no commit yet is a bulk_insert of its changes settled in Spark (engine/first_load.py):
the table equals what upserts would have left — newest change per key by log position, not Kafka order; a key whose
newest change is a delete has no row; a delete still leaves its marker — and later batches upsert."""

from __future__ import annotations

import json

import pytest

from tests.integration.engine.helpers import hudi_rs_rows, kafka_rows, marker_keys, spark_rows, sync_rows, write_config

pytestmark = pytest.mark.integration


def change(op: str, key: int, name: str | None, pos: int) -> tuple[str, str]:
    """A Debezium change (Kafka key, value) at binlog position `pos`; a delete without `name` carries no before
    image, only the Kafka key."""
    row = None if name is None else {"id": key, "name": name}
    image = {"before": row, "after": None} if op == "d" else {"before": None, "after": row}
    source = {"connector": "mysql", "ts_ms": 1_700_000_000_000, "file": "mysql-bin.000003", "pos": pos, "row": 0,
              "db": "app", "table": "t"}
    return json.dumps({"id": key}), json.dumps({"op": op, **image, "source": source})


# Kafka order; the binlog positions decide which change is newest
FIRST = [change("c", 1, "a1", 10), change("u", 1, "a3", 30), change("u", 1, "a2", 20),  # a late older change
         change("c", 2, "b1", 11), change("d", 2, "b1", 21),  # deleted
         change("c", 3, "c1", 12), change("d", 3, None, 22), change("c", 3, "c2", 32),  # deleted, then back
         change("d", 4, "d0", 23),  # a delete of a row the table never had
         change("c", 5, "e1", 14)]
SECOND = [change("u", 2, "b0", 15),  # older than batch 1's delete: must not bring key 2 back
          change("u", 5, "e2", 40), change("d", 1, None, 50)]


def operations(spark, path: str) -> list[str]:
    from cdcsync.sinks.hudi import _meta_client

    tl = _meta_client(spark, path).getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    return [tl.readCommitMetadata(i).getOperationType().toString() for i in tl.getInstants()]


def batch(spark, changes: list[tuple[str, str]], first_offset: int):
    return kafka_rows(spark, [v for _, v in changes], keys=[k for k, _ in changes], first_offset=first_offset)


def names(rows: list[dict]) -> dict:
    return {r["id"]: r["name"] for r in rows}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_first_load_is_a_bulk_insert_with_the_upserts_final_state(spark, tmp_path, table_type):
    from cdcsync.config import load_config
    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", table_type,
                                   **{"sink.primary_key": ["id"]}))
    first = sync_rows(spark, cfg, batch(spark, FIRST, 0))
    assert first.totals()["upserted"] == 7 and first.totals()["deleted"] == 3
    want = {1: "a3", 3: "c2", 5: "e1"}
    assert names(spark_rows(spark, cfg.sink.path)) == want == names(hudi_rs_rows(cfg.sink.path))
    assert operations(spark, cfg.sink.path) == ["BULK_INSERT"]
    assert marker_keys(spark, cfg.sink.path) == {
        '{"id":2}', '{"id":3}', '{"id":4}'}, "a first load's deletes leave their markers too"

    sync_rows(spark, cfg, batch(spark, SECOND, len(FIRST)))
    want = {3: "c2", 5: "e2"}
    assert names(spark_rows(spark, cfg.sink.path)) == want == names(hudi_rs_rows(cfg.sink.path))
    assert operations(spark, cfg.sink.path)[-1] == "UPSERT"


def test_a_configured_write_operation_wins(spark, tmp_path):
    from cdcsync.config import load_config

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"],
                                      "sink.options": {"hoodie.datasource.write.operation": "upsert"}}))
    sync_rows(spark, cfg, batch(spark, FIRST, 0))
    assert names(spark_rows(spark, cfg.sink.path)) == {1: "a3", 3: "c2", 5: "e1"}
    assert operations(spark, cfg.sink.path) == ["UPSERT"]
