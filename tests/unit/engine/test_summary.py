"""The run's summary adds batch ledgers up: classes per partition and table, and the tallies (model.TALLIES) only
where a batch had one — a tally one batch had must not break or double the next batch's sum."""

from __future__ import annotations

from cdcsync.engine.sync import Summary
from cdcsync.kafka.offsets import Offsets
from cdcsync.model.batch import BatchResult


def result(batch_id: int, **tallies) -> BatchResult:
    counts = {"messages": 3, "rows": 3, "upserted": 2, "deleted": 1, "skipped": 0, "bad": 0, **tallies}
    return BatchResult(batch_id, Offsets(), Offsets(), f"i{batch_id}", {"t/0": dict(counts)},
                       tables={"orders": dict(counts)})


def test_tallies_add_up_across_batches_that_have_them_or_not():
    s = Summary("orders", "/tmp/orders", Offsets())
    for r in (result(0, filtered=2), result(1), result(2, filtered=1, truncated=1)):
        s.add(r)
    for acc in (s.ledger["t/0"], s.tables["orders"]):
        assert acc["messages"] == 9 and acc["upserted"] == 6 and acc["deleted"] == 3
        assert acc["filtered"] == 3 and acc["truncated"] == 1
    assert s.totals["filtered"] == 3 and s.totals["truncated"] == 1 and s.totals["messages"] == 9
