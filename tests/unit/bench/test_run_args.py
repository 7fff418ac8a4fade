"""bench.run refuses before any run what would fail it after the runs."""

from __future__ import annotations

import sys

import pytest

from bench import run


def test_a_missing_chart_library_stops_the_bench_before_it_starts(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    monkeypatch.setattr(run, "Workload", None)  # any run past the check would fail on this instead
    with pytest.raises(SystemExit) as e:
        run.main(["--size", "tiny"])
    assert e.value.code == 2 and "make bench" in capsys.readouterr().err
