"""A service manager's stop (systemd's KillMode=control-group: SIGTERM to every process of the group, the JVM
included) mid-batch: the batch in flight commits, the lock is released, exit 0 (issue 18)."""

from __future__ import annotations

import pytest

from cdcsync.exit_codes import ExitCode
from cdcsync.runtime.lock import LOCK_FILE
from tests import cli
from tests.integration.engine.helpers import hudi_rs_rows, write_config

pytestmark = pytest.mark.integration


def test_sigterm_to_the_process_group_mid_batch_finishes_the_batch(bootstrap, make_topic, produce, tmp_path):
    topic = make_topic()
    produce(topic, [{"id": i, "v": f"v{i}"} for i in range(40)])
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE",
                       **{"sink.primary_key": ["id"], "run.trigger_interval": "30s"})
    # the process signals its own group just before batch 0's Hudi write, as `kill -TERM -- -PGID` would
    proc = cli.start("run", cfg, env={"CDCSYNC_FAULT": "before_write:0:TERM"}, own_group=True)
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == ExitCode.OK, err[-3000:]
    assert "SIGTERM: finishing the batch in flight" in err and "batch id=0 " in err and "batch id=1 " not in err
    assert "internal error" not in err and "Traceback" not in err
    assert sorted(r["id"] for r in hudi_rs_rows(str(tmp_path / "table"))) == list(range(40))
    assert not list(tmp_path.rglob(LOCK_FILE))
