"""Whole-database sync, serial against parallel commits (issue 46): one topic holding the Debezium changes of N
PostgreSQL tables (`source.db`/`schema`/`table`), one `[[route]]` with `sink_table = "<>"`, landed by
`cdcsync run --once` with `[run] table_parallelism = 1` and with each other width asked for (the default: unset,
sized to the machine), each run into a table root of its own from the same topic, interleaved (1 W 1 W …), and
the median of each.

    python -m bench.tables [--size tiny|smoke|full] [--tables N] [--changes N] [--keys N] [--batches 2]
                           [--rounds 3] [--widths 1,default] [--event-log DIR]
    python -m bench.run --size full --only tables        (make bench runs it after the other contenders)

Sizes (SIZES): tiny 4 tables × 50 changes, smoke 24 × 200, full 100 × 1,000; --tables/--changes/--keys override.
Every run's tables are read back by hudi-rs and held against the workload's own final state (a run that differs is
reported WRONG and the bench exits 1). Figures per run: `seconds`, the batches' own time (the sum of the `batch`
events' seconds: Kafka read, split and every table's commit, without the JVM's start), split into `first_batch`
(every table's first load, in a JVM just started) and `later_batches` (upserts in a warm JVM, as a long-running
service's); `wall`, the whole process; `cpu_seconds`, its processes' CPU time, split into the Python driver's and
the JVM's, with the JVM's busiest thread groups and the busiest single thread (what a serial part would show: one
thread busy for most of the run). Per width: each figure's median, fastest and slowest run, and the spread
((slowest - fastest) / median); the speed-up over width 1 is the ratio of the medians.
Writes bench/results/tables-<time>.json; prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import time
import zlib
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from bench import measure
from bench.timeline import keep_event_logs
from bench.workload import broker

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
T0_MS = 1_763_856_000_000
DB, SCHEMA = "shop", "public"
NAMES = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]
COLUMNS = ("id", "name", "qty", "note")


@dataclass(frozen=True)
class Tables:
    """`tables` PostgreSQL tables of `keys` keys each, `changes` changes per table (inserts of keys not live, then
    85 % updates, 15 % deletes), interleaved over the tables at random, ordered by one increasing LSN."""

    tables: int = 24
    changes: int = 1000
    keys: int = 200
    partitions: int = 2
    seed: int = 46

    @property
    def messages(self) -> int:
        return self.tables * self.changes


SIZES = {"tiny": Tables(tables=4, changes=50, keys=20), "smoke": Tables(tables=24, changes=200, keys=50),
         "full": Tables(tables=100, changes=1000, keys=200)}
FIGURES = ("seconds", "first_batch", "later_batches", "wall", "cpu_seconds", "cpu_python", "cpu_jvm")


def table_name(i: int) -> str:
    return f"t{i:03d}"


def changes(w: Tables, final: dict[str, dict[int, dict]] | None = None):
    """(table, Kafka key, Debezium change event) in produce order; `final`, when given, ends as {table: {id: row}}."""
    rng = random.Random(w.seed)
    order = [t for t in range(w.tables) for _ in range(w.changes)]
    rng.shuffle(order)
    state = final if final is not None else {}
    for seq, t in enumerate(order):
        name = table_name(t)
        rows = state.setdefault(name, {})
        key = rng.randrange(1, w.keys + 1)
        before = rows.get(key)
        if before is None:
            op, after = "c", _row(rng, key)
        elif rng.random() < 0.85:
            op, after = "u", {**before, "qty": rng.randrange(1000), "note": rng.choice([None, f"n{seq}"])}
        else:
            op, after = "d", None
        source = {"version": "2.7.0.Final", "connector": "postgresql", "name": "pg", "ts_ms": T0_MS + seq,
                  "db": DB, "schema": SCHEMA, "table": name, "lsn": 1_000_000 + 64 * seq, "txId": 500 + seq}
        event = {"before": {"id": key} if op == "d" else None, "after": after, "source": source, "op": op,
                 "ts_ms": T0_MS + seq}
        if after is None:
            rows.pop(key)
        else:
            rows[key] = after
        yield name, {"id": key}, event


def _row(rng: random.Random, key: int) -> dict:
    return {"id": key, "name": rng.choice(NAMES), "qty": rng.randrange(1000), "note": None}


def final_state(w: Tables) -> dict[str, dict[int, dict]]:
    final: dict[str, dict[int, dict]] = {}
    for _ in changes(w, final):
        pass
    return final


def checksum(rows) -> tuple[int, int]:
    """(rows, order-independent checksum) of a table's rows over COLUMNS."""
    n, total = 0, 0
    for r in rows:
        n += 1
        text = "|".join("" if r[c] is None else str(int(r[c]) if c in ("id", "qty") else r[c]) for c in COLUMNS)
        total = (total + zlib.crc32(text.encode())) % (1 << 61)
    return n, total


def produce(bootstrap: str, topic: str, w: Tables) -> dict:
    """Create `topic` (w.partitions) and produce the workload, each key's changes in one partition."""
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, w.partitions, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, batch_size=512 * 1024,
                             partitioner=lambda key, all_parts, avail: all_parts[zlib.crc32(key) % len(all_parts)])
    t0, sent = time.monotonic(), 0
    for _, key, event in changes(w):
        producer.send(topic, key=json.dumps(key).encode(), value=json.dumps(event, separators=(",", ":")).encode())
        sent += 1
    producer.flush()
    producer.close()
    return {"messages": sent, "seconds": round(time.monotonic() - t0, 2)}


def config(work: Path, bootstrap: str, topic: str, name: str, width: int | None, per_batch: int | None) -> Path:
    """A routed config landing the topic under work/<name>; `width`: [run] table_parallelism (None: unset)."""
    run = "".join(f"{k} = {v}\n" for k, v in (("table_parallelism", width), ("max_records_per_batch", per_batch))
                  if v is not None)
    cfg = work / f"{name}.toml"
    cfg.write_text(f"""[source]
bootstrap_servers = "{bootstrap}"
topics = ["{topic}"]
format = "debezium-json"
startup_mode = "earliest-offset"

[sink]
path = "{work / name}"
table_name = "unrouted"
table_type = "MERGE_ON_READ"

[[route]]
source_table = '{DB}\\.{SCHEMA}\\..*'
sink_table = "<>"

[run]
checkpoint_dir = "{work / (name + '_ckpt')}"
on_bad_record = "fail"
{run}
[spark]
master = "local[2]"
""")
    return cfg


_BATCH = re.compile(r"\bbatch id=\d+ .*\bseconds=([\d.]+)")


def run_once(work: Path, bootstrap: str, topic: str, name: str, width: int | None, w: Tables, batches: int,
             want: dict[str, tuple[int, int]]) -> dict:
    per_batch = -(-w.messages // batches) if batches > 1 else None
    cfg = config(work, bootstrap, topic, name, width, per_batch)
    load = os.getloadavg()[0]
    m, cpu = _run_profiled([sys.executable, "-m", "cdcsync", "run", str(cfg), "--once", "--json"])
    if m.returncode != 0:
        raise RuntimeError(f"cdcsync {name} failed ({m.returncode}):\n{m.stderr[-3000:]}")
    summary = json.loads(m.stdout)
    got = {t: table_checksum(work / name / t) for t in want}
    wrong = sorted(t for t in want if got[t] != want[t])
    took = [float(s) for s in _BATCH.findall(m.stderr)]  # each batch's own seconds, in order
    shutil.rmtree(work / name, ignore_errors=True)
    shutil.rmtree(work / (name + "_ckpt"), ignore_errors=True)
    return {"name": name, "width": width or "default", "seconds": round(sum(took), 2),
            "first_batch": took[0] if took else None, "later_batches": round(sum(took[1:]), 2), "wall": m.seconds,
            "cpu_seconds": cpu["total"], "cpu_python": cpu["python"], "cpu_jvm": cpu["jvm"],
            "jvm_threads": cpu["jvm_threads"], "busiest_thread": cpu["busiest_thread"],
            "load_before": round(load, 1), "load_after": round(os.getloadavg()[0], 1),
            "peak_rss_mb": m.peak_rss_mb, "batches": summary["batches"], "messages": summary["totals"]["messages"],
            "tables": len(summary["tables"]), "state": "WRONG" if wrong else "ok", "wrong_tables": wrong[:10]}


def _run_profiled(cmd: list[str]) -> tuple[measure.Measured, dict]:
    """measure.run, and where the command's CPU time (user + system) went: its Python processes' and its JVM's, the
    JVM's threads by name with digits folded ("Executor task launch worker for task #": Spark's tasks; "Thread-#":
    the JVM side of the driver's Python threads, planning; "dag-scheduler-event-loop"; "C2 CompilerThread#", "GC
    Thread##"), and the busiest single thread of any process. Read from /proc every half second while they live,
    each process's and each thread's last reading kept: a process's own figure holds its threads that ended, a
    thread's loses its last half second. A shared machine's load shows in the wall time, not in these."""
    import threading

    tick, done = os.sysconf("SC_CLK_TCK"), threading.Event()
    threads: dict[tuple[int, int], tuple[str, str, int]] = {}  # (pid, tid) -> (process, thread name, ticks)
    processes: dict[int, tuple[str, int]] = {}  # pid -> (process, ticks of all its threads, ended ones included)
    before = set(_tree(os.getpid()))  # a broker this bench started is not the run's

    def sample() -> None:
        while not done.wait(0.5):
            for pid in set(_tree(os.getpid())) - before:
                try:
                    process = Path(f"/proc/{pid}/comm").read_text().strip()
                    processes[pid] = (process, _thread_stat(Path(f"/proc/{pid}/stat"))[1])
                    tasks = list(Path(f"/proc/{pid}/task").iterdir())
                except (OSError, IndexError, ValueError):  # ended meanwhile
                    continue
                for task in tasks:
                    try:
                        name, ticks = _thread_stat(task / "stat")
                    except (OSError, IndexError, ValueError):
                        continue
                    threads[pid, int(task.name)] = (process, name, ticks)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    m = measure.run(cmd)
    done.set()
    sampler.join()
    kinds, groups = Counter(), Counter()
    for process, ticks in processes.values():
        kinds["jvm" if process == "java" else "python" if process.startswith("python") else "other"] += ticks
    for process, name, ticks in threads.values():
        if process == "java":
            groups[re.sub(r"\d+", "#", name)] += ticks
    busiest = max(threads.values(), key=lambda t: t[2], default=("", "", 0))
    return m, {"total": round(sum(kinds.values()) / tick, 1), "python": round(kinds["python"] / tick, 1),
               "jvm": round(kinds["jvm"] / tick, 1),
               "jvm_threads": {g: round(n / tick, 1) for g, n in groups.most_common(8)},
               "busiest_thread": {"process": busiest[0], "thread": busiest[1],
                                  "cpu_seconds": round(busiest[2] / tick, 1)}}


def _thread_stat(path: Path) -> tuple[str, int]:
    """A thread's name (the kernel's, 15 characters at most) and CPU ticks (user + system) from its stat file."""
    text = path.read_text()
    fields = text.rsplit(")", 1)[1].split()
    return text[text.index("(") + 1:text.rindex(")")], int(fields[11]) + int(fields[12])


def _tree(root: int) -> list[int]:
    """`root` and every process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit():
                children.setdefault(int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(int(d.name))
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def table_checksum(path: Path) -> tuple[int, int]:
    import pyarrow as pa
    from hudi import HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(path)).build()
    return checksum(r for b in table.read() for r in pa.Table.from_batches([b]).select(list(COLUMNS)).to_pylist())


def summarize(runs: list[dict], widths: list[str]) -> dict:
    """Per width: each figure's runs, median, fastest, slowest and spread ((slowest - fastest) / median), for FIGURES
    (`seconds`: all batches; `first_batch`: the first, every table's first load in a JVM just started;
    `later_batches`: the rest, upserts in a warm JVM, as a running service's; `wall`: the whole process; the CPU
    seconds of its processes, of the Python driver and of the JVM) and the cores the run kept busy (CPU / wall);
    each width's speed-up over width 1, the ratio of the medians."""
    out = {}
    for wd in widths:
        mine = [r | {"cores_busy": round(r["cpu_seconds"] / r["wall"], 2)} for r in runs if str(r["width"]) == wd]
        out[wd] = {f: _spread([r[f] for r in mine]) for f in (*FIGURES, "cores_busy") if all(r[f] for r in mine)}
    for wd, s in out.items():
        if "1" in out and wd != "1":
            s["speedup"] = {f: round(out["1"][f]["median"] / s[f]["median"], 2) for f in s
                            if f in out["1"] and not f.startswith(("cpu", "cores"))}
    return out


def _spread(values: list[float]) -> dict:
    median = statistics.median(values)
    return {"runs": values, "median": median, "min": min(values), "max": max(values),
            "spread": round((max(values) - min(values)) / median, 2)}


def bench(bootstrap: str, work: Path, stamp: str, w: Tables, batches: int = 2, rounds: int = 3,
          widths: tuple[str, ...] = ("1", "default")) -> dict:
    """The workload produced to a topic of its own, then `rounds` runs of each width interleaved (each width first
    in turn), every run's tables checked; the report (not written)."""
    topic = f"bench.tables.{stamp.lower()}"
    produced = produce(bootstrap, topic, w)
    want = {t: checksum(rows.values()) for t, rows in final_state(w).items()}
    log(f"{w.tables} tables x {w.changes} changes: {produced['messages']:,} messages in {produced['seconds']} s; "
        f"{sum(n for n, _ in want.values()):,} rows at the end")
    runs = []
    for i in range(rounds):
        for wd in widths if i % 2 == 0 else widths[::-1]:
            width = None if wd == "default" else int(wd)
            runs.append(run_once(work, bootstrap, topic, f"r{i}_w{wd}", width, w, batches, want))
            r = runs[-1]
            log(f"width {wd}: {r['seconds']} s in {r['batches']} batch(es) (first {r['first_batch']} s, later "
                f"{r['later_batches']} s; {r['wall']} s whole process, {r['cpu_seconds']} s CPU (Python "
                f"{r['cpu_python']} s, JVM {r['cpu_jvm']} s; busiest thread {r['busiest_thread']}), peak "
                f"{r['peak_rss_mb']} MB; load {r['load_before']} → {r['load_after']}), {r['tables']} tables, "
                f"state {r['state']}")
    return {"when": stamp, "workload": asdict(w), "batches": batches, "machine": machine(), "runs": runs,
            "summary": summarize(runs, list(widths))}


def wrong(report: dict) -> list[str]:
    return [r["name"] for r in report["runs"] if r["state"] != "ok"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench.tables", description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="full", choices=list(SIZES))
    ap.add_argument("--tables", type=int, help="tables (over --size's)")
    ap.add_argument("--changes", type=int, help="changes per table (over --size's)")
    ap.add_argument("--keys", type=int, help="keys per table (over --size's)")
    ap.add_argument("--batches", type=int, default=2,
                    help="split the topic into this many batches (the first lands every table's first load)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each width, interleaved")
    ap.add_argument("--widths", default="1,default",
                    help="table_parallelism values to compare, 'default' for unset (sized to the machine)")
    ap.add_argument("--bootstrap", help="use this broker instead of starting one")
    ap.add_argument("--event-log", type=Path, metavar="DIR",
                    help="keep every run's Spark event log in DIR (read them with python -m bench.timeline)")
    args = ap.parse_args(argv)
    if args.event_log:
        keep_event_logs(args.event_log)
    widths = tuple(args.widths.split(","))
    if any(wd != "default" and not wd.isdigit() for wd in widths):
        ap.error("--widths takes integers and 'default'")
    w = SIZES[args.size]
    w = Tables(tables=args.tables or w.tables, changes=args.changes or w.changes, keys=args.keys or w.keys)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = ROOT / ".local" / "bench" / f"tables-{stamp}"
    work.mkdir(parents=True)
    try:
        with broker(work, args.bootstrap) as bootstrap:
            report = bench(bootstrap, work, stamp, w, args.batches, args.rounds, widths)
            RESULTS.mkdir(parents=True, exist_ok=True)
            (RESULTS / f"tables-{stamp}.json").write_text(json.dumps(report, indent=2) + "\n")
            print(json.dumps(report, indent=2))
            if wrong(report):
                log(f"error: final state differs from the workload's for {wrong(report)}")
                return 1
            return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def machine() -> dict:
    import platform

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version()}


def log(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
