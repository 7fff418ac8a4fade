"""The cron shape (issue 47, point 4): what a user who runs `cdcsync run --once` every few minutes pays per run,
against the peer job (bench/peer.py, `trigger(availableNow=True)`) started the same way on the same new events.

    python -m bench.cron [--rounds 5] [--per-run 1000] [--table MERGE_ON_READ|COPY_ON_WRITE] [--bootstrap HOST:PORT]
                         [--event-log DIR] [--py-spy DIR] [--spark KEY=VALUE ...]

One topic and one workload (bench/workload.py): a first load of --initial events, unmeasured, into each table; then
each round produces the next --per-run events and runs each job once over them (one process each, as cron starts
it: JVM start, session, Kafka read, one Hudi commit, exit), in ABBA order so neither always runs second. The peer
writes on cdcsync's own Hudi options (bench/fair.py: peer-tuned). Both tables are checked by hudi-rs against the
workload's final state at the end. Writes bench/results/<time>-cron.json: every run's wall time, the medians and the
ratio peer / cdcsync (above 1: cdcsync's run is the shorter).

With --py-spy DIR each measured run is recorded by py-spy (idle samples too: a py4j call waiting on the JVM counts),
DIR/<job>-<round>.txt as collapsed stacks; `python -m bench.pyspy DIR/cdcsync-*.txt` says where cdcsync's wall time
went, by function. Those runs are slower: their times profile, they are no figures (`make bench-cron-profile`).
--spark KEY=VALUE (repeated) sets a Spark setting for both jobs (an experiment: cdcsync's [spark], the peer's
session).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

from bench import fair
from bench.contenders import cdcsync_config, measured, table_checksum
from bench.run import RESULTS, ROOT, machine, uptime_line
from bench.timeline import keep_event_logs
from bench.workload import Events, Workload, broker, checksum, final_state, partition_of, produce_topic


def log(msg: str) -> None:
    print(f"[cron {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Topic:
    """The workload's events produced in slices, in order, to one topic."""

    def __init__(self, bootstrap: str, topic: str, w: Workload):
        from kafka import KafkaProducer

        produce_topic(bootstrap, topic, w.partitions)
        self.name = topic
        self._events = iter(Events(w))
        self._producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, partitioner=partition_of)

    def produce(self, n: int) -> int:
        sent = 0
        for key, value in itertools.islice(self._events, n):
            self._producer.send(self.name, key=key, value=value)
            sent += 1
        self._producer.flush()
        return sent

    def close(self) -> None:
        self._producer.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--per-run", type=int, default=1000, help="new events each cron run reads")
    p.add_argument("--initial", type=int, default=20_000, help="events of the first load (unmeasured)")
    p.add_argument("--table", default="MERGE_ON_READ", choices=["MERGE_ON_READ", "COPY_ON_WRITE"])
    p.add_argument("--bootstrap", help="an existing broker (default: a local one started for the run)")
    p.add_argument("--event-log", type=Path, help="keep each run's Spark event log here (python -m bench.timeline)")
    p.add_argument("--py-spy", type=Path, help="record each run with py-spy here (python -m bench.pyspy)")
    p.add_argument("--spark", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting for both jobs")
    args = p.parse_args(argv)
    if args.event_log:
        keep_event_logs(args.event_log)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    work = ROOT / ".local" / "bench" / f"{stamp}-cron"
    work.mkdir(parents=True)
    with broker(work, args.bootstrap) as bootstrap:
        report = bench(work, bootstrap, args)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{stamp}-cron.json"
    out.write_text(json.dumps(report, indent=2))
    log(f"report: {out}")
    return 0 if report["state_matches"] else 1


def bench(work: Path, bootstrap: str, args: argparse.Namespace) -> dict:
    events = args.initial + args.rounds * args.per_run  # keys enough that deletes never use them all up
    w = Workload(events=events, keys=max(400, args.initial // 5, events // 10))
    topic = f"bench.cron.{work.name.lower()}"
    source = Topic(bootstrap, topic, w)
    spark = dict(kv.split("=", 1) for kv in args.spark)
    cfg = cdcsync_config(work, bootstrap, topic, args.table, name="cron_cdcsync", spark=spark)
    options = fair.tuned_options(cfg, args.per_run)  # the peer on cdcsync's own Hudi options (peer-tuned)
    peer_path = work / "cron_peer"
    jobs = {
        "cdcsync": [sys.executable, "-m", "cdcsync", "run", str(cfg), "--once", "--json", "-q"],
        "peer-tuned": [sys.executable, "-m", "bench.peer", bootstrap, topic, str(peer_path), args.table,
                       "--options", json.dumps(options), "--spark-conf", json.dumps(spark)],
    }
    log(f"{uptime_line()}; first load of {source.produce(args.initial):,} events (unmeasured)")
    for name, cmd in jobs.items():
        measured(f"{name} first load", cmd)
    runs: list[dict] = []
    for r in range(args.rounds):
        sent = source.produce(args.per_run)
        order = list(jobs) if r % 2 == 0 else list(jobs)[::-1]
        for name in order:
            cmd = jobs[name]
            if args.py_spy:
                args.py_spy.mkdir(parents=True, exist_ok=True)
                out = args.py_spy / f"{name}-{r + 1}.txt"
                cmd = [str(Path(sys.executable).with_name("py-spy")), "record", "--idle", "--format", "raw",
                       "--rate", "100", "--output", str(out), "--", *cmd]
            m = measured(f"{name} round {r + 1}", cmd)
            runs.append({"round": r + 1, "name": name, "seconds": m.seconds, "cpu_s": m.cpu_s,
                         "peak_rss_mb": m.peak_rss_mb, "messages": sent})
            log(f"round {r + 1}: {name} {m.seconds:.2f}s")
    source.close()
    want = checksum(final_state(w).values())
    got = {"cdcsync": table_checksum(work / "cron_cdcsync"), "peer-tuned": table_checksum(peer_path)}
    medians = {n: statistics.median(x["seconds"] for x in runs if x["name"] == n) for n in jobs}
    report = {"kind": "cron", "table_type": args.table, "per_run": args.per_run, "initial": args.initial,
              "rounds": args.rounds, "spark": spark, "machine": machine(), "runs": runs,
              "median_s": {n: round(s, 2) for n, s in medians.items()},
              "spread_s": {n: [min(x["seconds"] for x in runs if x["name"] == n),
                               max(x["seconds"] for x in runs if x["name"] == n)] for n in jobs},
              "ratio_peer_over_cdcsync": round(medians["peer-tuned"] / medians["cdcsync"], 3),
              "peer_options": options, "final_state": {n: list(g) for n, g in got.items()},
              "state_matches": all(g == want for g in got.values()), "uptime_end": uptime_line()}
    log(f"medians: cdcsync {medians['cdcsync']:.2f}s, peer-tuned {medians['peer-tuned']:.2f}s: "
        f"{report['ratio_peer_over_cdcsync']}×; final state {'matches' if report['state_matches'] else 'DIFFERS'}")
    return report


if __name__ == "__main__":
    sys.exit(main())
