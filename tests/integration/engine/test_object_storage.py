"""Issue 17, point 1: a Debezium topic lands in tables on an S3-compatible store (a real moto_server) through
s3a://: the table, the dead-letter table and the checkpoint directory all on the store, read back by hudi-rs from the
store, and `status` and `dead-letter show` read them there without a JVM; a kill -9 mid-run and a restart stay
exact, the restart taking over the dead run's S3 lock."""

from __future__ import annotations

import json
import signal
import uuid

import pytest

from tests import cli
from tests.integration.engine.helpers import (
    by_key,
    expected_state,
    hudi_rs_rows,
    produce_fixture,
    run_once,
    write_config,
)

pytestmark = pytest.mark.integration

FIXTURE = "debezium-1.9-mysql-schema.txt"
BAD = [b"{not json", b'{"payload": 42}']


def _on_store(s3_server, tmp_path, bootstrap, topic, table_type, **extra):
    """A config whose table, dead-letter table and checkpoint live under a fresh prefix of the bucket."""
    prefix = f"s3a://{s3_server.bucket}/{uuid.uuid4().hex[:10]}"
    return prefix, write_config(tmp_path, bootstrap, topic, "debezium-json", table_type, **{
        "sink.path": f"{prefix}/table", "sink.primary_key": ["id"], "run.checkpoint_dir": f"{prefix}/ckpt",
        "run.on_bad_record": "dead-letter", **s3_server.storage(), **extra})


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_debezium_topic_lands_exactly_on_object_storage(table_type, s3_server, spark, bootstrap, make_topic,
                                                          produce, tmp_path):
    topic = make_topic()
    n = produce_fixture(produce, topic, FIXTURE)
    produce(topic, BAD)
    prefix, cfg = _on_store(s3_server, tmp_path, bootstrap, topic, table_type)
    result = run_once(cfg, spark)
    assert result.totals["messages"] == n + len(BAD) and result.totals["bad"] == len(BAD)

    s3_uri = prefix.replace("s3a://", "s3://")
    rows = hudi_rs_rows(f"{s3_uri}/table", s3_server.reader_options())
    assert by_key(rows, ["id"]) == expected_state(FIXTURE, ["id"])
    dead = hudi_rs_rows(f"{s3_uri}/table_dead_letter", s3_server.reader_options())
    assert sorted(bytes(r["value"]) for r in dead) == sorted(BAD)
    base = prefix.removeprefix(f"s3a://{s3_server.bucket}/")
    keys = s3_server.keys(base)
    assert any(k.startswith(f"{base}/table/.hoodie/") for k in keys)
    assert any(k.startswith(f"{base}/table_dead_letter/.hoodie/") for k in keys)
    assert any(k.startswith(f"{base}/ckpt/") for k in keys)
    assert f"{base}/ckpt/writer.lock" not in keys, "the run released its lock"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"], "nothing written on the local disk"

    st = cli.cdcsync("status", cfg, "--json", jvm_free=True)  # the timeline read from the store without a JVM
    assert st.returncode == 0, st.stderr[-3000:]
    status = json.loads(st.stdout)
    assert status["committed_offsets"] == result.end_offsets.to_json() and status["lag_total"] == 0
    assert status["tables"][0]["last_commit"]["instant"] == result.instants[-1]
    assert status["dead_letters"]["total"] == len(BAD) and status["writer"] is None
    assert s3_server.secret_access_key not in st.stdout + st.stderr
    dl = cli.cdcsync("dead-letter", "show", cfg, "--limit", "0", "--json", jvm_free=True)  # hudi-rs on the store
    assert dl.returncode == 0, dl.stderr[-3000:]
    assert sorted(r["value_preview"].encode() for r in json.loads(dl.stdout)) == sorted(BAD)
    assert s3_server.secret_access_key not in dl.stdout + dl.stderr


@pytest.mark.soak  # a killed process and its restart on object storage
def test_kill_minus_nine_on_object_storage_and_restart_stays_exact(s3_server, spark, bootstrap, make_topic, produce,
                                                                   tmp_path, capsys):
    from cdcsync.config import load_config
    from cdcsync.engine.replay import Replayer
    from cdcsync.reporting import PlainReporter

    topic = make_topic(partitions=2)
    n = 400
    produce(topic, [{"id": i, "payload": f"row-{i}"} for i in range(n)])
    prefix = f"s3a://{s3_server.bucket}/{uuid.uuid4().hex[:10]}"
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ", **{
        "sink.path": f"{prefix}/table", "run.checkpoint_dir": f"{prefix}/ckpt", "run.max_records_per_batch": 100,
        **s3_server.storage()})
    lock = prefix.removeprefix(f"s3a://{s3_server.bucket}/") + "/ckpt/writer.lock"

    code, err = cli.run_killed("run", cfg, "--once", fault="after_write:1")  # batch 1 committed, then killed
    assert code == -signal.SIGKILL, err[-3000:]
    assert lock in s3_server.keys(lock), "the killed run's lock stays on the store"
    code, killed = cli.run_killed("run", cfg, "--once", kill_on="writing batch=3", delay=2.0)  # in Hudi's write
    assert code == -signal.SIGKILL, killed[-3000:]
    done = cli.cdcsync("run", cfg, "--once", timeout=300)  # takes over the dead run's lock and finishes the topic
    assert done.returncode == 0, done.stderr[-3000:]

    ids = sorted(r["id"] for r in hudi_rs_rows(prefix.replace("s3a://", "s3://") + "/table",
                                               s3_server.reader_options()))
    assert ids == list(range(n)), f"{len(ids)} rows for {n} messages: lost or duplicated rows"
    # a replay's lock and progress record on the store too (in this process: the restarts above were the CLI's)
    replayer = Replayer(load_config(cfg), PlainReporter(), "earliest", into=f"{prefix}/side", spark=spark)
    assert replayer.run(replayer.plan()).summary.totals["messages"] == n
    side = sorted(r["id"] for r in hudi_rs_rows(prefix.replace("s3a://", "s3://") + "/side",
                                                s3_server.reader_options()))
    assert side == list(range(n))
    replayed = capsys.readouterr()
    for text in (done.stdout, done.stderr, killed, err, replayed.out, replayed.err):
        assert s3_server.secret_access_key not in text
