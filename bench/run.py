"""`make bench`: the same Debezium workload through each contender, one after another, on one local broker.

    python -m bench.run [--size smoke|full|tiny] [--freshness-seconds 60] [--freshness-rate 2000]
    python -m bench.run --size full --only transform [--transform-rounds 3] [--transform-table MOR ...]
    python -m bench.run --size full --only tables [--tables-rounds 3]

Writes bench/results/<time>-<size>.json and .png (and latest-<size>.*). Contenders: cdcsync run --once into MOR and
COW, and into MOR from the same workload in Avro (Confluent wire format, a local registry); the peer (bench/peer.py:
the hand-written streaming-sink job) into MOR and COW; the bound (bench/bound.py: the least correct first load, one
aggregation and a bulk_insert) into MOR and COW; cdcsync and the peer into MOR in 20 batches (cdcsync's
max_records_per_batch = the peer's maxOffsetsPerTrigger), where log files and compactions happen; cdcsync into a MOR
table already holding 20× the workload's keys (--grown-factor); the plain-Parquet floor; then the freshness run
(bench/freshness.py) of cdcsync and of the peer; then the whole-database pair (bench/tables.py: N tables' changes in
one topic, routed, serial against parallel commits, interleaved; full = 100 tables × 1,000 changes) into
bench/results/<time>-<size>-tables.json (`--no-tables` leaves it out, `--only tables` runs it alone). A Hudi contender
whose table differs from the workload's final state is reported WRONG, and the run then exits with 1. `--only
transform` runs the transform pair alone (bench/transform.py: cdcsync without and with a [transform] sql,
interleaved) into bench/results/<time>-<size>-transform.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

from bench import measure
from bench.freshness import Job
from bench.freshness import measure as measure_freshness
from bench.workload import Workload, checksum, final_state, produce

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MULTI_BATCHES = 20  # the multi-batch variant: enough delta commits for several compactions
GROWN_FIRST_ID = 100_000_000  # the grown table's own keys, apart from the workload's


def cdcsync_config(work: Path, bootstrap: str, topic: str, table_type: str, trigger: str = "10s",
                   name: str | None = None, options: dict[str, str] | None = None, registry: str | None = None,
                   run_options: dict[str, int] | None = None, partition_by: list[str] | None = None,
                   transform_sql: str | None = None) -> Path:
    """`registry`: the topic is in Avro, its schemas in this registry; `run_options`: more [run] settings;
    `partition_by`: the table's partition columns; `transform_sql`: a [transform] sql."""
    name = name or f"bench_{table_type.lower()}"
    extra = "".join(f'"{k}" = "{v}"\n' for k, v in (options or {}).items())
    run_extra = "".join(f"{k} = {v}\n" for k, v in (run_options or {}).items())
    fmt = (f'format = "avro-confluent"\nkey_format = "avro-confluent"\nschema_registry_url = "{registry}"'
           if registry else 'format = "debezium-json"')
    partitions = f"partition_by = {json.dumps(partition_by)}\n" if partition_by else ""
    transform = f"\n[transform]\nsql = {json.dumps(transform_sql)}\n" if transform_sql else ""
    cfg = work / f"{name}.toml"
    cfg.write_text(f"""[source]
bootstrap_servers = "{bootstrap}"
topics = ["{topic}"]
{fmt}
startup_mode = "earliest-offset"

[sink]
path = "{work / name}"
table_name = "{name}"
table_type = "{table_type}"
primary_key = ["id"]
{partitions}
[sink.options]
{extra}
[run]
checkpoint_dir = "{work / (name + '_ckpt')}"
trigger_interval = "{trigger}"
on_bad_record = "fail"
{run_extra}
[spark]
master = "local[2]"
{transform}""")
    return cfg


def run_cdcsync(work: Path, bootstrap: str, topic: str, table_type: str, want: tuple[int, int],
                options: dict[str, str], registry: str | None = None, variant: str = "",
                run_options: dict[str, int] | None = None) -> dict:
    """`variant`: a name for a run with other settings (multi-batch), or into another table (grown)."""
    name = _table_name(table_type, registry, variant)
    cfg = cdcsync_config(work, bootstrap, topic, table_type, name=name, options=options, registry=registry,
                         run_options=run_options)
    m = _measured(f"cdcsync {name}", [sys.executable, "-m", "cdcsync", "run", str(cfg), "--once", "--json", "-q"])
    summary = json.loads(m.stdout)
    label = f"cdcsync {_kind(table_type)}" + (" Avro" if registry else "") + (f" {variant}" if variant else "")
    return _checked(label, m, work / name, want, summary["totals"]["messages"], batches=summary["batches"],
                    compactions=measure.compactions(work / name))


def _measured(what: str, cmd: list[str]) -> measure.Measured:
    """`cmd` run and measured; a contender that fails stops the bench with the end of its stderr."""
    m = measure.run(cmd)
    if m.returncode != 0:
        raise RuntimeError(f"{what} failed ({m.returncode}):\n{m.stderr[-3000:]}")
    return m


def _checked(name: str, m: measure.Measured, table: Path, want: tuple[int, int], messages: int, **more) -> dict:
    """A Hudi contender's result: its measurements, and its table read back by hudi-rs against `want`."""
    got = _table_checksum(table)
    return {"name": name, "status": "ok", "seconds": m.seconds, "peak_rss_mb": m.peak_rss_mb, "messages": messages,
            **more, "rows": got[0], "checksum": got[1], "state_matches": got == want}


def _table_name(table_type: str, registry: str | None, variant: str) -> str:
    return f"bench_{table_type.lower()}" + ("_avro" if registry else "") + (f"_{variant}" if variant else "").replace(
        "-", "_")


def run_peer(work: Path, bootstrap: str, topic: str, table_type: str, want: tuple[int, int],
             max_offsets: int | None = None, options: dict[str, str] | None = None) -> dict:
    """The hand-written streaming-sink job (bench/peer.py) into its own table, checked like cdcsync's;
    `max_offsets`: its maxOffsetsPerTrigger and `options` more write options (the multi-batch variant)."""
    variant = "multi-batch" if max_offsets else ""
    path = work / (f"peer_{table_type.lower()}" + ("_multi_batch" if variant else ""))
    extra = [str(max_offsets), ",".join(f"{k}={v}" for k, v in (options or {}).items())] if max_offsets else []
    m = _measured(f"peer {table_type}", [sys.executable, "-m", "bench.peer", bootstrap, topic, str(path), table_type,
                                         *extra])
    out = json.loads(m.stdout.strip().splitlines()[-1])
    return _checked(f"peer {_kind(table_type)}" + (f" {variant}" if variant else ""), m, path, want, out["messages"],
                    batches=out["batches"], compactions=measure.compactions(path))


def run_bound(work: Path, bootstrap: str, topic: str, table_type: str, want: tuple[int, int], messages: int) -> dict:
    """The least correct first load (bench/bound.py) into its own table, checked like the others; `messages`: the
    topic's, which it reads whole."""
    path = work / f"bound_{table_type.lower()}"
    m = _measured(f"bound {table_type}", [sys.executable, "-m", "bench.bound", bootstrap, topic, str(path), table_type])
    return _checked(f"bound {_kind(table_type)}", m, path, want, messages)


def run_multi_batch(work: Path, bootstrap: str, topic: str, w: Workload, want: tuple[int, int],
                    options: dict[str, str]) -> list[dict]:
    """MERGE_ON_READ in MULTI_BATCHES batches for both, cdcsync's max_records_per_batch = the peer's
    maxOffsetsPerTrigger, and no file group counted small (Hudi would otherwise rewrite the one small base file of a
    table this size each batch, as COPY_ON_WRITE does): log files and compactions happen (every 5 delta commits)."""
    per = -(-w.events // MULTI_BATCHES)
    logs = {"hoodie.parquet.small.file.limit": "0"}
    return [run_cdcsync(work, bootstrap, topic, "MERGE_ON_READ", want, {**options, **logs}, variant="multi-batch",
                        run_options={"max_records_per_batch": per}),
            run_peer(work, bootstrap, topic, "MERGE_ON_READ", want, max_offsets=per, options=logs)]


def run_grown(work: Path, bootstrap: str, topic: str, w: Workload, want: tuple[int, int],
              options: dict[str, str], factor: int) -> dict:
    """The workload into a MERGE_ON_READ table that already holds `factor` × its keys (other keys, loaded by cdcsync
    from a topic of inserts first, unmeasured): the upserts' cost should not grow with the table."""
    seed = Workload(events=w.keys * factor, keys=w.keys * factor, update_share=0.0, delete_share=0.0,
                    partitions=w.partitions, seed=w.seed + 1, first_id=GROWN_FIRST_ID)
    seed_topic = topic + ".seed"
    produce(bootstrap, seed_topic, seed)
    name = _table_name("MERGE_ON_READ", None, "grown")
    cfg = cdcsync_config(work, bootstrap, seed_topic, "MERGE_ON_READ", name=name, options=options,
                         run_options={"max_records_per_batch": max(w.events, 1)})
    t0 = time.monotonic()
    _measured(f"cdcsync seeding {name}", [sys.executable, "-m", "cdcsync", "run", str(cfg), "--once", "--json", "-q"])
    log(f"grown table: {seed.keys:,} keys loaded in {time.monotonic() - t0:.1f}s")
    have = checksum(final_state(seed).values())
    both = (have[0] + want[0], (have[1] + want[1]) % (1 << 61))
    out = run_cdcsync(work, bootstrap, topic, "MERGE_ON_READ", both, options, variant="grown")
    return out | {"table_keys_before": seed.keys}


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
                m = _measured(f"cdcsync {name}", [sys.executable, "-m", "cdcsync", "run", str(cfg), "--once",
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


def run_avro(work: Path, bootstrap: str, topic: str, w: Workload, want: tuple[int, int],
             options: dict[str, str]) -> dict:
    """The same workload as Debezium's Avro converter writes it, through a local registry, into MOR."""
    from bench.avro import AvroEncoder
    from devtools.local_registry import LocalRegistry

    registry = LocalRegistry(work / "registry").start()
    try:
        produce(bootstrap, topic, w, AvroEncoder(registry.url, topic))
        return run_cdcsync(work, bootstrap, topic, "MERGE_ON_READ", want, options, registry=registry.url)
    finally:
        registry.stop()


def _table_checksum(path: Path) -> tuple[int, int]:
    """hudi-rs's reading of a table, as (rows, checksum): the independent check of every Hudi contender."""
    import pyarrow as pa
    from hudi import HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(path)).build()
    rows = pa.Table.from_batches(table.read()).select(["id", "name", "segment", "balance_cents", "updated_at"])
    return checksum(rows.to_pylist())


def _kind(table_type: str) -> str:
    return "MOR" if table_type == "MERGE_ON_READ" else "COW"


def run_floor(work: Path, bootstrap: str, topic: str) -> dict:
    m = _measured("parquet floor", [sys.executable, "-m", "bench.floor", bootstrap, topic, str(work / "floor_parquet")])
    out = json.loads(m.stdout.strip().splitlines()[-1])
    return {"name": "Spark → Parquet (floor)", "status": "ok", "seconds": m.seconds, "peak_rss_mb": m.peak_rss_mb,
            "messages": out["rows"], "rows": out["rows"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench")
    ap.add_argument("--size", default="smoke", choices=["tiny", "smoke", "full"])
    ap.add_argument("--bootstrap", help="use this broker instead of starting one")
    ap.add_argument("--freshness-seconds", type=int, default=60, help="0 skips the freshness run")
    ap.add_argument("--freshness-rate", type=int, default=2000)
    ap.add_argument("--sink-option", action="append", default=[], metavar="KEY=VALUE",
                    help="a hoodie.* option for cdcsync's tables (repeatable), to compare settings")
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
    ap.add_argument("--no-single-batch", action="store_true", help="skip the single-batch MOR and COW pairs")
    ap.add_argument("--no-multi-batch", action="store_true", help="skip the multi-batch MOR variant")
    ap.add_argument("--grown-factor", type=int, default=20,
                    help="the grown-table variant's table holds this many times the workload's keys (0 skips it)")
    ap.add_argument("--event-log", type=Path, metavar="DIR",
                    help="keep every contender's Spark event log in DIR (read them with python -m bench.timeline)")
    args = ap.parse_args(argv)
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
    broker = None
    if not args.bootstrap:
        from devtools.local_kafka import BrokerSpec, Listener, LocalBroker, free_port

        broker = LocalBroker(BrokerSpec(work / "kafka", [Listener("PLAINTEXT", free_port())], heap="1g")).start()
    bootstrap = args.bootstrap or broker.bootstrap
    try:
        if args.only == "transform":
            return transform_only(work, bootstrap, stamp, args, options)
        if args.only == "tables":
            bad = tables_wrong(run_tables(work, bootstrap, stamp, args.size, args.tables_rounds))
            if bad:
                log(f"error: final state differs from the workload's for {bad}")
            return 1 if bad else 0
        log(f"workload {args.size}: {w.events:,} events over {w.keys:,} keys, {w.partitions} partitions")
        topic = f"bench.customer.{stamp.lower()}"
        produced = produce(bootstrap, topic, w)
        want = checksum(final_state(w).values())
        log(f"produced {produced['messages']:,} in {produced['seconds']}s; final state {want[0]:,} rows")
        results = []
        if args.only != "freshness":
            for table_type in () if args.no_single_batch else ("MERGE_ON_READ", "COPY_ON_WRITE"):
                results.append(run_cdcsync(work, bootstrap, topic, table_type, want, options))
                log(_line(results[-1]))
                results.append(run_peer(work, bootstrap, topic, table_type, want))
                log(_line(results[-1]))
                results.append(run_bound(work, bootstrap, topic, table_type, want, produced["messages"]))
                log(_line(results[-1]))
            if not args.no_avro:
                results.append(run_avro(work, bootstrap, topic + ".avro", w, want, options))
                log(_line(results[-1]))
            if not args.no_multi_batch:
                for r in run_multi_batch(work, bootstrap, topic, w, want, options):
                    results.append(r)
                    log(_line(r))
            if args.grown_factor:
                results.append(run_grown(work, bootstrap, topic, w, want, options, args.grown_factor))
                log(_line(results[-1]))
            results.append(run_floor(work, bootstrap, topic))
            log(_line(results[-1]))
        for r in results:
            if r.get("state_matches") is False:
                r["status"] = "WRONG"  # a figure for a wrong table would be a lie: none is given
            if r["status"] == "ok":
                r["records_per_s"] = round(r["messages"] / r["seconds"])
        freshness = freshness_peer = None
        if args.freshness_seconds and args.only != "throughput":
            cfg = cdcsync_config(work, bootstrap, topic + ".fresh", "MERGE_ON_READ", trigger="1s", name="fresh_mor",
                                 options=options)
            log(f"freshness: {args.freshness_rate} events/s for {args.freshness_seconds}s, 1 s trigger, MOR")
            freshness = run_freshness(bootstrap, topic + ".fresh", Job.cdcsync(cfg), args)
            freshness_peer = run_freshness(bootstrap, topic + ".fresh-peer",
                                           Job.peer(bootstrap, topic + ".fresh-peer", work / "peer_fresh_mor"), args)
        tables = run_tables(work, bootstrap, stamp, args.size, args.tables_rounds) \
            if args.only is None and not args.no_tables else None
        report = {"when": stamp, "size": args.size, "sink_options": options, "workload": w.__dict__,
                  "expected_rows": want[0], "expected_checksum": want[1], "machine": machine(), "results": results,
                  "ratios": ratios(results), "freshness": freshness, "freshness_peer": freshness_peer,
                  "tables": tables and tables["summary"]}
        if results:
            write(report, f"{stamp}-{args.size}")
            write(report, f"latest-{args.size}")
        else:
            RESULTS.mkdir(parents=True, exist_ok=True)
            (RESULTS / f"{stamp}-{args.size}-freshness.json").write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
        bad = [r["name"] for r in results if r.get("state_matches") is False]
        bad += [f"freshness {f['job']}" for f in (freshness, freshness_peer) if f and f["state_matches"] is False]
        bad += tables_wrong(tables) if tables else []
        if bad:
            log(f"error: final state differs from the workload's for {bad}")
            return 1
        return 0
    finally:
        if broker:
            broker.stop()
        shutil.rmtree(work, ignore_errors=True)


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


def keep_event_logs(folder: Path) -> None:
    """Every Spark application this run starts (cdcsync, the peer, the floor) logs its events into `folder`: set in
    a spark-defaults.conf that Spark's launcher reads (SPARK_CONF_DIR), so no contender's own settings change."""
    folder = folder.resolve()
    conf = folder / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "spark-defaults.conf").write_text(f"spark.eventLog.enabled true\nspark.eventLog.dir {folder.as_uri()}\n")
    os.environ["SPARK_CONF_DIR"] = str(conf)


def run_freshness(bootstrap: str, topic: str, job: Job, args) -> dict:
    """The freshness run of `job` (cdcsync or the peer), each on a topic of its own, checked like the others."""
    out = {"job": job.name} | measure_freshness(bootstrap, topic, job, args.freshness_rate, args.freshness_seconds,
                                                check=lambda table: _table_checksum(Path(table)))
    if out["state_matches"] is False:
        out["status"] = "WRONG"
    log(f"freshness {job.name}: p50 {out['p50_s']}s p95 {out['p95_s']}s p99 {out['p99_s']}s over {out['records']:,}, "
        f"{out['commits']} commits, {out['compactions']} compactions, RSS {out['rss_mb']}, state "
        f"{'matches' if out['state_matches'] else 'WRONG'}")
    return out


def ratios(results: list[dict]) -> dict:
    rate = {r["name"]: r.get("records_per_s") for r in results}
    floor = rate.get("Spark → Parquet (floor)")
    out = {}
    for kind in ("MOR", "COW"):
        mine = rate.get(f"cdcsync {kind}")
        if mine and floor:
            out[f"cdcsync {kind} / floor"] = round(mine / floor, 3)
        peer = rate.get(f"peer {kind}")
        out[f"cdcsync {kind} / peer"] = round(mine / peer, 3) if mine and peer else None
        bound = rate.get(f"bound {kind}")
        if mine and bound:
            out[f"cdcsync {kind} / bound"] = round(mine / bound, 3)
        if peer and bound:
            out[f"peer {kind} / bound"] = round(peer / bound, 3)
        avro = rate.get(f"cdcsync {kind} Avro")
        if avro and mine:
            out[f"cdcsync {kind} Avro / JSON"] = round(avro / mine, 3)
    multi, peer_multi = rate.get("cdcsync MOR multi-batch"), rate.get("peer MOR multi-batch")
    if multi and peer_multi:
        out["cdcsync MOR multi-batch / peer"] = round(multi / peer_multi, 3)
    grown, empty = rate.get("cdcsync MOR grown"), rate.get("cdcsync MOR")
    if grown and empty:
        out["cdcsync MOR grown / empty table"] = round(grown / empty, 3)
    return out


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


def _line(r: dict) -> str:
    extra = f", state {'matches' if r['state_matches'] else 'WRONG'}" if "state_matches" in r else ""
    if "compactions" in r:
        extra = f", {r['batches']} batches, {r['compactions']} compactions" + extra
    return f"{r['name']}: {r['messages']:,} messages in {r['seconds']}s, peak {r['peak_rss_mb']} MB{extra}"


def log(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
