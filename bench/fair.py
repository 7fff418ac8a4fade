"""What makes the bench fair (issue 47): every Hudi contender on the same write options, each contender run several
times in interleaved rounds, and figures that are medians.

- `tuned_options`: the Hudi write options cdcsync uses for the table a cdcsync config names, read from cdcsync
  itself (`cdcsync.sinks.hudi.tuning` over the TableSpec the config makes, in a session as `cdcsync run` builds it),
  less what names the table, its columns and the operation, and less how cdcsync hands a MERGE_ON_READ table's
  compaction to its own background compactor (`cdcsync.sinks.compaction.write_options`: both compact
  asynchronously, the peer's streaming sink by Hudi's own service). The peer and the bound take them as "tuned".
- `interleave`: the order of the runs: round 1's A B C …, then round 2's A B C …
- `summary`: per contender, over its runs whose final state matched, the median wall time, the fastest and slowest
  run, the spread ((slowest - fastest) / median), the median CPU time and peak memory, and the rate at the median.
- `ratio`: one contender's rate over another's, from their medians.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from types import SimpleNamespace
from typing import TypeVar

T = TypeVar("T")


def tuned_options(config: Path, rows: int | None) -> dict[str, str]:
    """cdcsync's own Hudi write options for a write of `rows` changes into the table `config` names, as its `run`
    sets them: the config's [sink] and [sink.options], its [spark] master, the shuffle width its session starts with
    (cdcsync.runtime.session's BASE_CONF, unless [spark] sets one); without the options naming the table, its columns
    and the operation (cdcsync.sinks.hudi.NAMING), nor those wiring its compaction mode to its own compactor
    (`compaction_wiring`), unless [sink.options] set them."""
    from cdcsync.config import load_config
    from cdcsync.runtime.session import BASE_CONF, config_conf
    from cdcsync.sinks import hudi

    cfg = load_config(config)
    spec = hudi.TableSpec.from_config(cfg)
    got = hudi.tuning(spec, session_like(cfg.spark.get("master", "local[*]"), BASE_CONF | config_conf(cfg)), rows)
    return {k: v for k, v in got.items() if k not in compaction_wiring(spec) or k in spec.options}


def compaction_wiring(spec) -> set[str]:
    """The options by which cdcsync's DataFrame writes of `spec` hand its compaction to cdcsync's own background
    compactor (cdcsync.sinks.compaction.write_options: plans scheduled inline, executed apart, a lock shared with
    it). The peer's streaming sink compacts asynchronously by Hudi's own service: given these too, it schedules each
    plan twice (once inline, once itself), and at its end a compaction it was running when Spark stopped left its JVM
    stuck in Hudi's shutdown hooks (HoodieStreamingSink.reset, 2026-11-28)."""
    from cdcsync.sinks import compaction

    return set(compaction.write_options(compaction.compaction_mode(spec.table_type, spec.options)))


def session_like(master: str, conf: dict[str, str]):
    """What cdcsync.sinks.hudi.options_for reads of a SparkSession, without starting one: its master, its conf."""
    return SimpleNamespace(sparkContext=SimpleNamespace(master=master), conf=SimpleNamespace(get=conf.__getitem__))


def interleave(contenders: list[T], rounds: int) -> list[tuple[int, T]]:
    """(round, contender) in the order they run: every contender once per round, in the same order each round."""
    return [(i, c) for i in range(1, rounds + 1) for c in contenders]


def summary(runs: list[dict]) -> dict[str, dict]:
    """Per contender (`name`, in the order first run): how many runs, how many are "ok", how many had a final state
    other than the workload's ("WRONG") or left a process behind that had to be killed ("HUNG": measure.run), and
    over the ok ones only: the median, fastest and slowest wall time, the spread, the median CPU time and peak
    memory, the messages, and the rate at the median wall time."""
    out = {}
    for name in dict.fromkeys(r["name"] for r in runs):
        mine = [r for r in runs if r["name"] == name]
        ok = [r for r in mine if r["status"] == "ok"]
        row = {"runs": len(mine), "ok": len(ok), "wrong": sum(r["status"] == "WRONG" for r in mine),
               "hung": sum(r["status"] == "HUNG" for r in mine)}
        if ok:
            secs = [r["seconds"] for r in ok]
            med = statistics.median(secs)
            messages = statistics.median(r["messages"] for r in ok)
            row |= {"median_s": round(med, 2), "min_s": min(secs), "max_s": max(secs),
                    "spread": round((max(secs) - min(secs)) / med, 3) if med else None,
                    "messages": round(messages), "records_per_s": round(messages / med) if med else None,
                    "peak_rss_median_mb": round(statistics.median(r["peak_rss_mb"] for r in ok), 1)}
            if all("cpu_s" in r for r in ok):
                row["cpu_median_s"] = round(statistics.median(r["cpu_s"] for r in ok), 1)
            for extra in ("batches", "compactions"):
                if all(extra in r for r in ok):
                    row[f"{extra}_median"] = statistics.median(r[extra] for r in ok)
        out[name] = row
    return out


def ratio(table: dict[str, dict], a: str, b: str) -> float | None:
    """`a`'s rate over `b`'s, each at its median wall time (None unless both have a figure)."""
    ra, rb = (table.get(n, {}) for n in (a, b))
    if not (ra.get("median_s") and rb.get("median_s") and ra.get("messages") and rb.get("messages")):
        return None
    return round(ra["messages"] / ra["median_s"] / (rb["messages"] / rb["median_s"]), 3)


def spread_of(values: list[float]) -> dict:
    """The median of `values`, the lowest and the highest."""
    return {"median": round(statistics.median(values), 3), "min": min(values), "max": max(values)}
