"""The whole-database pair (bench/tables.py, issue 46): its figures per width, where a run's CPU went, and its place
in `make bench` (bench.run --only tables)."""

from __future__ import annotations

import json
import sys

import pytest

from bench import run
from bench import tables as tb


def _run(width, wall, cpu, state="ok"):
    return {"name": f"w{width}", "width": width, "seconds": wall - 10, "first_batch": wall / 2,
            "later_batches": wall / 2 - 10, "wall": wall, "cpu_seconds": cpu, "cpu_python": cpu / 4,
            "cpu_jvm": cpu * 3 / 4, "state": state}


def test_each_width_has_its_median_spread_and_the_speedup_of_the_medians():
    runs = [_run(1, 300, 240), _run("default", 200, 250), _run("default", 220, 240), _run(1, 330, 230),
            _run(1, 270, 250), _run("default", 180, 260)]
    s = tb.summarize(runs, ["1", "default"])
    assert s["1"]["wall"] == {"runs": [300, 330, 270], "median": 300, "min": 270, "max": 330, "spread": 0.2}
    assert s["default"]["wall"]["median"] == 200 and s["default"]["cores_busy"]["median"] == 1.25
    assert s["default"]["speedup"]["wall"] == 1.5 and s["default"]["speedup"]["seconds"] == round(290 / 190, 2)
    assert not any(f.startswith(("cpu", "cores")) for f in s["default"]["speedup"])  # CPU is no speed


def test_a_run_s_cpu_is_told_apart_by_process_and_its_busiest_thread_named():
    # 1 s of CPU in a thread, then 1.5 s idle: a sample after the thread ended still counts it in its process's
    # figure; the thread's own reading may lack its last half second (more when a loaded machine delays the sampler)
    spin = ("import threading, time\n"
            "def spin():\n    t = time.process_time()\n    while time.process_time() - t < 1.0: pass\n"
            "w = threading.Thread(target=spin); w.start(); w.join(); time.sleep(1.5)")
    m, cpu = tb._run_profiled([sys.executable, "-c", spin])
    assert m.returncode == 0
    assert cpu["jvm"] == 0 and cpu["jvm_threads"] == {}
    assert 0.8 <= cpu["python"] <= cpu["total"] and cpu["busiest_thread"]["process"].startswith("python")
    assert cpu["busiest_thread"]["cpu_seconds"] >= 0.3


def test_a_thread_name_holding_a_parenthesis_is_read_whole(tmp_path):
    stat = tmp_path / "stat"  # the kernel's line: "tid (name) state ppid … utime stime …"
    stat.write_text("42 (pool) (1)) S 1 1 1 0 -1 4194304 0 0 0 0 7 5 0 0 20 0 1 0 0 0 0\n")
    assert tb._thread_stat(stat) == ("pool) (1)", 12)


@pytest.mark.parametrize("state, code", [("ok", 0), ("WRONG", 1)])
def test_only_tables_writes_the_pair_s_report_and_fails_on_a_wrong_table(monkeypatch, tmp_path, state, code):
    asked = []

    def fake_bench(bootstrap, work, stamp, w, batches=2, rounds=3, widths=("1", "default")):
        asked.append((bootstrap, w, rounds))
        runs = [_run(1, 300, 240), _run("default", 200, 250, state)]
        return {"when": stamp, "runs": runs, "summary": tb.summarize(runs, ["1", "default"])}

    monkeypatch.setattr(tb, "bench", fake_bench)
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    assert run.main(["--size", "full", "--bootstrap", "b:9092", "--only", "tables", "--tables-rounds", "4"]) == code
    assert asked == [("b:9092", tb.SIZES["full"], 4)] and tb.SIZES["full"].messages == 100_000
    written = json.loads((tmp_path / "results" / "latest-full-tables.json").read_text())
    assert written["summary"]["default"]["speedup"]["wall"] == 1.5
