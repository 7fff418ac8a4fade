"""Acceptance (issue 46, point 2): one failing routed table is set aside, nothing is lost. Six PostgreSQL tables in
one Debezium topic, one `[[route]]` with `sink_table = "<>"`; the first run lands all six; then one table's storage
breaks (its `.hoodie/hoodie.properties` unreadable: a directory in its place, since root reads any file whatever
its mode) and every table gets more changes. `run --once` (on_table_failure = "isolate", the default) exits 83,
every other table equals its source (Spark and hudi-rs), `status --json` names the failed table, its error and its
position. After the repair the next run brings the failed table to exactly its source's state, reads only what it
needs, and leaves the other tables' timelines as they were. (kill -9 during parallel commits:
test_routing_parallel.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.tables import Tables, changes
from cdcsync.exit_codes import ExitCode
from tests import cli
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows
from tests.integration.engine.test_routing import routed_config
from tests.integration.engine.test_routing_parallel import ROUTE

pytestmark = pytest.mark.integration

W = Tables(tables=6, changes=24, keys=8)
BROKEN = "t002"


def waves(w: Tables, cut: int) -> tuple[list, dict, dict]:
    """The workload's events, and every table's rows after the first `cut` of them and after all."""
    final: dict[str, dict[int, dict]] = {}
    events, first = [], {}
    for i, e in enumerate(changes(w, final)):  # `final` holds the state after each event as it is yielded
        events.append(e)
        if i == cut - 1:
            first = {t: dict(rows) for t, rows in final.items()}
    return events, first, final


def send(produce, topic: str, events: list) -> None:
    produce(topic, [e for _, _, e in events], keys=[json.dumps(k) for _, k, _ in events])


def assert_exact(spark, db: Path, table: str, rows: dict[int, dict], jvm: bool = True) -> None:
    model = by_key(list(rows.values()), ["id"])
    assert by_key(hudi_rs_rows(str(db / table)), ["id"]) == model, table
    if jvm:
        assert by_key(spark_rows(spark, str(db / table)), ["id"]) == model, table


def instants(table: Path) -> list[str]:
    """Everything on the table's timeline: a commit, compaction or clean would add a file."""
    return sorted(p.name for p in (table / ".hoodie" / "timeline").iterdir() if p.is_file() and p.name[0] != ".")


def status(cfg: Path) -> dict:
    p = cli.cdcsync("status", cfg, "--json", jvm_free=True)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


@pytest.mark.soak  # runs through the CLI before and after a repair, each a JVM
def test_a_table_with_broken_storage_is_set_aside_exit_83_then_caught_up_after_repair(spark, bootstrap, make_topic,
                                                                                      produce, tmp_path):
    topic = make_topic(partitions=2)
    events, first, final = waves(W, W.messages // 2)
    send(produce, topic, events[:W.messages // 2])
    (tmp_path / "run").mkdir()
    cfg = routed_config(tmp_path / "run", bootstrap, topic, "debezium-json", [ROUTE])
    db, ckpt = tmp_path / "run" / "db", tmp_path / "run" / "ckpt"
    others = sorted(set(final) - {BROKEN})

    landed = run_once(cfg, spark)
    assert landed.isolated == {} and sorted(landed.tables) == sorted(final)
    for t in final:
        assert_exact(spark, db, t, first[t])
    position = json.loads((ckpt / "routes-progress.json").read_text())["fresh"]  # where every table stands

    props, saved = db / BROKEN / ".hoodie" / "hoodie.properties", tmp_path / "saved.properties"
    props.rename(saved)  # not hoodie.properties.backup: Hudi would read that one instead
    props.mkdir()
    second = events[W.messages // 2:]
    send(produce, topic, second)

    p = cli.cdcsync("run", cfg, "--once", "--json", timeout=900)
    assert p.returncode == ExitCode.TABLE_ISOLATED == 83, p.stderr[-3000:]
    summary = json.loads(p.stdout)
    aside = summary["isolated"]
    assert list(aside) == [BROKEN] and "hoodie.properties" in aside[BROKEN]["error"], aside
    assert aside[BROKEN]["offsets"] == position and aside[BROKEN]["attempts"] == 1
    assert aside[BROKEN]["path"] == str(db / BROKEN)
    assert f"table {BROKEN} is set aside" in p.stderr
    assert sorted(summary["tables"]) == others  # the failed table's rows counted nowhere: it reads them again
    assert summary["totals"]["messages"] == sum(1 for t, _, _ in second if t != BROKEN)
    for t in others:
        assert_exact(spark, db, t, final[t])

    st = status(cfg)
    assert [i["table"] for i in st["isolated"]] == [BROKEN]
    shown = st["isolated"][0]
    assert shown["error"] == aside[BROKEN]["error"] and shown["offsets"] == position
    assert shown["behind"] == len(second) and shown["attempts"] == 1 and shown["since"] and shown["retry_at"]
    assert st["lag_total"] == len(second)  # the slowest table's lag
    plain = cli.cdcsync("status", cfg, jvm_free=True)
    assert f"set aside      {BROKEN} at " in plain.stdout and "hoodie.properties" in plain.stdout, plain.stdout

    props.rmdir()
    saved.rename(props)
    assert_exact(spark, db, BROKEN, first[BROKEN], jvm=False)  # nothing of the failed run reached it
    before = {t: instants(db / t) for t in others}

    caught_up = run_once(cfg, spark)
    assert caught_up.isolated == {} and list(caught_up.tables) == [BROKEN]
    assert caught_up.totals["messages"] == sum(1 for t, _, _ in second if t == BROKEN)  # its own rows, once
    for t in final:
        assert_exact(spark, db, t, final[t])
    assert {t: instants(db / t) for t in others} == before  # the others: not one commit more
    st = status(cfg)
    assert st["isolated"] == [] and st["lag_total"] == 0
    assert run_once(cfg, spark).batches == 0  # nothing left to read
