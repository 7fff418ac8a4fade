"""[transform] sql in the batch's one pass: the view's columns gathered in one struct (sql.STRUCT), the checked
SELECT's expressions (transform/sql.py renders them) read from it. The struct lives inside one projection only:
Spark's optimizer reads each field straight from its source column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.errors import ConfigError
from cdcsync.transform.sql import STRUCT, Bound, Transform

if TYPE_CHECKING:
    from types import TracebackType

    from pyspark.sql import SparkSession

KEEP = C.KEEP  # the WHERE's verdict on the row's image (True without a WHERE)
FAILED = C.TRANSFORM_FAILED  # what the SELECT could not compute for the row (ANSI mode), else NULL


def ansi(spark: SparkSession) -> bool:
    """Is the session in ANSI mode, where a cast that cannot convert fails the query?"""
    return str(spark.conf.get("spark.sql.ansi.enabled", "false")).lower() == "true"


def verdicts(df: DataFrame, tf: Transform, bound: Bound, view: list[Column],
             refused: Sequence[tuple[Column, str]] = ()) -> DataFrame:
    """`df` plus KEEP and FAILED, computed over `view` (the view's columns, each aliased by its name); `refused`:
    more reasons a row cannot be transformed (a test over the struct, its detail)."""
    failed = F.lit(None).cast("string")
    for test, detail in reversed(bound.failures):
        failed = F.when(F.expr(test), F.expr(detail)).otherwise(failed)
    for check, reason in reversed(refused):
        failed = F.when(check, F.lit(reason)).otherwise(failed)
    keep = F.coalesce(F.expr(bound.keep), F.lit(False)) if bound.keep else F.lit(True)
    with _checked(tf):
        return df.withColumn(STRUCT, F.struct(*view)).withColumns({KEEP: keep, FAILED: failed}).drop(STRUCT)


def rows(df: DataFrame, tf: Transform, bound: Bound, view: list[str], carried: list[str]) -> DataFrame:
    """The table's rows: the SELECT's columns over `df`'s columns named `view`, then the `carried` ones."""
    with _checked(tf):
        gathered = df.select(F.struct(*[F.col(f"`{n}`") for n in view]).alias(STRUCT), *carried)
        return gathered.select(*[F.expr(sql).alias(name) for name, sql in bound.columns], *carried)


class _checked:
    """Spark's analysis of the SELECT (names, functions, types: what sqlglot cannot know) as a config error."""

    def __init__(self, tf: Transform) -> None:
        self.tf = tf

    def __enter__(self) -> _checked:
        return self

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        if isinstance(e, AnalysisException | ParseException):
            first = str(e).strip().splitlines()[0]
            raise ConfigError(f"{self.tf.path}: {self.tf.key}: Spark cannot run it: {first}",
                              hint="fix the SELECT; `cdcsync validate` checks its shape, Spark its functions and "
                                   "types", file=self.tf.path, key=self.tf.key) from None
        return False
