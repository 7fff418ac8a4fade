"""bench/ab.py: the two variants' options, their interleaving and the ratio of their medians; bench/chart.py draws
a report's medians, peer-default and peer-tuned among them."""

from __future__ import annotations

import json
import tomllib

import pytest

from bench import ab, chart, contenders, fair, run


def test_the_option_goes_to_the_second_variant_only_and_the_sink_options_to_both():
    sink, option = {"hoodie.a": "1", "hoodie.b": "1"}, {"hoodie.b": "2"}
    assert ab.options_of("base", sink, option) == sink
    assert ab.options_of("option", sink, option) == {"hoodie.a": "1", "hoodie.b": "2"}


def test_the_ab_runs_interleave_and_report_the_ratio_of_the_medians(monkeypatch, tmp_path):
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(ab, "produce", lambda *a: {"messages": 300, "seconds": 0.1})
    seconds = {"base": [10.0, 12.0, 30.0], "option": [8.0, 9.0, 7.0]}
    got = []

    def one(folder, src, table_type, batch_size, variant, columns, code=None):
        assert folder.is_dir() and table_type == "COPY_ON_WRITE" and batch_size == 100 and code is None
        assert columns == ({"updated_at": "DOUBLE"} if variant == "option" else {})
        assert src.topic.startswith("bench.ab.") and src.bootstrap == "b:9092"
        n = sum(g[0] == variant for g in got)
        got.append((variant, src.options))
        return {"name": variant, "status": "ok", "seconds": seconds[variant][n], "cpu_s": 4.0 if variant == "base"
                else 3.0, "peak_rss_mb": 1.0, "messages": 300, "batches": 3, "compactions": 0, "rows": 60,
                "state_matches": True}

    monkeypatch.setattr(ab, "run_one", one)
    args = ["--option", "hoodie.embed.timeline.server=true", "--column", "updated_at=DOUBLE", "--sink-option",
            "hoodie.x=y", "--batches", "3",
            "--batch-size", "100", "--table", "COW", "--bootstrap", "b:9092"]
    assert ab.main(args) == 0
    assert [g[0] for g in got] == ["base", "option"] * 3
    assert got[0][1] == {"hoodie.x": "y"} and got[1][1] == {"hoodie.x": "y", "hoodie.embed.timeline.server": "true"}
    report = json.loads((tmp_path / "results" / "latest-ab.json").read_text())
    assert report["workload"]["events"] == 300 and report["workload"]["keys"] == 60
    assert report["summary"]["base"]["median_s"] == 12.0 and report["summary"]["option"]["median_s"] == 8.0
    assert report["rate_option_over_base"] == 1.5 and report["cpu_option_over_base"] == 0.75
    assert report["columns"] == {"updated_at": "DOUBLE"}


def test_a_declared_column_is_written_to_the_config(tmp_path):
    cfg = contenders.cdcsync_config(tmp_path, "b:9092", "t", "MERGE_ON_READ",
                                    schema_columns={"balance_cents": "BIGINT"})
    assert tomllib.loads(cfg.read_text())["schema"]["columns"] == {"balance_cents": "BIGINT"}


def test_the_ab_needs_an_option_or_a_column(capsys):
    with pytest.raises(SystemExit) as e:
        ab.main(["--batches", "2"])
    assert e.value.code == 2 and "--option or a --column, or the base one a --base-ref" in capsys.readouterr().err


def test_the_chart_draws_every_contenders_median_and_names_the_wrong_ones(tmp_path):
    pytest.importorskip("matplotlib")
    runs = [{"name": n, "round": i, "status": "WRONG" if (n, i) == ("bound-tuned MOR", 2) else "ok",
             "seconds": s * i, "messages": 1000, "peak_rss_mb": 900.0, "cpu_s": 3.0}
            for i in (1, 2, 3) for n, s in (("cdcsync MOR", 4.0), ("peer-default MOR", 3.0),
                                            ("peer-tuned MOR", 3.5), ("bound-tuned MOR", 2.0), (contenders.FLOOR, 1.0))]
    report = {"rounds": 3, "summary": fair.summary(runs), "workload": {"events": 1000, "keys": 200, "partitions": 4},
              "machine": {"cpus": 2, "memory_mb": 24000},
              "freshness": {"rate": 2000, "summary": {"cdcsync": {"p50_s": {"median": 5.0}, "p95_s": {"median": 9.0}},
                                                      "peer-tuned": {"runs": 1, "wrong": 1}}}}
    chart.draw(report, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 10_000
    # a rate rounded up past the fastest run's (2,000 in 500.69 and 612.53 s: 3.6/s, rounded to 4) still draws
    slow = [{"name": "cdcsync MOR multi-batch", "round": i, "status": "ok", "seconds": s, "messages": 2000,
             "peak_rss_mb": 2600.0} for i, s in ((1, 612.53), (2, 500.69))]
    chart.draw(report | {"summary": fair.summary(slow), "freshness": None}, tmp_path / "d.png")
    assert (tmp_path / "d.png").exists()
