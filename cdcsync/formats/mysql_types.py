"""MySQL column type strings (Canal's mysqlType: "int(11)", "decimal(10,2)", "bigint unsigned" …) → ColumnType,
and Canal's text values → Python values of that type."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation

from cdcsync.schema.types import (
    BIGINT,
    BINARY,
    BOOLEAN,
    DATE,
    DOUBLE,
    STRING,
    TIME,
    TIMESTAMP,
    ColumnType,
    Kind,
)

_BASE = {
    "tinyint": BIGINT, "smallint": BIGINT, "mediumint": BIGINT, "int": BIGINT, "integer": BIGINT,
    "year": BIGINT, "bit": BIGINT,
    "bool": BOOLEAN, "boolean": BOOLEAN,
    "float": DOUBLE, "double": DOUBLE, "real": DOUBLE, "double precision": DOUBLE,
    "date": DATE,
    "datetime": TIMESTAMP,
    # MySQL TIMESTAMP is an instant, but Canal renders it in the server's zone without an offset: wall clock.
    "timestamp": TIMESTAMP,
    "time": TIME,
    "char": STRING, "varchar": STRING, "tinytext": STRING, "text": STRING, "mediumtext": STRING,
    "longtext": STRING, "json": STRING, "enum": STRING, "set": STRING,
    # Canal renders binary columns as ISO-8859-1 text, not base64: they stay text.
    "binary": STRING, "varbinary": STRING, "tinyblob": STRING, "blob": STRING, "mediumblob": STRING,
    "longblob": STRING,
}


def mysql_type(text: str) -> ColumnType:
    """ColumnType for a MySQL column type; STRING for anything unknown (geometry …)."""
    if not isinstance(text, str):
        return STRING
    head, _, rest = text.lower().partition("(")  # "decimal(10,2) unsigned zerofill"
    params, _, tail = rest.partition(")")
    words = (head + " " + tail).split()
    unsigned = "unsigned" in words
    base = " ".join(w for w in words if w not in ("unsigned", "zerofill", "signed"))
    if base in ("decimal", "numeric", "dec", "fixed"):
        nums = [int(x) for x in re.findall(r"\d+", params or "")]
        precision = nums[0] if nums else 10  # MySQL's default DECIMAL is DECIMAL(10,0)
        scale = nums[1] if len(nums) > 1 else 0
        return ColumnType.decimal(precision, scale)
    if base == "bigint":
        return ColumnType.decimal(20, 0) if unsigned else BIGINT  # 2**64-1 has 20 digits
    return _BASE.get(base, STRING)


def decode_text(ctype: ColumnType, value: str | None) -> str | int | Decimal | float | dt.date | dt.time | bytes | None:
    """Canal's text rendering → the Python value of `ctype` (raises ValueError when the text does not parse)."""
    if value is None:
        return None
    kind = ctype.kind
    if kind is Kind.STRING:
        return value
    if kind is Kind.BIGINT:
        return int(value)
    if kind is Kind.DECIMAL:
        try:
            return Decimal(value)
        except InvalidOperation:
            raise ValueError(f"{value!r} is not a decimal") from None
    if kind is Kind.DOUBLE:
        return float(value)
    if kind is Kind.BOOLEAN:
        low = value.strip().lower()
        if low in ("1", "true"):
            return True
        if low in ("0", "false"):
            return False
        raise ValueError(f"{value!r} is not a boolean")
    if kind is Kind.DATE:
        return dt.date.fromisoformat(value)
    if kind is Kind.TIMESTAMP:
        return dt.datetime.fromisoformat(value)
    if kind is Kind.TIME:
        return dt.time.fromisoformat(value)
    if kind is BINARY.kind:
        return value.encode("latin-1")
    return value
