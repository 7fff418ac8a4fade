"""What inference reports: one TableSchema per source table, one ColumnSchema per column."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cdcsync.formats.base import Coord
from cdcsync.schema.types import STRING, ColumnType

# Where a column's type came from, strongest first.
DECLARED, ENVELOPE, HINT, DATA = "declared", "envelope", "hint", "data"
# A table's column that is no source column: a Kafka metadata column, one [transform] sql computes (Spark types both)
KAFKA, TRANSFORM = "kafka", "transform"


@dataclass
class ColumnSchema:
    name: str
    type: ColumnType | None  # None: only nulls seen (nulls never decide a type)
    nullable: bool = True
    samples: int = 0  # records with a non-null value
    nulls: int = 0  # records with an explicit null
    example: Any = None  # the first non-null value, as in the message
    coord: Coord | None = None  # where `example` was read
    origin: str = DATA  # declared | envelope | hint | data
    path: tuple[str, ...] = ()  # the key path in the row object (flattened columns have several parts)
    json_kinds: frozenset[str] = frozenset()  # JSON kinds of the non-null values seen ("integer", "string" …)
    # the Spark type (DDL) when Spark's rules give it rather than inference: a metadata column, a [transform] sql
    # column (transform/types.py), whose type may lie outside the vocabulary (INT, ARRAY<STRING>); `type` is then
    # the vocabulary's when exactly the same, else None
    spark_type: str | None = None
    computed: str | None = None  # the Spark SQL [transform] sql computes the column with

    @property
    def effective_type(self) -> ColumnType:
        """The type to create the column with: STRING when only nulls were seen."""
        return self.type or STRING

    @property
    def untyped(self) -> bool:
        """A column [transform] sql computes and infer-schema cannot type: Spark decides its type at run time."""
        return self.computed is not None and self.spark_type is None

    def shown_type(self) -> str | None:
        """The type as infer-schema prints it: the Spark type where Spark's rules decide it, else the inferred one
        (STRING when only nulls were seen); None when untyped."""
        if self.untyped:
            return None
        return self.spark_type or str(self.effective_type)

    def ddl_type(self) -> str | None:
        """The type in Spark DDL; None when untyped."""
        if self.untyped:
            return None
        return self.spark_type or self.effective_type.spark_ddl()


@dataclass
class TableSchema:
    name: str  # "database.table" when the format carries it, else the topic
    columns: dict[str, ColumnSchema] = field(default_factory=dict)
    primary_key: list[str] | None = None
    records: int = 0
    transform: str | None = None  # the config key of the [transform] sql that made these columns (transform/types.py)

    def types(self) -> dict[str, str]:
        return {c.name: str(c.effective_type) for c in self.columns.values()}
