"""The fair bench's pure parts (bench/fair.py, issue 47): the tuned options are read from cdcsync's own code for the
config it runs, the rounds interleave, and the figures are medians, their spread and ratios of medians."""

from __future__ import annotations

import pytest

from bench import contenders, fair
from cdcsync.sinks import hudi


def _config(tmp_path, table_type="MERGE_ON_READ", options=None, run_options=None):
    return contenders.cdcsync_config(tmp_path, "b:9092", "t", table_type, options=options, run_options=run_options)


def test_the_tuned_options_are_cdcsyncs_own_for_its_config_less_what_names_the_table(tmp_path):
    from cdcsync.config import load_config

    cfg = _config(tmp_path, options={"hoodie.index.type": "BUCKET"})
    got = fair.tuned_options(cfg, 2000)
    spec = hudi.TableSpec.from_config(load_config(cfg))
    session = fair.session_like("local[2]", {"spark.sql.shuffle.partitions": "4"})
    assert got == {k: v for k, v in hudi.options_for(spec, session, 2000).items()
                   if k not in hudi.NAMING and k not in fair.compaction_wiring(spec)}
    assert got["hoodie.embed.timeline.server"] == "false" and got["hoodie.write.markers.type"] == "DIRECT"
    assert got[hudi.COLUMN_STATS] == "false" and got["hoodie.index.type"] == "BUCKET"  # [sink.options] win
    assert [got[k] for k in hudi.SHUFFLES] == ["1", "1"]  # a write of 2,000 rows: one task
    assert not set(hudi.NAMING) & set(got)
    cow = fair.tuned_options(_config(tmp_path, "COPY_ON_WRITE"), 1_000_000)
    assert [cow[k] for k in hudi.SHUFFLES] == ["4", "4"]


def test_how_cdcsync_hands_compaction_to_its_own_compactor_is_left_out_unless_the_config_says(tmp_path):
    from cdcsync.sinks import compaction

    wiring = set(compaction.write_options(compaction.ASYNC))
    assert {"hoodie.compact.schedule.inline", "hoodie.write.lock.provider"} <= wiring
    assert not wiring & set(fair.tuned_options(_config(tmp_path), 2000))
    own = {"hoodie.compact.inline": "true"}  # inline compaction asked for: both compact so
    got = fair.tuned_options(_config(tmp_path, options=own), 2000)
    assert got["hoodie.compact.inline"] == "true" and "hoodie.table.services.incremental.enabled" not in got
    assert fair.compaction_wiring(hudi.TableSpec("/t", "t", "COPY_ON_WRITE", ["id"], [], ["x"], {})) == set()


def test_the_tuned_options_follow_cdcsyncs_code_not_a_copy(tmp_path, monkeypatch):
    monkeypatch.setattr(hudi, "SAME_JVM", {**hudi.SAME_JVM, "hoodie.some.new.tuning": "x"})
    monkeypatch.setattr(hudi, "ROWS_PER_TASK", 500)
    got = fair.tuned_options(_config(tmp_path), 1000)
    assert got["hoodie.some.new.tuning"] == "x" and got["hoodie.upsert.shuffle.parallelism"] == "2"


def test_the_tuned_options_take_the_configs_own_spark_width_and_master(tmp_path):
    cfg = _config(tmp_path)
    cfg.write_text(cfg.read_text().replace('master = "local[2]"', 'master = "spark://m:7077"\n'
                                           '"spark.sql.shuffle.partitions" = "16"'))
    got = fair.tuned_options(cfg, None)
    assert [got[k] for k in hudi.SHUFFLES] == ["16", "16"]
    assert "hoodie.embed.timeline.server" not in got  # a cluster keeps Hudi's own


def test_rounds_interleave_every_contender_in_one_order():
    assert fair.interleave(["A", "B", "C"], 3) == [(1, "A"), (1, "B"), (1, "C"), (2, "A"), (2, "B"), (2, "C"),
                                                    (3, "A"), (3, "B"), (3, "C")]
    assert fair.interleave(["A"], 1) == [(1, "A")]


def _run(name, seconds, status="ok", messages=1000, cpu=None, rss=100.0):
    r = {"name": name, "status": status, "seconds": seconds, "messages": messages, "peak_rss_mb": rss}
    return r | ({"cpu_s": cpu} if cpu is not None else {})


def test_the_summary_gives_medians_and_spread_over_the_runs_whose_state_matched():
    runs = [_run("a", 10.0, cpu=8.0, rss=100), _run("b", 20.0), _run("a", 14.0, cpu=9.0, rss=300),
            _run("b", 99.0, status="WRONG"), _run("a", 12.0, cpu=20.0, rss=200), _run("b", 30.0)]
    got = fair.summary(runs)
    assert list(got) == ["a", "b"]
    assert got["a"] == {"runs": 3, "ok": 3, "wrong": 0, "hung": 0, "median_s": 12.0, "min_s": 10.0, "max_s": 14.0,
                        "spread": 0.333, "messages": 1000, "records_per_s": 83, "peak_rss_median_mb": 200.0,
                        "cpu_median_s": 9.0}
    assert (got["b"]["runs"], got["b"]["ok"], got["b"]["wrong"]) == (3, 2, 1)  # the WRONG run gives no figure
    assert (got["b"]["median_s"], got["b"]["min_s"], got["b"]["max_s"]) == (25.0, 20.0, 30.0)
    assert "cpu_median_s" not in got["b"]
    assert fair.summary([_run("c", 5.0, status="WRONG")])["c"] == {"runs": 1, "ok": 0, "wrong": 1, "hung": 0}
    assert fair.summary([_run("d", 5.0, status="HUNG"), _run("d", 7.0)])["d"]["median_s"] == 7.0


def test_ratios_are_of_the_medians():
    runs = [_run("cdcsync", s) for s in (10.0, 40.0, 12.0)] + [_run("peer", s) for s in (8.0, 9.0, 30.0)]
    table = fair.summary(runs)
    assert fair.ratio(table, "cdcsync", "peer") == pytest.approx(9.0 / 12.0, abs=1e-3)
    assert fair.ratio(table, "peer", "cdcsync") == pytest.approx(12.0 / 9.0, abs=1e-3)
    assert fair.ratio(table, "cdcsync", "missing") is None
    assert fair.ratio(fair.summary([_run("x", 4.0, messages=2000), _run("y", 4.0)]), "x", "y") == 2.0


def test_spread_of():
    assert fair.spread_of([3.0, 1.0, 2.0, 10.0]) == {"median": 2.5, "min": 1.0, "max": 10.0}
