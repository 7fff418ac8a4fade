"""What inference reports: one TableSchema per source table, one ColumnSchema per column."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cdcsync.formats.base import Coord
from cdcsync.schema.types import STRING, ColumnType, parse_type

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
    # Numeric columns inferred from data: the narrowest DECIMAL holding every sampled value exactly (DOUBLE when
    # one was NaN/Infinity or too long). Lets evolve() see that 5 and 12.5 fit a DECIMAL(10,2) column.
    exact: ColumnType | None = None

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

    @staticmethod
    def from_types(name: str, types: dict[str, ColumnType | str], nullable: bool | dict[str, bool] = True,
                   primary_key: list[str] | None = None, declared: tuple[str, ...] | set[str] = ()) -> TableSchema:
        """A TableSchema for an existing table (e.g. from a Spark schema's simpleStrings), for `evolve`."""
        cols = {}
        for col, t in types.items():
            ct = t if isinstance(t, ColumnType) else parse_type(t)
            null = nullable.get(col, True) if isinstance(nullable, dict) else nullable
            cols[col] = ColumnSchema(col, ct, nullable=null, origin=DECLARED if col in declared else DATA,
                                     path=(col,))
        return TableSchema(name, cols, primary_key)

    def types(self) -> dict[str, str]:
        return {c.name: str(c.effective_type) for c in self.columns.values()}
