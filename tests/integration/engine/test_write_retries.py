"""[run] write_retries (issue 18): a Hudi write that fails transiently — a Java exception chain holding a network
error to the storage, a write conflict or a lock timeout — is written again with backoff; past the bound, or for any
other failure at once, the run stops with exit 74 and nothing committed. The failures are real Java exceptions
thrown through py4j at the write (CDCSYNC_FAULT="write:<batch>:…", engine/faults.py)."""

from __future__ import annotations

import pytest

from cdcsync.errors import SinkError
from cdcsync.exit_codes import ExitCode
from tests.integration.engine.helpers import by_key, hudi_rs_rows, run_once, spark_rows, write_config

pytestmark = pytest.mark.integration


def _config(tmp_path, bootstrap, make_topic, produce, retries=None):
    topic = make_topic()
    produce(topic, [{"id": i, "v": f"v{i}"} for i in range(5)])
    extra = {"sink.primary_key": ["id"]} | ({"run.write_retries": retries} if retries is not None else {})
    return write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **extra)


def test_a_transient_write_failure_is_written_again(spark, bootstrap, make_topic, produce, tmp_path, monkeypatch,
                                                    capfd):
    config = _config(tmp_path, bootstrap, make_topic, produce)
    monkeypatch.setenv("CDCSYNC_FAULT", "write:0:TRANSIENT2")
    summary = run_once(config, spark)
    assert summary.totals["upserted"] == 5 and len(summary.instants) == 1
    want = by_key([{"id": i, "v": f"v{i}"} for i in range(5)], ["id"])
    table = str(tmp_path / "table")
    assert by_key(spark_rows(spark, table), ["id"]) == want == by_key(hudi_rs_rows(table), ["id"])
    err = capfd.readouterr().err
    assert err.count("a transient failure: writing the batch again") == 2, err
    assert "SocketTimeoutException" in err and "retry 2 of 3" in err


@pytest.mark.parametrize("fault, retries, warnings", [("write:0:TRANSIENT9", 1, 1), ("write:0:TERMINAL", 3, 0)],
                         ids=["past-the-bound", "not-transient"])
def test_a_write_that_keeps_failing_exits_74_with_nothing_committed(fault, retries, warnings, spark, bootstrap,
                                                                     make_topic, produce, tmp_path, monkeypatch,
                                                                     capfd):
    config = _config(tmp_path, bootstrap, make_topic, produce, retries)
    monkeypatch.setenv("CDCSYNC_FAULT", fault)
    with pytest.raises(SinkError) as e:
        run_once(config, spark)
    assert e.value.exit_code == ExitCode.SINK_WRITE
    assert capfd.readouterr().err.count("a transient failure") == warnings
    monkeypatch.delenv("CDCSYNC_FAULT")
    assert run_once(config, spark).totals["upserted"] == 5  # nothing was committed: the next run reads it all
