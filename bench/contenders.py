"""The throughput contenders of `make bench` (bench/run.py): how each runs in a folder of its own, its table read
back by hudi-rs and held against the workload's final state, and the interleaved rounds that run them all.

- cdcsync (`cdcsync run --once`) into MOR and COW, from Avro, in 20 batches, into a grown table;
- the peer (bench/peer.py) twice: "peer-default" on Hudi's defaults, "peer-tuned" on cdcsync's own write options
  (bench/fair.py reads them from cdcsync's code for the config of the contender's variant);
- the bound (bench/bound.py) on the tuned options; the plain-Parquet floor (bench/floor.py).

`--sink-option` (Source.options) reaches every Hudi contender: cdcsync's [sink.options], peer-default's options, and
the tuned set, which it overrides.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench import fair, measure
from bench.workload import Workload, checksum, final_state, produce

MULTI_BATCHES = 20  # the multi-batch variant: enough delta commits for several compactions
GROWN_FIRST_ID = 100_000_000  # the grown table's own keys, apart from the workload's
FLOOR = "Spark → Parquet (floor)"
# the multi-batch variant's tables, every contender's: no file group counted small (Hudi would otherwise rewrite the
# one small base file of a table this size each batch, as COPY_ON_WRITE does), so log files and compactions happen
LOGS = {"hoodie.parquet.small.file.limit": "0"}


@dataclass(frozen=True)
class Source:
    """What a contender reads and is held to: the broker and topic, the final state (rows, checksum) its table must
    hold, and the bench's --sink-option, which every Hudi contender's tables get."""

    bootstrap: str
    topic: str
    want: tuple[int, int]
    options: dict[str, str] = field(default_factory=dict)


def cdcsync_config(work: Path, bootstrap: str, topic: str, table_type: str, trigger: str = "10s",
                   name: str | None = None, options: dict[str, str] | None = None, registry: str | None = None,
                   run_options: dict[str, int] | None = None, partition_by: list[str] | None = None,
                   transform_sql: str | None = None, spark: dict[str, str] | None = None,
                   schema_columns: dict[str, str] | None = None) -> Path:
    """`registry`: the topic is in Avro, its schemas in this registry; `run_options`: more [run] settings;
    `partition_by`: the table's partition columns; `transform_sql`: a [transform] sql; `spark`: more [spark]
    settings (an experiment's, which the peer gets too); `schema_columns`: [schema.columns] (name: type)."""
    name = name or f"bench_{table_type.lower()}"
    extra = "".join(f'"{k}" = "{v}"\n' for k, v in (options or {}).items())
    run_extra = "".join(f"{k} = {v}\n" for k, v in (run_options or {}).items())
    fmt = (f'format = "avro-confluent"\nkey_format = "avro-confluent"\nschema_registry_url = "{registry}"'
           if registry else 'format = "debezium-json"')
    partitions = f"partition_by = {json.dumps(partition_by)}\n" if partition_by else ""
    transform = f"\n[transform]\nsql = {json.dumps(transform_sql)}\n" if transform_sql else ""
    spark_extra = "".join(f"{json.dumps(k)} = {json.dumps(v)}\n" for k, v in (spark or {}).items())
    declared = ("\n[schema.columns]\n" + "".join(f"{json.dumps(k)} = {json.dumps(v)}\n"
                                                 for k, v in schema_columns.items())) if schema_columns else ""
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
{spark_extra}{transform}{declared}""")
    return cfg


def run_cdcsync(work: Path, src: Source, table_type: str, registry: str | None = None, variant: str = "",
                run_options: dict[str, int] | None = None) -> dict:
    """`registry`: the topic is in Avro, its schemas there; `variant`: a name for a run with other settings
    (multi-batch, `run_options` its [run] ones), or into another table (grown)."""
    name = table_name(table_type, registry, variant)
    cfg = cdcsync_config(work, src.bootstrap, src.topic, table_type, name=name, options=src.options,
                         registry=registry, run_options=run_options)
    m = measured(f"cdcsync {name}", [sys.executable, "-m", "cdcsync", "run", str(cfg), "--once", "--json", "-q"])
    summary = json.loads(m.stdout)
    label = f"cdcsync {kind(table_type)}" + (" Avro" if registry else "") + (f" {variant}" if variant else "")
    return _checked(label, m, work / name, src.want, summary["totals"]["messages"], batches=summary["batches"],
                    compactions=measure.compactions(work / name))


def measured(what: str, cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> measure.Measured:
    """`cmd` run and measured; a contender that fails stops the bench with the end of its stderr."""
    m = measure.run(cmd, env=env, cwd=cwd)
    if m.returncode != 0:
        raise RuntimeError(f"{what} failed ({m.returncode}):\n{m.stderr[-3000:]}")
    return m


def _checked(name: str, m: measure.Measured, table: Path, want: tuple[int, int], messages: int, **more) -> dict:
    """A Hudi contender's result: its measurements, and its table read back by hudi-rs against `want`."""
    got = table_checksum(table)
    return {"name": name, "status": status(m), "seconds": m.seconds, "cpu_s": m.cpu_s, "peak_rss_mb": m.peak_rss_mb,
            "messages": messages, **more, "rows": got[0], "checksum": got[1], "state_matches": got == want}


def status(m: measure.Measured) -> str:
    """"HUNG" when a process the contender started outlived it holding its output and was killed (measure.run): no
    figure is given for such a run; else "ok" (a run whose final state differs becomes "WRONG" after)."""
    return "HUNG" if m.lingered else "ok"


def table_name(table_type: str, registry: str | None, variant: str) -> str:
    return f"bench_{table_type.lower()}" + ("_avro" if registry else "") + (f"_{variant}" if variant else "").replace(
        "-", "_")


def kind(table_type: str) -> str:
    return "MOR" if table_type == "MERGE_ON_READ" else "COW"


def table_checksum(path: Path) -> tuple[int, int]:
    """hudi-rs's reading of a table, as (rows, checksum): the independent check of every Hudi contender."""
    import pyarrow as pa
    from hudi import HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(path)).build()
    rows = pa.Table.from_batches(table.read()).select(["id", "name", "segment", "balance_cents", "updated_at"])
    return checksum(rows.to_pylist())


def run_peer(work: Path, src: Source, table_type: str, mode: str, options: dict[str, str],
             max_offsets: int | None = None) -> dict:
    """The hand-written streaming-sink job (bench/peer.py) into its own table, checked like cdcsync's. `mode`:
    "default" or "tuned", the name of `options`, the Hudi write options it takes over its own; `max_offsets`: its
    maxOffsetsPerTrigger (the multi-batch variant)."""
    variant = "multi-batch" if max_offsets else ""
    path = work / (f"peer_{mode}_{table_type.lower()}" + ("_multi_batch" if variant else ""))
    more = ["--max-offsets", str(max_offsets)] if max_offsets else []
    m = measured(f"peer-{mode} {table_type}", [sys.executable, "-m", "bench.peer", src.bootstrap, src.topic, str(path),
                                               table_type, "--options", json.dumps(options), *more])
    out = json.loads(m.stdout.strip().splitlines()[-1])
    return _checked(f"peer-{mode} {kind(table_type)}" + (f" {variant}" if variant else ""), m, path, src.want,
                    out["messages"], batches=out["batches"], compactions=measure.compactions(path))


def run_bound(work: Path, src: Source, table_type: str, messages: int, options: dict[str, str]) -> dict:
    """The least correct first load (bench/bound.py) into its own table on the tuned `options`, checked like the
    others; `messages`: the topic's, which it reads whole."""
    path = work / f"bound_{table_type.lower()}"
    m = measured(f"bound-tuned {table_type}", [sys.executable, "-m", "bench.bound", src.bootstrap, src.topic, str(path),
                                               table_type, json.dumps(options)])
    return _checked(f"bound-tuned {kind(table_type)}", m, path, src.want, messages)


def run_floor(work: Path, src: Source) -> dict:
    m = measured("parquet floor", [sys.executable, "-m", "bench.floor", src.bootstrap, src.topic,
                                   str(work / "floor_parquet")])
    out = json.loads(m.stdout.strip().splitlines()[-1])
    return {"name": FLOOR, "status": status(m), "seconds": m.seconds, "cpu_s": m.cpu_s, "peak_rss_mb": m.peak_rss_mb,
            "messages": out["rows"], "rows": out["rows"]}


def seed_grown(work: Path, src: Source, w: Workload, factor: int) -> tuple[Path, tuple[int, int]]:
    """The grown variant's starting point, made once (unmeasured) in `work`: a MERGE_ON_READ table holding `factor` ×
    the workload's keys (other keys, loaded by cdcsync from a topic of inserts); returns `work` and the state the
    workload's upserts into it must leave."""
    seed = Workload(events=w.keys * factor, keys=w.keys * factor, update_share=0.0, delete_share=0.0,
                    partitions=w.partitions, seed=w.seed + 1, first_id=GROWN_FIRST_ID)
    seed_topic = src.topic + ".seed"
    produce(src.bootstrap, seed_topic, seed)
    work.mkdir(parents=True, exist_ok=True)
    name = table_name("MERGE_ON_READ", None, "grown")
    cfg = cdcsync_config(work, src.bootstrap, seed_topic, "MERGE_ON_READ", name=name, options=src.options,
                         run_options={"max_records_per_batch": max(w.events, 1)})
    t0 = time.monotonic()
    measured(f"cdcsync seeding {name}", [sys.executable, "-m", "cdcsync", "run", str(cfg), "--once", "--json", "-q"])
    log(f"grown table: {seed.keys:,} keys loaded in {time.monotonic() - t0:.1f}s")
    cfg.unlink()
    have, want = checksum(final_state(seed).values()), checksum(final_state(w).values())
    return work, (have[0] + want[0], (have[1] + want[1]) % (1 << 61))


def run_grown(work: Path, src: Source, seeded: Path, keys_before: int) -> dict:
    """The workload into a copy, in `work`, of the table `seeded` holds (its checkpoint folder too), held against
    `src.want` (seed_grown's): the upserts' cost should not grow with the table."""
    shutil.copytree(seeded, work, dirs_exist_ok=True)
    return run_cdcsync(work, src, "MERGE_ON_READ", variant="grown") | {"table_keys_before": keys_before}


@dataclass(frozen=True)
class Contender:
    """One contender of the throughput runs: its name, how it runs in a folder of its own (→ its result), and for the
    report the Hudi write options it is given over its own (None: not a Hudi writer; cdcsync's: the tuned set, which
    its writes name their table, columns, operation and compaction beside)."""

    name: str
    run: Callable[[Path], dict]
    options: dict[str, str] | None = None


def contenders(work: Path, src: Source, w: Workload, messages: int, args, setup: dict) -> list[Contender]:
    """The contenders `args` ask for, in the order each round runs them; `messages`: the topic's. What they share
    beyond the workload's topic is made here, in `work` (the Avro topic, the grown table's seed); `setup` gets the
    Avro topic's registry, for the caller to stop."""
    out = []
    configs = work / "configs"
    configs.mkdir(parents=True, exist_ok=True)
    options = src.options

    def tuned(table_type: str, rows: int, more: dict[str, str] | None = None,
              run_options: dict[str, int] | None = None) -> dict[str, str]:
        """cdcsync's own write options for its config of this variant (bench/fair.py), then --sink-option."""
        cfg = cdcsync_config(configs, src.bootstrap, src.topic, table_type, options={**options, **(more or {})},
                             run_options=run_options)
        return fair.tuned_options(cfg, rows) | options

    for table_type in () if args.no_single_batch else ("MERGE_ON_READ", "COPY_ON_WRITE"):
        k, mine = kind(table_type), tuned(table_type, w.events)
        out += [Contender(f"cdcsync {k}", lambda d, t=table_type: run_cdcsync(d, src, t), mine),
                Contender(f"peer-default {k}", lambda d, t=table_type: run_peer(d, src, t, "default", options),
                          options),
                Contender(f"peer-tuned {k}", lambda d, t=table_type, o=mine: run_peer(d, src, t, "tuned", o), mine),
                Contender(f"bound-tuned {k}", lambda d, t=table_type, o=mine: run_bound(d, src, t, messages, o),
                          mine)]
    if not args.no_avro:
        from bench.avro import AvroEncoder
        from devtools.local_registry import LocalRegistry

        registry = setup["registry"] = LocalRegistry(work / "registry").start()
        avro = replace(src, topic=src.topic + ".avro")
        produce(src.bootstrap, avro.topic, w, AvroEncoder(registry.url, avro.topic))
        out.append(Contender("cdcsync MOR Avro", lambda d: run_cdcsync(d, avro, "MERGE_ON_READ", registry=registry.url),
                             tuned("MERGE_ON_READ", w.events)))
    if not args.no_multi_batch:
        # cdcsync's max_records_per_batch = the peers' maxOffsetsPerTrigger
        per = -(-w.events // MULTI_BATCHES)
        batches = {"max_records_per_batch": per}
        logs = replace(src, options={**options, **LOGS})
        mine = tuned("MERGE_ON_READ", per, LOGS, batches)
        out += [Contender("cdcsync MOR multi-batch", lambda d: run_cdcsync(
                    d, logs, "MERGE_ON_READ", variant="multi-batch", run_options=batches), mine),
                Contender("peer-default MOR multi-batch", lambda d: run_peer(
                    d, logs, "MERGE_ON_READ", "default", logs.options, max_offsets=per), logs.options),
                Contender("peer-tuned MOR multi-batch", lambda d: run_peer(
                    d, logs, "MERGE_ON_READ", "tuned", mine, max_offsets=per), mine)]
    if args.grown_factor:
        seeded, grown = seed_grown(work / "grown_seed", src, w, args.grown_factor)  # removed with `work`
        out.append(Contender("cdcsync MOR grown", lambda d: run_grown(d, replace(src, want=grown), seeded,
                                                                      w.keys * args.grown_factor),
                             tuned("MERGE_ON_READ", w.events)))
    out.append(Contender(FLOOR, lambda d: run_floor(d, src)))
    return out


def run_rounds(work: Path, entries: list[Contender], rounds: int) -> list[dict]:
    """Every contender `rounds` times, interleaved, each run in a folder of its own, removed after it; a run whose
    table differs from the workload's final state is WRONG, and has no rate."""
    runs: list[dict] = []
    for i, c in fair.interleave(entries, rounds):
        folder = work / f"run{len(runs) + 1:03d}"
        folder.mkdir(parents=True)
        load = os.getloadavg()
        try:
            r = c.run(folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        r = {**r, "round": i, "load_before": [round(x, 2) for x in load]}
        if r.get("state_matches") is False:
            r["status"] = "WRONG"  # a figure for a wrong table would be a lie: none is given
        if r["status"] == "ok":
            r["records_per_s"] = round(r["messages"] / r["seconds"])
        runs.append(r)
        log(f"#{i} " + line(r))
    return runs


def line(r: dict) -> str:
    extra = f", state {'matches' if r['state_matches'] else 'WRONG'}" if "state_matches" in r else ""
    if "compactions" in r:
        extra = f", {r['batches']} batches, {r['compactions']} compactions" + extra
    return (f"{r['name']}: {r['messages']:,} messages in {r['seconds']}s (CPU {r.get('cpu_s')}s), peak "
            f"{r['peak_rss_mb']} MB{extra}")


def log(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)
