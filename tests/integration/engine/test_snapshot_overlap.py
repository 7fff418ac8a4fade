"""Acceptance (issue 14, point 1): a Debezium snapshot overlapping the changes committed while it ran.

A snapshot row shows the table as of the snapshot's start but is stamped when the connector reads it; a change
committed after the start is streamed with its own, earlier, commit time. Event time then lets the stale snapshot
image win. The source's log position (MySQL binlog file/pos/row, PostgreSQL LSN) orders them as the database did.
Here the streamed changes are also interleaved with the snapshot rows in Kafka, so Kafka order alone fails too."""

from __future__ import annotations

import json
import random

import pytest

from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration

ROWS = 1000
SNAPSHOT_START_MS = 1_700_000_000_000


def _source(connector: str, ts_ms: int, seq: int, snapshot: bool) -> dict:
    """`seq` is the change's place in the log; the snapshot's rows all carry the position it started from (0)."""
    src = {"connector": connector, "name": "app", "db": "shop", "table": "items", "ts_ms": ts_ms,
           "snapshot": "true" if snapshot else "false"}
    if connector == "mysql":
        # binlog rotates mid-stream: the position restarts in the next file, which the file number orders
        file_no, pos = (3, 4_000_000 + seq * 100) if seq < 150 else (4, 120 + seq)
        return src | {"file": f"mysql-bin.{file_no:06d}", "pos": pos, "row": 0}
    return src | {"schema": "public", "lsn": 34_000_000 + seq * 64, "txId": 600 + seq}


def _history(connector: str, seed: int) -> tuple[list[tuple[str, str | None]], dict[int, dict]]:
    """(Kafka records as (key, value), the source's final state). The snapshot of ROWS rows is read over 10 s;
    changes committed during it (updates, deletes, new rows) have earlier commit times than the snapshot rows of
    their keys, and reach Kafka mixed in among the snapshot rows."""
    rnd = random.Random(seed)
    state = {i: {"id": i, "name": f"item-{i}", "qty": i % 7} for i in range(ROWS)}
    snapshot = [(i, {"op": "r", "before": None, "after": dict(state[i]), "ts_ms": SNAPSHOT_START_MS + 10 * i,
                     "source": _source(connector, SNAPSHOT_START_MS + 10 * i, 0, True)}) for i in range(ROWS)]
    streamed = []
    for seq in range(1, 301):
        key = rnd.randrange(ROWS + 50)
        commit_ms = SNAPSHOT_START_MS + seq  # committed early in the snapshot: before most keys were read
        old = state.get(key)
        if old is not None and rnd.random() < 0.2:
            event = {"op": "d", "before": old, "after": None}
            del state[key]
        else:
            new = {"id": key, "name": f"changed-{seq}", "qty": seq}
            event = {"op": "u" if old else "c", "before": old, "after": new}
            state[key] = new
        streamed.append((key, event | {"ts_ms": commit_ms + 5, "source": _source(connector, commit_ms, seq, False)}))
    records = list(snapshot)
    for item in streamed:  # each change lands anywhere after its predecessors in the stream
        records.insert(rnd.randrange(len(records) + 1), item)
    records = _keep_stream_order(records, streamed)
    out = []
    for key, event in records:
        out.append((json.dumps({"id": key}), json.dumps(event)))
        if event["op"] == "d":
            out.append((json.dumps({"id": key}), None))
    return out, state


def _keep_stream_order(records: list, streamed: list) -> list:
    """Streamed changes keep their log order among themselves (a connector streams in order); only their place
    relative to the snapshot rows is mixed."""
    stream = iter(streamed)
    return [next(stream) if r[1]["source"]["snapshot"] == "false" else r for r in records]


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("connector", ["mysql", "postgresql"])
def test_changes_during_the_snapshot_win_over_its_stale_rows(spark, bootstrap, make_topic, produce, tmp_path,
                                                              connector, table_type):
    records, final = _history(connector, seed=len(connector) + len(table_type))
    stale = sum(1 for k, v in records if v and json.loads(v)["source"]["snapshot"] == "true"
                and json.loads(k)["id"] in final and json.loads(v)["after"] != final[json.loads(k)["id"]])
    assert stale > 30, "the history must hold snapshot rows that later changes replace"
    topic = make_topic()
    produce(topic, [v for _, v in records], keys=[k for k, _ in records])
    cfg = write_config(tmp_path, bootstrap, topic, "debezium-json", table_type, **{"sink.primary_key": ["id"]})
    result = run_once(cfg, spark)
    assert result.totals["bad"] == 0
    path = str(tmp_path / "table")
    want = by_key(list(final.values()), ["id"])
    for name, got in (("spark", by_key(spark_rows(spark, path), ["id"])), ("hudi-rs", by_key(hudi_rs_rows(path),
                                                                                              ["id"]))):
        wrong = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        assert not wrong, f"{name}: {len(wrong)} rows differ from the source, e.g. {wrong[:3]}"
