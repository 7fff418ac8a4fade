"""How the sync loop treats a failed Hudi write (engine/sync.py): a transient one is written again with backoff up
to [run] write_retries, anything else stops at once; a write under a read-only mount says so. The JVM side of the
same paths: tests/integration/engine/test_write_retries.py."""

import os
from types import SimpleNamespace

import pytest

from cdcsync.config.model import RunConfig
from cdcsync.engine import sync
from cdcsync.errors import SinkError
from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import BatchInput


class _Pipe:
    def __init__(self, failures: list[SinkError], retries: int = 3):
        self.failures, self.calls, self.lines = failures, 0, []
        self.cfg = SimpleNamespace(run=RunConfig(checkpoint_dir="/tmp/unused", write_retries=retries))
        self.reporter = SimpleNamespace(warn=self.lines.append)

    def sync_once(self, batch):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "landed"


BATCH = BatchInput(4, Offsets({"t": {0: 0}}), Offsets({"t": {0: 5}}))


def _transient(path="s3a://bucket/t") -> SinkError:
    return SinkError("Hudi write failed: SocketTimeoutException", transient=True, path=path)


@pytest.fixture
def waits(monkeypatch):
    out = []
    monkeypatch.setattr(sync.time, "sleep", out.append)
    return out


def test_a_transient_failure_is_written_again_with_backoff(waits):
    pipe = _Pipe([_transient(), _transient(), _transient()])
    assert sync._landed(pipe, BATCH) == "landed"
    assert pipe.calls == 4 and waits == [2.0, 4.0, 8.0]
    assert "retry 3 of 3" in pipe.lines[-1] and "batch 4" in pipe.lines[-1]


def test_past_the_bound_the_failure_stands(waits):
    pipe = _Pipe([_transient()] * 3, retries=2)
    with pytest.raises(SinkError):
        sync._landed(pipe, BATCH)
    assert pipe.calls == 3 and waits == [2.0, 4.0]


def test_a_failure_that_is_not_transient_is_not_retried(waits):
    pipe = _Pipe([SinkError("Hudi write failed: HoodieException", path="s3a://bucket/t")])
    with pytest.raises(SinkError):
        sync._landed(pipe, BATCH)
    assert pipe.calls == 1 and waits == []


def test_a_write_under_a_read_only_mount_says_so(tmp_path, monkeypatch, waits):
    real = os.statvfs

    def statvfs(p):
        st = real(p)
        flag = st.f_flag | os.ST_RDONLY if str(p) == str(tmp_path) else st.f_flag
        return SimpleNamespace(f_flag=flag)

    monkeypatch.setattr(os, "statvfs", statvfs)
    pipe = _Pipe([SinkError("Hudi write failed: FileNotFoundException", path=str(tmp_path / "table"))])
    with pytest.raises(SinkError) as e:
        sync._landed(pipe, BATCH)
    assert e.value.message.endswith(f"({tmp_path} is on a read-only file system)")
    assert "read-write" in e.value.hint
    pipe = _Pipe([SinkError("Hudi write failed", path=f"file://{tmp_path}/table")])
    with pytest.raises(SinkError) as e:
        sync._landed(pipe, BATCH)
    assert "read-only file system" in e.value.render()
