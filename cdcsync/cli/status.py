"""`cdcsync status config.toml [--json] [--max-lag N] [--max-age SECONDS]`: where the tables stand, without a JVM."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from cdcsync.cli.app import app


@app.command("status")
def status(
    config: Path = typer.Argument(..., help="Path of config.toml."),
    json_out: bool = typer.Option(False, "--json", help="Print the status as JSON on stdout."),
    max_lag: int = typer.Option(None, "--max-lag", min=0, help="Exit 1 when more messages than this are behind."),
    max_age: float = typer.Option(None, "--max-age", min=0, help="Exit 1 when the last commit is older than this "
                                  "many seconds (or there is none)."),
    commits: int = typer.Option(5, "--commits", min=1, help="How many recent commits to show."),
) -> None:
    """Committed offsets, lag, last commit, recent commits, pending compactions, dead letters, offset gaps gone past
    (on_data_loss = "skip"), routed tables set aside (on_table_failure = "isolate") and the writer of the config's
    tables; exit 1 past --max-lag / --max-age. Reads the Hudi timeline directly: starts no JVM."""
    from cdcsync.config import load_config
    from cdcsync.engine.status import status as table_status
    from cdcsync.exit_codes import ExitCode
    from cdcsync.kafka.view import for_source
    from cdcsync.reporting import emit_json

    cfg = load_config(config)
    view = for_source(cfg, group=False)
    try:
        st = table_status(cfg, view, recent=commits)
    finally:
        view.close()
    problems = _problems(st, max_lag, max_age)
    st["healthy"], st["problems"] = not problems, problems
    if json_out:
        emit_json(st)
    else:
        _print(st)
    if problems:
        raise typer.Exit(int(ExitCode.WARNINGS))


def _problems(st: Mapping[str, Any], max_lag: int | None, max_age: float | None) -> list[str]:
    out = []
    if max_lag is not None and st["lag_total"] > max_lag:
        out.append(f"{st['lag_total']} messages behind, more than --max-lag {max_lag}")
    if max_age is not None:
        for t in st["tables"]:
            last = t["last_commit"]
            if last is None:
                out.append(f"{t['path']}: no commit yet (--max-age {max_age:g})")
            elif last["age_seconds"] > max_age:
                out.append(f"{t['path']}: last commit {last['age_seconds']:g} s ago, more than --max-age {max_age:g}")
    return out


def _print(st: Mapping[str, Any]) -> None:
    from cdcsync.kafka.offsets import Gap, Offsets

    echo = typer.echo
    echo(f"{st['table']} ({st['table_type']}) from {st['config']}")
    behind = ", ".join(f"{tp}: {n}" for tp, n in sorted(st["lag"].items()))
    echo(f"  lag            {st['lag_total']} message(s) behind ({behind or 'no partitions'})")
    committed = st["committed_offsets"]
    echo("  committed      " + ("; ".join(f"{t}/{p}: {o}" for t, ps in committed.items() for p, o in ps.items())
                               if committed else "nothing yet"))
    for t in st["tables"]:
        echo(f"  table {t['path']}")
        last = t["last_commit"]
        if last:
            echo(f"    last commit  {last['instant']} ({last['action']}, batch {last['batch_id']}), completed "
                 f"{last['completed']}, {last['age_seconds']:g} s ago")
        else:
            echo("    last commit  none" + ("" if t["exists"] else " (no table yet)"))
        for c in t["recent_commits"]:
            what = ", ".join(f"{k} {v}" for k, v in (c["records"] or {}).items() if v) or \
                f"{c['rows_written']} rows written"
            echo(f"    {c['instant']} {c['action']:<13} {'replay ' if c['replay'] else ''}{what}")
        if t["pending_compactions"]:
            echo(f"    compaction   {len(t['pending_compactions'])} pending (oldest {t['pending_compactions'][0]})")
        if t["inflight_writes"]:
            echo(f"    inflight     {', '.join(t['inflight_writes'])} (rolled back by the next run)")
    for i in st.get("isolated", []):
        at = Offsets.from_json(i["offsets"]).compact()
        echo(f"  set aside      {i['table']} at {at} ({i['behind']} message(s) behind) since {i['since']}, "
             f"{i['attempts']} failed attempt(s), next try {i['retry_at']}: {i['error']}")
    for g in map(Gap.from_json, st["data_loss"]):
        echo(f"  data loss      {g.describe()} (gone past in batch {g.batch_id}, on_data_loss = \"skip\")")
    dl = st["dead_letters"]
    if dl:
        reasons = ", ".join(f"{r}: {n}" for r, n in dl["by_reason"].items())
        echo(f"  dead letters   {dl['total']} ({reasons or 'none'}), {dl['replayed']} replayed; {dl['path']}")
    w = st["writer"]
    echo(f"  writer         {w['what']}, pid {w['pid']} on {w['host']}" if w else "  writer         none")
    for p in st.get("problems", []):
        echo(f"  PROBLEM        {p}")
