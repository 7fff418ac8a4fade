"""`make bench-ab AB_ARGS="--option KEY=VALUE …"`: the same multi-batch workload through `cdcsync run --once` without
("base") and with the given [sink.options] or [schema.columns] entries, or with the working copy's code against an
earlier revision's ("option"), interleaved (base, option, base, option, …), each run's table read back by hudi-rs and
held against the workload's final state, and the two medians.

    python -m bench.ab --option KEY=VALUE [--option …] [--column NAME=TYPE …] [--base-ref REV] [--batches 20]
                       [--batch-size 5000] [--keys N] [--table MOR|COW] [--rounds 3] [--sink-option KEY=VALUE …]
                       [--bootstrap HOST:PORT] [--event-log DIR]

The workload (bench/workload.py): batches × batch-size Debezium events over --keys keys (a fifth of the events
unless given, as the smoke workload's 100,000 over 20,000), on one topic of a local broker; cdcsync's
max_records_per_batch = --batch-size, so each run commits --batches times (the first a bulk_insert, then upserts).
`--sink-option` goes to both variants' [sink.options], `--option` to the second's only (over them), `--column` to the
second's [schema.columns] (the workload's columns: id, name, segment, balance_cents, updated_at). `--base-ref` runs
the base variant's cdcsync from a worktree of that git revision (on this clone's jars), so that a change of code is
measured as an option is: `--base-ref HEAD~1` with no option gives the last commit's cost or gain. Each run is in a
folder of its own, removed after it. Writes bench/results/<time>-ab.json and latest-ab.json: every run (wall time,
CPU time of the process tree, peak memory, batches, compactions, the final state), each variant's median, fastest
and slowest run, and option/base as a ratio of the median rates (above 1: the option is faster) and of the median
CPU times. Exits 1 when a table differs from the workload's final state.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench import fair, measure, run, timeline
from bench.contenders import Source, cdcsync_config, log, measured, status, table_checksum
from bench.workload import Workload, broker, checksum, final_state, produce

VARIANTS = ("base", "option")


def options_of(variant: str, sink: dict[str, str], option: dict[str, str]) -> dict[str, str]:
    """The [sink.options] of a variant: --sink-option for both, --option over them for "option"."""
    return {**sink, **option} if variant == "option" else dict(sink)


def run_one(folder: Path, src: Source, table_type: str, batch_size: int, variant: str,
            columns: dict[str, str], code: Path | None = None) -> dict:
    """One `cdcsync run --once` of the topic in batches of `batch_size` into a table in `folder` on the variant's
    [sink.options] (`src.options`) and [schema.columns] (`columns`), checked; `code`: a source tree whose cdcsync
    runs (its folder first on the path: `python -m` puts the working directory there) on this clone's jars."""
    cfg = cdcsync_config(folder, src.bootstrap, src.topic, table_type, name="ab", options=src.options,
                         run_options={"max_records_per_batch": batch_size}, schema_columns=columns)
    env = {"CDCSYNC_JARS_DIR": str(run.ROOT / "bundles" / "spark" / "jars")} if code else None
    m = measured(f"cdcsync {variant}", [sys.executable, "-m", "cdcsync", "run", str(cfg), "--once", "--json", "-q"],
                 env=env, cwd=code or run.ROOT)
    summary = json.loads(m.stdout)
    got = table_checksum(folder / "ab")
    ok = got == src.want
    return {"name": variant, "status": "WRONG" if not ok else status(m), "seconds": m.seconds, "cpu_s": m.cpu_s,
            "peak_rss_mb": m.peak_rss_mb, "messages": summary["totals"]["messages"], "batches": summary["batches"],
            "compactions": measure.compactions(folder / "ab"), "rows": got[0], "state_matches": ok}


def compare(table: dict[str, dict]) -> dict:
    """option/base: the ratio of the median rates (above 1: faster with the option) and of the median CPU times
    (below 1: less CPU with the option)."""
    out = {"rate_option_over_base": fair.ratio(table, "option", "base")}
    cpu = [table.get(v, {}).get("cpu_median_s") for v in VARIANTS]
    out["cpu_option_over_base"] = round(cpu[1] / cpu[0], 3) if all(cpu) else None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench.ab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a [sink.options] entry of the second variant (repeatable)")
    ap.add_argument("--column", action="append", default=[], metavar="NAME=TYPE",
                    help="a [schema.columns] entry of the second variant (repeatable)")
    ap.add_argument("--sink-option", action="append", default=[], metavar="KEY=VALUE",
                    help="a [sink.options] entry of both variants (repeatable)")
    ap.add_argument("--base-ref", metavar="REV",
                    help="the base variant runs cdcsync as of this git revision, the second the working copy's")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=5000)
    ap.add_argument("--keys", type=int, help="the workload's keys (default: a fifth of its events)")
    ap.add_argument("--table", choices=list(run.TABLE_TYPES), default="MOR")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each variant, interleaved")
    ap.add_argument("--bootstrap", help="use this broker instead of starting one")
    ap.add_argument("--event-log", type=Path, metavar="DIR", help="keep every run's Spark event log in DIR")
    args = ap.parse_args(argv)
    if not args.option and not args.column and not args.base_ref:
        ap.error("give the second variant an --option or a --column, or the base one a --base-ref")
    if min(args.batches, args.batch_size, args.rounds) < 1:
        ap.error("--batches, --batch-size and --rounds must be at least 1")
    if args.event_log:
        timeline.keep_event_logs(args.event_log)
    option = dict(o.split("=", 1) for o in args.option)
    sink = dict(o.split("=", 1) for o in args.sink_option)
    columns = dict(c.split("=", 1) for c in args.column)
    events = args.batches * args.batch_size
    w = Workload(events=events, keys=args.keys or max(1, events // 5))
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = run.ROOT / ".local" / "bench" / f"{stamp}-ab"
    work.mkdir(parents=True)
    base_code = work / "base-code" if args.base_ref else None
    try:
        if base_code:
            subprocess.run(["git", "-C", str(run.ROOT), "worktree", "add", "--detach", "-q", str(base_code),
                            args.base_ref], check=True)
        with broker(work, args.bootstrap) as bootstrap:
            uptime = {"start": run.uptime_line()}
            topic = f"bench.ab.{stamp.lower()}"
            produced = produce(bootstrap, topic, w)
            want = checksum(final_state(w).values())
            log(f"A/B {args.table}: {w.events:,} events over {w.keys:,} keys in batches of {args.batch_size:,}; "
                f"option {option} {columns}, base at {args.base_ref or 'the working copy'}, both {sink}; "
                f"{args.rounds} rounds; produced {produced['messages']:,}, "
                f"final state {want[0]:,} rows; {uptime['start']}")
            runs = []
            for i, variant in fair.interleave(list(VARIANTS), args.rounds):
                folder = work / f"run{len(runs) + 1:03d}"
                folder.mkdir()
                load = os.getloadavg()
                try:
                    mine = Source(bootstrap, topic, want, options_of(variant, sink, option))
                    r = run_one(folder, mine, run.TABLE_TYPES[args.table], args.batch_size, variant,
                                columns if variant == "option" else {}, base_code if variant == "base" else None)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                runs.append({**r, "round": i, "load_before": [round(x, 2) for x in load]})
                log(f"#{i} {variant}: {r['messages']:,} messages in {r['seconds']}s (CPU {r['cpu_s']}s), "
                        f"{r['batches']} batches, {r['compactions']} compactions, peak {r['peak_rss_mb']} MB, state "
                        f"{'matches' if r['state_matches'] else 'WRONG'}")
            table = fair.summary(runs)
            uptime["end"] = run.uptime_line()
            report = {"when": stamp, "table": args.table, "option": option, "columns": columns, "sink_options": sink,
                      "base_ref": args.base_ref and _revision(args.base_ref), "option_ref": _revision("HEAD"),
                      "workload": w.__dict__, "batch_size": args.batch_size, "rounds": args.rounds,
                      "expected_rows": want[0], "uptime": uptime, "runs": runs, "summary": table, **compare(table)}
            for variant, row in table.items():
                if "median_s" in row:
                    log(f"{variant}: median {row['median_s']}s ({row['min_s']}-{row['max_s']}s), CPU "
                            f"{row.get('cpu_median_s')}s, {row['records_per_s']:,} records/s")
            log(f"option/base: rate {report['rate_option_over_base']}x, CPU {report['cpu_option_over_base']}x; "
                    f"{uptime['end']}")
            run.RESULTS.mkdir(parents=True, exist_ok=True)
            for name in (f"{stamp}-ab", "latest-ab"):
                (run.RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
            print(json.dumps(report, indent=2))
            bad = [f"{r['name']} #{r['round']}" for r in runs if not r["state_matches"]]
            if bad:
                log(f"error: final state differs from the workload's for {bad}")
                return 1
            return 0
    finally:
        if base_code:
            subprocess.run(["git", "-C", str(run.ROOT), "worktree", "remove", "--force", str(base_code)], check=False)
        shutil.rmtree(work, ignore_errors=True)


def _revision(ref: str) -> str | None:
    """The commit `ref` names (the option variant's HEAD may carry uncommitted changes on top); None outside git."""
    out = subprocess.run(["git", "-C", str(run.ROOT), "rev-parse", ref], capture_output=True, text=True, check=False)
    return out.stdout.strip() if out.returncode == 0 else None


if __name__ == "__main__":
    sys.exit(main())
