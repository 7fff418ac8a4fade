"""The index a table's keys were placed by: recorded in each commit, and a change that would split a key across two
file groups (into, out of, or within a bucket index) refused."""

from __future__ import annotations

import pytest

from cdcsync.sinks.hudi import TableSpec, index_change, index_of


def spec(partition_by=(), **options) -> TableSpec:
    return TableSpec(path="/t", table_name="t", table_type="MERGE_ON_READ", primary_key=["id"],
                     partition_by=list(partition_by), ordering_fields=["_cdc_order"], options=options)


def test_the_index_recorded_is_the_one_written_with():
    assert index_of(spec()) == "SIMPLE"
    assert index_of(spec(["region"])) == "GLOBAL_SIMPLE"
    assert index_of(spec(**{"hoodie.index.type": "bucket", "hoodie.bucket.index.num.buckets": "4"})) == "BUCKET:4"
    assert index_of(spec(**{"hoodie.index.type": "BUCKET"})) == "BUCKET:256", "Hudi's own default count"
    assert index_of(spec(**{"hoodie.index.type": "RECORD_INDEX"})) == "RECORD_INDEX"


@pytest.mark.parametrize("recorded, wanted, refused", [
    ("SIMPLE", "SIMPLE", False),
    (None, "SIMPLE", False),  # a table of an earlier cdcsync recorded none: its config is trusted, as then
    (None, "BUCKET:4", False),
    ("SIMPLE", "RECORD_INDEX", False),  # look-ups that find a key wherever it is
    ("GLOBAL_SIMPLE", "GLOBAL_BLOOM", False),
    ("BUCKET:4", "BUCKET:4", False),
    ("BUCKET:4", "BUCKET:8", True),  # the hash would name another file group
    ("SIMPLE", "BUCKET:4", True),  # rows already placed elsewhere than their bucket
    ("BUCKET:4", "SIMPLE", True),
])
def test_a_change_into_out_of_or_within_a_bucket_index_is_refused(recorded, wanted, refused):
    why = index_change(recorded, wanted)
    assert (why is not None) == refused
    if refused:
        assert f"written with {recorded}" in why
