"""`make bench-parse`: what parsing each Debezium message costs, cdcsync's way against the peer's, on the same
messages held in memory (no Kafka, no Hudi): the lever "one JSON parse per record" of issue 47, measured.

    python -m bench.parse [--events 1000000] [--rounds 3] [--only VARIANT …] [--jfr FILE]

The workload's messages (bench/workload.py, `--events` of them over a fifth as many keys, 4 partitions) are written
once to a Parquet file shaped as Spark's Kafka source reads a topic, read back and cached; then each variant runs
over the cached rows as one Spark job that computes every column it selects (the `noop` sink), `--rounds` times,
interleaved (A B C … A B C …), in one JVM that every variant first runs once unmeasured:

- read: the Kafka columns alone (what every variant pays);
- envelope-parse: that decode's `from_json` alone, with the envelope's fields it reads (the rest is its checks);
- envelope: cdcsync's decode of the envelope (formats/spark/envelope.py: one `from_json`, the row images as text);
- typed: then the row image parsed into the table's columns (schema/spark/fit.py `with_typed_parse`, `typed`);
- checked: then the fit check (`misfit`: the row image's field names, so that a new field is never dropped);
- peer: the peer's one parse of the envelope with the row typed inside it (bench/peer.py, bench/floor.py ENVELOPE);
- peer+names: that parse plus the row image's field names read beside it (what a single parse needs to see a new
  field: `get_json_object`, then `json_object_keys`).

Prints a JSON report (every run, each variant's median, fastest and slowest, and its median minus read's) and writes
it to bench/results/<time>-parse.json. `--only` measures some variants (repeatable); `--jfr FILE` records the driver's
JVM with Java Flight Recorder over the measured rounds (`jcmd`) and adds the methods most sampled on the CPU, by their
own time and with what they call, to the report (`jfr print`): with `--only envelope`, where the decode's time goes.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench import fair
from bench.contenders import log
from bench.floor import ENVELOPE
from bench.workload import Events, Workload

RESULTS = Path(__file__).resolve().parent / "results"
VARIANTS = ("read", "envelope-parse", "envelope", "typed", "checked", "peer", "peer+names")
# the workload's row image as cdcsync types a table of it (what its first batch's column sample infers)
COLUMNS = (("id", "BIGINT"), ("name", "STRING"), ("segment", "STRING"), ("balance_cents", "BIGINT"),
           ("updated_at", "BIGINT"))


def write_messages(path: Path, events: int) -> int:
    """The workload's first `events` messages as Spark's Kafka source gives them, in produce order per partition."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    w = Workload(events=events, keys=max(1, events // 5))
    keys, values, parts, offsets = [], [], [], []
    next_offset = [0] * w.partitions
    for i, (key, value) in enumerate(Events(w)):
        p = i % w.partitions
        keys.append(key)
        values.append(value)
        parts.append(p)
        offsets.append(next_offset[p])
        next_offset[p] += 1
    n = len(values)
    table = pa.table({"key": pa.array(keys, pa.binary()), "value": pa.array(values, pa.binary()),
                      "topic": pa.array(["bench.parse"] * n), "partition": pa.array(parts, pa.int32()),
                      "offset": pa.array(offsets, pa.int64()),
                      "timestamp": pa.array([1_763_856_000_000_000] * n, pa.timestamp("us", tz="UTC")),
                      "timestampType": pa.array([0] * n, pa.int32())})
    pq.write_table(table, path)
    return n


def variants(raw):
    """{variant: the DataFrame it computes} over the cached Kafka-shaped rows `raw`."""
    from pyspark.sql import functions as F

    from cdcsync import columns as C
    from cdcsync.formats.spark import envelope
    from cdcsync.schema.spark import fit
    from cdcsync.schema.spark.columns import Col

    cols = [Col(name, kind) for name, kind in COLUMNS]
    read = envelope.kafka_columns(raw, text=False)
    parsed_envelope = envelope.debezium_envelope(F.col(C.VALUE)).alias("e")
    parse_only = read.select(C.PARTITION, C.OFFSET, parsed_envelope).select(
        C.PARTITION, C.OFFSET, "e.schema", "e.payload", "e.op", "e.before", "e.after", "e.ts_ms", "e.source")
    env = envelope.decode_envelope(raw, "debezium-json")
    parsed = fit.with_typed_parse(env, cols)
    typed = parsed.select(C.PARTITION, C.OFFSET, C.OP, *fit.typed(cols))
    checked = parsed.select(C.PARTITION, C.OFFSET, C.OP, *fit.typed(cols), fit.misfit(cols).alias("misfit"))
    e = F.from_json(F.col("value").cast("string"), ENVELOPE).alias("e")
    peer_cols = [F.coalesce("e.after.id", "e.before.id").alias("id"), "e.after.name", "e.after.segment",
                 "e.after.balance_cents", "e.after.updated_at", "e.ts_ms", (F.col("e.op") == "d").alias("deleted")]
    peer = raw.select(e, "partition", "offset").select(*peer_cols, "partition", "offset")
    names = F.json_object_keys(F.get_json_object(F.col("value").cast("string"), "$.after")).alias("names")
    peer_names = raw.select(e, names, "partition", "offset").select(*peer_cols, "names", "partition", "offset")
    return {"read": read, "envelope-parse": parse_only, "envelope": env, "typed": typed, "checked": checked,
            "peer": peer, "peer+names": peer_names}


def timed(df) -> float:
    t0 = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t0


def summary(runs: list[dict]) -> dict:
    """Per variant: the median, fastest and slowest run, and the median less read's (the parse's own share)."""
    out = {}
    for v in dict.fromkeys(r["variant"] for r in runs):
        s = [r["seconds"] for r in runs if r["variant"] == v]
        out[v] = {"runs": len(s), "median_s": round(statistics.median(s), 3), "min_s": min(s), "max_s": max(s)}
    base = out.get("read", {}).get("median_s")
    for row in out.values():
        row["over_read_s"] = round(row["median_s"] - base, 3) if base is not None else None
    return out


def jfr_top(printed: str, n: int = 25) -> dict:
    """The methods most often on top of the CPU samples of `jfr print --events jdk.ExecutionSample`'s text ("self")
    and most often anywhere in their stacks ("total"), each as its share of the samples in %."""
    own: collections.Counter[str] = collections.Counter()
    anywhere: collections.Counter[str] = collections.Counter()
    for sample in printed.split("jdk.ExecutionSample")[1:]:
        frames = re.findall(r"^\s+([\w.$<>]+)\(", sample, re.M)
        if frames:
            own[frames[0]] += 1
            anywhere.update(set(frames))
    total = sum(own.values()) or 1
    return {"samples": sum(own.values()),
            "self": {f: round(100 * c / total, 1) for f, c in own.most_common(n)},
            "total": {f: round(100 * c / total, 1) for f, c in anywhere.most_common(n)}}


def _jcmd(pid: int, *args: str) -> None:
    subprocess.run(["jcmd", str(pid), *args], check=True, capture_output=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench.parse")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", action="append", choices=VARIANTS, help="measure this variant (repeatable)")
    ap.add_argument("--jfr", type=Path, metavar="FILE", help="record the measured rounds with Java Flight Recorder")
    args = ap.parse_args(argv)
    chosen = [v for v in VARIANTS if v in (args.only or VARIANTS)]
    from cdcsync.runtime.session import build_session

    with tempfile.TemporaryDirectory(prefix="bench-parse-") as tmp:
        path = Path(tmp) / "messages.parquet"
        n = write_messages(path, args.events)
        log(f"parse: {n:,} messages written to {path.name}; {args.rounds} rounds of {', '.join(chosen)}")
        spark = build_session("bench-parse", "local[2]")
        try:
            raw = spark.read.parquet(str(path)).cache()
            raw.count()
            plans = variants(raw)
            for v in chosen:  # each variant's code generated and compiled once before any is measured
                timed(plans[v])
            pid = spark._jvm.java.lang.ProcessHandle.current().pid() if args.jfr else 0
            if args.jfr:
                _jcmd(pid, "JFR.start", "name=bench-parse", "settings=profile", f"filename={args.jfr.resolve()}")
            runs = []
            for i, v in fair.interleave(chosen, args.rounds):
                runs.append({"round": i, "variant": v, "seconds": round(timed(plans[v]), 3)})
                log(f"parse {v} round {i}: {runs[-1]['seconds']} s")
            if args.jfr:
                _jcmd(pid, "JFR.stop", "name=bench-parse")
        finally:
            spark.stop()
    report = {"events": n, "rounds": args.rounds, "runs": runs, "summary": summary(runs)}
    if args.jfr:
        printed = subprocess.run(["jfr", "print", "--events", "jdk.ExecutionSample", str(args.jfr)],
                                 capture_output=True, text=True, check=True).stdout
        report["jfr"] = jfr_top(printed)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-parse.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: report[k] for k in ("summary", "jfr") if k in report}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
