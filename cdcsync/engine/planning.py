"""How big the next batch is: everything available, or a budget shared by lag, capped by the rate limit."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from cdcsync.kafka.offsets import Offsets

if TYPE_CHECKING:
    from cdcsync.config.model import RunConfig


def seconds(text: str) -> float:
    """A duration such as "500ms", "10s", "5min", "1h"."""
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)\s*$", text)
    if not m:
        return 10.0
    n, unit = float(m.group(1)), m.group(2)
    return n * {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600}[unit]


def batch_budget(run_cfg: RunConfig) -> int | None:
    """Records per batch: max_records_per_batch, and at most one trigger interval's worth at the rate limit."""
    caps = [run_cfg.max_records_per_batch]
    if run_cfg.max_records_per_second:
        caps.append(max(1, int(run_cfg.max_records_per_second * max(seconds(run_cfg.trigger_interval), 1.0))))
    limits = [c for c in caps if c]
    return min(limits) if limits else None


def plan_end(start: Offsets, latest: Offsets, max_records: int | None) -> Offsets:
    """End offsets of the next batch: everything available, or at most `max_records` shared by lag."""
    lags = {(t, p): max(0, latest[t][p] - o) for t, p, o in Offsets(start).entries()}
    total = sum(lags.values())
    end = Offsets(start)
    if total == 0:
        return end
    budget = total if not max_records or max_records >= total else max_records
    given = 0
    for (t, p), lag in sorted(lags.items()):
        share = lag if budget == total else (lag * budget) // total
        end[t][p] = start[t][p] + share
        given += share
    for (t, p), lag in sorted(lags.items(), key=lambda kv: -kv[1]):  # hand out rounding leftovers
        if given >= budget:
            break
        if end[t][p] < start[t][p] + lag:
            end[t][p] += 1
            given += 1
    return end
