"""Stage 2 of decoding: turn a row image (JSON text) into typed columns, in Spark SQL.

The row is parsed once into a struct of STRING fields (each field's raw JSON text), then every column is cast
from its text by its *encoding* (how the wire carries the type). A non-null text whose cast comes out null is
a bad value: the record is reported, never silently nulled.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from cdcsync import columns as C

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # Avro's rule for Hudi column and table names; use fullmatch

# encodings: how the JSON value carries the column's type
PLAIN = "plain"  # JSON number/bool/string/ISO date text, cast to the type
JSON_TEXT = "json_text"  # nested object/array kept as its JSON text
DBZ_DECIMAL = "dbz_decimal"  # Kafka Connect Decimal: base64 big-endian two's complement unscaled value
DBZ_DATE = "dbz_date"  # days since epoch
DBZ_TS_MS, DBZ_TS_US, DBZ_TS_NS = "dbz_ts_ms", "dbz_ts_us", "dbz_ts_ns"
DBZ_TIME_MS, DBZ_TIME_US, DBZ_TIME_NS = "dbz_time_ms", "dbz_time_us", "dbz_time_ns"  # time of day → "HH:mm:ss.ffffff"
DBZ_ZONED = "dbz_zoned"  # ISO-8601 text with offset
DBZ_VARIABLE_DECIMAL = "dbz_variable_decimal"  # {"scale": s, "value": base64}: the scale varies, so exact text


@dataclass(frozen=True)
class Col:
    name: str
    type: str  # Spark SQL type: BIGINT, DOUBLE, DECIMAL(p,s), STRING, BOOLEAN, DATE, TIMESTAMP, BINARY
    encoding: str = PLAIN
    scale: int = 0  # DBZ_DECIMAL only (also when type is STRING because precision > 38)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any]) -> Col:
        return Col(**d)


def schema_to_json(cols: list[Col]) -> str:
    return json.dumps([c.to_json() for c in cols], separators=(",", ":"))


def schema_from_json(text: str | list[dict[str, Any]] | None) -> list[Col]:
    if not text:
        return []
    data = json.loads(text) if isinstance(text, str) else text
    return [Col.from_json(d) for d in data]


# from_json without options is split by Spark's optimizer (OptimizeJsonExprs) into one parse per field read: a row
# of 20 typed columns was parsed 20 times. Any option turns that off; this one is from_json's default.
ONE_PARSE = {"mode": "PERMISSIVE"}


def text_struct(names: list[str]) -> str:
    return "STRUCT<" + ", ".join(f"`{n}`: STRING" for n in names) + ">"


def convert(text: Column, col: Col, quoted: Column | None = None) -> Column:
    """The typed value of one column from its JSON text; `quoted`: was the value a JSON string (a Connect decimal
    is base64 text, or a JSON number with decimal.format=NUMERIC, and "99e9" is both)."""
    enc, t = col.encoding, col.type.upper()
    if enc == DBZ_DECIMAL:
        return _connect_decimal(text, col.scale, t, quoted)
    if enc == DBZ_VARIABLE_DECIMAL:
        digits = _unscaled_digits(F.get_json_object(text, "$.value"))
        return _place_point(digits, F.get_json_object(text, "$.scale").cast("int"))
    if enc == DBZ_DATE:
        return F.date_add(F.lit("1970-01-01").cast("date"), text.cast("int"))
    if enc == DBZ_TS_MS:
        return F.timestamp_millis(text.cast("long"))
    if enc == DBZ_TS_US:
        return F.timestamp_micros(text.cast("long"))
    if enc == DBZ_TS_NS:  # exact division: a double loses the last microsecond of today's nanosecond counts
        return F.timestamp_micros(F.floor(text.cast("decimal(20,0)") / F.lit(1000)).cast("long"))
    if enc in (DBZ_TIME_MS, DBZ_TIME_US, DBZ_TIME_NS):
        div = {DBZ_TIME_MS: 1 / 1000, DBZ_TIME_US: 1, DBZ_TIME_NS: 1000}[enc]
        micros = (text.cast("long") / div).cast("long") if div != 1 else text.cast("long")
        return F.date_format(F.timestamp_micros(micros), "HH:mm:ss.SSSSSS")
    if enc == DBZ_ZONED:
        return F.to_timestamp(text)
    if t == "STRING":
        return text
    if t == "TIMESTAMP":
        return F.to_timestamp(text)
    if t == "BOOLEAN":
        return F.when(F.lower(text).isin("true", "1"), True).when(F.lower(text).isin("false", "0"), False)
    if t == "BINARY":
        return base64_bytes(text)
    if t in ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT"):  # a cast would truncate 1.9 to 1 silently
        return F.when(text.rlike(r"^\s*-?[0-9]+(\.0+)?\s*$"), text.cast(t))
    return text.cast(t)


_BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$"


def base64_bytes(text: Column) -> Column:
    """The bytes of base64 text, NULL for anything else: Spark's unbase64 throws on a malformed last unit, which
    failed the whole batch instead of the one record."""
    return F.when(text.rlike(_BASE64), F.unbase64(text))


def _let(value: Column, body: Callable[[Column], Column]) -> Column:
    """body(value) with value computed once: Spark copies a Column into every place it is used, so nested reuse
    multiplied (one Connect decimal was a 318 KB expression, and a wide table's projection exhausted the heap)."""
    return F.transform(F.array(value), body)[0]


def _connect_decimal(text: Column, scale: int | Column, t: str, quoted: Column | None = None) -> Column:
    def decode(text: Column) -> Column:
        # plain JSON numbers also occur (decimal.format=NUMERIC): they are not base64, unless the JSON quoted them;
        # without the JSON at hand, four digits are taken for base64
        number = ~quoted if quoted is not None else ~text.rlike(r"^[0-9]{4}$")
        numeric = text.rlike(r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$") & number
        return F.when(numeric, text).otherwise(_place_point(_unscaled_digits(text), scale))

    value = _let(text, decode)
    return value if t == "STRING" else value.cast(t)


def _unscaled_digits(b64: Column) -> Column:
    """Base64 two's-complement bytes → the unscaled integer as decimal text, in the JVM (no Python UDF)."""
    return _let(F.hex(base64_bytes(b64)), _hex_twos_complement)


def _hex_twos_complement(hx: Column) -> Column:
    n = (F.length(hx) / 2).cast("int")
    negative = F.conv(hx.substr(F.lit(1), F.lit(2)), 16, 10).cast("int") >= 128
    inverted = F.translate(hx, "0123456789ABCDEF", "FEDCBA9876543210")  # ~x; a negative number is -(~x + 1)

    def byte(i: Column) -> Column:
        return F.conv(hx.substr(i * 2 + 1, F.lit(2)), 16, 10).cast("int")

    # every partial sum fits DECIMAL(38,0) up to 15 bytes (16 may reach 39 digits)
    def fold(read: Callable[[Column], Column]) -> Column:
        return F.aggregate(F.sequence(F.lit(0), n - 1), F.lit(0).cast("decimal(38,0)"),
                           lambda acc, i: (acc * 256 + read(i)).cast("decimal(38,0)"))

    small = F.when(negative, -(fold(lambda i: 255 - byte(i)) + 1)).otherwise(fold(byte))
    big = F.when(negative, F.concat(F.lit("-"), _plus_one(_hex_to_decimal(inverted)))).otherwise(_hex_to_decimal(hx))
    return (F.when(n == 0, F.lit(None)).when(n > 15, big)
            .otherwise(small.cast("decimal(38,0)").cast("string")))


def _hex_to_decimal(hex_digits: Column) -> Column:
    """Any number of hex digits → decimal text, by the JVM's BigInteger (beyond what DECIMAL(38) holds)."""
    return F.call_function("reflect", F.lit("org.apache.commons.lang3.math.NumberUtils"), F.lit("createBigInteger"),
                           F.concat(F.lit("0x"), hex_digits))


def _plus_one(digits: Column) -> Column:
    """Decimal text + 1: the digit before the trailing nines goes up by one, the nines become zeros."""
    return _let(digits, _plus_one_of)


def _plus_one_of(digits: Column) -> Column:
    head, nines = F.regexp_extract(digits, r"^([0-9]*?)(9*)$", 1), F.regexp_extract(digits, r"^([0-9]*?)(9*)$", 2)
    zeros = F.translate(nines, "9", "0")
    last = F.substring(head, -1, 1).cast("int") + 1
    bumped = F.concat(head.substr(F.lit(1), F.length(head) - 1), last.cast("string"), zeros)
    return F.when(head == "", F.concat(F.lit("1"), zeros)).otherwise(bumped)


def _place_point(digits: Column, scale: int | Column) -> Column:
    """The unscaled digits with `scale` of them after the point ("-120", 2 -> "-1.20"; "5", 3 -> "0.005")."""
    if isinstance(scale, int):
        if scale <= 0:
            return digits
        scale = F.lit(scale)
    return _let(F.struct(digits.alias("d"), scale.alias("s")), lambda ds: _point_placed(ds["d"], ds["s"]))


def _point_placed(digits: Column, scale: Column) -> Column:
    neg = digits.startswith("-")

    def placed(mag: Column) -> Column:
        keep = F.greatest(F.length(mag), scale + 1)  # at least one digit before the point
        zeros = F.concat(F.call_function("repeat", F.lit("0"), scale + 1), mag)

        def cut_at(padded: Column) -> Column:
            cut = F.length(padded) - scale
            body = F.concat(padded.substr(F.lit(1), cut), F.lit("."), padded.substr(cut + 1, scale))
            return F.when(scale <= 0, mag).otherwise(body)

        return _let(zeros.substr(F.length(zeros) - keep + 1, keep), cut_at)

    body = _let(F.when(neg, digits.substr(F.lit(2), F.length(digits))).otherwise(digits), placed)
    return F.when(digits.isNull() | scale.isNull(), None).when(neg, F.concat(F.lit("-"), body)).otherwise(body)


def typed_row(row_text: Column, cols: list[Col], versions: dict[int, list[Col]] | None = None) \
        -> tuple[list[Column], Column]:
    """([typed column per Col], array of names whose value could not be converted). With `versions` (a Debezium
    schema's xxhash64 → its columns), a record of a version whose column is carried differently is decoded by its
    own version's rule, then cast to the table's type."""
    parsed = F.from_json(row_text, text_struct([c.name for c in cols]), ONE_PARSE)
    typed, bad = [], []
    for c in cols:
        raw = parsed[c.name]
        others: dict[Col, list[int]] = {}  # a version's way of carrying the column → the versions carrying it so
        for h, vcols in (versions or {}).items():
            v = next((x for x in vcols if x.name == c.name), None)
            if v is not None and (v.type, v.encoding, v.scale) != (c.type, c.encoding, c.scale):
                others.setdefault(v, []).append(h)
        quoted = _is_json_string(row_text, c.name)
        val = _versioned(raw, c, others, quoted) if others else convert(raw, c, quoted)
        typed.append(val.alias(c.name))
        bad.append(F.when(raw.isNotNull() & val.isNull(), F.lit(c.name)))
    # array_except drops the NULLs and, unlike a lambda (filter), is compiled: a lambda's inputs, these
    # conversions, would be interpreted row by row
    no_name = F.array(F.lit(None).cast("string"))
    bad_arr = F.array_except(F.array(*bad), no_name) if bad else F.array().cast("array<string>")
    return typed, bad_arr


def _is_json_string(row_text: Column, name: str) -> Column:
    """Is the row's value of `name` a JSON string? (Read only where the text alone cannot tell: see convert.)"""
    literal = name.replace("\\E", "\\E\\\\E\\Q")  # \Q…\E quotes the name for the regex; a \E in it is escaped
    return row_text.rlike(f'"\\Q{literal}\\E"\\s*:\\s*"')


def _versioned(raw: Column, c: Col, others: dict[Col, list[int]], quoted: Column) -> Column:
    """`raw` decoded by its record's schema version. The decimal conversion is a large expression: every version
    carrying Connect decimals shares one, with the scale chosen per version, so the plan stays small."""
    version = F.xxhash64(F.col(C.SCHEMA))
    decimals = {v: hs for v, hs in others.items() if v.encoding == DBZ_DECIMAL}
    if decimals:
        scale = F.lit(c.scale if c.encoding == DBZ_DECIMAL else None).cast("int")
        for v, hs in decimals.items():
            scale = F.when(version.isin(*hs), F.lit(v.scale)).otherwise(scale)
        dec = _connect_decimal(raw, scale, c.type, quoted)
        mine = [h for hs in decimals.values() for h in hs]
        val = dec if c.encoding == DBZ_DECIMAL else F.when(version.isin(*mine), dec).otherwise(
            convert(raw, c, quoted))
    else:
        val = convert(raw, c, quoted)
    for v, hs in others.items():
        if v.encoding != DBZ_DECIMAL:
            val = F.when(version.isin(*hs), convert(raw, v, quoted).cast(c.type)).otherwise(val)
    return val
