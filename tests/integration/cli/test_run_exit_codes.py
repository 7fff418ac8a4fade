"""`cdcsync run` exit codes (README table): each failure class exits with its own code and a clear message."""

from __future__ import annotations

import json
import time

import pytest

from devtools.local_kafka import free_port
from tests.cli import cdcsync as cli
from tests.integration.engine.helpers import run_once, write_config

pytestmark = pytest.mark.integration




def test_unreachable_broker_exits_69_before_spark(tmp_path):
    cfg = write_config(tmp_path, f"127.0.0.1:{free_port()}", "t", "json", "COPY_ON_WRITE")
    t0 = time.monotonic()
    p = cli("run", str(cfg), "--once")
    assert p.returncode == 69, p.stderr
    # the probe's walk names the hop, as `cdcsync probe` would
    assert "refuses connections (nothing listens on port" in p.stderr and "fix: check the port" in p.stderr
    assert p.stdout == ""
    assert time.monotonic() - t0 < 30


def test_log_level_opens_the_jvm_logs_and_a_wrong_one_is_a_usage_error(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": 1}])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"]})
    p = cli("run", str(cfg), "--once", "--log-level", "loud", jvm_free=True)
    assert p.returncode == 2 and "--log-level 'loud' is not one of error, warn, info, debug" in p.stderr
    p = cli("run", str(cfg), "--once", "--verbose", timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert " INFO DAGScheduler: Job " in p.stderr  # Spark's INFO lines, silent on a default run


def test_missing_topic_exits_66(bootstrap, tmp_path):
    cfg = write_config(tmp_path, bootstrap, "no_such_topic_here", "json", "COPY_ON_WRITE")
    p = cli("run", str(cfg), "--once", "--json")
    assert p.returncode == 66, p.stderr
    assert "no_such_topic_here" in p.stderr and "does not exist" in p.stderr and p.stdout == ""


def test_bad_record_with_fail_policy_exits_65_naming_the_offset(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": 1}, b'{"id": 2', {"id": 3}])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.on_bad_record": "fail"})
    p = cli("run", str(cfg), "--once", timeout=300)
    assert p.returncode == 65, p.stderr[-2000:]
    assert f"{topic}/0 offset 1" in p.stderr and "invalid_json" in p.stderr and '{"id": 2' in p.stderr
    assert not (tmp_path / "table" / ".hoodie" / "hoodie.properties").exists()  # nothing committed


def test_hudi_write_failure_is_a_sink_error(spark, bootstrap, make_topic, produce, tmp_path):
    from cdcsync.errors import SinkError
    from cdcsync.exit_codes import ExitCode

    topic = make_topic()
    produce(topic, [json.dumps({"id": 1})])
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the table's folder should be")
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "sink.path": str(blocker / "table")})
    with pytest.raises(SinkError) as err:
        run_once(cfg, spark)
    assert err.value.exit_code == ExitCode.SINK_WRITE and "Hudi write to" in str(err.value)
