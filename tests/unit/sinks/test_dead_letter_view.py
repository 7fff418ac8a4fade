"""`dead-letter list|show` without a JVM: a choice as a pyarrow expression, the counts and the previews. The real
table read through hudi-rs, and the same choice in Spark, are tests/integration/cli/test_dead_letter_cli.py's."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from cdcsync.sinks import dead_letter_view
from cdcsync.sinks.dead_letter_view import Selection

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
ROWS = [  # topic, partition, offset, row_index, reason, replayed, value
    ("a", 0, 5, 0, "oversized", False, b"x" * 300),
    ("a", 0, 5, 1, "oversized", None, b"y"),
    ("a", 0, 9, 0, "invalid_json", True, b"{not"),
    ("a", 1, 2, 0, "invalid_utf8", False, b"\xff\xfe"),
    ("b", 0, 7, 0, "oversized", False, b"z"),
]


def _table() -> pa.Table:
    cols = list(zip(*ROWS, strict=True))
    n = len(ROWS)
    return pa.table({
        "topic": cols[0], "partition": pa.array(cols[1], pa.int32()), "offset": pa.array(cols[2], pa.int64()),
        "row_index": pa.array(cols[3], pa.int32()), "reason": cols[4], "replayed": pa.array(cols[5], pa.bool_()),
        "value": pa.array(cols[6], pa.binary()),
        "value_text": [None if v.startswith(b"\xff") else v.decode() for v in cols[6]],
        "key": pa.array([b"k"] * n, pa.binary()), "kafka_timestamp": [T0] * n, "error": ["e"] * n,
        "batch_id": pa.array([1] * n, pa.int64()), "first_seen": [T0 + dt.timedelta(seconds=i) for i in range(n)],
        "replayed_at": pa.array([None] * n, pa.timestamp("us", "UTC")), "cdcsync_version": ["0.1.0"] * n,
    })


def _chosen(sel: Selection) -> list[tuple]:
    t = _table().filter(sel.expression())
    return sorted(zip(t["topic"].to_pylist(), t["partition"].to_pylist(), t["offset"].to_pylist(),
                      t["row_index"].to_pylist(), strict=True))


@pytest.mark.parametrize(("sel", "want"), [
    (Selection(), [("a", 0, 5, 0), ("a", 0, 5, 1), ("a", 1, 2, 0), ("b", 0, 7, 0)]),  # a null `replayed` is not
    (Selection(include_replayed=True), [r[:4] for r in sorted(ROWS)]),
    (Selection(("oversized", "invalid_json"), include_replayed=True),
     [("a", 0, 5, 0), ("a", 0, 5, 1), ("a", 0, 9, 0), ("b", 0, 7, 0)]),
    (Selection(topic="a", partition=0, from_offset=6, include_replayed=True), [("a", 0, 9, 0)]),
    (Selection(to_offset=5), [("a", 0, 5, 0), ("a", 0, 5, 1), ("a", 1, 2, 0)]),
    (Selection(topic="nowhere"), []),
])
def test_a_choice_selects_by_every_field(sel, want):
    assert _chosen(sel) == want


def test_counts_and_records_from_the_chosen_rows(monkeypatch):
    monkeypatch.setattr(dead_letter_view, "_read",
                        lambda cfg, sel, columns: _table().filter(sel.expression()).select(list(columns)))
    counts = dead_letter_view.reason_counts(None, Selection(include_replayed=True))
    assert [(c["topic"], c["partition"], c["reason"], c["count"], c["replayed"], c["min_offset"], c["max_offset"])
            for c in counts] == [("a", 0, "invalid_json", 1, 1, 9, 9), ("a", 0, "oversized", 2, 0, 5, 5),
                                 ("a", 1, "invalid_utf8", 1, 0, 2, 2), ("b", 0, "oversized", 1, 0, 7, 7)]
    assert counts[1]["first_seen"] == T0 and counts[1]["last_seen"] == T0 + dt.timedelta(seconds=1)

    recs = dead_letter_view.records(None, Selection(), limit=3)
    assert [(r["topic"], r["partition"], r["offset"], r["row_index"]) for r in recs] == [
        ("a", 0, 5, 0), ("a", 0, 5, 1), ("a", 1, 2, 0)]
    assert recs[0]["value_bytes"] == 300 and recs[0]["value_preview"] == "x" * 200 and recs[0]["key"] == "k"
    assert recs[2]["value_preview"] == "\\xff\\xfe", "bytes that are not UTF-8 print as escapes"
    assert "value" not in recs[0] and "value_text" not in recs[0]
    assert dead_letter_view.records(None, Selection(), limit=None)[-1]["topic"] == "b"
