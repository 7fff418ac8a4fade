"""Where a Spark application's time went, from its event log (`bench.run --event-log DIR` keeps one per contender):
each job's start, the driver's gap before it, its length and tasks; the time with and without a job running; and,
for an application that upserts into Hudi in several batches, each batch's period and the part of it with no job
running (a batch runs from one `Tagging` job, the first job of Hudi's upsert, to the next).

    python -m bench.timeline EVENTLOG [EVENTLOG ...] [--jobs] [--stages] [--between A B]

`--stages` lists every completed stage with its job, length, tasks, and the tasks' summed run time and CPU time
(Spark's executorRunTime and executorCpuTime): on a machine shared with other work the CPU time moves far less than
the wall time, and tells one application's stages apart from another's more steadily.

`--between A B` adds to each summary `between_s`: the seconds from the end of the last job named A (in its
description or its first stage's call site, e.g. `stages/ledger.py`) to the start of the first job named B after it
(e.g. `delete markers`): the driver's time and the jobs between two steps of a batch.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

BATCH_MARK = "Tagging"  # in the description of the first job of each Hudi upsert (HoodieWriteHelper)


@dataclass
class Job:
    id: int
    start: float  # seconds since the application started
    end: float | None  # None: still running when the log ends
    tasks: int
    description: str
    callsite: str = ""  # its first stage's name: where in the driver's code the job was started


@dataclass
class App:
    name: str
    seconds: float  # the application's length (to its last event when the log has no end)
    jobs: list[Job] = field(default_factory=list)


def keep_event_logs(folder: Path) -> None:
    """Every Spark application the bench starts from now on (cdcsync, the peer, the floor) logs its events into
    `folder`: set in a spark-defaults.conf that Spark's launcher reads (SPARK_CONF_DIR), so no contender's own
    settings change."""
    folder = folder.resolve()
    conf = folder / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "spark-defaults.conf").write_text(f"spark.eventLog.enabled true\nspark.eventLog.dir {folder.as_uri()}\n")
    os.environ["SPARK_CONF_DIR"] = str(conf)


def read(path: Path) -> App:
    """The application, its length and its jobs, from a Spark event log (JSON lines; an `.inprogress` one too)."""
    name, t0, end, last = "?", None, None, 0.0
    jobs: dict[int, Job] = {}
    for line in Path(path).read_text().splitlines():
        e = json.loads(line)
        kind = e["Event"]
        if kind == "SparkListenerApplicationStart":
            name, t0 = e["App Name"], e["Timestamp"] / 1000
        elif kind == "SparkListenerJobStart" and t0 is not None:
            props = e.get("Properties") or {}
            stages = e.get("Stage Infos") or []
            description = props.get("spark.job.description") or (stages[0]["Stage Name"] if stages else "")
            jobs[e["Job ID"]] = Job(e["Job ID"], e["Submission Time"] / 1000 - t0, None,
                                    sum(s["Number of Tasks"] for s in stages), description,
                                    stages[0]["Stage Name"] if stages else "")
            last = max(last, jobs[e["Job ID"]].start)
        elif kind == "SparkListenerJobEnd" and e["Job ID"] in jobs:
            jobs[e["Job ID"]].end = e["Completion Time"] / 1000 - t0
            last = max(last, jobs[e["Job ID"]].end)
        elif kind == "SparkListenerApplicationEnd" and t0 is not None:
            end = e["Timestamp"] / 1000 - t0
    if t0 is None:
        raise ValueError(f"{path}: not a Spark event log (no SparkListenerApplicationStart)")
    return App(name, end if end is not None else last, sorted(jobs.values(), key=lambda j: (j.start, j.id)))


@dataclass
class Stage:
    id: int
    job: int | None  # the job that ran it
    start: float  # seconds since the application started
    seconds: float
    tasks: int
    run_s: float  # the tasks' summed run time
    cpu_s: float  # the tasks' summed CPU time (the JVM's threads; a Python worker's time is not in it)
    name: str


def stages(path: Path) -> list[Stage]:
    """Every stage the log saw complete (a skipped stage is not), in the order they started."""
    t0, job_of, out = None, {}, []
    for line in Path(path).read_text().splitlines():
        e = json.loads(line)
        kind = e["Event"]
        if kind == "SparkListenerApplicationStart":
            t0 = e["Timestamp"] / 1000
        elif kind == "SparkListenerJobStart":
            description = (e.get("Properties") or {}).get("spark.job.description") or ""
            job_of |= dict.fromkeys(e.get("Stage IDs") or [], (e["Job ID"], description))
        elif kind == "SparkListenerStageCompleted" and t0 is not None:
            info = e["Stage Info"]
            if "Submission Time" not in info or "Completion Time" not in info:
                continue
            acc = {a["Name"]: a.get("Value") for a in info.get("Accumulables") or []}
            job, description = job_of.get(info["Stage ID"], (None, ""))
            out.append(Stage(info["Stage ID"], job, info["Submission Time"] / 1000 - t0,
                             (info["Completion Time"] - info["Submission Time"]) / 1000, info["Number of Tasks"],
                             int(acc.get("internal.metrics.executorRunTime") or 0) / 1000,
                             int(acc.get("internal.metrics.executorCpuTime") or 0) / 1e9,
                             f"{description[:60]} | {info['Stage Name']}" if description else info["Stage Name"]))
    return sorted(out, key=lambda st: (st.start, st.id))


def stage_lines(found: list[Stage]) -> list[str]:
    lines = [f"{st.start:8.2f}  job {st.job if st.job is not None else '-':>4}  stage {st.id:4d}  {st.seconds:7.2f}s  "
             f"{st.tasks:4d} tasks  run {st.run_s:7.2f}s  cpu {st.cpu_s:7.2f}s  {st.name[:100]}" for st in found]
    lines.append(f"stages: {len(found)}, run {sum(st.run_s for st in found):.2f}s, cpu "
                 f"{sum(st.cpu_s for st in found):.2f}s")
    for what, (n, seconds, run_s, cpu_s) in stage_totals(found).items():
        lines.append(f"  {n:3d} stages  {seconds:7.2f}s  run {run_s:7.2f}s  cpu {cpu_s:7.2f}s  {what}")
    return lines


def stage_totals(found: list[Stage]) -> dict[str, tuple[int, float, float, float]]:
    """Per job description (a stage's own name where its job has none): stages, their summed length, run time and CPU
    time, the costliest in CPU first."""
    out: dict[str, list[float]] = {}
    for st in found:
        t = out.setdefault(st.name.split(" | ")[0], [0, 0.0, 0.0, 0.0])
        t[0] += 1
        t[1] += st.seconds
        t[2] += st.run_s
        t[3] += st.cpu_s
    return {k: (int(v[0]), round(v[1], 2), round(v[2], 2), round(v[3], 2))
            for k, v in sorted(out.items(), key=lambda kv: -kv[1][3])}


def busy(jobs: list[Job], a: float, b: float) -> float:
    """Seconds of [a, b] during which at least one of `jobs` ran (jobs overlap: a compaction beside a batch); a
    job the log never saw end runs to b."""
    spans = ((max(j.start, a), min(b if j.end is None else j.end, b)) for j in jobs)
    total, reached = 0.0, a
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if end > reached:
            total += end - max(start, reached)
            reached = end
    return total


def summary(app: App) -> dict:
    """The application's time: before its first job, with jobs running and without, and per batch."""
    first = app.jobs[0].start if app.jobs else app.seconds
    with_jobs = busy(app.jobs, first, app.seconds)
    marks = [j.start for j in app.jobs if BATCH_MARK in j.description]
    batches = [(b - a, b - a - busy(app.jobs, a, b)) for a, b in pairwise(marks)]
    out = {"name": app.name, "seconds": round(app.seconds, 2), "jobs": len(app.jobs),
           "before_first_job_s": round(first, 2), "jobs_running_s": round(with_jobs, 2),
           "no_job_running_s": round(app.seconds - first - with_jobs, 2)}
    if batches:
        out |= {"batches_timed": len(batches),
                "batch_period_median_s": round(statistics.median(p for p, _ in batches), 2),
                "batch_no_job_median_s": round(statistics.median(i for _, i in batches), 2)}
    return out


def between(app: App, a: str, b: str) -> float | None:
    """Seconds from the end of the last job named `a` to the start of the first job named `b` after it (None when
    the application has no such pair)."""
    def named(j: Job, text: str) -> bool:
        return text in j.description or text in j.callsite

    for later in app.jobs:
        if not named(later, b):
            continue
        done = [j.end for j in app.jobs if named(j, a) and j.end is not None and j.end <= later.start]
        if done:
            return round(later.start - max(done), 2)
    return None


def job_lines(app: App) -> list[str]:
    lines, reached = [], 0.0
    for j in app.jobs:
        length = "running" if j.end is None else f"{j.end - j.start:6.2f}s"
        lines.append(f"{j.start:8.2f}  +{max(0.0, j.start - reached):5.2f}  job {j.id:4d}  {length}  "
                     f"{j.tasks:4d} tasks  {j.description[:80]}")
        reached = max(reached, j.start if j.end is None else j.end)
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="bench.timeline", description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+", type=Path, metavar="EVENTLOG")
    ap.add_argument("--jobs", action="store_true", help="list every job: start, driver gap before it, length, tasks")
    ap.add_argument("--stages", action="store_true",
                    help="list every completed stage: its job, length, tasks, the tasks' run time and CPU time")
    ap.add_argument("--between", nargs=2, metavar=("A", "B"),
                    help="the seconds from the end of the last job named A to the start of the next job named B")
    args = ap.parse_args(argv)
    for path in args.logs:
        app = read(path)
        if args.jobs:
            print(f"# {app.name} ({path.name})\n   start    gap  job        length  tasks  description")
            print("\n".join(job_lines(app)))
        if args.stages:
            print(f"# {app.name} ({path.name}): stages")
            print("\n".join(stage_lines(stages(path))))
        print(json.dumps(summary(app) | ({"between_s": between(app, *args.between)} if args.between else {})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
