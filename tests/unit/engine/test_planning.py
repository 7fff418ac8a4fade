"""Batch planning without a JVM: budgets shared by lag, rate-limit caps, rounding."""

from __future__ import annotations

from types import SimpleNamespace

from cdcsync.engine.planning import batch_budget, plan_end


def test_everything_available_without_a_budget():
    assert plan_end({"t": {0: 5, 1: 0}}, {"t": {0: 10, 1: 7}}, None) == {"t": {0: 10, 1: 7}}


def test_budget_shared_by_lag_and_never_past_latest():
    end = plan_end({"t": {0: 0, 1: 0}}, {"t": {0: 300, 1: 100}}, 100)
    assert sum(end["t"].values()) == 100
    assert end["t"][0] == 75 and end["t"][1] == 25


def test_rounding_leftovers_are_handed_out():
    end = plan_end({"t": {0: 0, 1: 0, 2: 0}}, {"t": {0: 1, 1: 1, 2: 1}}, 2)
    assert sum(end["t"].values()) == 2 and all(v <= 1 for v in end["t"].values())


def test_nothing_to_read_returns_start():
    start = {"t": {0: 4}}
    assert plan_end(start, {"t": {0: 4}}, 10) == start


def run_cfg(**kw):
    base = {"max_records_per_batch": None, "max_records_per_second": None, "trigger_interval": "10s"}
    return SimpleNamespace(**{**base, **kw})


def test_rate_limit_caps_a_batch_at_one_trigger_interval():
    assert batch_budget(run_cfg()) is None
    assert batch_budget(run_cfg(max_records_per_second=500)) == 5000
    assert batch_budget(run_cfg(max_records_per_second=500, max_records_per_batch=1000)) == 1000
    assert batch_budget(run_cfg(max_records_per_second=500, trigger_interval="200ms")) == 500
