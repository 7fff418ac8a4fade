"""The table each conformance file, decoded and replayed with final_state, must leave: the table the source
database held.

Expected tables were written by reading the files: snapshot rows as inserts, updates take the newest image, deletes
applied; Debezium Decimals decoded by hand from their base64 bytes (and cross-checked with Paimon's test that uses
the same all-types message).
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

UTC = dt.UTC

# The inventory.products history shared by the Flink fixtures: 101-109 inserted; 106 and 107 updated; 110 and 111
# inserted; 110 and 111 updated; 111 deleted.
_FLINK_PRODUCTS = {
    101: ("scooter", "Small 2-wheel scooter"),
    102: ("car battery", "12V car battery"),
    103: ("12-pack drill bits", "12-pack of drill bits with sizes ranging from #40 to #3"),
    104: ("hammer", "12oz carpenter's hammer"),
    105: ("hammer", "14oz carpenter's hammer"),
    106: ("hammer", "18oz carpenter hammer"),
    107: ("rocks", "box of assorted rocks"),
    108: ("jacket", "water resistent black wind breaker"),
    109: ("spare tire", "24 inch spare tire"),
    110: ("jacket", "new water resistent white wind breaker"),
}

# Float32 artifacts as MySQL's FLOAT column reported them through Debezium 1.1.
_MYSQL_WEIGHTS = {101: 3.140000104904175, 102: 8.100000381469727, 103: 0.800000011920929, 104: 0.75, 105: 0.875,
                  106: 1.0, 107: 5.099999904632568, 108: 0.10000000149011612, 109: 22.200000762939453, 110: 0.5}
_PG_WEIGHTS = {101: 3.14, 102: 8.1, 103: 0.8, 104: 0.75, 105: 0.875, 106: 1.0, 107: 5.1, 108: 0.1, 109: 22.2,
               110: 0.5}


def _products(weights, ids=None, extra=None):
    ids = ids or weights
    return {(i,): {"id": i, **({"ts": extra[i]} if extra else {}), "name": _FLINK_PRODUCTS[i][0],
                   "description": _FLINK_PRODUCTS[i][1], "weight": weights[i]} for i in ids}


# Canal and Maxwell (same history, then 101/102 reweighed to 5.17, then 102 and 103 deleted).
_CANAL_MAXWELL = {101: 5.17, 104: 0.75, 105: 0.875, 106: 1.0, 107: 5.1, 108: 0.1, 109: 22.2, 110: 0.5}

def _geometry(wkb: str) -> str:
    return json.dumps({"wkb": wkb, "srid": None}, separators=(",", ":"))


_ALL_TYPES_ROW = {
    "_id": 1, "pt": Decimal("1.1"),
    "_bit1": True, "_bit": b"\xc7\x07\x00\x00\x00\x00\x00\x00",
    "_tinyint1": 1, "_boolean": 1, "_bool": 0, "_tinyint": 1, "_tinyint_unsigned": 2, "_tinyint_unsigned_zerofill": 3,
    "_smallint": 1000, "_smallint_unsigned": 2000, "_smallint_unsigned_zerofill": 3000,
    "_mediumint": 100000, "_mediumint_unsigned": 200000, "_mediumint_unsigned_zerofill": 300000,
    "_int": 1000000, "_int_unsigned": 2000000, "_int_unsigned_zerofill": 3000000,
    "_bigint": 10000000000, "_bigint_unsigned": Decimal("20000000000"),
    "_bigint_unsigned_zerofill": Decimal("30000000000"), "_serial": Decimal("40000000000"),
    "_float": 1.5, "_float_unsigned": 2.5, "_float_unsigned_zerofill": 3.5,
    "_real": 1.000001, "_real_unsigned": 2.000002, "_real_unsigned_zerofill": 3.000003,
    "_double": 1.000011, "_double_unsigned": 2.000022, "_double_unsigned_zerofill": 3.000033,
    "_double_precision": 1.000111, "_double_precision_unsigned": 2.000222,
    "_double_precision_unsigned_zerofill": 3.000333,
    "_numeric": Decimal("12345.110"), "_numeric_unsigned": Decimal("12345.220"),
    "_numeric_unsigned_zerofill": Decimal("12345.330"),
    # DECIMAL(40,3) is wider than Spark's 38 digits: the column is STRING and the value its exact text.
    "_fixed": "123456789876543212345678987654321.110", "_fixed_unsigned": "123456789876543212345678987654321.220",
    "_fixed_unsigned_zerofill": "123456789876543212345678987654321.330",
    "_decimal": Decimal("11111"), "_decimal_unsigned": Decimal("22222"), "_decimal_unsigned_zerofill": Decimal("33333"),
    "_big_decimal": Decimal("2222222222222222400000000000.0000000000"),
    "_date": dt.date(2023, 3, 23),
    "_datetime": dt.datetime(2023, 3, 23, 14, 30, 5), "_datetime3": dt.datetime(2023, 3, 23, 14, 30, 5, 123000),
    "_datetime6": dt.datetime(2023, 3, 23, 14, 30, 5, 123456), "_datetime_p": dt.datetime(2023, 3, 24, 14, 30),
    "_datetime_p2": dt.datetime(2023, 3, 24, 14, 30, 5, 120000),
    "_timestamp": dt.datetime(2023, 3, 23, 22, 0, 10, 123456, tzinfo=UTC),
    "_timestamp0": dt.datetime(2023, 3, 23, 7, 10, tzinfo=UTC),
    "_char": "Paimon", "_varchar": "Apache Paimon", "_tinytext": "Apache Paimon MySQL TINYTEXT Test Data",
    "_text": "Apache Paimon MySQL Test Data", "_mediumtext": "Apache Paimon MySQL MEDIUMTEXT Test Data",
    "_longtext": "Apache Paimon MySQL Long Test Data",
    "_bin": b"bytes\x00\x00\x00\x00\x00", "_varbin": b"more bytes", "_tinyblob": b"TINYBLOB type test data",
    "_blob": b"BLOB type test data", "_mediumblob": b"MEDIUMBLOB type test data",
    "_longblob": b"LONGBLOB  bytes test data",
    "_json": '{"a": "b"}', "_enum": "value1", "_year": 2023, "_time": dt.time(10, 13, 23),
    # Structs (geometry) are STRING columns holding the struct as compact JSON text.
    "_point": '{"x":1.0,"y":1.0,"wkb":"AQEAAAAAAAAAAADwPwAAAAAAAPA/","srid":null}',
    "_geometry": _geometry(
        "AQMAAAABAAAABQAAAAAAAAAAAPA/AAAAAAAA8D8AAAAAAAAAQAAAAAAAAPA/AAAAAAAAAEAAAAAAAAAAQAAAAAAA"
        "APA/AAAAAAAAAEAAAAAAAADwPwAAAAAAAPA/"
    ),
    "_linestring": _geometry(
        "AQIAAAADAAAAAAAAAAAACEAAAAAAAAAAAAAAAAAAAAhAAAAAAAAACEAAAAAAAAAIQAAAAAAAABRA"
    ),
    "_polygon": _geometry(
        "AQMAAAABAAAABQAAAAAAAAAAAPA/AAAAAAAA8D8AAAAAAAAAQAAAAAAAAPA/AAAAAAAAAEAAAAAAAAAAQAAAAAAA"
        "APA/AAAAAAAAAEAAAAAAAADwPwAAAAAAAPA/"
    ),
    "_multipoint": _geometry(
        "AQQAAAACAAAAAQEAAAAAAAAAAADwPwAAAAAAAPA/AQEAAAAAAAAAAAAAQAAAAAAAAABA"
    ),
    "_multiline": _geometry(
        "AQUAAAACAAAAAQIAAAADAAAAAAAAAAAA8D8AAAAAAADwPwAAAAAAAABAAAAAAAAAAEAAAAAAAAAIQAAAAAAAAAhA"
        "AQIAAAACAAAAAAAAAAAAEEAAAAAAAAAQQAAAAAAAABRAAAAAAAAAFEA="
    ),
    "_multipolygon": _geometry(
        "AQYAAAACAAAAAQMAAAABAAAABQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAkQAAAAAAAAAAAAAAAAAAAJEAAAAAA"
        "AAAkQAAAAAAAAAAAAAAAAAAAJEAAAAAAAAAAAAAAAAAAAAAAAQMAAAABAAAABQAAAAAAAAAAABRAAAAAAAAAFEAA"
        "AAAAAAAcQAAAAAAAABRAAAAAAAAAHEAAAAAAAAAcQAAAAAAAABRAAAAAAAAAHEAAAAAAAAAUQAAAAAAAABRA"
    ),
    "_geometrycollection": _geometry(
        "AQcAAAADAAAAAQEAAAAAAAAAAAAkQAAAAAAAACRAAQEAAAAAAAAAAAA+QAAAAAAAAD5AAQIAAAACAAAAAAAAAAAA"
        "LkAAAAAAAAAuQAAAAAAAADRAAAAAAAAANEA="
    ),
    "_set": "a,b",
}

# file → (decoder options, key columns, expected final table)
EXPECTED = {
    "canal.txt": ({"typed": True}, None, _products(_CANAL_MAXWELL)),
    "maxwell.txt": ({}, None, _products(_CANAL_MAXWELL)),
    "debezium-mysql-with-schema.txt": ({"typed": True}, ["id"], _products(_MYSQL_WEIGHTS)),
    # Without a schema, values stay as the JSON said: 106's weight is the integer 1 in the message.
    "debezium-mysql-no-schema.txt": (
        {}, ["id"],
        _products({**_MYSQL_WEIGHTS, 106: 1}, extra={101: 1000, 102: 2000, 103: 3000, 104: 4000, 105: 5000, 106: 10000,
                                         107: 11000, 108: 8000, 109: 9000, 110: 14000})),
    "debezium-postgres-no-schema.txt": ({}, ["id"], _products(_PG_WEIGHTS)),
    "debezium-mysql-all-types-with-schema.txt": ({"typed": True}, ["_id"], {(1,): _ALL_TYPES_ROW}),
}
