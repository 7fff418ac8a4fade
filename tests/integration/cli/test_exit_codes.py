"""Exit codes the other suites do not reach through the real command: 0, 2, 70, 74, 78 and 130, each from a real
`cdcsync` process. tests/unit/test_exit_codes.py holds the one table naming the test of every code."""

from __future__ import annotations

import json
import signal

import pytest

from cdcsync.exit_codes import ExitCode
from tests import cli
from tests.integration.engine.helpers import write_config

pytestmark = pytest.mark.integration


def test_0_version():
    p = cli.cdcsync("--version", timeout=60)
    assert p.returncode == ExitCode.OK and p.stdout.startswith("cdcsync ")


def test_2_usage_names_the_missing_argument():
    p = cli.cdcsync("run", timeout=60)
    assert p.returncode == ExitCode.USAGE and "Missing argument" in p.stderr


def test_78_config_names_file_and_key(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('[source]\nbootstrap_servers = "x:1"\ntopics = ["t"]\nformat = "json"\n[sink]\npath = "/t"\n'
                   'table_name = "t"\ntable_type = "MERGE_ON_READ"\nprimary_kee = ["id"]\n')
    p = cli.cdcsync("validate", bad, timeout=60)
    assert p.returncode == ExitCode.CONFIG and str(bad) in p.stderr and "primary_key" in p.stderr


def test_70_missing_jars_is_an_internal_error_with_the_fix(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": 1}])
    empty = tmp_path / "no-jars"
    empty.mkdir()
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE")
    p = cli.cdcsync("run", cfg, "--once", env={"CDCSYNC_JARS_DIR": str(empty)}, timeout=120)
    assert p.returncode == ExitCode.INTERNAL, p.stderr[-2000:]
    assert "make bundles" in p.stderr and "Traceback" not in p.stderr


def test_70_debug_prints_the_traceback_with_the_same_code(bootstrap, make_topic, tmp_path):
    cfg = write_config(tmp_path, bootstrap, make_topic(), "json", "COPY_ON_WRITE")
    empty = tmp_path / "no-jars"
    empty.mkdir()
    p = cli.cdcsync("--debug", "run", cfg, "--once", env={"CDCSYNC_JARS_DIR": str(empty)}, timeout=120)
    assert p.returncode == ExitCode.INTERNAL and "Traceback" in p.stderr and "ToolchainError" in p.stderr


def test_74_hudi_write_failure_through_the_command(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [json.dumps({"id": 1})])
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the table's folder should be")
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "sink.path": str(blocker / "table")})
    p = cli.cdcsync("run", cfg, "--once")
    assert p.returncode == ExitCode.SINK_WRITE, p.stderr[-3000:]
    assert f"Hudi write to {blocker / 'table'} failed" in p.stderr and "re-read on restart" in p.stderr


def test_130_a_second_signal_aborts(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": i} for i in range(20)])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **{"sink.primary_key": ["id"]})
    proc = cli.start("run", cfg)
    try:
        lines = iter(proc.stderr)
        # signals do not queue: the second is sent once the first was handled, while the first Hudi write runs
        next(line for line in lines if " writing batch=0 " in line)
        proc.send_signal(signal.SIGINT)
        next(line for line in lines if "finishing the batch in flight" in line)
        proc.send_signal(signal.SIGINT)
        err = "".join(lines)  # the rest, up to the end of the process
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == ExitCode.INTERRUPTED, err[-2000:]
    assert "interrupted: the batch in flight was abandoned" in err and "done:" not in err
