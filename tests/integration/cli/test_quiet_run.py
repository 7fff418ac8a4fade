"""A healthy `run --once` prints cdcsync's own lines only: no JVM, Spark or Hudi warnings (issue 18)."""

from __future__ import annotations

import re

import pytest

from cdcsync.exit_codes import ExitCode
from tests import cli
from tests.integration.engine.helpers import write_config

pytestmark = pytest.mark.integration

# a log4j line of the JVM ("12:00:00 WARN Utils: …"), a JVM or library warning on stderr, a stack frame
_NOISE = re.compile(r"^\d\d:\d\d:\d\d (WARN|ERROR) |WARNING|^\s+at [\w.$]+\(|Exception")


def test_a_healthy_run_once_prints_only_its_own_lines(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic(partitions=2)
    produce(topic, [{"id": i % 30, "v": f"v{i}"} for i in range(100)])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "MERGE_ON_READ", **{"sink.primary_key": ["id"]})
    p = cli.cdcsync("run", cfg, "--once")
    assert p.returncode == ExitCode.OK, p.stderr[-3000:]
    noise = [line for line in p.stderr.splitlines() if _NOISE.search(line)]
    assert noise == [], "\n".join(noise)
    assert "batch id=0 " in p.stderr and "done:" in p.stderr
