"""The ordering value per connector (formats/spark/position.py), and tables of earlier versions keeping theirs."""

from __future__ import annotations

import json

import pytest

from tests.integration.engine.helpers import kafka_rows, spark_rows, sync_rows, write_config

pytestmark = pytest.mark.integration


def _dbz(source: dict, name: str) -> dict:
    return {"op": "u", "before": None, "after": {"id": 1, "name": name}, "ts_ms": 1,
            "source": {"db": "d", "table": "t", "ts_ms": 1_700_000_000_000} | source}


# per connector, changes to one key in log order; they reach Kafka in reverse order, all at one event time
LOG_ORDERS = {
    "mysql": [{"file": "mysql-bin.000009", "pos": 900, "row": 0}, {"file": "mysql-bin.000009", "pos": 900, "row": 1},
              {"file": "mysql-bin.000010", "pos": 4}],
    "postgresql": [{"lsn": 9_000}, {"lsn": 10_000}, {"lsn": 123_456_789_012}],
    "sqlserver": [{"commit_lsn": "0000002b:00000318:0003", "change_lsn": None},  # snapshot: no change LSN
                  {"commit_lsn": "0000002B:00000318:0003", "change_lsn": "0000002b:00000317:0002",
                   "event_serial_no": 1},
                  {"commit_lsn": "0000002b:00000318:0003", "change_lsn": "0000002b:00000317:0002",
                   "event_serial_no": 2}],
    "oracle": [{"scn": "999"}, {"scn": "1000"}, {"scn": "20000000000000000"}],
}


@pytest.mark.parametrize("connector", sorted(LOG_ORDERS))
def test_the_log_position_decides_not_kafka_order_or_event_time(spark, tmp_path, connector):
    from cdcsync.config import load_config

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"]}))
    changes = [_dbz(src, f"v{i}") for i, src in enumerate(LOG_ORDERS[connector])]
    for i, change in enumerate(reversed(changes)):  # one batch each, newest first
        sync_rows(spark, cfg, kafka_rows(spark, [change], first_offset=i))
    assert [r["name"] for r in spark_rows(spark, cfg.sink.path)] == [f"v{len(changes) - 1}"]


def test_maxwell_binlog_position_and_kafka_order_without_one(spark, tmp_path):
    from cdcsync.config import load_config

    def change(name, **position):
        return {"database": "d", "table": "t", "type": "update", "ts": 5, "data": {"id": 1, "name": name},
                "primary_key_columns": ["id"]} | position

    for fmt, batches in {
        "maxwell-json": [[change("new", position="mysql-bin.000004:77", xoffset=1)],
                         [change("old", position="mysql-bin.000004:77", xoffset=0)]],
        "json": [[{"id": 1, "name": "old"}], [{"id": 1, "name": "new"}]],  # no position: the later offset wins
    }.items():
        (tmp_path / fmt).mkdir()
        cfg = load_config(write_config(tmp_path / fmt, "localhost:1", "t", fmt, "MERGE_ON_READ",
                                       **{"sink.primary_key": ["id"]}))
        for i, values in enumerate(batches):
            sync_rows(spark, cfg, kafka_rows(spark, values, first_offset=i))
        assert [r["name"] for r in spark_rows(spark, cfg.sink.path)] == ["new"], fmt


def test_a_table_of_an_earlier_version_keeps_event_time_ordering(spark, tmp_path):
    """Its rows' ordering values are event-time text; new values of another form would not compare with them."""
    from cdcsync.config import load_config
    from cdcsync.engine.pipeline import Pipeline
    from cdcsync.reporting import PlainReporter
    from cdcsync.sinks import hudi

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "debezium-json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"]}))
    spec = hudi.TableSpec.from_config(cfg)
    first = spark.createDataFrame([(1, "old", "0001700000000000.0000000000000000000.00000", False)],
                                  f"id long, name string, {hudi.ORDER} string, {hudi.DELETED} boolean")
    hudi.write_batch(first, spec, {hudi.META_OFFSETS: json.dumps({"t": {"0": 1}}), hudi.META_BATCH: "0",
                                   hudi.META_SCHEMA: '[{"name":"id","type":"BIGINT","encoding":"plain","scale":0},'
                                                     '{"name":"name","type":"STRING","encoding":"plain","scale":0}]'})
    assert Pipeline(cfg, PlainReporter(quiet=True), spark=spark).table_state().ordering == hudi.ORDERING_LEGACY
    later = _dbz({"file": "mysql-bin.000001", "pos": 4}, "new") | {"ts_ms": 1_800_000_000_000}
    later["source"]["ts_ms"] = 1_800_000_000_000
    sync_rows(spark, cfg, kafka_rows(spark, [later], first_offset=1))
    rows = spark_rows(spark, cfg.sink.path)
    assert [(r["name"], r[hudi.ORDER][:16]) for r in rows] == [("new", "0001800000000000")]
    last = hudi.last_checkpoint(spark, cfg.sink.path)
    assert last["ordering"] == hudi.ORDERING_LEGACY  # the new commit says so too


def test_a_new_table_records_its_ordering(spark, tmp_path):
    from cdcsync.config import load_config
    from cdcsync.sinks import hudi

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"]}))
    sync_rows(spark, cfg, kafka_rows(spark, [{"id": 1}], first_offset=3))
    assert hudi.last_checkpoint(spark, cfg.sink.path)["ordering"] == hudi.ORDERING
    assert spark_rows(spark, cfg.sink.path)[0][hudi.ORDER] == "0.0000000000.0000000000000000003.00000"
