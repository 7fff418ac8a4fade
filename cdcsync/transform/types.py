"""The table's columns after [transform] sql, typed without a JVM (`infer-schema`): sqlglot qualifies the SELECT over
the view `source` typed as the run types it (stages/typed.py `view`: the source's columns as ColumnType.spark_ddl(),
a [schema.columns] column no change carried yet, then the metadata columns as Spark's Kafka source types them) and
annotates each output column, with Spark 3.5's (non-ANSI) rules where sqlglot's differ, each checked against a local
Spark 3.5.7: numeric literals (1.5 is DECIMAL(2,1)), decimal arithmetic (DecimalPrecision), a string in arithmetic,
common types (COALESCE, CASE, IF, GREATEST, array()), ROUND / FLOOR / CEIL, date parts (INT), trunc (DATE), functions
sqlglot does not know (hash, timestamp_millis, …). What it still cannot type stays untyped (`Typed.spark_type` None,
`why` says so): Spark decides its type when the run analyses the SELECT. No guess is rendered as a type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from cdcsync import columns as C
from cdcsync.errors import ConfigError
from cdcsync.schema.model import DECLARED, KAFKA, TRANSFORM, ColumnSchema, TableSchema
from cdcsync.schema.types import ColumnType, parse_type
from cdcsync.transform.sql import VIEW, Transform

if TYPE_CHECKING:
    from sqlglot.optimizer.annotate_types import TypeAnnotator

# [source] metadata_columns: the view's name of each and its Spark type (as Spark's Kafka source types them)
META: dict[str, tuple[str, str]] = {m: (C.METADATA[m], t) for m, t in {
    "topic": "STRING", "partition": "INT", "offset": "BIGINT", "timestamp": "TIMESTAMP", "timestamp-type": "INT",
    "key": "BINARY", "headers": "ARRAY<STRUCT<key: STRING, value: BINARY>>"}.items()}
_MAY_BE_NULL = {"headers", "key"}  # a record without a key; every other field is set on every record

UNKNOWN = "UNKNOWN"  # a view column's type nobody knows (one the sample lacks)


@dataclass(frozen=True)
class Typed:
    """One column of the table: its name, its Spark type (DDL text; None when only Spark can tell, see `why`), the
    view column it passes through unchanged (if it does) and its expression as Spark SQL."""

    name: str
    spark_type: str | None
    passes: str | None
    sql: str
    why: str | None = None


def metadata_view(metadata: list[str]) -> dict[str, str]:
    """The configured metadata columns, name → Spark type, in the view's order (the offset last, as the run)."""
    ordered = [m for m in metadata if m != "offset"] + (["offset"] if "offset" in metadata else [])
    return dict(META[m] for m in ordered if m in META)


def type_columns(transform: Transform, view: dict[str, str]) -> list[Typed]:
    """The table's columns over a view of columns name → Spark type: `*` expanded in place, each typed."""
    outputs = transform.columns(list(view))
    lacking = sorted(transform.referenced() - set(view))
    schema: dict[str, object] = {VIEW: {**view, **dict.fromkeys(lacking, UNKNOWN)}}
    # positional aliases: sqlglot normalizes identifiers (Spark's are case-insensitive), the names stay ours
    select = exp.select(*[exp.alias_(o.expression.copy(), f"_c{i}", quoted=True) for i, o in enumerate(outputs)])
    try:
        typed = annotate_types(qualify(select.from_(VIEW), schema=schema, dialect="spark"), schema=schema,
                               expression_metadata=_METADATA, dialect="spark")
        types: list[exp.DataType | None] = [s.type for s in typed.selects]
        failed = None
    except SqlglotError as e:  # not expected of a SELECT parse() accepted: say so rather than type anything
        types, failed = [None] * len(outputs), f"sqlglot cannot type the SELECT ({str(e).splitlines()[0]})"
    out = []
    for o, t in zip(outputs, types, strict=True):
        sql = o.expression.sql(dialect="spark")
        text = spark_text(t) if t is not None else None
        reads = sorted({c.parts[0].name for c in o.expression.find_all(exp.Column)} & set(lacking))
        why = failed or (None if text else "infer-schema's typing rules do not cover it: Spark decides its "
                         "type when the run analyses the SELECT")
        if reads:
            text, why = None, f"it reads {', '.join(map(repr, reads))}, which no sampled record has"
        elif t is not None and t.is_type(exp.DType.NULL):
            why = "a bare NULL has Spark's type VOID, which a table cannot store: CAST it to the type meant"
        out.append(Typed(o.name, text, o.passes, sql, why))
    return out


def spark_text(t: exp.DataType) -> str | None:
    """A sqlglot type as Spark DDL, as Spark names it (VARCHAR is STRING, DECIMAL alone DECIMAL(10,0)); None when
    any part of it is UNKNOWN or it is VOID (a bare NULL)."""
    if any(d.this in (exp.DType.UNKNOWN, exp.DType.NULL) for d in t.find_all(exp.DataType)):
        return None
    t = t.copy().transform(lambda d: exp.DataType.build(_SCALAR[d.this]) if isinstance(d, exp.DataType)
                           and d.this in _SCALAR else d)
    return re.sub(r"\bDECIMAL\b(?:\((\d+), (\d+)\))?", lambda m: f"DECIMAL({m[1] or 10},{m[2] or 0})",
                  t.sql(dialect="spark"))


def vocabulary(spark: str | None) -> ColumnType | None:
    """The inference vocabulary's type for a Spark type when it is that type exactly (BIGINT, DECIMAL(p,s),
    DOUBLE, STRING, BOOLEAN, DATE, TIMESTAMP, BINARY); None for others (INT, FLOAT, ARRAY<…>, …)."""
    exact = r"BIGINT|DOUBLE|STRING|BOOLEAN|DATE|TIMESTAMP|BINARY|DECIMAL\(\d+,\d+\)"
    return parse_type(spark) if spark is not None and re.fullmatch(exact, spark) else None


def project(table: TableSchema, transform: Transform, metadata: list[str],
            declared: dict[str, ColumnType]) -> Projection:
    """`table` (a source table as infer-schema inferred it) as [transform] sql makes it: a column passed through
    keeps the source's facts under its new name, a computed one carries its expression and Spark type."""
    cols = {c.name: c for c in table.columns.values()}
    view = {name: c.effective_type.spark_ddl() for name, c in cols.items()}
    unseen = {n: t for n, t in declared.items() if n not in view}  # the run's view has them before any change does
    view |= {n: t.spark_ddl() for n, t in unseen.items()}
    view |= (meta := {n: t for n, t in metadata_view(metadata).items() if n not in view})
    refused = None
    try:  # what the run refuses of this table: the run's own check
        transform.bind(list(view), ansi=False, through=table.primary_key or [])
    except ConfigError as e:
        refused = e
    typed = type_columns(transform, view)
    out: dict[str, ColumnSchema] = {}
    for t in typed:
        if t.passes in cols:
            out[t.name] = replace(cols[t.passes], name=t.name)
        elif t.passes in unseen:
            out[t.name] = ColumnSchema(t.name, unseen[t.passes], origin=DECLARED)
        elif t.passes in meta:
            always = t.passes not in {META[m][0] for m in _MAY_BE_NULL}
            out[t.name] = ColumnSchema(t.name, vocabulary(meta[t.passes]), nullable=not always, origin=KAFKA,
                                       samples=table.records if always else 0, spark_type=meta[t.passes])
        else:  # computed: nullable, as a function of nullable columns (or a failed conversion) is
            out[t.name] = ColumnSchema(t.name, vocabulary(t.spark_type), origin=TRANSFORM, computed=t.sql,
                                       spark_type=t.spark_type)
    return Projection(TableSchema(table.name, out, table.primary_key, table.records, transform=transform.key),
                      typed, refused)


@dataclass(frozen=True)
class Projection:
    """A source table through [transform] sql: the table, its typed columns, and the error the run would stop with
    on this table's changes (a column the SELECT reads that the sample lacks, a key column it does not pass)."""

    table: TableSchema
    columns: list[Typed]
    refused: ConfigError | None = None


# -- Spark's typing rules where sqlglot's differ -------------------------------------------------------------------

D = exp.DType
_SCALAR = {**dict.fromkeys((D.VARCHAR, D.CHAR, D.NCHAR, D.NVARCHAR, D.TEXT), "STRING"), D.VARBINARY: "BINARY",
           **dict.fromkeys((D.TIMESTAMPTZ, D.TIMESTAMPLTZ, D.DATETIME), "TIMESTAMP")}
_INTEGRAL_DIGITS = {D.TINYINT: 3, D.SMALLINT: 5, D.INT: 10, D.BIGINT: 20}  # Spark's decimal for each integer type
_WIDEST = list(_INTEGRAL_DIGITS).index  # the key of max(): BIGINT over INT over …
_FLOATING, _TEXT, _NUMERIC = {D.FLOAT, D.DOUBLE}, set(exp.DataType.TEXT_TYPES), set(exp.DataType.NUMERIC_TYPES)
_TEMPORAL = {D.DATE, D.TIMESTAMP, D.TIMESTAMPTZ, D.TIMESTAMPLTZ, D.TIMESTAMPNTZ, D.DATETIME}
MAX_PRECISION, MIN_ADJUSTED_SCALE = 38, 6
_BASE = Spark.EXPRESSION_METADATA


def _t(node: exp.Expr) -> exp.DataType:
    return node.type or exp.DataType.build("unknown")


def _decimal(p: int, s: int) -> exp.DataType:
    return exp.DataType.build(f"DECIMAL({p}, {s})")


def _params(t: exp.DataType) -> tuple[int, int]:  # DECIMAL alone is DECIMAL(10,0)
    p, s = ([int(x.name) for x in t.expressions] + [10, 0][len(t.expressions):])[:2]
    return p, s


def _adjusted(p: int, s: int) -> exp.DataType:
    """Spark's DecimalType.adjustPrecisionScale (spark.sql.decimalOperations.allowPrecisionLoss, the default)."""
    if p <= MAX_PRECISION:
        return _decimal(p, s)
    digits = p - s
    return _decimal(MAX_PRECISION, max(MAX_PRECISION - digits, min(s, MIN_ADJUSTED_SCALE)))


def _integer_literal(node: exp.Expr) -> int | None:
    """The value of an integer literal as Spark reads one (-2, 1L, 1S are literals), else None."""
    if isinstance(node, exp.Paren):
        return _integer_literal(node.this)
    if isinstance(node, exp.Neg):
        v = _integer_literal(node.this)
        return None if v is None else -v
    if isinstance(node, exp.Cast) and node.to.this in _INTEGRAL_DIGITS:
        return _integer_literal(node.this)
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.this)
    return None


def _as_decimal(node: exp.Expr, exact_literal: bool) -> tuple[int, int] | None:
    """(precision, scale) of an operand widened to a decimal (an integer literal with its own digits when
    `exact_literal`, as DecimalPrecision beside a decimal); None for an inexact one."""
    t = _t(node)
    if t.this == D.DECIMAL:
        return _params(t)
    if t.this in _INTEGRAL_DIGITS:
        v = _integer_literal(node) if exact_literal else None
        return (len(str(abs(v))), 0) if v is not None else (_INTEGRAL_DIGITS[t.this], 0)
    return None


def _arithmetic(self: TypeAnnotator, e: exp.Expr) -> exp.Expr:
    left, right = e.this, e.expression
    kinds = {_t(left).this, _t(right).this}
    if D.UNKNOWN in kinds:
        return self._set_type(e, D.UNKNOWN)
    if isinstance(e, exp.Sub) and kinds <= _TEMPORAL:  # date - date, ts - ts: an interval
        return self._set_type(e, exp.DataType.build("INTERVAL DAY" if kinds == {D.DATE} else "INTERVAL DAY TO SECOND",
                                                    dialect="spark"))
    if kinds & _TEXT and kinds <= _NUMERIC | _TEXT:  # a string in arithmetic is cast to DOUBLE
        return self._set_type(e, D.DOUBLE)
    if D.DECIMAL in kinds and kinds & _FLOATING:
        return self._set_type(e, D.DOUBLE)
    a, b = _as_decimal(left, True), _as_decimal(right, True)
    if D.DECIMAL in kinds and a and b:
        (p1, s1), (p2, s2) = a, b
        if isinstance(e, exp.Add | exp.Sub | exp.SafeAdd | exp.SafeSubtract):
            s = max(s1, s2)
            return self._set_type(e, _adjusted(max(p1 - s1, p2 - s2) + s + 1, s))
        if isinstance(e, exp.Mul | exp.SafeMultiply):
            return self._set_type(e, _adjusted(p1 + p2 + 1, s1 + s2))
        if isinstance(e, exp.Div | exp.SafeDivide):
            s = max(MIN_ADJUSTED_SCALE, s1 + p2 + 1)
            return self._set_type(e, _adjusted(p1 - s1 + s2 + s, s))
        if isinstance(e, exp.Mod):
            s = max(s1, s2)
            return self._set_type(e, _adjusted(min(p1 - s1, p2 - s2) + s, s))
    if isinstance(e, exp.SafeDivide) and kinds <= _NUMERIC:  # try_divide: as `/`
        return self._set_type(e, D.DOUBLE)
    if isinstance(e, exp.SafeAdd | exp.SafeSubtract | exp.SafeMultiply) and kinds <= set(_INTEGRAL_DIGITS):
        return self._set_type(e, max(kinds, key=_WIDEST))
    return _default(self, e)


def _integer(v: int) -> exp.DataType | exp.DType:
    """An integer literal's type: INT, BIGINT, else a decimal of its digits."""
    digits = len(str(abs(v)))
    return D.INT if -(2**31) <= v < 2**31 else D.BIGINT if -(2**63) <= v < 2**63 else _decimal(digits, 0) \
        if digits <= MAX_PRECISION else D.DOUBLE


def _literal(self: TypeAnnotator, e: exp.Literal) -> exp.Expr:
    if e.is_string:
        return _default(self, e)
    text = e.this
    if e.is_int:
        self._set_type(e, _integer(int(text)))
    elif "e" in text.lower():
        self._set_type(e, D.DOUBLE)
    else:
        d = Decimal(text).as_tuple()
        assert isinstance(d.exponent, int)  # a numeric literal: never NaN or Infinity (whose exponent is a letter)
        scale = max(-d.exponent, 0)
        precision = max(len(d.digits), scale, 1)
        self._set_type(e, _decimal(precision, scale) if precision <= MAX_PRECISION else D.DOUBLE)
    e.meta["nonnull"] = True
    return e


def _common(self: TypeAnnotator, e: exp.Expr, nodes: list[exp.Expr]) -> exp.Expr:
    """Spark's common type of the values a COALESCE, CASE, IF, GREATEST … chooses from (findWiderCommonType)."""
    types = [_t(n) for n in nodes]
    if any(t.this == D.UNKNOWN for t in types):
        return self._set_type(e, D.UNKNOWN)
    known = [t for t in types if t.this != D.NULL]
    if not known:
        return self._set_type(e, D.NULL)
    kinds = {t.this for t in known}
    if len({t.sql("spark") for t in known}) == 1:
        return self._set_type(e, known[0])
    if kinds & _TEXT and not any(t.is_type(*exp.DataType.NESTED_TYPES) or t.this == D.BINARY for t in known):
        return self._set_type(e, D.TEXT)  # every atomic type meets a string at STRING
    if kinds <= _NUMERIC:
        if kinds & _FLOATING:  # numeric precedence: … BIGINT < FLOAT < DOUBLE; a decimal meets a float at DOUBLE
            return self._set_type(e, D.DOUBLE if kinds & {D.DOUBLE, D.DECIMAL} else D.FLOAT)
        if D.DECIMAL in kinds:
            widths = [_as_decimal(n, False) for n, t in zip(nodes, types, strict=True) if t.this != D.NULL]
            if all(widths):
                s = max(w[1] for w in widths if w)
                digits = max(w[0] - w[1] for w in widths if w)
                return self._set_type(e, _decimal(min(digits + s, MAX_PRECISION), min(s, MAX_PRECISION)))
        if kinds <= set(_INTEGRAL_DIGITS):
            return self._set_type(e, max(kinds, key=_WIDEST))
    if kinds == {D.DATE, D.TIMESTAMP} or kinds == {D.DATE, D.TIMESTAMPTZ}:
        return self._set_type(e, D.TIMESTAMP)
    return _default(self, e)


def _array(self: TypeAnnotator, e: exp.Array) -> exp.Expr:
    if not e.expressions:
        return _default(self, e)
    element = _common(self, e, e.expressions).type
    return self._set_type(e, D.UNKNOWN if element is None or element.this in (D.UNKNOWN, D.NULL) else
                          exp.DataType(this=D.ARRAY, expressions=[element], nested=True))


def _rounded(self: TypeAnnotator, e: exp.Expr, value: exp.Expr, scale: exp.Expr | None,
             keeps_integral: bool) -> exp.Expr:
    """ROUND / BROUND (`keeps_integral`: an integer stays one) and FLOOR / CEIL with a scale: Spark's RoundBase."""
    t = _t(value)
    if t.this == D.UNKNOWN:
        return self._set_type(e, D.UNKNOWN)
    if t.this in _TEXT:
        t = exp.DataType.build("double")
    if keeps_integral and t.this in {*_INTEGRAL_DIGITS, *_FLOATING}:
        return self._set_type(e, t)
    p, s = _params(t) if t.this == D.DECIMAL else (_INTEGRAL_DIGITS[t.this], 0) if t.this in _INTEGRAL_DIGITS \
        else {D.DOUBLE: (30, 15), D.FLOAT: (14, 7)}.get(t.this, (0, 0))  # a double rounds as DECIMAL(30,15)
    if not p:
        return _default(self, e)
    n = 0 if scale is None else _integer_literal(scale)
    if n is None:  # Spark wants a constant scale
        return self._set_type(e, D.UNKNOWN)
    digits = p - s + 1  # rounding may carry into one more integer digit (ceil(9.9) = 10)
    if n < 0:
        return self._set_type(e, _decimal(min(max(digits, -n + 1), MAX_PRECISION), 0))
    s2 = min(s, n)
    return self._set_type(e, _decimal(min(digits + s2, MAX_PRECISION), s2))


def _floor_ceil(self: TypeAnnotator, e: exp.Floor | exp.Ceil) -> exp.Expr:
    if e.args.get("decimals") is not None:
        return _rounded(self, e, e.this, e.args["decimals"], keeps_integral=False)
    t = _t(e.this)
    if t.this == D.DECIMAL:
        p, s = _params(t)
        return self._set_type(e, _decimal(min(p - s + 1, MAX_PRECISION), 0))
    if t.this == D.UNKNOWN:
        return self._set_type(e, D.UNKNOWN)
    return self._set_type(e, D.BIGINT)


def _function(self: TypeAnnotator, e: exp.Anonymous) -> exp.Expr:
    """Spark functions sqlglot parses as unknown ones."""
    name, args = e.name.lower(), e.expressions
    fixed = _FUNCTIONS.get(name)
    if fixed is not None:
        return self._set_type(e, exp.DataType.build(fixed))
    if name == "bround" and args:
        return _rounded(self, e, args[0], args[1] if len(args) > 1 else None, keeps_integral=True)
    if name in ("positive", "negative") and len(args) == 1:
        return self._set_type(e, _t(args[0]))
    if name == "pmod" and len(args) == 2:
        mod = exp.Mod(this=args[0], expression=args[1])  # the same type as %
        return self._set_type(e, _arithmetic(self, mod).type)
    return _default(self, e)


_FUNCTIONS = {  # name → the type Spark 3.5 gives whatever the arguments
    "hash": "INT", "xxhash64": "BIGINT", "crc32": "BIGINT", "isnull": "BOOLEAN", "isnotnull": "BOOLEAN",
    "octet_length": "INT", "weekday": "INT", "timestamp_millis": "TIMESTAMP", "timestamp_seconds": "TIMESTAMP",
    "timestamp_micros": "TIMESTAMP", "try_to_timestamp": "TIMESTAMP", "make_date": "DATE", "format_number": "STRING",
    "conv": "STRING", "btrim": "STRING", "e": "DOUBLE", "bigint": "BIGINT", "smallint": "SMALLINT",
    "tinyint": "TINYINT", "binary": "BINARY", "decimal": "DECIMAL(10, 0)"}


def _default(self: TypeAnnotator, e: exp.Expr) -> exp.Expr:
    """sqlglot's own Spark typing of `e`."""
    spec = _BASE.get(type(e)) or {}
    if spec.get("annotator"):
        return cast("exp.Expr", spec["annotator"](self, e))  # sqlglot's annotators return the node they typed
    return self._set_type(e, spec.get("returns") or D.UNKNOWN)


_METADATA: dict[type[exp.Expr], dict[str, Any]] = {
    **_BASE,
    **{k: {"annotator": _arithmetic} for k in (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.SafeAdd,
                                               exp.SafeSubtract, exp.SafeMultiply, exp.SafeDivide)},
    exp.Literal: {"annotator": _literal},
    **{k: {"annotator": lambda self, e: _common(self, e, [e.this, *e.expressions])}
       for k in (exp.Coalesce, exp.Greatest, exp.Least)},
    **{k: {"annotator": lambda self, e: _common(self, e, [e.args["true"], *filter(None, [e.args.get("false")])])}
       for k in (exp.If, exp.Nvl2)},
    exp.Case: {"annotator": lambda self, e: _common(self, e, [i.args["true"] for i in e.args.get("ifs") or []]
                                                    + list(filter(None, [e.args.get("default")])))},
    exp.DecodeCase: {"annotator": lambda self, e: _common(  # decode(x, search, result, …[, default]): the results
        self, e, e.expressions[2::2] + (e.expressions[-1:] if len(e.expressions) % 2 == 0 else []))},
    exp.Array: {"annotator": _array},
    exp.Round: {"annotator": lambda self, e: _rounded(self, e, e.this, e.args.get("decimals"), keeps_integral=True)},
    **{k: {"annotator": _floor_ceil} for k in (exp.Floor, exp.Ceil)},
    exp.Anonymous: {"annotator": _function},
    exp.Neg: {"annotator": lambda self, e: self._set_type(e, _integer(-int(e.this.this))) if isinstance(
        e.this, exp.Literal) and e.this.is_int else _default(self, e)},  # Spark reads -2147483648 as one INT
    exp.Negative: {"annotator": lambda self, e: self._set_type(e, _t(e.this))},
    # decode(binary, charset), split_part, substring_index; to_utc_timestamp, make_timestamp, date_trunc; trunc
    **{k: {"returns": D.TEXT} for k in (exp.Decode, exp.SplitPart, exp.SubstringIndex)},
    **{k: {"returns": D.TIMESTAMP} for k in (exp.FromTimeZone, exp.TimestampFromParts, exp.TimestampTrunc)},
    exp.DateTrunc: {"returns": D.DATE},
    **{k: {"returns": D.BIGINT} for k in (exp.WidthBucket, exp.TimestampDiff)},
    **{k: {"returns": D.INT} for k in (exp.Year, exp.Quarter, exp.Month, exp.Day, exp.DayOfMonth, exp.DayOfWeek,
                                       exp.DayOfYear, exp.WeekOfYear, exp.Hour, exp.Minute, exp.Second,
                                       exp.BitwiseCount)},
}
