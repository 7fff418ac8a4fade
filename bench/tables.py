"""Whole-database sync, serial against parallel commits (issue 46): one topic holding the Debezium changes of N
PostgreSQL tables (`source.db`/`schema`/`table`), one `[[route]]` with `sink_table = "<>"`, landed by
`cdcsync run --once` with `[run] table_parallelism = 1` and with each other width asked for (the default: unset,
sized to the machine), each run into a table root of its own from the same topic, interleaved (1 W 1 W …), and
the median of each.

    python -m bench.tables [--tables 100] [--changes 1000] [--batches 1] [--rounds 3] [--widths 1,default]

Every run's tables are read back by hudi-rs and held against the workload's own final state (a run that differs is
reported WRONG and the bench exits 1). Figures per run: `seconds`, the batches' own time (the sum of the `batch`
events' seconds: Kafka read, split and every table's commit, without the JVM's start), split into `first_batch`
(every table's first load, in a JVM just started) and `later_batches` (upserts in a warm JVM, as a long-running
service's); `wall`, the whole process.
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
from dataclasses import asdict, dataclass
from pathlib import Path

from bench import measure

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
    m, cpu = _run_counting_cpu([sys.executable, "-m", "cdcsync", "run", str(cfg), "--once", "--json"])
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
            "cpu_seconds": cpu, "load_before": round(load, 1), "load_after": round(os.getloadavg()[0], 1),
            "peak_rss_mb": m.peak_rss_mb, "batches": summary["batches"], "messages": summary["totals"]["messages"],
            "tables": len(summary["tables"]), "state": "WRONG" if wrong else "ok", "wrong_tables": wrong[:10]}


def _run_counting_cpu(cmd: list[str]) -> tuple[measure.Measured, float]:
    """measure.run, and the CPU seconds (user + system) the command's processes used, the JVM's among them: read from
    /proc every half second while they live, each process's last reading kept. A shared machine's load shows in
    the wall time, not in these."""
    import threading

    tick, seen, done = os.sysconf("SC_CLK_TCK"), {}, threading.Event()
    before = set(_tree(os.getpid()))  # a broker this bench started is not the run's

    def sample() -> None:
        while not done.wait(0.5):
            for pid in set(_tree(os.getpid())) - before:
                try:
                    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                    seen[pid] = (int(stat[11]) + int(stat[12])) / tick
                except (OSError, IndexError, ValueError):  # ended meanwhile
                    pass

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    m = measure.run(cmd)
    done.set()
    sampler.join()
    return m, round(sum(seen.values()), 1)


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
    """Per width: each figure's runs and median (`seconds`: all batches; `first_batch`: the first, every table's first
    load in a JVM just started; `later_batches`: the rest, upserts in a warm JVM, as a running service's; `wall`:
    the whole process; `cpu_seconds`: its processes' CPU time); each width's speed-up over width 1, the ratio of
    the medians."""
    figures = ("seconds", "first_batch", "later_batches", "wall", "cpu_seconds")
    out = {}
    for wd in widths:
        mine = [r for r in runs if str(r["width"]) == wd]
        out[wd] = {f: {"runs": [r[f] for r in mine], "median": statistics.median(r[f] for r in mine)}
                   for f in figures if all(r[f] for r in mine)}
    for wd, s in out.items():
        if "1" in out and wd != "1":
            s["speedup"] = {f: round(out["1"][f]["median"] / s[f]["median"], 2) for f in s
                            if f in out["1"] and f != "cpu_seconds"}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench.tables", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--changes", type=int, default=1000, help="changes per table")
    ap.add_argument("--keys", type=int, default=200, help="keys per table")
    ap.add_argument("--batches", type=int, default=2,
                    help="split the topic into this many batches (the first lands every table's first load)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each width, interleaved")
    ap.add_argument("--widths", default="1,default",
                    help="table_parallelism values to compare, 'default' for unset (sized to the machine)")
    ap.add_argument("--bootstrap", help="use this broker instead of starting one")
    args = ap.parse_args(argv)
    widths = args.widths.split(",")
    if any(wd != "default" and not wd.isdigit() for wd in widths):
        ap.error("--widths takes integers and 'default'")
    w = Tables(tables=args.tables, changes=args.changes, keys=args.keys)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = ROOT / ".local" / "bench" / f"tables-{stamp}"
    work.mkdir(parents=True)
    broker = None
    if not args.bootstrap:
        from devtools.local_kafka import BrokerSpec, Listener, LocalBroker, free_port

        broker = LocalBroker(BrokerSpec(work / "kafka", [Listener("PLAINTEXT", free_port())], heap="1g")).start()
    bootstrap = args.bootstrap or broker.bootstrap
    try:
        topic = f"bench.tables.{stamp.lower()}"
        produced = produce(bootstrap, topic, w)
        want = {t: checksum(rows.values()) for t, rows in final_state(w).items()}
        log(f"{w.tables} tables x {w.changes} changes: {produced['messages']:,} messages in {produced['seconds']} s; "
            f"{sum(n for n, _ in want.values()):,} rows at the end")
        runs = []
        for i in range(args.rounds):
            for wd in widths if i % 2 == 0 else widths[::-1]:  # interleaved, and each width first in turn
                width = None if wd == "default" else int(wd)
                runs.append(run_once(work, bootstrap, topic, f"r{i}_w{wd}", width, w, args.batches, want))
                r = runs[-1]
                log(f"width {wd}: {r['seconds']} s in {r['batches']} batch(es) (first {r['first_batch']} s, later "
                    f"{r['later_batches']} s; {r['wall']} s whole process, {r['cpu_seconds']} s CPU, peak "
                    f"{r['peak_rss_mb']} MB; load {r['load_before']} → {r['load_after']}), {r['tables']} tables, "
                    f"state {r['state']}")
        report = {"when": stamp, "workload": asdict(w), "batches": args.batches, "machine": machine(),
                  "runs": runs, "summary": summarize(runs, widths)}
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"tables-{stamp}.json").write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
        wrong = [r["name"] for r in runs if r["state"] != "ok"]
        if wrong:
            log(f"error: final state differs from the workload's for {wrong}")
            return 1
        return 0
    finally:
        if broker:
            broker.stop()
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
