"""One resume point (engine/resume.py): where a run resumes, what `--from committed` and `status` read, decided
from the table's newest commit or a routed run's progress record."""

from __future__ import annotations

from cdcsync.engine.resume import ResumePoint
from cdcsync.kafka.offsets import BELOW_EARLIEST, Gap, Offsets
from cdcsync.model.progress import DONE, WRITING, Isolated, Isolation, Progress

START, END = Offsets({"t": {0: 10}}), Offsets({"t": {0: 25}})
GAP = Gap("t", 0, 3, 7, BELOW_EARLIEST, 2)


def _progress(state: str, fresh: Offsets, isolated: dict[str, Isolated] | None = None) -> Progress:
    return Progress(4, state, START, END, Isolation(fresh, isolated or {}), (GAP,))


def test_a_batch_done_is_the_last_one_and_the_next_follows_it():
    point = ResumePoint.of_progress(_progress(DONE, END))
    assert (point.offsets, point.batch_id, point.next_batch_id, point.redo_end) == (END, 4, 5, None)
    assert point.data_loss == (GAP,)


def test_a_batch_still_writing_is_done_again_from_where_the_tables_stood():
    aside = Isolated(Offsets({"t": {0: 2}}), "sink_write: refused", since=1.0)
    point = ResumePoint.of_progress(_progress(WRITING, START, {"broken": aside}))
    assert (point.offsets, point.batch_id, point.next_batch_id, point.redo_end) == (START, 3, 4, END)
    assert point.isolated == {"broken": aside}


def test_a_commit_gives_its_end_offsets_and_id():
    point = ResumePoint.of_commit({"offsets": END, "batch_id": 7, "data_loss": (GAP,)})  # the fields it reads
    assert (point.offsets, point.batch_id, point.next_batch_id, point.data_loss) == (END, 7, 8, (GAP,))


def test_nothing_committed_starts_at_batch_zero():
    for point in (ResumePoint.of_commit(None), ResumePoint.of_progress(None)):
        assert (point.offsets, point.batch_id, point.next_batch_id, point.isolated) == (None, None, 0, {})
