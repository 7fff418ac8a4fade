"""[catalog]: which tables a batch registers (engine/pipeline.py `register_tables`). The dead-letter table only when
the batch's own bad-record handler dead-lettered (a replay skips what the run set aside, whatever the config says).
The metastore side: tests/integration/engine/test_catalog.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cdcsync.config import load_config
from cdcsync.engine.pipeline import Pipeline
from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import BatchResult
from cdcsync.stages.bad_records import BadRecords
from tests.configs import minimal, write


class _Catalog:
    def __init__(self):
        self.synced = []

    def sync(self, name, path, changed):
        self.synced.append(name)


@pytest.mark.parametrize("policy, tables", [(None, ["t", "t_dead_letter"]), ("skip", ["t"])])
def test_the_dead_letter_table_is_registered_only_when_the_batch_dead_lettered(tmp_path, policy, tables):
    cfg = load_config(write(tmp_path, minimal(str(tmp_path / "t"))))  # on_bad_record: dead-letter by default
    reporter = SimpleNamespace()
    pipe = Pipeline(cfg, reporter, spark=object(), on_bad=BadRecords(cfg, reporter, policy))
    pipe._catalog = catalog = _Catalog()
    counts = {"messages": 2, "upserted": 1, "deleted": 0, "skipped": 0, "bad": 1}
    pipe.register_tables(BatchResult(0, Offsets({"t": {0: 0}}), Offsets({"t": {0: 2}}), "20261128", {"t/0": counts}))
    assert catalog.synced == tables
