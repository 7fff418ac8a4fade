"""Messy Kafka records of each format, drawn from a `random.Random` (the parity test gets it from hypothesis'
`randoms()`, so a failure names its seed): valid changes mixed with missing fields, wrong types, Debezium
heartbeats / transaction metadata / schema-change events, truncates, tombstones, non-JSON, trailing junk, and
JSON that is not an object. Each function returns one (key, value) pair of bytes (None: no key / a tombstone).
Whole records are drawn in Python: one Spark job then decodes hundreds of them at once."""

from __future__ import annotations

import json
import string
from random import Random

_CHARS = string.ascii_letters + string.digits + " _-.,:{}[]\"\\/\t\n" + "éßΩ中😀\u2028\x01"


def _name(rnd: Random) -> str:
    return rnd.choice("abcdefgh_") + "".join(rnd.choice("abcxyz0123_") for _ in range(rnd.randint(0, 5)))


def _text(rnd: Random) -> str:
    """Never starting with "{": run reads a JSON string holding "{…" where an object belongs as that object
    (README, Formats: the one known difference)."""
    return "".join(rnd.choice(_CHARS) for _ in range(rnd.randint(0, 8))).replace("{", "(", 1)


def _scalar(rnd: Random):
    return rnd.choice([
        None, True, False, rnd.randint(-1000, 1000), rnd.randint(-(2**70), 2**70), rnd.uniform(-1e6, 1e6),
        rnd.choice([0.1, 1e-7, 1e300, -0.0, 2.5]), _text(rnd), "",
    ])


def _json(rnd: Random, depth: int = 2):
    """Any JSON value, nested up to `depth`."""
    kind = rnd.randint(0, 5) if depth else 0
    if kind == 4:
        return [_json(rnd, depth - 1) for _ in range(rnd.randint(0, 3))]
    if kind == 5:
        return {_name(rnd): _json(rnd, depth - 1) for _ in range(rnd.randint(0, 3))}
    return _scalar(rnd)


def _row(rnd: Random) -> dict:
    return {"id": rnd.randint(1, 50)} | {_name(rnd): _json(rnd, 1) for _ in range(rnd.randint(0, 4))}


def _text_row(rnd: Random) -> dict:
    """Canal renders every value as text (NULL stays null)."""
    return {"id": str(rnd.randint(1, 50))} | {_name(rnd): rnd.choice([None, _text(rnd), str(rnd.randint(0, 99))])
                                               for _ in range(rnd.randint(0, 3))}


def _table_part(rnd: Random):
    return rnd.choice([_name(rnd), _name(rnd), _name(rnd), "", None, rnd.randint(0, 9)])


_NAME_PARTS = {"db", "schema", "table", "database"}


def _mutated(rnd: Random, doc: dict) -> dict:
    """The document as sent, or with one field dropped, or one field given a value of another JSON kind (a name
    part no fraction: Python and Java print some differently, e.g. 1e+300 and 1.0E300)."""
    how = rnd.choice(["keep"] * 4 + ["drop", "retype"])
    if how == "keep" or not doc:
        return doc
    doc, name = dict(doc), rnd.choice(sorted(doc))
    if how == "drop":
        del doc[name]
    else:
        doc[name] = rnd.choice([_table_part(rnd), True, [], {"a": 1}]) if name in _NAME_PARTS else _json(rnd)
    return doc


def _damaged(rnd: Random, doc) -> bytes | None:
    """The JSON text of `doc`, sometimes damaged: truncated, junk after it, leading whitespace, a byte that is not
    UTF-8, or replaced by text that is not JSON or by JSON that is not an object."""
    if doc is None:
        return None
    text = json.dumps(doc, ensure_ascii=rnd.random() < 0.5)
    how = rnd.choice(["keep"] * 10 + ["cut", "junk", "space", "utf8", "garbage", "scalar"])
    if how == "cut":
        text = text[:rnd.randint(1, len(text) - 1)]
    elif how == "junk":
        text += rnd.choice([" x", "]", ",", " {", "}", " {}", "\n", " \t\r\n", "null", '{"a":1}', " 1"])
    elif how == "space":
        text = rnd.choice([" ", "\n", "\t", "\r\n "]) + text
    elif how == "utf8":
        raw = text.encode()
        at = rnd.randint(0, len(raw))
        return raw[:at] + rnd.choice([b"\xff", b"\xc3", b"\xed\xa0\x80"]) + raw[at:]
    elif how == "garbage":
        text = rnd.choice(["", " ", "not json", "{", '{"a":', "[1,", "{'a': 1}", '{"a":1,}', '"x', "{\"a\":\x01}"])
    elif how == "scalar":
        text = json.dumps(rnd.choice([[_json(rnd)], _scalar(rnd), []]))
    return text.encode()


def _source(rnd: Random) -> dict:
    out = {"db": _table_part(rnd), "table": _table_part(rnd), "ts_ms": rnd.choice([0, 1709445600000])}
    if rnd.random() < 0.4:  # PostgreSQL, SQL Server: a schema level
        out["schema"] = _table_part(rnd)
    return _mutated(rnd, out)


def _debezium_doc(rnd: Random):
    kind = rnd.choice(["change"] * 8 + ["heartbeat", "transaction", "schema_change", "null_payload", "tombstone",
                                         "empty"])
    if kind == "tombstone":
        return None
    if kind == "null_payload":
        return {"schema": None, "payload": None}
    doc = {
        "heartbeat": lambda: {"ts_ms": 1709445600000},
        "transaction": lambda: {"status": rnd.choice(["BEGIN", "END", "begin"]), "id": "571:53195829",
                                "event_count": rnd.choice([None, 3]), "data_collections": None, "ts_ms": 1},
        "schema_change": lambda: {"source": _source(rnd) | _snapshot(rnd), "ts_ms": 1, "databaseName": "shop",
                                  "schemaName": None, "ddl": "ALTER TABLE t ADD c INT",
                                  "tableChanges": _table_changes(rnd)},
        "empty": dict,
        "change": lambda: {"before": rnd.choice([None, _row(rnd)]), "after": rnd.choice([None, _row(rnd)]),
                           "source": _source(rnd), "op": rnd.choice(["c", "r", "u", "d", "d", "t", "m", "x", "C"]),
                           "ts_ms": 1709445600000},
    }[kind]()
    doc = _mutated(rnd, doc)
    if rnd.random() < 0.35:  # JsonConverter with schemas.enable
        return {"schema": rnd.choice([None, {"type": "struct", "fields": []}]), "payload": doc}
    return doc


def _snapshot(rnd: Random) -> dict:
    """source.snapshot as Debezium versions wrote it (text, or a boolean in old ones), or absent."""
    return rnd.choice([{}, {}, {"snapshot": "false"}, {"snapshot": False}, {"snapshot": "true"}, {"snapshot": True},
                       {"snapshot": "last"}, {"snapshot": None}, {"snapshot": 0}])


def _table_id(rnd: Random):
    """A tableChanges `id`: Debezium's double-quoted TableId ('"db"."t"', a quote in a name doubled), or not."""
    parts = [rnd.choice(["shop", "public", 'we"ird', "", _name(rnd)]) for _ in range(rnd.randint(1, 3))]
    quoted = ".".join('"' + p.replace('"', '""') + '"' for p in parts)
    return rnd.choice([quoted] * 5 + ["shop.t", "", None, 7, {"a": "b"}, ["x"], '"unclosed'])


def _table_changes(rnd: Random):
    """A schema change's tableChanges: none, CREATE/ALTER ones, DROPs (the `table` null, as Debezium writes it)."""
    def change():
        return _mutated(rnd, {"type": rnd.choice(["DROP", "DROP", "ALTER", "CREATE", "drop"]), "id": _table_id(rnd),
                              "table": None})

    return rnd.choice([[], [change()], [change()], [change(), change()], [1, change()], "DROP", None])


_KEYS = [None, b'{"id": 1}', b'{"schema": {"type": "struct", "fields": [{"field": "id"}]}, "payload": {"id": 2}}',
         b"not json", b"{}", b"[1]", b'{"payload": 5}']


def debezium(rnd: Random) -> tuple[bytes | None, bytes | None]:
    return rnd.choice(_KEYS), _damaged(rnd, _debezium_doc(rnd))


def canal(rnd: Random) -> tuple[bytes | None, bytes | None]:
    kind = rnd.choice(["INSERT", "UPDATE", "DELETE", "INSERT", "CREATE", "ALTER", "ERASE", "TRUNCATE", "QUERY",
                       "GTID", "MHEARTBEAT", "insert", "BOGUS"])
    data = rnd.choice([[_text_row(rnd) for _ in range(rnd.randint(1, 3))]] * 4
                      + [None, [], [_text_row(rnd), _json(rnd)], [_row(rnd)]])
    doc = {"data": data, "database": _table_part(rnd), "table": _table_part(rnd), "type": kind,
           "isDdl": rnd.random() < 0.1 if kind in ("INSERT", "UPDATE", "DELETE") else True,
           "es": 1709802300000, "ts": 1709802300412, "pkNames": ["id"], "mysqlType": {"id": "int(11)"}}
    return None, _damaged(rnd, None if rnd.random() < 0.05 else _mutated(rnd, doc))


def maxwell(rnd: Random) -> tuple[bytes | None, bytes | None]:
    kind = rnd.choice(["insert", "update", "delete", "insert", "bootstrap-insert", "bootstrap-start",
                       "bootstrap-complete", "table-create", "table-drop", "database-drop", "ddl", "INSERT",
                       "bogus"])
    doc = {"database": _table_part(rnd), "table": _table_part(rnd), "type": kind, "ts": 1709892000, "xid": 7,
           "commit": True, "data": _row(rnd), "primary_key_columns": ["id"]}
    return None, _damaged(rnd, None if rnd.random() < 0.05 else _mutated(rnd, doc))


def plain_json(rnd: Random) -> tuple[bytes | None, bytes | None]:
    return None, _damaged(rnd, None if rnd.random() < 0.05 else _row(rnd))


def csv(rnd: Random, delimiter: str) -> tuple[bytes | None, bytes | None]:
    def field() -> str:
        t = "".join(rnd.choice(["a", "1", " ", delimiter, '"', "\n", "é"]) for _ in range(rnd.randint(0, 4)))
        return rnd.choice([t, '"' + t.replace('"', '""') + '"', '"' + t + '"', t.replace('"', "")])

    value = delimiter.join(field() for _ in range(rnd.randint(1, 3))).encode()
    return None, rnd.choice([value] * 8 + [None, b"\xff" + value, value + b"\r\n"])


def raw(rnd: Random) -> tuple[bytes | None, bytes | None]:
    return None, rnd.choice([None, _text(rnd).encode(), bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 6)))])


def _avro_row(rnd: Random, v2: bool) -> dict:
    from decimal import Decimal

    row = {"id": rnd.randint(-(2**31), 2**31 - 1), "price": rnd.choice([None, Decimal(rnd.randint(-10**8, 10**8)) /
                                                                        100]),
           "day": rnd.choice([None, rnd.randint(-10**5, 10**5)]), "at": rnd.choice([None, rnd.randint(0, 2**53)]),
           "zoned": rnd.choice([None, _text(rnd), "2024-05-06T07:08:09Z"]),
           "small": rnd.choice([None, rnd.randint(-(2**15), 2**15 - 1)])}
    if v2:
        row |= {"small": rnd.choice([None, rnd.randint(-(2**62), 2**62)]), "note": rnd.choice([None, _text(rnd)])}
    return row


def avro(rnd: Random) -> tuple[bytes | None, bytes | None]:
    """The Confluent wire format with writer schemas 1 and 2 of tests/fixtures/avro_cases: changes of both versions,
    tombstones, a wrong magic byte, unknown ids, truncated and random bodies, keys good and bad."""
    from tests.fixtures.avro_cases import ENVELOPE, ENVELOPE_V2, KEY, change, wire
    from tests.fixtures.avro_cases import avro as encode

    v2 = rnd.random() < 0.5
    op = rnd.choice("crudtm")
    before = _avro_row(rnd, v2) if op in "ud" or rnd.random() < 0.2 else None
    after = _avro_row(rnd, v2) if op in "cru" and rnd.random() < 0.95 else None
    body = encode(change(op, before, after, rnd.randint(0, 10**6)), ENVELOPE_V2 if v2 else ENVELOPE)
    value = wire(2 if v2 else 1, body)
    damage = rnd.random()
    if damage < 0.05:
        value = None
    elif damage < 0.1:
        value = bytes([rnd.randint(1, 255)]) + value[1:]
    elif damage < 0.15:
        value = wire(rnd.choice([0, 3, 99, 2**31]), body)
    elif damage < 0.25:
        value = value[:rnd.randint(0, len(value) - 1)]
    elif damage < 0.3:
        value = bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0, 30)))
    key = wire(7, encode({"id": rnd.randint(0, 100)}, KEY)) if rnd.random() < 0.8 else rnd.choice(
        [None, b"\x01junk", b'{"id": 5}'])
    return key, value


def plain_avro(rnd: Random) -> tuple[bytes | None, bytes | None]:
    """Plain Avro rows of tests/fixtures/avro_cases' ROW (no header), with Avro keys of KEY: tombstones, truncated
    bodies, a body written with another schema, keys that do not decode."""
    from tests.fixtures.avro_cases import KEY, ROW
    from tests.fixtures.avro_cases import avro as encode

    value = encode(_avro_row(rnd, False), ROW)
    damage = rnd.random()
    if damage < 0.05:
        value = None
    elif damage < 0.15:
        value = value[:rnd.randint(0, len(value) - 1)]
    elif damage < 0.2:
        value = encode({"id": rnd.randint(0, 9)}, KEY)
    key = encode({"id": rnd.randint(0, 100)}, KEY) if rnd.random() < 0.8 else rnd.choice([None, b"\x01", b""])
    return key, value


def keyed_json(rnd: Random) -> tuple[bytes | None, bytes | None]:
    """json rows whose keys carry `id` and `k` of any JSON type (or null, or not at all), bare or in
    JsonConverter's payload, beside keys that are no JSON object."""
    _, value = plain_json(rnd)
    key_row = {name: _json(rnd, 1) for name in ("id", "k") if rnd.random() < 0.8} | {_name(rnd): _scalar(rnd)}
    doc = rnd.choice([key_row, key_row, {"schema": {"type": "struct"}, "payload": key_row}, _scalar(rnd)])
    key = rnd.choice([json.dumps(doc).encode()] * 8 + [None, b"\x01junk"])
    return key, value


def flattened_json(rnd: Random) -> tuple[bytes | None, bytes | None]:
    """An upsert topic of flattened rows (Debezium's ExtractNewRecordState), keyed as keyed_json: many tombstones,
    and `__deleted` as Debezium writes it ("true", "false") or not quite (true, false, null, missing, other text, a
    number, an object or array, first or last, the name also inside another value)."""
    key, _ = keyed_json(rnd)
    if rnd.random() < 0.25:
        return key, None
    row = _row(rnd)
    flag = rnd.choice(["true", "false", "true", "false", True, False, None, "TRUE", 1, "", {"a": 1}, [True], "-"])
    if flag != "-":
        row = {"__deleted": flag, **row} if rnd.random() < 0.2 else {**row, "__deleted": flag}
    if rnd.random() < 0.1:
        row[_name(rnd)] = rnd.choice([{"__deleted": "true"}, [{"__deleted": True}], "\"__deleted\": \"true\""])
    return key, _damaged(rnd, row)
