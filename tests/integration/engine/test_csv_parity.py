"""The csv decoder `run` uses (Spark SQL, formats/spark/envelope.py) and the one `infer-schema` uses (Python's csv,
formats/delimited.py) agree on every record: the same fields, or bad with the same reason. Quoting is RFC 4180."""

from __future__ import annotations

import json

import pytest

from cdcsync.formats import get_decoder
from cdcsync.formats.base import BadRecord
from tests.integration.engine.helpers import kafka_rows

pytestmark = pytest.mark.integration

VALUES = [
    b"1,plain", b'1,"a,b"', b'1,"say ""hi"", ok"', b'1,"two\nlines"', b'1,a"b', b'1,a"b,c"d', b'"x,""y"",z",2',
    b"1,", b'1,""', b",", b"1,plain\r\n",  # empty fields are NULL; a trailing line break ends the record
    b'1,"open', b"1,a\x00b", b'1,"a"x', b"1,a\n2,b", b"1,,", b"only", b'1,"a,b",c', b"", b"\r\n",
    # long fields and many fields: a regex that recursed per character overflowed the JVM's stack here
    b'1,"' + b"x" * 20_000 + b'"', b'1,"' + b'ab""' * 5_000 + b'"', b"1," + b"y" * 20_000, b",".join([b"z"] * 5_000),
]


@pytest.mark.parametrize("delimiter", [",", "|", ";", "\t", "-", "^", "]", "&", "\\"])
def test_spark_and_python_csv_decoders_agree(spark, delimiter):
    from cdcsync.formats.spark.envelope import decode_envelope

    values = [v.replace(b",", delimiter.encode()) for v in VALUES]
    raw = kafka_rows(spark, values)
    got = {r["_kafka_offset"]: r for r in decode_envelope(raw, "csv", ["a", "b"], delimiter).collect()}
    dec = get_decoder("csv", columns=["a", "b"], field_delimiter=delimiter)
    for i, v in enumerate(values):
        spark_side = got[i]
        try:
            want = dec.parse(v)[0].row
        except BadRecord as e:
            assert spark_side["_bad"] == e.reason_code, (v, spark_side["_bad_detail"], e.message)
            continue
        assert spark_side["_bad"] is None, (v, spark_side["_bad"], spark_side["_bad_detail"])
        assert json.loads(spark_side["_row"]) == {k: val for k, val in want.items() if val is not None}, v
