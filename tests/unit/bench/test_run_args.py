"""bench.run refuses before any run what would fail it after the runs."""

from __future__ import annotations

import sys
import types

import pytest

from bench import run


def test_a_missing_chart_library_stops_the_bench_before_it_starts(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    monkeypatch.setattr(run, "Workload", None)  # any run past the check would fail on this instead
    with pytest.raises(SystemExit) as e:
        run.main(["--size", "tiny"])
    assert e.value.code == 2 and "make bench" in capsys.readouterr().err


def test_no_single_batch_runs_the_multi_batch_pair_alone(monkeypatch, tmp_path):
    ran = []

    def job(name):
        result = {"name": name, "status": "ok", "messages": 1, "seconds": 1, "peak_rss_mb": 1}
        return lambda *a, **k: ran.append(name) or result

    monkeypatch.setitem(sys.modules, "matplotlib", types.ModuleType("matplotlib"))  # the chart is not drawn here
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "produce", lambda *a: {"messages": 1, "seconds": 0.1})
    monkeypatch.setattr(run, "run_cdcsync", job("cdcsync"))
    monkeypatch.setattr(run, "run_peer", job("peer"))
    monkeypatch.setattr(run, "run_multi_batch", lambda *a: [job("multi-batch")()])
    monkeypatch.setattr(run, "run_floor", job("floor"))
    monkeypatch.setattr(run, "write", lambda *a: None)
    args = ["--size", "tiny", "--bootstrap", "b:9092", "--only", "throughput", "--no-avro", "--grown-factor", "0"]
    assert run.main([*args, "--no-single-batch"]) == 0
    assert ran == ["multi-batch", "floor"]


def test_the_single_batch_pairs_run_beside_the_bound_and_report_its_ratios(monkeypatch, tmp_path):
    ran = []

    def job(name, rate):
        result = {"name": name, "status": "ok", "messages": rate, "seconds": 1, "peak_rss_mb": 1}
        return lambda *a, **k: ran.append(name) or result

    bound_args = []
    monkeypatch.setitem(sys.modules, "matplotlib", types.ModuleType("matplotlib"))
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "produce", lambda *a: {"messages": 7, "seconds": 0.1})
    monkeypatch.setattr(run, "run_cdcsync", lambda w, b, t, tt, *a, **k: job(f"cdcsync {run._kind(tt)}", 80)())
    monkeypatch.setattr(run, "run_peer", lambda w, b, t, tt, *a, **k: job(f"peer {run._kind(tt)}", 100)())
    monkeypatch.setattr(run, "run_bound", lambda w, b, t, tt, want, messages: bound_args.append(messages) or job(
        f"bound {run._kind(tt)}", 160)())
    monkeypatch.setattr(run, "run_floor", job("Spark → Parquet (floor)", 200))
    reports = []
    monkeypatch.setattr(run, "write", lambda report, name: reports.append(report))
    args = ["--size", "tiny", "--bootstrap", "b:9092", "--only", "throughput", "--no-avro", "--no-multi-batch",
            "--grown-factor", "0"]
    assert run.main(args) == 0
    assert ran == ["cdcsync MOR", "peer MOR", "bound MOR", "cdcsync COW", "peer COW", "bound COW",
                   "Spark → Parquet (floor)"]
    assert bound_args == [7, 7]  # the bound reads the whole topic: the messages produced
    ratios = reports[0]["ratios"]
    assert ratios["cdcsync MOR / bound"] == 0.5 and ratios["peer COW / bound"] == 0.625
    assert ratios["cdcsync MOR / peer"] == 0.8 and ratios["cdcsync COW / floor"] == 0.4


def test_only_transform_runs_the_pair_alone_without_the_chart(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # the pair draws no chart: no need of it
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    called = []

    def pair(work, bootstrap, stamp, size, options, rounds, kinds, transform_options):
        called.append((size, rounds, kinds, transform_options))
        return {"runs": [{"table": "COW", "variant": "plain", "round": 1, "ok": True}], "summary": {}}

    monkeypatch.setattr(run, "run_transform", pair)
    for other in ("produce", "run_cdcsync", "run_peer", "run_bound", "run_floor", "run_freshness"):
        monkeypatch.setattr(run, other, None)  # any of them called would fail
    args = ["--size", "tiny", "--bootstrap", "b:9092", "--only", "transform", "--transform-rounds", "5"]
    assert run.main([*args, "--transform-table", "COW", "--transform-sink-option", "hoodie.a=b"]) == 0
    assert run.main(args) == 0
    assert called == [("tiny", 5, ["COW"], {"hoodie.a": "b"}), ("tiny", 5, ["MOR", "COW"], {})]
    assert (tmp_path / "results" / "latest-tiny-transform.json").exists()
