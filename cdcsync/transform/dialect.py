"""Spark's SQL dialect as [transform] sql is handed to Spark: sqlglot's, with casts, to_date and datetime patterns
written back as the user wrote them (transform/sql.py parses with it and renders every expression through it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel

if TYPE_CHECKING:
    from sqlglot import generator


def _to_date(self: generator.Generator, e: exp.TsOrDsToDate) -> str:
    """to_date as written: sqlglot drops a format equal to Spark's default (yyyy-MM-dd), which casts leniently
    where the format parses strictly."""
    if e.args.get("format"):
        return self.func("TO_DATE", e.this, e.args["format"])
    return Spark.Generator.TRANSFORMS[exp.TsOrDsToDate](self, e)


class SparkAsWritten(Spark):
    """Spark's dialect, each cast, to_date and datetime pattern rendered as written: sqlglot reads Spark's CAST as a
    TRY_CAST (what it is outside ANSI mode) and marks the written TRY_CAST `safe`; it translates patterns to strftime
    and back, which loses quoted text ('T'), letters without a strftime twin and lone %."""

    TIME_MAPPING: dict[str, str] = {}  # datetime patterns kept as written
    FORMAT_MAPPING: dict[str, str] = {}

    # Spark.Generator is a class on every sqlglot 30.x, but later ones assign it (Generator = SparkGenerator), and
    # mypy takes no assigned name as a base class
    class Generator(Spark.Generator):  # type: ignore[misc, valid-type]
        TRANSFORMS = {**Spark.Generator.TRANSFORMS, exp.TryCast: lambda self, e: (
            f"{'TRY_CAST' if e.args.get('safe') else 'CAST'}({self.sql(e, 'this')} AS {self.sql(e, 'to')})"),
            exp.TsOrDsToDate: _to_date, exp.UnixDate: lambda self, e: self.func("UNIX_DATE", e.this)}


def to_sql(node: exp.Expr, strict: bool = False) -> str:
    """`node` as Spark SQL; `strict`: what sqlglot cannot render unchanged raises UnsupportedError."""
    return node.sql(dialect=SparkAsWritten, unsupported_level=ErrorLevel.RAISE if strict else ErrorLevel.IGNORE)
