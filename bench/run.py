"""`make bench`: the same Debezium workload through each contender on one local broker, in interleaved rounds.

    python -m bench.run [--size smoke|full|tiny] [--rounds 3] [--freshness-seconds 60] [--freshness-rate 2000]
                        [--heap pre-touched|grown]
    python -m bench.run --size full --only transform [--transform-rounds 3] [--transform-table MOR ...]
    python -m bench.run --size full --only tables [--tables-rounds 3]

Writes bench/results/<time>-<size>.json and .png (and latest-<size>.*). The contenders (bench/contenders.py): cdcsync
run --once into MOR and COW; the peer (bench/peer.py: the hand-written streaming-sink job) into MOR and COW twice,
"peer-default" with Hudi's defaults and "peer-tuned" with exactly the Hudi write options cdcsync uses (bench/fair.py
reads them from cdcsync's own code); the bound (bench/bound.py: the least correct first load, one aggregation and a
bulk_insert) into MOR and COW on the tuned options; cdcsync into MOR from the same workload in Avro (Confluent wire
format, a local registry); cdcsync and both peers into MOR in 20 batches (cdcsync's max_records_per_batch = the peers'
maxOffsetsPerTrigger), where log files and compactions happen; cdcsync into a MOR table already holding 20× the
workload's keys (--grown-factor); the plain-Parquet floor. `--sink-option` reaches every Hudi contender. Every
contender runs --rounds times, interleaved (round 1: A B C …, round 2: A B C …), each run in a folder of its own that
is removed after it; the report has every run, each contender's median, fastest and slowest run, and ratios of
medians. Then the freshness run (bench/freshness.py) of cdcsync, peer-default and peer-tuned, as many rounds,
interleaved, every job's driver on the same heap flags (`--heap`); then the whole-database pair (bench/tables.py: N
tables' changes in one topic, routed, serial against parallel commits, interleaved; full = 100 tables × 1,000 changes)
into bench/results/<time>-<size>-tables.json (`--no-tables` leaves it out, `--only tables` runs it alone). A Hudi
contender's run whose table differs from the workload's final state is reported WRONG (no figure), and the bench then
exits with 1. `--only transform` runs the transform pair alone (bench/transform.py: cdcsync without and with a
[transform] sql, interleaved) into bench/results/<time>-<size>-transform.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from bench import fair
from bench.contenders import FLOOR, Source, cdcsync_config, contenders, log, measured, run_rounds, table_checksum
from bench.freshness import Job
from bench.freshness import measure as measure_freshness
from bench.timeline import keep_event_logs
from bench.workload import Workload, broker, checksum, final_state, produce

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
TABLE_TYPES = {"MOR": "MERGE_ON_READ", "COW": "COPY_ON_WRITE"}


def run_transform(work: Path, bootstrap: str, stamp: str, size: str, options: dict[str, str], rounds: int,
                  kinds: list[str], transform_options: dict[str, str] | None = None) -> dict:
    """The transform pair (bench/transform.py): the workload with `created_at` through cdcsync without ("plain") and
    with the [transform] sql and its day partitions, in one batch each, interleaved per table type (plain,
    transform, transform, plain, … `rounds` of each: a machine that slows or speeds up over the runs favours
    neither) on one topic; every table read back by hudi-rs and checked.
    `transform_options`: more hoodie.* options for the transform variant's tables only (over `options`)."""
    from bench import transform as tf

    w = replace(Workload.named(size), created_days=tf.DAYS)
    topic = f"bench.customer.{stamp.lower()}.created"
    log(f"transform pair, workload {size}: {w.events:,} events over {w.keys:,} keys with created_at over "
        f"{w.created_days} days; {tf.SQL}")
    produced = produce(bootstrap, topic, w)
    source = list(final_state(w).values())
    plain, rows = tf.checksum(source), tf.expected(source)
    want, folders = tf.checksum(rows), tf.days(rows)
    log(f"produced {produced['messages']:,} in {produced['seconds']}s; final state {plain[0]:,} rows, "
        f"{want[0]:,} through the transform ({1 - want[0] / plain[0]:.1%} rejected) in {len(folders)} partitions")
    runs = []
    for kind in kinds:
        for i in range(1, rounds + 1):
            for variant in ("plain", "transform") if i % 2 else ("transform", "plain"):  # ABBA: drift cancels
                name = f"bench_{kind.lower()}_{variant}_{i}"
                more = {"partition_by": tf.PARTITION_BY, "transform_sql": tf.SQL} if variant == "transform" else {}
                mine = {**options, **(transform_options or {})} if more else options
                cfg = cdcsync_config(work, bootstrap, topic, TABLE_TYPES[kind], name=name, options=mine, **more)
                m = measured(f"cdcsync {name}", [sys.executable, "-m", "cdcsync", "run", str(cfg), "--once",
                                                 "--json", "-q"])
                totals = json.loads(m.stdout)["totals"]
                got = tf.table_state(work / name)
                ok = tf.verdict(got, want, folders) if more else tf.verdict(got, plain, set())
                runs.append({"table": kind, "variant": variant, "round": i, "seconds": m.seconds,
                             "cpu_s": m.cpu_s, "peak_rss_mb": m.peak_rss_mb, "messages": totals["messages"],
                             "rows": got["state"][0], "partitions": len(got["folders"]), "files": got["files"],
                             "operations": got["operations"], "ok": ok,
                             "status": "ok" if ok else "WRONG"})
                log(f"cdcsync {kind} {variant} #{i}: {totals['messages']:,} messages in {m.seconds}s (CPU "
                    f"{m.cpu_s}s), peak {m.peak_rss_mb} MB, {got['state'][0]:,} rows in {len(got['folders'])} "
                    f"partitions, {got['files']} files, {'+'.join(got['operations'])}, state "
                    f"{'matches' if ok else 'WRONG'}")
                shutil.rmtree(work / name, ignore_errors=True)
                shutil.rmtree(work / f"{name}_ckpt", ignore_errors=True)
    return {"sql": tf.SQL, "partition_by": tf.PARTITION_BY, "transform_sink_options": transform_options or {},
            "workload": w.__dict__, "topic_messages":
            produced["messages"], "expected_rows": {"plain": plain[0], "transform": want[0]},
            "expected_partitions": len(folders), "order": "plain, transform, then transform, plain, … per table type",
            "runs": runs, "summary": tf.summary(runs)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench")
    ap.add_argument("--size", default="smoke", choices=["tiny", "smoke", "full"])
    ap.add_argument("--bootstrap", help="use this broker instead of starting one")
    ap.add_argument("--rounds", type=int, default=3, metavar="N",
                    help="runs of every contender, interleaved (round 1: A B C …, round 2: A B C …)")
    ap.add_argument("--freshness-seconds", type=int, default=60, help="0 skips the freshness run")
    ap.add_argument("--freshness-rate", type=int, default=2000)
    ap.add_argument("--heap", choices=list(HEAPS), default="pre-touched",
                    help="the freshness jobs' driver heap: reserved and touched at start (cdcsync's service default), "
                         "or grown from a 256 MB start as G1 decides (-Xms256m, no pre-touch)")
    ap.add_argument("--sink-option", action="append", default=[], metavar="KEY=VALUE",
                    help="a hoodie.* write option for every Hudi contender's tables (repeatable), to compare settings; "
                         "not the whole-database pair's")
    ap.add_argument("--only", choices=["throughput", "freshness", "transform", "tables"],
                    help="run one half, the transform pair alone (it runs only so), or the whole-database pair")
    ap.add_argument("--no-tables", action="store_true", help="skip the whole-database pair")
    ap.add_argument("--tables-rounds", type=int, default=3, metavar="N",
                    help="the whole-database pair: runs of each width (serial, parallel), interleaved")
    ap.add_argument("--transform-rounds", type=int, default=3, metavar="N",
                    help="--only transform: runs of each variant per table type, interleaved")
    ap.add_argument("--transform-table", action="append", choices=list(TABLE_TYPES), metavar="MOR|COW",
                    help="--only transform: the table types, in this order (repeatable; default MOR then COW)")
    ap.add_argument("--transform-sink-option", action="append", default=[], metavar="KEY=VALUE",
                    help="--only transform: a hoodie.* option for the transform variant's tables only (repeatable)")
    ap.add_argument("--no-avro", action="store_true", help="skip the Avro variant (and its local registry)")
    ap.add_argument("--no-single-batch", action="store_true", help="skip the single-batch MOR and COW contenders")
    ap.add_argument("--no-multi-batch", action="store_true", help="skip the multi-batch MOR variant")
    ap.add_argument("--grown-factor", type=int, default=20,
                    help="the grown-table variant's table holds this many times the workload's keys (0 skips it)")
    ap.add_argument("--event-log", type=Path, metavar="DIR",
                    help="keep every contender's Spark event log in DIR (read them with python -m bench.timeline)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.event_log:
        keep_event_logs(args.event_log)
    if args.only in (None, "throughput"):
        try:
            import matplotlib  # noqa: F401 - the chart: missing, it would fail after minutes of runs, not before
        except ImportError:
            ap.error("matplotlib (the chart) is not installed: run 'make bench', or pip install -e '.[bench]'")
    options = dict(o.split("=", 1) for o in args.sink_option)

    w = Workload.named(args.size)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = ROOT / ".local" / "bench" / stamp
    work.mkdir(parents=True)
    setup: dict = {}
    try:
        with broker(work, args.bootstrap) as bootstrap:
            if args.only == "transform":
                return transform_only(work, bootstrap, stamp, args, options)
            if args.only == "tables":
                bad = tables_wrong(run_tables(work, bootstrap, stamp, args.size, args.tables_rounds))
                if bad:
                    log(f"error: final state differs from the workload's for {bad}")
                return 1 if bad else 0
            uptime = {"start": uptime_line()}
            log(f"workload {args.size}: {w.events:,} events over {w.keys:,} keys, {w.partitions} partitions; "
                f"{args.rounds} rounds; {uptime['start']}")
            if args.rounds < 3:  # issue 47: a median of one or two runs is no figure to cite
                log(f"warning: {args.rounds} round(s): the fair bench runs each contender at least 3 times")
            topic = f"bench.customer.{stamp.lower()}"
            produced = produce(bootstrap, topic, w)
            want = checksum(final_state(w).values())
            log(f"produced {produced['messages']:,} in {produced['seconds']}s; final state {want[0]:,} rows")
            runs, entries = [], []
            if args.only != "freshness":
                src = Source(bootstrap, topic, want, options)
                entries = contenders(work, src, w, produced["messages"], args, setup)
                log("each round: " + ", ".join(c.name for c in entries))
                runs = run_rounds(work, entries, args.rounds)
            table = fair.summary(runs)
            freshness = None
            if args.freshness_seconds and args.only != "throughput":
                freshness = run_freshness_rounds(work, bootstrap, topic, options, args)
            tables = run_tables(work, bootstrap, stamp, args.size, args.tables_rounds) \
                if args.only is None and not args.no_tables else None
            uptime["end"] = uptime_line()
            report = {"when": stamp, "size": args.size, "rounds": args.rounds, "sink_options": options,
                      "hudi_options": {c.name: c.options for c in entries if c.options is not None},
                      "order": [c.name for c in entries], "workload": w.__dict__, "expected_rows": want[0],
                      "expected_checksum": want[1], "machine": machine(), "uptime": uptime, "runs": runs,
                      "summary": table, "ratios": ratios(table), "freshness": freshness,
                      "tables": tables and tables["summary"]}
            for name, row in table.items():
                if "median_s" in row:
                    log(f"{name}: median {row['median_s']}s ({row['min_s']}-{row['max_s']}s, spread {row['spread']}) "
                        f"over {row['ok']} of {row['runs']} runs, {row['records_per_s']:,} records/s, CPU "
                        f"{row.get('cpu_median_s')}s, peak {row['peak_rss_median_mb']} MB")
            for name, value in report["ratios"].items():
                log(f"{name}: {value}x")
            if runs:
                write(report, f"{stamp}-{args.size}")
                write(report, f"latest-{args.size}")
            else:
                RESULTS.mkdir(parents=True, exist_ok=True)
                (RESULTS / f"{stamp}-{args.size}-freshness.json").write_text(json.dumps(report, indent=2) + "\n")
            print(json.dumps(report, indent=2))
            hung = [f"{r['name']} #{r['round']}" for r in runs if r["status"] == "HUNG"]
            if hung:
                log(f"warning: left a process behind, killed, no figure: {hung}")
            bad = [f"{r['name']} #{r['round']}" for r in runs if r.get("state_matches") is False]
            bad += [f"freshness {f['job']} #{f['round']}" for f in (freshness or {}).get("runs", [])
                    if f["state_matches"] is False]
            bad += tables_wrong(tables) if tables else []
            if bad:
                log(f"error: final state differs from the workload's for {bad}")
                return 1
            return 0
    finally:
        if setup.get("registry"):
            setup["registry"].stop()
        shutil.rmtree(work, ignore_errors=True)


def uptime_line() -> str:
    """`uptime`'s line: how loaded the machine was (the bench shares it)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def transform_only(work: Path, bootstrap: str, stamp: str, args, options: dict[str, str]) -> int:
    """`--only transform`: the pair, its report (bench/results/<time>-<size>-transform.json), 1 if a table is wrong."""
    out = run_transform(work, bootstrap, stamp, args.size, options, args.transform_rounds,
                        args.transform_table or list(TABLE_TYPES),
                        dict(o.split("=", 1) for o in args.transform_sink_option))
    for kind, row in out["summary"].items():
        figures = ", ".join(f"{v} median {row[v]['median_s']}s ({row[v]['min_s']}-{row[v]['max_s']}s)"
                            for v in ("plain", "transform") if v in row)
        log(f"{kind}: {figures}; transform/plain {row.get('transform_over_plain')}x (CPU time "
            f"{row.get('cpu_transform_over_plain')}x)")
    report = {"when": stamp, "size": args.size, "sink_options": options, "machine": machine(), "transform": out}
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in (f"{stamp}-{args.size}-transform", f"latest-{args.size}-transform"):
        (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    bad = [f"{r['table']} {r['variant']} #{r['round']}" for r in out["runs"] if not r["ok"]]
    if bad:
        log(f"error: final state differs from the expected one for {bad}")
        return 1
    return 0


def run_tables(work: Path, bootstrap: str, stamp: str, size: str, rounds: int) -> dict:
    """The whole-database pair (bench/tables.py) at `size` (tables.SIZES), serial and parallel `rounds` times each,
    interleaved; its report in bench/results/<time>-<size>-tables.json and latest-<size>-tables.json."""
    from bench import tables as tb

    report = tb.bench(bootstrap, work, stamp, tb.SIZES[size], rounds=rounds)
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in (f"{stamp}-{size}-tables", f"latest-{size}-tables"):
        (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    serial, parallel = report["summary"]["1"], report["summary"]["default"]
    log(f"tables: wall median serial {serial['wall']['median']} s ({serial['wall']['min']}-{serial['wall']['max']}), "
        f"parallel {parallel['wall']['median']} s ({parallel['wall']['min']}-{parallel['wall']['max']}): "
        f"{parallel['speedup']['wall']}x (the batches alone {parallel['speedup']['seconds']}x)")
    return report


def tables_wrong(report: dict) -> list[str]:
    from bench import tables as tb

    return [f"tables {name}" for name in tb.wrong(report)]


FRESH_JOBS = ("cdcsync", "peer-default", "peer-tuned")
# --heap: the freshness jobs' driver JVM; "grown": a -Xms of one's own, which service_conf leaves alone (no pre-touch)
HEAPS = {"pre-touched": {}, "grown": {"spark.driver.extraJavaOptions": "-Xms256m"}}
HEAP_WORDS = {"pre-touched": "every job's driver reserves and touches its heap at start (-Xms = spark.driver.memory, "
                             "-XX:+AlwaysPreTouch: cdcsync.runtime.session.service_conf)",
              "grown": "every job's driver starts with a 256 MB heap and grows it as G1 decides (-Xms256m, no "
                       "-XX:+AlwaysPreTouch)"}


def run_freshness_rounds(work: Path, bootstrap: str, topic: str, options: dict[str, str], args) -> dict:
    """The freshness run of cdcsync (`cdcsync run` as a service), the peer with Hudi's defaults and the peer tuned
    as cdcsync is for a batch of one trigger's records (`--freshness-rate`: one second's), each on a topic and in a
    folder of its own, `--rounds` times, interleaved; every job's driver JVM on the same heap flags (`--heap`:
    cdcsync's service pre-touches its heap, bench/peer.py gives the peer the same, or both grow it)."""
    configs = work / "configs"
    configs.mkdir(parents=True, exist_ok=True)
    tuned = fair.tuned_options(cdcsync_config(configs, bootstrap, topic + ".fresh", "MERGE_ON_READ", trigger="1s",
                                              name="fresh_mor", options=options), args.freshness_rate) | options
    heap = HEAPS[args.heap]
    log(f"freshness: {args.freshness_rate} events/s for {args.freshness_seconds}s, 1 s trigger, MOR, heap "
        f"{args.heap}, {args.rounds} rounds of {', '.join(FRESH_JOBS)}")
    runs = []
    for i, job in fair.interleave(list(FRESH_JOBS), args.rounds):
        folder = work / f"fresh{len(runs) + 1:03d}"
        folder.mkdir(parents=True)
        mine = f"{topic}.fresh.{job}.r{i}"
        if job == "cdcsync":
            what = Job.cdcsync(cdcsync_config(folder, bootstrap, mine, "MERGE_ON_READ", trigger="1s", name="fresh_mor",
                                              options=options, spark=heap))
        else:
            what = Job.peer(bootstrap, mine, folder / "peer_fresh_mor", tuned if job == "peer-tuned" else options, job,
                            spark=heap)
        try:
            runs.append({"round": i, **run_freshness(bootstrap, mine, what, args)})
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return {"rate": args.freshness_rate, "seconds": args.freshness_seconds, "hudi_options":
            {"cdcsync": tuned, "peer-default": options, "peer-tuned": tuned},
            "heap": args.heap, "jvm": HEAP_WORDS[args.heap],
            "runs": runs, "summary": freshness_summary(runs)}


def freshness_summary(runs: list[dict]) -> dict:
    """Per job, over its runs whose final state matched: the median, lowest and highest p50, p95 and p99."""
    out = {}
    for job in dict.fromkeys(r["job"] for r in runs):
        mine = [r for r in runs if r["job"] == job]
        ok = [r for r in mine if r["state_matches"] is not False]
        row = {"runs": len(mine), "wrong": len(mine) - len(ok)}
        if ok:
            row |= {q: fair.spread_of([r[q] for r in ok]) for q in ("p50_s", "p95_s", "p99_s")}
            row["commits_median"] = fair.spread_of([r["commits"] for r in ok])["median"]
        out[job] = row
    return out


def run_freshness(bootstrap: str, topic: str, job: Job, args) -> dict:
    """One freshness run of `job` on `topic`, checked like the others."""
    out = {"job": job.name, "load_before": [round(x, 2) for x in os.getloadavg()]} | measure_freshness(
        bootstrap, topic, job, args.freshness_rate, args.freshness_seconds,
        check=lambda table: table_checksum(Path(table)))
    if out["state_matches"] is False:
        out["status"] = "WRONG"
    log(f"freshness {job.name}: p50 {out['p50_s']}s p95 {out['p95_s']}s p99 {out['p99_s']}s over {out['records']:,}, "
        f"{out['commits']} commits, {out['compactions']} compactions, RSS {out['rss_mb']}, state "
        f"{'matches' if out['state_matches'] else 'WRONG'}")
    return out


def ratios(table: dict[str, dict]) -> dict:
    """Rates against each other, each at its median wall time (bench/fair.py); only those both sides have."""
    pairs = []
    for kind in ("MOR", "COW"):
        me, default, tuned, bound = (f"{who} {kind}" for who in ("cdcsync", "peer-default", "peer-tuned",
                                                                   "bound-tuned"))
        pairs += [(me, default), (me, tuned), (me, bound), (me, FLOOR), (tuned, default), (default, bound),
                  (tuned, bound)]
    pairs += [("cdcsync MOR Avro", "cdcsync MOR"), ("cdcsync MOR multi-batch", "peer-default MOR multi-batch"),
              ("cdcsync MOR multi-batch", "peer-tuned MOR multi-batch"),
              ("peer-tuned MOR multi-batch", "peer-default MOR multi-batch"), ("cdcsync MOR grown", "cdcsync MOR")]
    out = {f"{a} / {b}": fair.ratio(table, a, b) for a, b in pairs}
    return {k: v for k, v in out.items() if v is not None}


def machine() -> dict:
    mem = next((int(line.split()[1]) // 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    return {"cpus": os.cpu_count(), "cpu": cpu, "memory_mb": mem, "python": platform.python_version(),
            "os": platform.platform()}


def write(report: dict, name: str) -> None:
    from bench.chart import draw

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    draw(report, RESULTS / f"{name}.png")


if __name__ == "__main__":
    sys.exit(main())
