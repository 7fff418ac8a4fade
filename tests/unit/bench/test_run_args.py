"""bench.run refuses before any run what would fail it after the runs; runs every contender in interleaved rounds,
the peer with Hudi's defaults and tuned as cdcsync, every Hudi contender on the --sink-option; reports medians."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from bench import contenders, fair, run
from cdcsync.sinks import hudi


def test_a_missing_chart_library_stops_the_bench_before_it_starts(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    monkeypatch.setattr(run, "Workload", None)  # any run past the check would fail on this instead
    with pytest.raises(SystemExit) as e:
        run.main(["--size", "tiny"])
    assert e.value.code == 2 and "make bench" in capsys.readouterr().err


def _bench(monkeypatch, tmp_path, seconds=None):
    """bench.run with every contender faked: the calls they got, in order, and the reports written."""
    calls, reports = [], []
    seconds = seconds or {}

    def result(name, d):
        assert d.is_dir() and d.parent.parent == tmp_path / ".local" / "bench"  # a folder of its own per run
        n = sum(c[0] == name for c in calls)
        return {"name": name, "status": "ok", "messages": 1000, "seconds": seconds.get(name, [1.0] * 9)[n],
                "cpu_s": 1.0, "peak_rss_mb": 1.0}

    def cdcsync(d, src, tt, registry=None, variant="", run_options=None):
        name = f"cdcsync {contenders.kind(tt)}" + (" Avro" if registry else "") + (f" {variant}" if variant else "")
        out = result(name, d)
        calls.append((name, src.options, run_options))
        return out

    def peer(d, src, tt, mode, options, max_offsets=None):
        name = f"peer-{mode} {contenders.kind(tt)}" + (" multi-batch" if max_offsets else "")
        out = result(name, d)
        calls.append((name, options, max_offsets))
        return out

    def bound(d, src, tt, messages, options):
        out = result(f"bound-tuned {contenders.kind(tt)}", d)
        calls.append((out["name"], options, messages))
        return out

    def floor(d, src):
        out = result(contenders.FLOOR, d)
        calls.append((contenders.FLOOR, None, None))
        return out

    monkeypatch.setitem(sys.modules, "matplotlib", types.ModuleType("matplotlib"))  # the chart is not drawn here
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "produce", lambda *a: {"messages": 7, "seconds": 0.1})
    for name, fake in (("run_cdcsync", cdcsync), ("run_peer", peer), ("run_bound", bound), ("run_floor", floor)):
        monkeypatch.setattr(contenders, name, fake)
    monkeypatch.setattr(run, "write", lambda report, name: reports.append(report))
    return calls, reports


BASE = ["--size", "tiny", "--bootstrap", "b:9092", "--only", "throughput", "--no-avro", "--grown-factor", "0"]


def test_no_single_batch_runs_the_multi_batch_contenders_alone_each_on_the_same_options(monkeypatch, tmp_path):
    calls, reports = _bench(monkeypatch, tmp_path)
    assert run.main([*BASE, "--no-single-batch", "--rounds", "1", "--sink-option", "hoodie.x=y"]) == 0
    assert [c[0] for c in calls] == ["cdcsync MOR multi-batch", "peer-default MOR multi-batch",
                                     "peer-tuned MOR multi-batch", contenders.FLOOR]
    per = -(-2000 // contenders.MULTI_BATCHES)  # the tiny workload's events, in MULTI_BATCHES batches
    mine, default, tuned = calls[0][1], calls[1][1], calls[2][1]
    assert calls[0][2] == {"max_records_per_batch": per} and calls[1][2] == calls[2][2] == per
    assert mine == default == {"hoodie.x": "y", **contenders.LOGS}
    cfg = contenders.cdcsync_config(tmp_path, "b:1", "t", "MERGE_ON_READ", options=mine)
    assert tuned == {**fair.tuned_options(cfg, per), **mine}
    assert reports[0]["hudi_options"]["peer-tuned MOR multi-batch"] == tuned


def test_every_contender_runs_each_round_interleaved_and_the_ratios_are_of_medians(monkeypatch, tmp_path):
    calls, reports = _bench(monkeypatch, tmp_path, seconds={"cdcsync MOR": [10.0, 30.0, 12.0],
                                                            "peer-tuned MOR": [9.0, 8.0, 40.0],
                                                            "peer-default MOR": [6.0, 6.0, 6.0]})
    assert run.main([*BASE, "--no-multi-batch", "--rounds", "3", "--sink-option", "hoodie.index.type=BUCKET"]) == 0
    one = ["cdcsync MOR", "peer-default MOR", "peer-tuned MOR", "bound-tuned MOR", "cdcsync COW", "peer-default COW",
           "peer-tuned COW", "bound-tuned COW", contenders.FLOOR]
    assert [c[0] for c in calls] == one * 3
    report = reports[0]
    assert report["order"] == one and [(r["round"], r["name"]) for r in report["runs"]] == fair.interleave(one, 3)
    options = {c[0]: c[1] for c in calls}
    assert options["cdcsync MOR"] == options["peer-default COW"] == {"hoodie.index.type": "BUCKET"}
    tuned = options["peer-tuned MOR"]  # cdcsync's own write options, the --sink-option among them
    assert tuned["hoodie.index.type"] == "BUCKET" and tuned["hoodie.embed.timeline.server"] == "false"
    assert tuned[hudi.COLUMN_STATS] == "false" and tuned["hoodie.write.markers.type"] == "DIRECT"
    assert options["bound-tuned MOR"] == tuned == options["peer-tuned COW"]  # no compaction wiring: alike
    assert {c[2] for c in calls if c[0].startswith("bound")} == {7}  # the bound reads the whole topic
    assert report["summary"]["cdcsync MOR"]["median_s"] == 12.0
    assert report["summary"]["cdcsync MOR"]["min_s"] == 10.0 and report["summary"]["cdcsync MOR"]["max_s"] == 30.0
    ratios = report["ratios"]
    assert ratios["cdcsync MOR / peer-tuned MOR"] == 0.75 and ratios["cdcsync MOR / peer-default MOR"] == 0.5
    assert ratios["peer-tuned MOR / peer-default MOR"] == round(6 / 9, 3)
    assert ratios["cdcsync COW / bound-tuned COW"] == 1.0 and ratios["cdcsync MOR / Spark → Parquet (floor)"]
    assert report["hudi_options"]["peer-default MOR"] == {"hoodie.index.type": "BUCKET"}
    assert all(len(r["load_before"]) == 3 for r in report["runs"]) and "load average" in report["uptime"]["start"]


def test_a_wrong_final_state_leaves_the_run_out_of_the_figures_and_fails_the_bench(monkeypatch, tmp_path):
    calls, reports = _bench(monkeypatch, tmp_path)
    real = contenders.run_bound

    def wrong_once(*a, **k):
        out = real(*a, **k)
        return out | {"state_matches": len(calls) > 5}

    monkeypatch.setattr(contenders, "run_bound", wrong_once)
    assert run.main([*BASE, "--no-multi-batch", "--rounds", "2"]) == 1
    row = reports[0]["summary"]["bound-tuned MOR"]
    assert row["runs"] == 2 and row["wrong"] == 1 and row["median_s"] == 1.0


def test_the_freshness_rounds_run_cdcsync_and_both_peers_interleaved_on_the_same_options(monkeypatch, tmp_path):
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(run, "produce", lambda *a: {"messages": 7, "seconds": 0.1})
    jobs = []

    def fake(bootstrap, topic, job, rate, seconds, check=None):
        jobs.append((job.name, topic, job.command))
        return {"p50_s": 1.0 + len(jobs), "p95_s": 2.0, "p99_s": 3.0, "records": 10, "commits": 4, "compactions": 0,
                "rss_mb": {}, "state_matches": True}

    monkeypatch.setattr(run, "measure_freshness", fake)
    args = ["--size", "tiny", "--bootstrap", "b:9092", "--only", "freshness", "--rounds", "2",
            "--freshness-seconds", "5", "--sink-option", "hoodie.index.type=BUCKET"]
    assert run.main(args) == 0
    assert [j[0] for j in jobs] == list(run.FRESH_JOBS) * 2
    assert len({j[1] for j in jobs}) == 6  # a topic of its own each
    given = {name: json.loads(cmd[cmd.index("--options") + 1]) for name, _, cmd in jobs if name != "cdcsync"}
    assert given["peer-default"] == {"hoodie.index.type": "BUCKET"}
    assert given["peer-tuned"]["hoodie.index.type"] == "BUCKET"
    assert given["peer-tuned"]["hoodie.upsert.shuffle.parallelism"] == "1"  # one second's 2,000 records
    report = json.loads(next((tmp_path / "results").glob("*-freshness.json")).read_text())
    assert report["freshness"]["summary"]["cdcsync"]["p50_s"] == {"median": 3.5, "min": 2.0, "max": 5.0}


def test_the_peer_as_a_service_gets_the_jvm_flags_cdcsyncs_service_gets(monkeypatch):
    from bench import peer
    from cdcsync.runtime import session

    got = []

    def stop(name, master, conf=None):
        got.append(conf)
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "build_session", stop)
    for processing_time in ("1 second", ""):
        with pytest.raises(KeyboardInterrupt):
            peer.main("b:9092", "t", "/p", "MERGE_ON_READ", processing_time=processing_time)
    assert got == [session.service_conf({}), None]
    assert "-XX:+AlwaysPreTouch" in got[0]["spark.driver.extraJavaOptions"]
    with pytest.raises(KeyboardInterrupt):  # a -Xms of its own: the service's rule leaves the heap to grow
        peer.main("b:9092", "t", "/p", "MERGE_ON_READ", processing_time="1 second",
                  spark_conf=json.dumps(run.HEAPS["grown"]))
    assert got[-1]["spark.driver.extraJavaOptions"] == "-Xms256m"


def test_a_grown_heap_is_every_freshness_jobs(monkeypatch, tmp_path):
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(run, "produce", lambda *a: {"messages": 7, "seconds": 0.1})
    commands, configs = [], []

    def fake(bootstrap, topic, job, rate, seconds, check=None):
        commands.append(job.command)
        if job.name == "cdcsync":  # its folder is gone after the run
            configs.append(Path(job.command[-1]).read_text())
        return {"p50_s": 1.0, "p95_s": 2.0, "p99_s": 3.0, "records": 10, "commits": 4, "compactions": 0,
                "rss_mb": {}, "state_matches": True}

    monkeypatch.setattr(run, "measure_freshness", fake)
    assert run.main(["--size", "tiny", "--bootstrap", "b:9092", "--only", "freshness", "--rounds", "1",
                     "--freshness-seconds", "5", "--heap", "grown"]) == 0
    peers = [json.loads(c[c.index("--spark-conf") + 1]) for c in commands[1:]]
    assert peers == [{"spark.driver.extraJavaOptions": "-Xms256m"}] * 2
    report = json.loads(next((tmp_path / "results").glob("*-freshness.json")).read_text())
    assert report["freshness"]["heap"] == "grown" and "no -XX:+AlwaysPreTouch" in report["freshness"]["jvm"]
    assert len(configs) == 1 and '"spark.driver.extraJavaOptions" = "-Xms256m"' in configs[0]


def test_only_transform_runs_the_pair_alone_without_the_chart(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # the pair draws no chart: no need of it
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    called = []

    def pair(work, bootstrap, stamp, size, options, rounds, kinds, transform_options):
        called.append((size, rounds, kinds, transform_options))
        return {"runs": [{"table": "COW", "variant": "plain", "round": 1, "ok": True}], "summary": {}}

    monkeypatch.setattr(run, "run_transform", pair)
    for other in ("produce", "run_freshness"):
        monkeypatch.setattr(run, other, None)  # any of them called would fail
    for other in ("run_cdcsync", "run_peer", "run_bound", "run_floor"):
        monkeypatch.setattr(contenders, other, None)
    args = ["--size", "tiny", "--bootstrap", "b:9092", "--only", "transform", "--transform-rounds", "5"]
    assert run.main([*args, "--transform-table", "COW", "--transform-sink-option", "hoodie.a=b"]) == 0
    assert run.main(args) == 0
    assert called == [("tiny", 5, ["COW"], {"hoodie.a": "b"}), ("tiny", 5, ["MOR", "COW"], {})]
    assert (tmp_path / "results" / "latest-tiny-transform.json").exists()


def test_the_avro_and_grown_contenders_read_their_own_topic_and_final_state_on_the_sink_options(monkeypatch,
                                                                                                  tmp_path):
    from bench import avro
    from devtools import local_registry

    calls, reports = _bench(monkeypatch, tmp_path)
    got = []
    fake = contenders.run_cdcsync

    def cdcsync(d, src, tt, registry=None, variant="", run_options=None):
        got.append((variant or ("avro" if registry else ""), src, registry))
        return fake(d, src, tt, registry, variant, run_options)

    class Registry:
        url = "http://registry"

        def __init__(self, folder):
            pass

        def start(self):
            return self

        def stop(self):
            got.append(("stopped", None, None))

    seed = tmp_path / "seed"
    (seed / "bench_merge_on_read_grown").mkdir(parents=True)
    produced = []
    monkeypatch.setattr(contenders, "run_cdcsync", cdcsync)
    monkeypatch.setattr(contenders, "produce", lambda b, topic, w, encoder=None: produced.append(topic))
    monkeypatch.setattr(contenders, "seed_grown", lambda work, src, w, factor: (seed, (5, 6)))
    monkeypatch.setattr(local_registry, "LocalRegistry", Registry)
    monkeypatch.setattr(avro, "AvroEncoder", lambda url, topic: (url, topic))
    args = ["--size", "tiny", "--bootstrap", "b:9092", "--only", "throughput", "--no-single-batch", "--no-multi-batch",
            "--rounds", "1", "--sink-option", "hoodie.x=y"]
    assert run.main(args) == 0
    (_, avro_src, url), (_, grown_src, _), stopped = got
    assert url == "http://registry" and avro_src.topic.endswith(".avro") and produced == [avro_src.topic]
    assert avro_src.options == grown_src.options == {"hoodie.x": "y"} and stopped[0] == "stopped"
    assert grown_src.want == (5, 6) and grown_src.topic == avro_src.topic.removesuffix(".avro")
    assert [c[0] for c in calls] == ["cdcsync MOR Avro", "cdcsync MOR grown", contenders.FLOOR]
    assert reports[0]["runs"][1]["table_keys_before"] == 400 * 20  # the tiny workload's keys × --grown-factor
