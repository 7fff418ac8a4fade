"""Which marker files a consolidation rewrites: the small ones, not a large file that outweighs them all, so a
marker is rewritten a few times over its life rather than with every 32 batches (stages/deletes.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cdcsync.stages.deletes import to_merge


def test_a_large_file_is_left_and_the_small_ones_are_merged():
    files = {"base": 32_000_000, **{f"b{i}": 10_000 for i in range(33)}}
    assert set(to_merge(files)) == {f"b{i}" for i in range(33)}


def test_files_of_like_size_are_all_merged():
    files = {f"b{i}": 600 + i for i in range(33)}
    assert to_merge(files) == files


def test_a_file_is_kept_only_while_it_outweighs_all_smaller_ones_together():
    files = {"a": 1300, "b": 600, "c": 300, "d": 200, "e": 100}  # a outweighs b-e (1,200); b not c-e (600)
    assert set(to_merge(files)) == {"b", "c", "d", "e"}


@given(st.lists(st.integers(min_value=1, max_value=10**9), min_size=2, max_size=60))
def test_at_least_the_two_smallest_are_merged_and_every_file_kept_outweighs_the_merged(sizes):
    files = {f"f{i}": n for i, n in enumerate(sizes)}
    merged = to_merge(files)
    assert len(merged) >= 2 and set(merged) <= set(files)
    kept = [n for p, n in files.items() if p not in merged]
    assert min(merged.values()) == min(sizes)
    assert all(n > sum(merged.values()) for n in kept)
