"""The JVM-free reading of upsert topics and flattened streams (formats/upserts.py): what a tombstone and the
deleted field make of a record, and infer-schema leaving the deleted field out of the columns."""

from __future__ import annotations

import json

import pytest

from cdcsync.config.model import SourceConfig
from cdcsync.formats import BadRecord, decoder_for
from cdcsync.formats import vocabulary as v
from cdcsync.schema import SchemaInferrer
from tests.cli import infer_schema
from tests.configs import write


def source(fmt: str = "json", **kw) -> SourceConfig:
    return SourceConfig(bootstrap_servers="", format=fmt, **kw)


def test_a_keyed_tombstone_deletes_the_row_its_key_names():
    (c,) = decoder_for(source(), primary_key=["id"]).parse(None, b'{"id": 3}')
    assert (c.op, c.row) == (v.DELETE, {"id": 3})
    (c,) = decoder_for(source(key_fields=["id"])).parse(None, b'{"schema": {}, "payload": {"id": 3, "x": 1}}')
    assert (c.op, c.row) == (v.DELETE, {"id": 3})


@pytest.mark.parametrize("key", [None, b"3", b"{}", b'{"other": 1}', b"not json"])
def test_a_tombstone_without_a_key_that_names_a_row_is_bad(key):
    with pytest.raises(BadRecord) as e:
        decoder_for(source(key_fields=["id"])).parse(None, key)
    assert e.value.reason_code == v.MISSING_KEY and "tombstones" in e.value.message


def test_tombstones_stay_skipped_where_they_do_not_delete():
    for dec in (decoder_for(source()), decoder_for(source(tombstones="skip"), primary_key=["id"]),
                decoder_for(source("debezium-json"), primary_key=["id"])):
        (c,) = dec.parse(None, b'{"id": 3}')
        assert (c.op, c.skip_reason) == (v.SKIP, v.TOMBSTONE)


@pytest.mark.parametrize("flag, op", [("true", v.DELETE), (True, v.DELETE), ("false", v.UPSERT), (False, v.UPSERT),
                                      (None, v.UPSERT), ("TRUE", v.UPSERT), (1, v.UPSERT)])
def test_the_deleted_field_marks_deletes_and_leaves_the_row(flag, op):
    dec = decoder_for(source(deleted_field="__deleted"), primary_key=["id"])
    (c,) = dec.parse(json.dumps({"id": 1, "a": "x", "__deleted": flag}).encode(), b'{"id": 1}')
    assert (c.op, c.row) == (op, {"id": 1, "a": "x"})


def test_a_csv_flag_is_text():
    dec = decoder_for(source("csv", csv_columns=["id", "__deleted"], deleted_field="__deleted"), primary_key=["id"])
    assert [dec.parse(b, None)[0].op for b in (b"1,true", b"1,false", b"1,")] == [v.DELETE, v.UPSERT, v.UPSERT]


@pytest.mark.parametrize("row", [{"id": 1, "__deleted": {"a": 1}}, {"id": 1, "__deleted": [True]},
                                 {"id": 1, "__deleted": "true", "n": {"__deleted": "false"}}])
def test_a_flag_that_cannot_be_told_is_bad(row):
    with pytest.raises(BadRecord) as e:
        decoder_for(source(deleted_field="__deleted"), primary_key=["id"]).parse(json.dumps(row).encode())
    assert e.value.reason_code == v.BAD_VALUE and "__deleted" in e.value.message


def test_the_deleted_field_is_no_column_of_the_inferred_schema(tmp_path):
    dec = decoder_for(source(deleted_field="__deleted"), primary_key=["id"])
    inferrer = SchemaInferrer()
    for row in ({"id": 1, "__deleted": "false"}, {"id": 1, "__deleted": "true"}, {"id": 2, "__deleted": "false"}):
        for c in dec.parse(json.dumps(row).encode(), b'{"id": 1}'):
            inferrer.observe(c)
    (table,) = inferrer.result().values()
    assert list(table.columns) == ["id"]

    lines = tmp_path / "rows.jsonl"
    lines.write_text('{"id": 1, "n": "a", "__source_ts_ms": 5, "__deleted": "false"}\n'
                     '{"id": 1, "n": "a", "__source_ts_ms": 6, "__deleted": "true"}\n')
    config = write(tmp_path, '[source]\nbootstrap_servers = "localhost:9092"\ntopics = ["t"]\nformat = "json"\n'
                             'deleted_field = "__deleted"\n[sink]\npath = "/tmp/x"\ntable_name = "t"\n'
                             'primary_key = ["id"]\n')
    p = infer_schema(config, "--from-file", lines, "--output", "spark-ddl")
    assert p.returncode == 0, p.stderr
    assert "__source_ts_ms" in p.stdout and "__deleted" not in p.stdout, p.stdout
