"""The per-partition ledger is checked before the Hudi commit: a mismatch writes nothing."""

from __future__ import annotations

import pytest

from cdcsync.errors import LedgerError
from cdcsync.exit_codes import ExitCode
from tests.integration.engine.helpers import kafka_rows, sync_rows, write_config

pytestmark = pytest.mark.integration


def test_expected_message_counts_are_checked_before_the_commit(spark, tmp_path):
    from cdcsync.config import load_config
    from cdcsync.sinks import hudi

    cfg = load_config(write_config(tmp_path, "localhost:1", "t", "json", "COPY_ON_WRITE",
                                   **{"sink.primary_key": ["id"]}))
    raw = kafka_rows(spark, [{"id": i} for i in range(3)], first_offset=10)

    def batch(expect):
        return sync_rows(spark, cfg, raw, expect_messages=expect)

    with pytest.raises(LedgerError) as err:
        batch({"t/0": 4})  # one message more than were read
    assert "expected {'t/0': 4}" in str(err.value) and "nothing was committed" in err.value.hint
    assert err.value.exit_code == ExitCode.LEDGER_MISMATCH
    assert not hudi.table_exists(spark, cfg.sink.path)
    assert batch({"t/0": 3}).totals()["upserted"] == 3
    assert hudi.table_exists(spark, cfg.sink.path)
