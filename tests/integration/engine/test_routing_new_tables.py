"""Issue 46, point 3 (acceptance 4): tables that begin or end mid-run under [[route]]. A service run (not --once)
creates a table that first appears after its first batches, on a topic that did not exist when it started, and the
table ends exact. A DROP TABLE event — Debezium MySQL's schema change, Canal ERASE, Maxwell table-drop, each as the
tool writes it (tests/fixtures/drop_events.py) — follows [source] on_drop_table: "keep" counts it, says it once and
leaves the table readable, and the source table created again goes on into it; "fail" stops the run before anything
of that batch is committed (exit 65) and stays stopped until the setting says otherwise. Tables are read back by
Spark and by hudi-rs."""

from __future__ import annotations

import json
import signal
import threading

import pytest

from cdcsync.errors import DecodeError
from tests import cli
from tests.fixtures.drop_events import canal_erase, debezium_drop, maxwell_drop
from tests.integration.engine.helpers import (
    Events,
    both,
    by_key,
    completed_commits,
    hudi_rs_rows,
    run_once,
    write_config,
)
from tests.integration.engine.test_routing import routed_config

pytestmark = pytest.mark.integration

ROUTE = {"source_table": r"app\..*", "sink_table": "<>", "primary_key": ["id"]}


def pg(table: str, op: str, key: int, row: dict | None, lsn: int) -> tuple[str, str]:
    """A Debezium PostgreSQL change of app.public.<table>, ordered by source.lsn."""
    image = {"before": row, "after": None} if op == "d" else {"before": None, "after": row}
    source = {"connector": "postgresql", "ts_ms": 1_700_000_000_000 + lsn, "lsn": lsn, "db": "app",
              "schema": "public", "table": table}
    return json.dumps({"id": key}), json.dumps({"op": op, **image, "source": source})


def send(produce, topic: str, changes: list[tuple]) -> None:
    produce(topic, [v for _, v in changes], keys=[k for k, _ in changes])


def test_a_table_first_seen_mid_run_under_a_pattern_is_created_and_exact(request, bootstrap, make_topic, produce,
                                                                          tmp_path):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    prefix = make_topic()  # a unique server prefix: its tables' topics are <prefix>.app.public.<table>
    first, later = f"{prefix}.app.public.a", f"{prefix}.app.public.b"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(first, 1, 1)])
    send(produce, first, [pg("a", "c", 1, {"id": 1, "v": "a1"}, 10), pg("a", "c", 2, {"id": 2, "v": "a2"}, 20)])
    cfg = routed_config(tmp_path, bootstrap, "unused", "debezium-json",
                        [{"source_table": r"app\.public\..*", "sink_table": "<>", "primary_key": ["id"]}],
                        **{"source.topics": None, "source.topic_pattern": prefix.replace(".", r"\.") + r"\.app\..*",
                           "run.trigger_interval": "2s"})
    db = tmp_path / "db"
    want_a = by_key([{"id": 1, "v": "a1"}, {"id": 2, "v": "a2"}], ["id"])
    proc = cli.start("run", cfg)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)  # a full pipe would stall it
    reader.start()
    try:
        cli.wait_until("table a's first batch", lambda: _rows(db / "a") == want_a or proc.poll() is not None)
        assert proc.poll() is None, "".join(err)[-3000:]
        # mid-run: a table the run has never seen, on a topic created now, and more changes of the known one
        admin.create_topics([NewTopic(later, 1, 1)])
        send(produce, later, [pg("b", "c", 10, {"id": 10, "v": "b10", "n": 1}, 30),
                              pg("b", "c", 11, {"id": 11, "v": "b11", "n": 2}, 40),
                              pg("b", "u", 10, {"id": 10, "v": "b10x", "n": 3}, 50),
                              pg("b", "d", 11, {"id": 11, "v": "b11", "n": 2}, 60)])
        send(produce, first, [pg("a", "u", 1, {"id": 1, "v": "a1x"}, 70)])
        want_a = by_key([{"id": 1, "v": "a1x"}, {"id": 2, "v": "a2"}], ["id"])
        want_b = by_key([{"id": 10, "v": "b10x", "n": 3}], ["id"])
        cli.wait_until("the new table b", lambda: (_rows(db / "b"), _rows(db / "a")) == (want_b, want_a)
                       or proc.poll() is not None)
        assert proc.poll() is None, "".join(err)[-3000:]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
        admin.close()
    reader.join(timeout=10)
    assert proc.returncode == 0, "".join(err)[-3000:]
    assert "Traceback" not in "".join(err)
    spark = request.getfixturevalue("spark")  # only now: the service's JVM has ended
    assert both(spark, db / "a") == (want_a, want_a)
    assert both(spark, db / "b") == (want_b, want_b)


def _rows(path) -> dict | None:
    """The table as hudi-rs reads it by id; None before its first commit."""
    try:
        return by_key(hudi_rs_rows(str(path)), ["id"])
    except Exception:  # no table yet, or its first commit not complete
        return None


def mysql(table: str, op: str, key: int, row: dict, pos: int) -> tuple[str, str]:
    """A Debezium MySQL change of app.<table> on the data topic."""
    image = {"before": row, "after": None} if op == "d" else {"before": None, "after": row}
    source = {"connector": "mysql", "name": "dbserver1", "ts_ms": 1_700_000_000_000 + pos, "snapshot": "false",
              "db": "app", "table": table, "server_id": 223344, "file": "mysql-bin.000003", "pos": pos, "row": 0}
    return json.dumps({"id": key}), json.dumps({"op": op, **image, "source": source})


def canal(table: str, kind: str, rows: list[dict], es: int) -> tuple[None, str]:
    types = {"id": "int(11)", "v": "varchar(20)"}
    return None, json.dumps({"data": [{k: str(x) for k, x in r.items()} for r in rows], "database": "app",
                             "table": table, "type": kind, "isDdl": False, "es": es, "ts": es, "pkNames": ["id"],
                             "mysqlType": types})


def maxwell(table: str, kind: str, row: dict, pos: int) -> tuple[None, str]:
    return None, json.dumps({"database": "app", "table": table, "type": kind, "ts": 1_700_000_000 + pos, "xid": pos,
                             "commit": True, "position": f"master.000006:{pos}", "server_id": 223344, "data": row,
                             "primary_key_columns": ["id"]})


def history(fmt: str) -> tuple[list, list, list, list]:
    """(phase 1, phase 2, phase 3) as [(topic role, key, value)], and the roles: phase 1 fills app.a and app.b;
    phase 2 changes app.a and drops app.b; phase 3 is app.b created again. Debezium's drop is on the schema change
    topic ("ddl"), after the DROP TABLE IF EXISTS its snapshot restated (no drop); the others share one topic."""
    rows = {1: {"id": 1, "v": "a1"}, 10: {"id": 10, "v": "b10"}, 11: {"id": 11, "v": "b11"}}
    if fmt == "debezium-json":
        snap = [("ddl", *m) for m in debezium_drop("app", ["a", "b"], 1, snapshot="true")]
        one = snap + [("data", *mysql("a", "c", 1, rows[1], 100)), ("data", *mysql("b", "c", 10, rows[10], 110)),
                      ("data", *mysql("b", "c", 11, rows[11], 120))]
        two = [("data", *mysql("a", "u", 1, {"id": 1, "v": "a1x"}, 130)),
               *[("ddl", *m) for m in debezium_drop("app", ["b"], 140)]]
        three = [("data", *mysql("b", "c", 10, {"id": 10, "v": "new10"}, 150)),
                 ("data", *mysql("b", "c", 12, {"id": 12, "v": "new12"}, 160))]
        return one, two, three, ["data", "ddl"]
    if fmt == "canal-json":
        one = [("data", *canal("a", "INSERT", [rows[1]], 100)), ("data", *canal("b", "INSERT", [rows[10], rows[11]],
                                                                                   110))]
        two = [("data", *canal("a", "UPDATE", [{"id": 1, "v": "a1x"}], 130)), ("data", *canal_erase("app", "b", 140))]
        three = [("data", *canal("b", "INSERT", [{"id": 10, "v": "new10"}, {"id": 12, "v": "new12"}], 150))]
        return one, two, three, ["data"]
    one = [("data", *maxwell("a", "insert", rows[1], 100)), ("data", *maxwell("b", "insert", rows[10], 110)),
           ("data", *maxwell("b", "insert", rows[11], 120))]
    two = [("data", *maxwell("a", "update", {"id": 1, "v": "a1x"}, 130)),
           ("data", *maxwell_drop("app", "b", 1_700_000_140_000, 140))]
    three = [("data", *maxwell("b", "insert", {"id": 10, "v": "new10"}, 150)),
             ("data", *maxwell("b", "insert", {"id": 12, "v": "new12"}, 160))]
    return one, two, three, ["data"]


def setup(fmt, mode, bootstrap, make_topic, produce, tmp_path):
    one, two, three, roles = history(fmt)
    topics = {role: make_topic() for role in roles}

    def land(phase):
        for role in roles:
            produce(topics[role], [v for r, _, v in phase if r == role], keys=[k for r, k, _ in phase if r == role])

    cfg = routed_config(tmp_path, bootstrap, topics["data"], fmt, [ROUTE],
                        **{"source.topics": list(topics.values()), "source.on_drop_table": mode})
    return cfg, land, (one, two, three), topics


@pytest.mark.parametrize("fmt", ["debezium-json", "canal-json", "maxwell-json"])
def test_keep_counts_and_says_a_drop_and_the_table_created_again_goes_on(fmt, spark, bootstrap, make_topic, produce,
                                                                        tmp_path):
    cfg, land, (one, two, three), _ = setup(fmt, "keep", bootstrap, make_topic, produce, tmp_path)
    db = tmp_path / "db"
    land(one)
    first = run_once(cfg, spark)
    assert "dropped_table" not in first.totals  # a snapshot's restated DROP TABLE IF EXISTS drops nothing
    kept_b = by_key([{"id": 10, "v": "b10"}, {"id": 11, "v": "b11"}], ["id"])
    assert both(spark, db / "b") == (kept_b, kept_b)

    land(two)
    events = Events()
    second = run_once(cfg, spark, events)
    assert second.totals["dropped_table"] == 1 and second.totals["bad"] == 0
    said = events.of("drop_table")
    assert len(said) == 1 and (said[0]["source_table"], said[0]["table"], said[0]["on_drop_table"]) == (
        "app.b", "b", "keep")
    assert both(spark, db / "b") == (kept_b, kept_b)  # kept, and still readable
    want_a = by_key([{"id": 1, "v": "a1x"}], ["id"])
    assert both(spark, db / "a") == (want_a, want_a)  # the batch's other changes landed

    land(three)  # app.b created again: its changes go on into the same table, over the rows it kept
    third = run_once(cfg, spark)
    assert "dropped_table" not in third.totals
    want_b = by_key([{"id": 10, "v": "new10"}, {"id": 11, "v": "b11"}, {"id": 12, "v": "new12"}], ["id"])
    assert both(spark, db / "b") == (want_b, want_b)


@pytest.mark.parametrize("fmt", ["debezium-json", "canal-json", "maxwell-json"])
def test_fail_stops_before_anything_of_the_batch_is_committed(fmt, spark, bootstrap, make_topic, produce, tmp_path):
    cfg, land, (one, two, _), topics = setup(fmt, "fail", bootstrap, make_topic, produce, tmp_path)
    db = tmp_path / "db"
    land(one)
    run_once(cfg, spark)  # under "fail" too: a snapshot's restated drops are none
    commits = {t: len(completed_commits(spark, db / t)) for t in ("a", "b")}
    land(two)
    role = "ddl" if fmt == "debezium-json" else "data"
    offset = sum(1 for r, _, _ in one if r == role) + sum(1 for r, _, _ in two if r == role) - 1
    for _ in range(2):  # stays stopped: a restart meets the same drop
        with pytest.raises(DecodeError, match=rf"DROP TABLE of app\.b \(table b\) at {topics[role]}/0 offset "
                                              rf"{offset}, .*on_drop_table = 'fail'") as e:
            run_once(cfg, spark)
        assert e.value.exit_code == 65 and 'on_drop_table = "keep"' in e.value.hint
        assert {t: len(completed_commits(spark, db / t)) for t in ("a", "b")} == commits
        want_a = by_key([{"id": 1, "v": "a1"}], ["id"])  # a's change in the same batch is not committed either
        assert both(spark, db / "a") == (want_a, want_a)

    cfg.write_text(cfg.read_text().replace('on_drop_table = "fail"', 'on_drop_table = "keep"'))
    assert run_once(cfg, spark).totals["dropped_table"] == 1  # the fix the error names
    want_a = by_key([{"id": 1, "v": "a1x"}], ["id"])
    assert both(spark, db / "a") == (want_a, want_a)


@pytest.mark.parametrize("mode", ["keep", "fail"])
def test_a_drop_of_the_one_source_table_without_routes(mode, spark, bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [canal("t", "INSERT", [{"id": 1, "v": "x"}, {"id": 2, "v": "y"}], 100)[1]])
    cfg = write_config(tmp_path, bootstrap, topic, "canal-json", "COPY_ON_WRITE", **{"source.on_drop_table": mode})
    run_once(cfg, spark)
    produce(topic, [canal("t", "UPDATE", [{"id": 1, "v": "x2"}], 110)[1], canal_erase("app", "t", 120)[1]])
    want = by_key([{"id": 1, "v": "x"}, {"id": 2, "v": "y"}], ["id"])
    if mode == "fail":
        with pytest.raises(DecodeError, match=rf"DROP TABLE of app\.t \(table t\) at {topic}/0 offset 2, ") as e:
            run_once(cfg, spark)
        assert e.value.exit_code == 65
        assert both(spark, tmp_path / "table") == (want, want)
        return
    events = Events()
    summary = run_once(cfg, spark, events)
    assert summary.totals["dropped_table"] == 1 and summary.totals["skipped"] == 1
    assert [(f["source_table"], f["table"]) for f in events.of("drop_table")] == [("app.t", "t")]
    want = by_key([{"id": 1, "v": "x2"}, {"id": 2, "v": "y"}], ["id"])
    assert both(spark, tmp_path / "table") == (want, want)
