"""`run --once --metrics-textfile` (issue 48): the file node_exporter's textfile collector reads is replaced whole or
not at all, carries every series with a table label and the last success, and is refused where it would never be
read."""

from __future__ import annotations

import os
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cdcsync.exit_codes import ExitCode
from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import BatchResult
from cdcsync.runtime import metrics as metrics_mod
from cdcsync.runtime.metrics import LAST_SUCCESS, RunMetrics, write_atomically
from tests import cli


def _samples(path) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(path.read_text()) for s in fam.samples}


def test_the_write_replaces_the_file_whole_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "cdcsync.prom"
    path.write_text("old 1\n")
    with path.open() as reader_of_the_old_file:
        write_atomically(path, b"new 2\n")
        assert reader_of_the_old_file.read() == "old 1\n"  # a rename: the old inode stays whole for its reader
    assert path.read_text() == "new 2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cdcsync.prom"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # readable by node_exporter's user, as open() makes files


def test_the_data_and_the_rename_are_fsynced_before_the_write_returns(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd)))
    path = tmp_path / "cdcsync.prom"
    write_atomically(path, b"x 1\n")
    assert synced[0].startswith(str(tmp_path / ".cdcsync.prom.")) and synced[0].endswith(".tmp")  # the data first
    assert synced[1:] == [str(tmp_path)]  # then the folder that holds the rename


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary_one(tmp_path, monkeypatch):
    path = tmp_path / "cdcsync.prom"
    path.write_text("old 1\n")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(path, b"new 2\n")
    assert path.read_text() == "old 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cdcsync.prom"]


def _metrics_of_one_batch(path) -> RunMetrics:
    m = RunMetrics("orders", stuck_after_s=60)
    m.textfile = path
    ledger = {"t/0": {"messages": 10, "rows": 10, "upserted": 7, "deleted": 2, "skipped": 0, "bad": 1,
                      "newest_ms": int(time.time() * 1000)}}
    m.batch_committed(BatchResult(0, Offsets({"t": {0: 0}}), Offsets({"t": {0: 10}}), "1", ledger,
                                  stages={"read_decode": 1.5, "write": 0.75}), 2.5)
    m.lag_seen(Offsets({"t": {0: 10}}), Offsets({"t": {0: 12}}))
    return m


def test_a_successful_run_writes_its_series_each_with_the_table_and_the_time_of_its_success(tmp_path):
    path = tmp_path / "cdcsync.prom"
    before = time.time()
    _metrics_of_one_batch(path).write_textfile(succeeded=True)
    got = _samples(path)
    assert got[("cdcsync_records_total", (("class", "upserted"), ("partition", "0"), ("table", "orders"),
                                          ("topic", "t")))] == 7
    assert got[("cdcsync_messages_total", (("partition", "0"), ("table", "orders"), ("topic", "t")))] == 10
    # /metrics gives lag no table label; in a folder of several configs' files it needs one
    assert got[("cdcsync_consumer_lag_messages", (("partition", "0"), ("table", "orders"), ("topic", "t")))] == 2
    assert got[("cdcsync_source_available", (("table", "orders"),))] == 1
    assert before <= got[(LAST_SUCCESS, (("table", "orders"),))] <= time.time()
    assert all(dict(labels).get("table") == "orders" for _, labels in got)


def test_a_failed_run_writes_its_series_and_keeps_the_last_success_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "cdcsync.prom"
    _metrics_of_one_batch(path).write_textfile(succeeded=False)
    assert _samples(path)[(LAST_SUCCESS, (("table", "orders"),))] == 0  # no run has succeeded yet
    _metrics_of_one_batch(path).write_textfile(succeeded=True)
    success = _samples(path)[(LAST_SUCCESS, (("table", "orders"),))]
    failed = _metrics_of_one_batch(path)
    failed.lag_seen(Offsets({"t": {0: 10}}), Offsets({"t": {0: 99}}))
    failed.write_textfile(succeeded=False)
    got = _samples(path)
    assert got[(LAST_SUCCESS, (("table", "orders"),))] == success
    assert got[("cdcsync_consumer_lag_messages", (("partition", "0"), ("table", "orders"), ("topic", "t")))] == 89


def test_a_file_cdcsync_did_not_write_counts_as_no_success(tmp_path):
    path = tmp_path / "cdcsync.prom"
    path.write_bytes(b"\xff\xfe not prometheus")
    assert metrics_mod._last_success(path, "orders") == 0.0
    assert metrics_mod._last_success(tmp_path / "missing.prom", "orders") == 0.0


@pytest.mark.parametrize(("args", "says"), [
    (("--metrics-textfile", "{dir}/cdcsync.prom"), "--metrics-textfile needs --once"),
    (("--once", "--metrics-textfile", "{dir}/cdcsync.txt"), "reads only *.prom files"),
    (("--once", "--metrics-textfile", "{dir}/missing/cdcsync.prom"), "does not exist or is not writable"),
])
def test_a_textfile_that_would_not_be_read_or_written_is_refused_before_anything_starts(tmp_path, args, says):
    config = tmp_path / "config.toml"
    config.write_text("")  # never read: the option is refused first
    p = cli.cdcsync("run", config, *(a.format(dir=tmp_path) for a in args), jvm_free=True)
    assert p.returncode == ExitCode.USAGE, p.stderr
    assert says in p.stderr and "fix:" in p.stderr
    assert not list(tmp_path.glob("**/*.prom"))


def test_a_routed_batch_counts_rows_per_target_table(tmp_path):
    m = RunMetrics("orders", stuck_after_s=60, routed=True)
    m.textfile = tmp_path / "cdcsync.prom"
    ledger = {"t/0": {"messages": 5, "rows": 5, "upserted": 4, "deleted": 1, "skipped": 0, "bad": 0}}
    tables = {"db_a": {"instant": "1", "upserted": 3, "deleted": 1}, "db_b": {"instant": "2", "upserted": 1}}
    m.batch_committed(BatchResult(0, Offsets({"t": {0: 0}}), Offsets({"t": {0: 5}}), "1", ledger, tables=tables), 1)
    m.write_textfile(succeeded=True)
    got = _samples(m.textfile)
    assert {labels: v for (name, labels), v in got.items() if name == "cdcsync_table_rows_total"} == {
        (("class", "upserted"), ("table", "db_a")): 3, (("class", "deleted"), ("table", "db_a")): 1,
        (("class", "upserted"), ("table", "db_b")): 1}
