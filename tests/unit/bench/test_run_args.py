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
