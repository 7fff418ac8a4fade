"""`run --once --metrics-textfile` (issue 48): a cron job's metrics for node_exporter's textfile collector hold what
the run's summary says, with the time of the last success; a failed run rewrites them and keeps that time."""

from __future__ import annotations

import json
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cdcsync.exit_codes import ExitCode
from cdcsync.runtime.metrics import LAST_SUCCESS
from tests import cli
from tests.integration.engine.helpers import write_config

pytestmark = pytest.mark.integration


def _series(path) -> dict[str, dict[tuple, float]]:
    """{sample name: {sorted label pairs: value}} of the textfile."""
    out: dict[str, dict[tuple, float]] = {}
    for fam in text_string_to_metric_families(path.read_text()):
        for s in fam.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


@pytest.mark.soak  # back-to-back cron runs, each a JVM
def test_the_textfile_holds_the_runs_summary_and_a_failed_run_keeps_the_last_success(bootstrap, make_topic,
                                                                                      produce, tmp_path):
    topic = make_topic(partitions=2)
    produce(topic, [{"id": i, "v": f"v{i}"} for i in range(30)], partition=0)
    produce(topic, [{"id": 100 + i} for i in range(20)] + ["{bad"], partition=1)
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.max_records_per_batch": 20,
                          "run.on_bad_record": "dead-letter"})
    textfile = tmp_path / "node_exporter" / "cdcsync_t.prom"
    textfile.parent.mkdir()
    before = time.time()
    p = cli.cdcsync("run", cfg, "--once", "--json", "--metrics-textfile", textfile)
    assert p.returncode == 0, p.stderr[-3000:]
    summary = json.loads(p.stdout)
    got = _series(textfile)

    assert summary["totals"]["messages"] == 51 and summary["totals"]["bad"] == 1
    assert sum(got["cdcsync_messages_total"].values()) == summary["totals"]["messages"]
    for tp, counts in summary["ledger"].items():
        t, part = tp.rsplit("/", 1)
        assert got["cdcsync_messages_total"][(("partition", part), ("table", "t"), ("topic", t))] == \
            counts["messages"]
    by_class = {}
    for labels, v in got["cdcsync_records_total"].items():
        by_class[dict(labels)["class"]] = by_class.get(dict(labels)["class"], 0) + v
    assert by_class == {k: v for k in ("upserted", "deleted", "skipped", "bad") if (v := summary["totals"][k])}
    assert got["cdcsync_batches_total"] == {(("table", "t"),): summary["batches"]}
    assert got["cdcsync_dead_letter_records_total"] == {(("table", "t"),): 1}
    assert set(got["cdcsync_consumer_lag_messages"].values()) == {0.0}  # planned against the end it read to
    success = got[LAST_SUCCESS][(("table", "t"),)]
    assert before < success <= time.time()
    assert all(dict(labels)["table"] == "t" for series in got.values() for labels in series)
    assert [f.name for f in textfile.parent.iterdir()] == [textfile.name]  # no temporary file left behind

    produce(topic, ["{bad again"], partition=0)
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.on_bad_record": "fail"})
    p = cli.cdcsync("run", cfg, "--once", "--metrics-textfile", textfile)
    assert p.returncode == ExitCode.BAD_RECORD, p.stderr[-3000:]
    got = _series(textfile)
    assert got[LAST_SUCCESS] == {(("table", "t"),): success}  # the failure is this run's, the success the last one
    assert got["cdcsync_start_time_seconds"][(("table", "t"),)] > success  # and the file is this run's
    assert "cdcsync_batches_total" not in got  # nothing committed
