"""Schema evolution decisions for a running table, pure Python so the Spark path can call them per batch.

New column → add it nullable. Column missing from new data → keep it (older rows still have it; new rows get null).
Type change → widen along the lattice when allowed, else incompatible: an error (on_incompatible = "fail") or a
flagged change the caller routes to the dead-letter path (on_incompatible = "dead-letter").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cdcsync.errors import SchemaError
from cdcsync.formats.base import Coord
from cdcsync.schema.model import DECLARED, ColumnSchema, TableSchema
from cdcsync.schema.types import ColumnType, holds, widen

ADD_COLUMN, WIDEN_TYPE, MAKE_NULLABLE, INCOMPATIBLE = "add_column", "widen_type", "make_nullable", "incompatible"
ON_INCOMPATIBLE = ("fail", "dead-letter")


@dataclass(frozen=True)
class SchemaChange:
    kind: str  # add_column | widen_type | make_nullable | incompatible
    column: str  # the current table's spelling when the column exists already
    old_type: ColumnType | None
    new_type: ColumnType | None  # for incompatible: the type the new data shows
    nullable: bool = True
    coord: Coord | None = None  # one record showing the change
    reason: str = ""

    def describe(self) -> str:
        where = f" (seen at {self.coord})" if self.coord else ""
        if self.kind == ADD_COLUMN:
            return f"add column '{self.column}' {self.new_type} NULL{where}"
        if self.kind == WIDEN_TYPE:
            return f"widen column '{self.column}' from {self.old_type} to {self.new_type}{where}"
        if self.kind == MAKE_NULLABLE:
            return f"make column '{self.column}' nullable{where}"
        return f"column '{self.column}' is {self.old_type} but new data has {self.new_type}{where}: {self.reason}"


def evolve(current: TableSchema, observed: TableSchema, on_incompatible: str = "fail", *,
           allow: Callable[[ColumnType, ColumnType], bool] | None = None, pinned: Iterable[str] = (),
           case_sensitive: bool = False) -> list[SchemaChange]:
    """The changes that make `current` hold `observed`, in observed column order.

    `allow(old, new)` narrows the lattice to what the sink can do in place (default: every lattice widening).
    Columns in `pinned`, and columns whose origin is "declared" (schema.columns), never change type.
    Raises SchemaError listing every incompatible column when on_incompatible is "fail".
    """
    if on_incompatible not in ON_INCOMPATIBLE:
        raise ValueError(f"on_incompatible must be one of {ON_INCOMPATIBLE}, not {on_incompatible!r}")
    fold = (lambda s: s) if case_sensitive else str.lower  # Spark and Hudi resolve column names case-insensitively
    existing = {fold(name): col for name, col in current.columns.items()}
    pinned = {fold(p) for p in pinned}
    changes: list[SchemaChange] = []
    for obs in observed.columns.values():
        cur = existing.get(fold(obs.name))
        if cur is None:
            if obs.type is not None:  # an all-null new column waits for a value that states its type
                changes.append(SchemaChange(ADD_COLUMN, obs.name, None, obs.type, True, obs.coord))
            continue
        if obs.type is not None and not _fits(cur.effective_type, obs):
            changes.append(_type_change(cur.name, cur.effective_type, obs, cur.origin == DECLARED or
                                        fold(cur.name) in pinned, allow))
        if obs.nullable and not cur.nullable:
            changes.append(SchemaChange(MAKE_NULLABLE, cur.name, cur.effective_type, cur.effective_type, True,
                                        obs.coord))
    bad = [c for c in changes if c.kind == INCOMPATIBLE]
    if bad and on_incompatible == "fail":
        first = bad[0]
        raise SchemaError(
            f"{observed.name}: incompatible schema change: " + "; ".join(c.describe() for c in bad),
            hint="widen the column in schema.columns (or the table) by hand, or set schema.on_incompatible = "
                 "\"dead-letter\" to route such records aside",
            table=observed.name, column=first.column, declared=str(first.old_type), seen=str(first.new_type),
            **(first.coord.to_dict() if first.coord else {}))
    return changes


def _fits(current: ColumnType, obs: ColumnSchema) -> bool:
    """The column's type holds the new data: by type, or by the sampled values' exact digits (5 and 12.5 fit a
    DECIMAL(10,2) column though BIGINT and DOUBLE do not)."""
    return holds(current, obs.type) or (obs.exact is not None and holds(current, obs.exact))


def _type_change(name: str, old: ColumnType, obs: ColumnSchema, pinned: bool,
                 allow: Callable[[ColumnType, ColumnType], bool] | None) -> SchemaChange:
    seen, coord = obs.type, obs.coord
    if pinned:
        return SchemaChange(INCOMPATIBLE, name, old, seen, coord=coord,
                            reason="the column's type is declared in schema.columns")
    new = widen(old, obs.type)  # the data's own type, not its sample's exact digits: the next batch varies
    if allow is not None and not allow(old, new):
        return SchemaChange(INCOMPATIBLE, name, old, seen, coord=coord,
                            reason=f"widening {old} to {new} is not supported by the sink")
    return SchemaChange(WIDEN_TYPE, name, old, new, coord=coord)
