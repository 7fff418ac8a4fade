"""What type one value shows: JSON values, text renderings (CSV, Canal) and decoded Python values.

Hot path of inference: dispatch on type() first, regexes only for strings that could be temporal or numeric.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from cdcsync.schema.types import (
    BIGINT,
    BIGINT_MAX,
    BIGINT_MIN,
    BINARY,
    BOOLEAN,
    DATE,
    DATE_PATTERN,
    DOUBLE,
    MAX_PRECISION,
    STRING,
    TIME,
    TIME_PATTERN,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TIMESTAMP_LTZ_PATTERN,
    TIMESTAMP_PATTERN,
    ColumnType,
    Kind,
    widen,
)

DECIMAL_38_0 = ColumnType.decimal(MAX_PRECISION, 0)

_DATE = re.compile(DATE_PATTERN)
_TS = re.compile(TIMESTAMP_PATTERN)
_TS_LTZ = re.compile(TIMESTAMP_LTZ_PATTERN)
_TIME = re.compile(TIME_PATTERN)
_INT_TEXT = re.compile(r"^[+-]?\d+$")
_NUM_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_DIGITS = frozenset("0123456789")


def integer_type(v: int) -> ColumnType:
    """BIGINT when it fits 64 bits, DECIMAL(38,0) up to 38 digits, STRING beyond."""
    if BIGINT_MIN <= v <= BIGINT_MAX:
        return BIGINT
    return DECIMAL_38_0 if len(str(abs(v))) <= MAX_PRECISION else STRING


def classify(v: Any) -> ColumnType | None:  # Any: the dispatch on type(v) below is one mypy cannot narrow by
    """Type of one JSON (or decoded Python) value; None for null."""
    t = type(v)
    if t is str:
        return classify_string(v)
    if t is int:
        return integer_type(v)
    if t is float:
        return DOUBLE
    if t is bool:
        return BOOLEAN
    if v is None:
        return None
    if t is dict or t is list:
        return STRING  # nested values are kept as JSON text unless flattening is on
    if t is Decimal:
        return decimal_type(v)
    if t is dt.datetime:
        return TIMESTAMP_LTZ if v.tzinfo is not None else TIMESTAMP
    if t is dt.date:
        return DATE
    if t is dt.time:
        return TIME
    if t is bytes or t is bytearray:
        return BINARY
    return STRING


def classify_string(s: str) -> ColumnType:
    """STRING unless the whole string is a valid date, timestamp (with or without offset) or time of day."""
    n = len(s)
    if n < 8 or s[0] not in _DIGITS:
        return STRING
    if s[2] == ":":
        return TIME if _TIME.match(s) and _valid_time(s) else STRING
    if n == 10:
        return DATE if _DATE.match(s) and _valid_date(s) else STRING
    if n < 16 or s[4] != "-":
        return STRING
    if _TS.match(s):
        return TIMESTAMP if _valid_date(s) and _valid_time(s[11:]) else STRING
    if _TS_LTZ.match(s):
        return TIMESTAMP_LTZ if _valid_date(s) and _valid_time(s[11:]) else STRING
    return STRING


def classify_text(s: str, keep_leading_zeros: bool = True) -> ColumnType:
    """Type of a text rendering (CSV field, Canal value): booleans and numbers are parsed from the text.

    Integers with a leading zero ("007", zip codes) stay STRING unless `keep_leading_zeros` is False.
    """
    if not s:
        return STRING
    c = s[0]
    if c in _DIGITS or c in "+-.":
        if _INT_TEXT.match(s):
            digits = s.lstrip("+-")
            if keep_leading_zeros and len(digits) > 1 and digits[0] == "0":
                return STRING
            return integer_type(int(s))
        if _NUM_TEXT.match(s):
            return DOUBLE
        return classify_string(s)
    low = s.lower()
    if low == "true" or low == "false":
        return BOOLEAN
    if low in ("nan", "infinity", "-infinity", "+infinity"):
        return DOUBLE
    return STRING


def decimal_type(d: Decimal) -> ColumnType | None:
    """The exact DECIMAL(p,s) of a decimal literal (trailing fractional zeros dropped); DOUBLE for NaN/Infinity."""
    sign, digits, exp = d.as_tuple()
    if not isinstance(exp, int):  # NaN ('n', 'N') or Infinity ('F'): not finite
        return DOUBLE
    while exp < 0 and len(digits) > 1 and digits[-1] == 0:  # 1.50 needs scale 1, not 2
        digits, exp = digits[:-1], exp + 1
    if exp >= 0:
        precision = len(digits) + exp if digits != (0,) else 1
        return ColumnType.decimal(precision, 0)
    return ColumnType.decimal(max(len(digits), -exp), -exp)


def exact_decimal_type(v: object) -> ColumnType | None:
    """DECIMAL(p,s) of a number or numeric text as written, None when it is not a finite number."""
    if isinstance(v, bool):
        return None
    if isinstance(v, float):
        v = repr(v)  # shortest round-trip form: what the JSON text said, for any literal a double holds exactly
    if isinstance(v, (int, str)):
        try:
            v = Decimal(v.strip() if isinstance(v, str) else v)
        except (InvalidOperation, ValueError):
            return None
    if isinstance(v, Decimal) and v.is_finite():
        return decimal_type(v)
    return None


def seen_type_for(declared: ColumnType, v: object) -> ColumnType | None:
    """The type `v` shows when read as `declared` would read it: exact decimals, numbers and booleans in strings.

    A declared type parses strings (Flink's JSON format does the same), so strings are read as text here.
    """
    if v is None:
        return None
    kind = declared.kind
    if kind is Kind.DECIMAL:
        exact = exact_decimal_type(v)
        return exact if exact is not None else (classify_text(v) if isinstance(v, str) else classify(v))
    if kind is Kind.BINARY and isinstance(v, str):
        return BINARY if _is_base64(v) else STRING
    if isinstance(v, str):
        if kind is Kind.BOOLEAN and v in ("0", "1"):
            return BOOLEAN
        return classify_text(v, keep_leading_zeros=False)
    return classify(v)


def fits(declared: ColumnType, v: object) -> bool:
    """Does `declared` read `v` without loss?"""
    if declared.kind is Kind.STRING or v is None:
        return True
    seen = seen_type_for(declared, v)
    return widen(seen, declared) == declared


def text_type(v: object, text: bool, primitive_as_string: bool) -> ColumnType | None:
    """Type of a data value under the format's value convention and the primitive_as_string option."""
    if v is None:
        return None
    if primitive_as_string:
        return STRING
    if text and type(v) is str:
        return classify_text(v)
    return classify(v)


def _is_base64(s: str) -> bool:
    try:
        base64.b64decode(s, validate=True)
        return True
    except (binascii.Error, ValueError):
        return False


_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _valid_date(s: str) -> bool:
    month, day = int(s[5:7]), int(s[8:10])
    if not (1 <= month <= 12 and 1 <= day <= _DAYS[month - 1]):
        return False
    if month == 2 and day == 29:
        year = int(s[0:4])
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return True


def _valid_time(s: str) -> bool:
    hour, minute = int(s[0:2]), int(s[3:5])
    second = int(s[6:8]) if len(s) >= 8 and s[5] == ":" else 0
    return hour < 24 and minute < 60 and second < 60
