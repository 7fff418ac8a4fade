"""Spark 3.5's JSON schema inference (JsonInferSchema), in Python and without a JVM: the type `run` gives a column
of schemaless row images (schema/spark/infer.py reads them with `dropFieldIfAllNull`, `prefersDecimal = false`),
so that infer-schema predicts it.

It differs from infer-schema's own reading of the values (schema/values.py) where Spark does not look inside a
string: a JSON string is STRING whatever it holds (a date, a number, a boolean as text); an integer past BIGINT is
DECIMAL(its digits, 0), beside a BIGINT at least DECIMAL(20,0), and past 38 digits DOUBLE, as is a decimal merge
needing more than 38 digits; a field holding only nulls, empty strings, empty objects and empty arrays is no
column at all (Spark infers "" as a null).

A type here is None (Spark's NullType), LONG, DOUBLE, BOOLEAN, TEXT, ("decimal", precision, scale),
("struct", {name: type}) or ("array", element type).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, cast

from cdcsync.schema.types import BIGINT, BIGINT_MAX, BIGINT_MIN, BOOLEAN, DOUBLE, MAX_PRECISION, STRING, ColumnType

LONG, FLOAT, BOOL, TEXT = "long", "double", "boolean", "string"
# those types, None (NullType) aside: a struct's fields and an array's element may be None again
JsonDecimal: TypeAlias = "tuple[Literal['decimal'], int, int]"
JsonStruct: TypeAlias = "tuple[Literal['struct'], dict[str, JsonType | None]]"
JsonArray: TypeAlias = "tuple[Literal['array'], JsonType | None]"
JsonType: TypeAlias = "str | JsonDecimal | JsonStruct | JsonArray"
_LONG_DIGITS = 20  # DecimalType.forType(LongType): DECIMAL(20,0)


def value_type(v: Any) -> JsonType | None:
    """The type Spark's JSON inference gives one JSON value (as json.loads returns it)."""
    t = type(v)
    if v is None:
        return None
    if t is bool:
        return BOOL
    if t is int:
        if BIGINT_MIN <= v <= BIGINT_MAX:
            return LONG
        digits = len(str(abs(v)))
        return ("decimal", digits, 0) if digits <= MAX_PRECISION else FLOAT
    if t is float:
        return FLOAT
    if t is str:
        return TEXT if v else None  # Spark reads "" as a null: some JSON writers cannot tell them apart
    if t is dict:
        return ("struct", {k: value_type(x) for k, x in v.items()})
    if t is list:
        element: JsonType | None = None
        for x in v:
            element = merge(element, value_type(x))
        return ("array", element)
    return TEXT  # a decoded value of another kind (a format that carries its types does not come here)


def merge(a: JsonType | None, b: JsonType | None) -> JsonType | None:
    """JsonInferSchema.compatibleType: the type of a field that holds values of types `a` and `b`."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ta, tb = _kind(a), _kind(b)
    if {ta, tb} <= {LONG, FLOAT, "decimal"}:
        if FLOAT in (ta, tb):
            return FLOAT
        if LONG in (ta, tb):  # an integral beside a decimal: the decimal when it holds every long, else both merged
            dec = cast("JsonDecimal", a if ta == "decimal" else b)  # the kinds (_kind) say which is the decimal
            if dec[1] - dec[2] >= _LONG_DIGITS:
                return dec
            return _merge_decimals(("decimal", _LONG_DIGITS, 0), dec)
        return _merge_decimals(cast("JsonDecimal", a), cast("JsonDecimal", b))  # both decimals, by their kinds
    if ta == tb == "struct":  # the casts: mypy does not narrow a and b by their kinds
        fields = dict(cast("JsonStruct", a)[1])
        for k, t in cast("JsonStruct", b)[1].items():
            fields[k] = merge(fields.get(k), t)
        return ("struct", fields)
    if ta == tb == "array":
        return ("array", merge(cast("JsonArray", a)[1], cast("JsonArray", b)[1]))
    return TEXT


def _kind(t: JsonType) -> str:
    return t[0] if isinstance(t, tuple) else t


def _merge_decimals(a: JsonDecimal, b: JsonDecimal) -> JsonType:
    scale = max(a[2], b[2])
    integral = max(a[1] - a[2], b[1] - b[2])
    return FLOAT if integral + scale > MAX_PRECISION else ("decimal", integral + scale, scale)


def canonical(t: JsonType | None) -> JsonType | None:
    """The type after Spark drops what holds no value (canonicalizeType with dropFieldIfAllNull): None for a field
    that is never a column."""
    if isinstance(t, tuple) and t[0] == "array":
        inner = canonical(t[1])
        return None if inner is None else ("array", inner)
    if isinstance(t, tuple) and t[0] == "struct":
        fields: dict[str, JsonType | None] = {k: c for k, x in t[1].items() if k and (c := canonical(x)) is not None}
        return ("struct", fields) if fields else None
    return t


def column_type(t: JsonType | None) -> ColumnType | None:
    """The column `run` makes of a top-level field of type `t` (schema/spark/infer.py from_spark_type: an object
    or array is its JSON text); None: no column."""
    t = canonical(t)
    if t is None:
        return None
    kind = _kind(t)
    if kind == "decimal":
        decimal = cast("JsonDecimal", t)  # its kind says so
        return ColumnType.decimal(decimal[1], decimal[2])
    return {LONG: BIGINT, FLOAT: DOUBLE, BOOL: BOOLEAN}.get(kind, STRING)


def is_text(t: JsonType | None) -> bool:
    """Does a field of type `t` become a STRING column of plain values (not an object's or array's JSON text)?"""
    return canonical(t) == TEXT


_NON_NUMERIC = frozenset({"NaN", "+INF", "+Infinity", "Infinity", "-INF", "-Infinity"})


def vote(counts: list[int], v: Any) -> None:
    """Count `v` into [BIGINT, DOUBLE, BOOLEAN] when Spark's from_json reads it as that type (the run's vote on a
    new key column's type, stages/type_conflicts.py): an integer within BIGINT; any number, or the text of NaN or
    an infinity; true or false."""
    t = type(v)
    if t is int:
        counts[0] += BIGINT_MIN <= v <= BIGINT_MAX
        counts[1] += 1
    elif t is float or t is str and v in _NON_NUMERIC:
        counts[1] += 1
    elif t is bool:
        counts[2] += 1


def utf16(name: str) -> bytes:
    """A sort key ordering names as Java's String.compareTo does (Spark sorts the inferred fields so)."""
    return name.encode("utf-16-be", "surrogatepass")
