"""bench.timeline reads Spark event logs written here (the events and fields Spark 3.5 writes) into where the time
went; bench.run --event-log makes every contender keep one."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench import timeline

T0 = 1_800_000_000_000  # the application's start, in ms as Spark logs it


def _log(path, jobs, app_end: float | None = 10.0, name="cdcsync-t"):
    """An event log: `jobs` = [(id, start_s, end_s or None, tasks, description)], times relative to the start."""
    timed = [(0.0, {"Event": "SparkListenerApplicationStart", "App Name": name, "Timestamp": T0})]
    for jid, start, end, tasks, description in jobs:
        timed.append((start, {"Event": "SparkListenerJobStart", "Job ID": jid, "Submission Time": _ms(start),
                              "Stage Infos": [{"Stage Name": f"collect at batch.py:{jid}", "Number of Tasks": tasks}],
                              "Properties": {"spark.job.description": description} if description else {}}))
        if end is not None:
            timed.append((end, {"Event": "SparkListenerJobEnd", "Job ID": jid, "Completion Time": _ms(end)}))
    if app_end is not None:
        timed.append((app_end, {"Event": "SparkListenerApplicationEnd", "Timestamp": _ms(app_end)}))
    path.write_text("".join(json.dumps(e) + "\n" for _, e in sorted(timed, key=lambda t: t[0])))
    return path


def _ms(seconds: float) -> int:
    return T0 + round(seconds * 1000)


def test_the_time_with_and_without_jobs_and_per_batch(tmp_path):
    path = _log(tmp_path / "local-1", [
        (0, 1.0, 2.0, 4, None),  # the column sample: no description, named by its stage
        (1, 3.0, 3.5, 9, "HoodieWriteHelper:Tagging: t"),
        (2, 3.2, 4.0, 10, "RunCompactionActionExecutor:Preparing compaction metadata: t"),  # beside the batch
        (3, 6.0, 6.4, 9, "HoodieWriteHelper:Tagging: t"),
        (4, 9.0, 9.5, 9, "HoodieWriteHelper:Tagging: t"),
    ])
    app = timeline.read(path)
    assert [j.id for j in app.jobs] == [0, 1, 2, 3, 4] and app.jobs[0].description == "collect at batch.py:0"
    assert timeline.summary(app) == {
        "name": "cdcsync-t", "seconds": 10.0, "jobs": 5, "before_first_job_s": 1.0,
        "jobs_running_s": 2.9,  # 1 + [3, 4] once though two jobs overlap + 0.4 + 0.5
        "no_job_running_s": 6.1,
        "batches_timed": 2, "batch_period_median_s": 3.0,
        "batch_no_job_median_s": 2.3,  # 3 - 1.0 and 3 - 0.4
    }


def test_a_log_still_being_written_ends_at_its_last_event_with_its_running_job_running(tmp_path):
    path = _log(tmp_path / "local-2.inprogress", [(0, 1.0, 2.0, 4, None), (1, 5.0, None, 4, None)], app_end=None)
    app = timeline.read(path)
    assert app.seconds == 5.0 and app.jobs[1].end is None
    assert timeline.busy(app.jobs, 0.0, 8.0) == 4.0  # 1 s, then the running job from 5 s to the window's end
    assert "running" in timeline.job_lines(app)[1]


def test_an_application_without_upserts_has_no_batches(tmp_path):
    s = timeline.summary(timeline.read(_log(tmp_path / "local-3", [(0, 2.0, 3.0, 4, "parquet at floor.py:40")])))
    assert s["jobs_running_s"] == 1.0 and "batches_timed" not in s


def test_a_file_that_is_not_an_event_log_is_refused(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"Event": "SparkListenerJobEnd", "Job ID": 1}) + "\n")
    with pytest.raises(ValueError, match="not a Spark event log"):
        timeline.read(tmp_path / "x.json")


def test_the_command_prints_one_summary_per_log_and_the_jobs_when_asked(tmp_path, capsys):
    a = _log(tmp_path / "local-a", [(0, 1.0, 2.0, 4, "x")], name="bench-peer-merge_on_read")
    b = _log(tmp_path / "local-b", [(0, 1.0, 2.0, 4, "y")])
    assert timeline.main([str(a), str(b), "--jobs"]) == 0
    out = capsys.readouterr().out.splitlines()
    summaries = [json.loads(line) for line in out if line.startswith("{")]
    assert [s["name"] for s in summaries] == ["bench-peer-merge_on_read", "cdcsync-t"]
    assert sum("job    0" in line for line in out) == 2


_spans = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 10), st.booleans()), max_size=12)


@given(_spans, st.integers(0, 50), st.integers(0, 50))
def test_busy_counts_each_second_any_job_ran_once(spans, a, b):
    jobs = [timeline.Job(i, float(s), None if running else float(s + n), 1, "") for i, (s, n, running) in
            enumerate(spans)]
    a, b = min(a, b), max(a, b)

    def ran(second: int) -> bool:  # integer bounds: a second is wholly covered or not at all
        return any(j.start <= second and second + 1 <= (b if j.end is None else j.end) for j in jobs)

    assert timeline.busy(jobs, float(a), float(b)) == sum(ran(k) for k in range(a, b))


def test_bench_event_log_makes_every_spark_launch_log_into_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "theirs"))  # put back as it was once the test ends
    timeline.keep_event_logs(tmp_path / "ev")
    conf = tmp_path / "ev" / "conf"
    assert os.environ["SPARK_CONF_DIR"] == str(conf)
    assert (conf / "spark-defaults.conf").read_text().splitlines() == [
        "spark.eventLog.enabled true", f"spark.eventLog.dir {(tmp_path / 'ev').resolve().as_uri()}"]


def test_between_two_steps_counts_from_the_last_job_of_one_to_the_first_of_the_other(tmp_path, capsys):
    path = _log(tmp_path / "local-3", [
        (0, 1.0, 2.0, 4, "cdcsync batch 1: the one pass"),  # its call site: collect at batch.py:0
        (1, 2.2, 2.5, 4, "cdcsync batch 1: the one pass"),
        (2, 3.0, 3.2, 1, "cdcsync batch 1: delete markers"),
        (3, 4.0, 4.1, 1, "cdcsync batch 1: delete markers"),
    ])
    app = timeline.read(path)
    assert timeline.between(app, "one pass", "delete markers") == 0.5  # 2.5 → 3.0
    assert timeline.between(app, "batch.py:0", "delete markers") == 1.0  # by call site: 2.0 → 3.0
    assert timeline.between(app, "delete markers", "one pass") is None
    assert timeline.main([str(path), "--between", "one pass", "delete markers"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["between_s"] == 0.5
