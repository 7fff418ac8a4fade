"""One PNG per bench report: each contender's rate at its median wall time, with its fastest and slowest run as the
error bar, and its median peak memory; peer-default and peer-tuned side by side; the freshness medians in the
title."""

from __future__ import annotations

from pathlib import Path


def draw(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = {name: row for name, row in report["summary"].items() if "median_s" in row}
    names = list(table)[::-1]  # barh draws upwards: the first contender on top
    rates = [table[n]["messages"] / table[n]["median_s"] for n in names]  # unrounded: the bar ends lie around it
    # the error bar: the rate of the slowest run and of the fastest
    low = [max(0.0, r - table[n]["messages"] / table[n]["max_s"]) for n, r in zip(names, rates, strict=True)]
    high = [max(0.0, table[n]["messages"] / table[n]["min_s"] - r) for n, r in zip(names, rates, strict=True)]
    colour = ["#3b7dd8" if n.startswith("cdcsync") else "#e08a2c" if n.startswith("peer-default") else
              "#d4b03a" if n.startswith("peer-tuned") else "#7a9a5a" if n.startswith("bound") else "#999999"
              for n in names]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 0.9 + 0.36 * max(len(names), 4)))
    a.barh(names, rates, xerr=[low, high], color=colour, ecolor="#333333", capsize=2)
    a.set_xlabel(f"records / s at the median of {report['rounds']} runs; bar: slowest–fastest (higher is better)")
    a.set_xlim(0, max(rates + [1]) * 1.5)  # room for the labels
    for i, n in enumerate(names):
        row = table[n]
        a.text(rates[i] + high[i], i, f" {row['records_per_s']:,} ({row['median_s']:g} s, {row['min_s']:g}–"
               f"{row['max_s']:g})", va="center", fontsize=7)
    b.barh(names, [table[n]["peak_rss_median_mb"] for n in names], color="#999999")
    b.set_xlabel("peak memory of the process tree, MB (median)")
    b.set_yticks([])
    w, m = report["workload"], report["machine"]
    title = (f"{w['events']:,} Debezium events, {w['keys']:,} keys, {w['partitions']} partitions — "
             f"{m['cpus']} cores, {m['memory_mb'] // 1024} GiB; {report['rounds']} interleaved rounds; "
             f"peer-tuned and bound-tuned on cdcsync's Hudi write options")
    fresh = (report.get("freshness") or {}).get("summary") or {}
    if fresh:
        title += f"\nfreshness at {report['freshness']['rate']:,}/s, 1 s trigger, medians: " + "; ".join(
            f"{job} p50 {row['p50_s']['median']} s, p95 {row['p95_s']['median']} s" for job, row in fresh.items()
            if "p50_s" in row)
    out = [f"{n} ({row['runs'] - row['ok']} of {row['runs']})" for n, row in report["summary"].items()
           if row["ok"] < row["runs"]]
    if out:
        title += f"\nruns left out (final state WRONG, or a process left behind): {', '.join(out)} (see JSON)"
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
