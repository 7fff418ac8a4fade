"""One PNG per bench report: throughput and peak memory per contender, freshness in the title."""

from __future__ import annotations

from pathlib import Path


def draw(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in report["results"] if r["status"] == "ok"]
    names = [r["name"] for r in ok]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    a.barh(names, [r["records_per_s"] for r in ok], color="#3b7dd8")
    a.set_xlabel("records / s (higher is better)")
    a.set_xlim(0, max(r["records_per_s"] for r in ok) * 1.35)  # room for the labels
    for i, r in enumerate(ok):
        a.text(r["records_per_s"], i, f" {r['records_per_s']:,} ({r['seconds']} s)", va="center", fontsize=8)
    b.barh(names, [r["peak_rss_mb"] for r in ok], color="#999999")
    b.set_xlabel("peak memory of the process tree, MB")
    b.set_yticks([])
    w, m = report["workload"], report["machine"]
    title = (f"{w['events']:,} Debezium events, {w['keys']:,} keys, {w['partitions']} partitions — "
             f"{m['cpus']} cores, {m['memory_mb'] // 1024} GiB")
    if report.get("freshness"):
        f = report["freshness"]
        title += f"\nfreshness at {f['rate_target']:,}/s, 1 s trigger: p50 {f['p50_s']} s, p95 {f['p95_s']} s"
        if report.get("freshness_peer"):
            peer = report["freshness_peer"]
            title += f" (the peer: p50 {peer['p50_s']} s, p95 {peer['p95_s']} s)"
    missing = [r["name"] for r in report["results"] if r["status"] != "ok"]
    if missing:
        title += f"\nnot run: {', '.join(missing)} (see JSON)"
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
