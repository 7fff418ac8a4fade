"""The JVM-free timeline listing (sinks/timeline.py) on the file names Hudi 1.2 writes: a completed compaction keeps
its requested and inflight files beside the commit it completes as, and is not pending."""

from __future__ import annotations

from cdcsync.sinks.timeline import Timeline

# as a MERGE_ON_READ table's timeline holds them after a first load, two delta commits, a compaction, a pending one
NAMES = ["20261125071700345.commit.requested", "20261125071700345.inflight",
         "20261125071700345_20261125071701705.commit",
         "20261125071702761.deltacommit.requested", "20261125071702761.deltacommit.inflight",
         "20261125071702761_20261125071703419.deltacommit",
         "20261125071705365.compaction.requested", "20261125071705365.compaction.inflight",
         "20261125071705365_20261125071706089.commit",
         "20261125071709000.compaction.requested"]


def test_a_completed_compaction_is_not_pending(tmp_path):
    folder = tmp_path / ".hoodie" / "timeline"
    folder.mkdir(parents=True)
    for name in NAMES:
        (folder / name).write_bytes(b"")
    tl = Timeline(str(tmp_path))
    assert [i.requested for i in tl.pending("compaction")] == ["20261125071709000"]
    assert [(i.requested, i.action) for i in tl.instants if i.completed] == [
        ("20261125071700345", "commit"), ("20261125071702761", "deltacommit"), ("20261125071705365", "commit")]
