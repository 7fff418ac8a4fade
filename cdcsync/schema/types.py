"""Column types and the widening lattice that inference and evolution share.

Lattice: BIGINT ⊂ DECIMAL ⊂ DOUBLE ⊂ STRING; DATE ⊂ TIMESTAMP ⊂ STRING; DATE ⊂ TIMESTAMP_LTZ ⊂ STRING;
everything ⊂ STRING. TIMESTAMP (wall clock, no zone) and TIMESTAMP_LTZ (an instant) only meet at STRING:
turning one into the other needs a time zone nobody stated. A DECIMAL merge needing more than 38 digits is STRING
(exact text), even though DOUBLE absorbs each DECIMAL alone: the one case where merge order matters, and only
declared/envelope decimals can reach it (JSON numbers infer to BIGINT, DECIMAL(38,0) or DOUBLE).

Spark 3.5 has no TIME type, so TIME renders as STRING ("HH:MM:SS[.fff]") in Spark DDL; both timestamps render
as Spark TIMESTAMP (the engine runs with spark.sql.session.timeZone=UTC, so wall-clock values read as UTC).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

MAX_PRECISION = 38
BIGINT_DIGITS = 19  # digits of 2**63-1: a BIGINT merged with a DECIMAL needs 19 integer digits
BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1


class Kind(StrEnum):
    BOOLEAN = "BOOLEAN"
    BIGINT = "BIGINT"
    DECIMAL = "DECIMAL"
    DOUBLE = "DOUBLE"
    STRING = "STRING"
    DATE = "DATE"
    TIMESTAMP = "TIMESTAMP"
    TIMESTAMP_LTZ = "TIMESTAMP_LTZ"
    TIME = "TIME"
    BINARY = "BINARY"


@dataclass(frozen=True, slots=True)
class ColumnType:
    kind: Kind
    precision: int | None = None  # DECIMAL only
    scale: int | None = None  # DECIMAL only

    def __str__(self) -> str:
        if self.kind is Kind.DECIMAL:
            return f"DECIMAL({self.precision},{self.scale})"
        return self.kind.value

    def __repr__(self) -> str:
        return f"ColumnType({self})"

    @property
    def integer_digits(self) -> int:
        if self.kind is not Kind.DECIMAL:
            return 0
        assert self.precision is not None and self.scale is not None  # a DECIMAL is built with both (decimal(), parse)
        return self.precision - self.scale

    @staticmethod
    def decimal(precision: int, scale: int) -> ColumnType:
        """DECIMAL(p,s), or STRING when p exceeds 38 (Spark's and Hudi's limit)."""
        if scale < 0:  # a negative scale (1E+3) is an integer with trailing zeros
            precision, scale = precision - scale, 0
        precision = max(precision, scale, 1)
        if precision > MAX_PRECISION:
            return STRING
        return ColumnType(Kind.DECIMAL, precision, scale)

    @staticmethod
    def parse(text: str) -> ColumnType:
        """'DECIMAL(18,2)', 'bigint', 'timestamp_ltz', Spark simpleStrings ('decimal(10,0)', 'int') … → ColumnType."""
        return parse_type(text)

    def spark_ddl(self) -> str:
        if self.kind is Kind.TIME:  # Spark 3.5 has no TIME type
            return "STRING"
        if self.kind is Kind.TIMESTAMP_LTZ:
            return "TIMESTAMP"
        return str(self)

    def json_schema(self) -> dict[str, Any]:
        """How a value of this type looks in a JSON document when it is not wrapped in an envelope encoding."""
        return dict(_JSON_SCHEMA[self.kind])

    def toml(self) -> str:
        return f'"{self}"'


BOOLEAN = ColumnType(Kind.BOOLEAN)
BIGINT = ColumnType(Kind.BIGINT)
DOUBLE = ColumnType(Kind.DOUBLE)
STRING = ColumnType(Kind.STRING)
DATE = ColumnType(Kind.DATE)
TIMESTAMP = ColumnType(Kind.TIMESTAMP)
TIMESTAMP_LTZ = ColumnType(Kind.TIMESTAMP_LTZ)
TIME = ColumnType(Kind.TIME)
BINARY = ColumnType(Kind.BINARY)

# Patterns shared by string classification and the JSON Schema rendering (ECMA-262 compatible).
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$"
TIMESTAMP_LTZ_PATTERN = r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$"
TIME_PATTERN = r"^\d{2}:\d{2}:\d{2}(\.\d{1,9})?$"

# A TIMESTAMP column also holds plain dates (DATE ⊂ TIMESTAMP), so its JSON Schema accepts both.
_DATE_OR_TS = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?$"
_DATE_OR_TS_LTZ = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?))?$"

_JSON_SCHEMA: dict[Kind, dict[str, Any]] = {
    Kind.BOOLEAN: {"type": "boolean"},
    Kind.BIGINT: {"type": "integer", "minimum": BIGINT_MIN, "maximum": BIGINT_MAX},
    Kind.DECIMAL: {"type": "number"},
    Kind.DOUBLE: {"type": "number"},
    Kind.STRING: {"type": "string"},
    Kind.DATE: {"type": "string", "pattern": DATE_PATTERN},
    Kind.TIMESTAMP: {"type": "string", "pattern": _DATE_OR_TS},
    Kind.TIMESTAMP_LTZ: {"type": "string", "pattern": _DATE_OR_TS_LTZ},
    Kind.TIME: {"type": "string", "pattern": TIME_PATTERN},
    Kind.BINARY: {"type": "string", "contentEncoding": "base64"},
}

_ALIASES = {
    "BOOLEAN": BOOLEAN, "BOOL": BOOLEAN,
    "BIGINT": BIGINT, "INT": BIGINT, "INTEGER": BIGINT, "LONG": BIGINT, "SMALLINT": BIGINT, "TINYINT": BIGINT,
    "SHORT": BIGINT, "BYTE": BIGINT, "INT64": BIGINT, "INT32": BIGINT,
    "DOUBLE": DOUBLE, "FLOAT": DOUBLE, "REAL": DOUBLE, "DOUBLE PRECISION": DOUBLE,
    "STRING": STRING, "VARCHAR": STRING, "CHAR": STRING, "TEXT": STRING,
    "DATE": DATE,
    "TIMESTAMP": TIMESTAMP, "TIMESTAMP_NTZ": TIMESTAMP, "DATETIME": TIMESTAMP,
    "TIMESTAMP WITHOUT TIME ZONE": TIMESTAMP,
    "TIMESTAMP_LTZ": TIMESTAMP_LTZ, "TIMESTAMP WITH LOCAL TIME ZONE": TIMESTAMP_LTZ,
    "TIMESTAMP WITH TIME ZONE": TIMESTAMP_LTZ, "TIMESTAMPTZ": TIMESTAMP_LTZ,
    "TIME": TIME,
    "BINARY": BINARY, "VARBINARY": BINARY, "BYTES": BINARY,
}

_PARAMS = re.compile(r"^\s*(\d+)\s*(?:,\s*(\d+)\s*)?$")


def parse_type(text: str) -> ColumnType:
    text = text if isinstance(text, str) else ""
    p = s = None
    if "(" in text:  # "DECIMAL(18, 2)", "TIMESTAMP(3) WITH LOCAL TIME ZONE"
        head, _, rest = text.partition("(")
        inner, close, tail = rest.partition(")")
        m = _PARAMS.match(inner)
        if not close or not m:
            raise ValueError(f"{text!r} is not a column type")
        p, s = m.group(1), m.group(2)
        text_base = f"{head} {tail}"
    else:
        text_base = text
    base = " ".join(text_base.upper().split())
    if base in ("DECIMAL", "NUMERIC", "DEC"):
        precision, scale = (int(p) if p else 10), (int(s) if s else 0)  # DECIMAL alone is DECIMAL(10,0) (SQL/Spark)
        if not 1 <= precision <= MAX_PRECISION or scale > precision:
            raise ValueError(f"{text!r}: DECIMAL needs 1 <= precision <= {MAX_PRECISION} and scale <= precision")
        return ColumnType(Kind.DECIMAL, precision, scale)
    if base not in _ALIASES:
        raise ValueError(f"{text!r} is not a column type (known: {', '.join(k.value for k in Kind)})")
    if s is not None:
        raise ValueError(f"{text!r}: only DECIMAL takes (precision, scale)")
    return _ALIASES[base]


_NUMERIC = frozenset({Kind.BIGINT, Kind.DECIMAL, Kind.DOUBLE})


def widen(a: ColumnType | None, b: ColumnType | None) -> ColumnType | None:
    """The narrowest type holding every value of `a` and of `b`. None (only nulls seen) decides nothing."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ka, kb = a.kind, b.kind
    if ka is Kind.STRING or kb is Kind.STRING:
        return STRING
    if ka in _NUMERIC and kb in _NUMERIC:
        if ka is Kind.DOUBLE or kb is Kind.DOUBLE:
            return DOUBLE
        return _merge_decimal(a, b)
    pair = {ka, kb}
    if pair == {Kind.DATE, Kind.TIMESTAMP}:
        return TIMESTAMP
    if pair == {Kind.DATE, Kind.TIMESTAMP_LTZ}:
        return TIMESTAMP_LTZ
    return STRING


def _merge_decimal(a: ColumnType, b: ColumnType) -> ColumnType:
    ia = BIGINT_DIGITS if a.kind is Kind.BIGINT else a.integer_digits
    ib = BIGINT_DIGITS if b.kind is Kind.BIGINT else b.integer_digits
    scale = max(a.scale or 0, b.scale or 0)
    return ColumnType.decimal(max(ia, ib) + scale, scale)  # integer digits and scale merge separately


def is_widening(old: ColumnType, new: ColumnType) -> bool:
    """True when `new` is strictly wider than `old` (every `old` value converts to `new` without loss)."""
    return old != new and widen(old, new) == new


def holds(wide: ColumnType, narrow: ColumnType | None) -> bool:
    """True when every value of `narrow` fits `wide` (equal types included)."""
    return narrow is None or widen(narrow, wide) == wide
