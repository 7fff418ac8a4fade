"""The per-partition ledger is checked before the Hudi commit: a mismatch writes nothing."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cdcsync.errors import LedgerError
from tests.integration.engine.helpers import KAFKA_ROW, write_config

pytestmark = pytest.mark.integration


def test_expected_message_counts_are_checked_before_the_commit(spark, tmp_path):
    from cdcsync.config import load_config
    from cdcsync.engine.batch import TableState, run_batch
    from cdcsync.engine.runner import table_spec
    from cdcsync.reporting import PlainReporter
    from cdcsync.sinks import hudi

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"]}))
    ts = dt.datetime(2026, 1, 1)
    raw = spark.createDataFrame([(None, json.dumps({"id": i}).encode(), "t", 0, 10 + i, ts, 0, None)
                                 for i in range(3)], KAFKA_ROW)

    def batch(expect):
        return run_batch(spark, cfg, TableState(spec=table_spec(cfg)), 0, {"t": {0: 10}}, {"t": {0: 13}},
                         PlainReporter(quiet=True), record_offsets=False, raw=raw, expect_messages=expect)

    with pytest.raises(LedgerError) as err:
        batch({"t/0": 4})  # one message more than were read
    assert "expected {'t/0': 4}" in str(err.value) and "nothing was committed" in err.value.hint
    assert not hudi.table_exists(spark, cfg.sink.path)
    assert batch({"t/0": 3}).totals()["upserted"] == 3
    assert hudi.table_exists(spark, cfg.sink.path)
