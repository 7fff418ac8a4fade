"""What inference reports: one TableSchema per source table, one ColumnSchema per column."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cdcsync.formats.base import Coord
from cdcsync.schema.types import STRING, ColumnType

# Where a column's type came from, strongest first.
DECLARED, ENVELOPE, HINT, DATA = "declared", "envelope", "hint", "data"


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

    @property
    def effective_type(self) -> ColumnType:
        """The type to create the column with: STRING when only nulls were seen."""
        return self.type or STRING


@dataclass
class TableSchema:
    name: str  # "database.table" when the format carries it, else the topic
    columns: dict[str, ColumnSchema] = field(default_factory=dict)
    primary_key: list[str] | None = None
    records: int = 0

    def types(self) -> dict[str, str]:
        return {c.name: str(c.effective_type) for c in self.columns.values()}
