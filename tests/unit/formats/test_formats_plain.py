"""json, csv and raw formats; get_decoder; final_state."""

from __future__ import annotations

import pytest

from cdcsync.formats import FORMATS, BadRecord, Change, final_state, get_decoder


def test_json_object_is_the_row():
    [ch] = get_decoder("json").parse(b'{"id": 1, "nested": {"a": [1, 2]}}')
    assert (ch.op, ch.row, ch.table, ch.key_columns) == ("upsert", {"id": 1, "nested": {"a": [1, 2]}}, None, None)
    with pytest.raises(BadRecord) as e:
        get_decoder("json").parse(b'"just a string"')
    assert e.value.reason_code == "not_an_object"
    assert get_decoder("json").parse(None)[0].skip_reason == "tombstone"


def test_csv_maps_fields_to_configured_names_and_empty_to_null():
    dec = get_decoder("csv", columns=["id", "name", "note"], field_delimiter=";")
    [ch] = dec.parse(b'1;"semi;colon";\r\n')
    assert ch.row == {"id": "1", "name": "semi;colon", "note": None} and ch.text_values
    [ch] = dec.parse(b'2;"two\nlines";x')
    assert ch.row["name"] == "two\nlines"
    with pytest.raises(BadRecord) as e:
        dec.parse(b"1;2")
    assert e.value.reason_code == "bad_field_count" and "expected 3" in e.value.message


@pytest.mark.parametrize("value", [b'1,"open', b'1,"a"x', b"1,a\n2,b"])
def test_csv_that_is_not_one_record_is_invalid_csv(value):
    with pytest.raises(BadRecord) as e:
        get_decoder("csv", columns=["a", "b"]).parse(value)
    assert e.value.reason_code == "invalid_csv"


def test_csv_quotes_follow_rfc_4180():
    dec = get_decoder("csv", columns=["a", "b"])
    assert dec.parse(b'1,"say ""hi"", ok"')[0].row == {"a": "1", "b": 'say "hi", ok'}
    assert dec.parse(b'1,a"b')[0].row == {"a": "1", "b": 'a"b'}  # a quote inside an unquoted field is text


def test_csv_without_names_uses_spark_style_names():
    assert get_decoder("csv").parse(b"a,b")[0].row == {"_c0": "a", "_c1": "b"}


def test_raw_is_one_text_column():
    assert get_decoder("raw").parse("héllo".encode())[0].row == {"value": "héllo"}
    with pytest.raises(BadRecord) as e:
        get_decoder("raw").parse(b"\xc3")
    assert e.value.reason_code == "invalid_utf8"


def test_every_configurable_format_has_a_decoder_and_unknown_ones_fail():
    needs = {"avro-confluent": {"registry": None}, "avro": {"schema": '"string"'}}
    assert [get_decoder(f, **needs.get(f, {})).name for f in FORMATS] == list(FORMATS)
    with pytest.raises(ValueError, match="unknown format"):
        get_decoder("protobuf")


def _ch(op, row, key=("id",)):
    return Change(op, "t", row, list(key), None, None)


def test_final_state_applies_changes_in_order():
    changes = [_ch("upsert", {"id": 1, "v": "a"}), _ch("upsert", {"id": 2, "v": "b"}),
               Change("skip", None, None, None, None, None, skip_reason="tombstone"),
               _ch("upsert", {"id": 1, "v": "c"}), _ch("delete", {"id": 2}), _ch("delete", {"id": 3}),
               _ch("upsert", {"id": 2, "v": "again"})]
    assert final_state(changes) == {(1,): {"id": 1, "v": "c"}, (2,): {"id": 2, "v": "again"}}


def test_final_state_needs_a_key_and_filters_by_table():
    with pytest.raises(ValueError, match="no primary key"):
        final_state([Change("upsert", "t", {"id": 1}, None, None, None)])
    with pytest.raises(ValueError, match="lacks key column"):
        final_state([_ch("upsert", {"other": 1})])
    other = Change("upsert", "u", {"id": 9}, ["id"], None, None)
    assert final_state([_ch("upsert", {"id": 1}), other], table="u") == {(9,): {"id": 9}}
    assert final_state([_ch("upsert", {"a": 1, "b": 2}, key=("a", "b"))]) == {(1, 2): {"a": 1, "b": 2}}
