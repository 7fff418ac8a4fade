"""Merge the table's columns with what a batch carries, along the shared widening lattice (cdcsync.schema.types).

New columns are appended (nullable); missing ones stay; a changed type widens when the lattice and Hudi allow it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdcsync.schema.spark.columns import PLAIN, Col
from cdcsync.schema.types import Kind, parse_type, widen

# Type changes Hudi applies to an existing column on write (its schema-evolution docs: int/long → float/double/
# string, float/double → string, decimal → wider decimal); anything else the lattice allows is incompatible here.
_HUDI_PROMOTIONS = {
    (Kind.BIGINT, Kind.DOUBLE), (Kind.BIGINT, Kind.STRING), (Kind.DOUBLE, Kind.STRING),
    (Kind.DECIMAL, Kind.DECIMAL),
}


@dataclass(frozen=True)
class ColumnChange:
    kind: str  # "add" | "widen" | "incompatible"
    column: str
    old: str | None
    new: str

    def describe(self) -> str:
        if self.kind == "add":
            return f"new column {self.column} {self.new}"
        if self.kind == "widen":
            return f"column {self.column} widened {self.old} → {self.new}"
        return f"column {self.column} changed {self.old} → {self.new}, which the table cannot take"


def promotable(old: str, new: str) -> bool:
    """Can Hudi change an existing column of type `old` to `new` on write?"""
    return (parse_type(old).kind, parse_type(new).kind) in _HUDI_PROMOTIONS


def _spark(t: str) -> str:
    return parse_type(t).spark_ddl()


def merge(current: list[Col], batch: list[Col], declared: dict[str, str]) -> tuple[list[Col], list[ColumnChange]]:
    """(columns to write with, changes against `current`). Declared types always win over what data shows."""
    by_name = {c.name: c for c in current}
    out = list(current)
    changes: list[ColumnChange] = []
    for b in batch:
        if b.name in declared:
            b = Col(b.name, _spark(declared[b.name]), b.encoding if b.encoding != PLAIN else PLAIN, b.scale)
        old = by_name.get(b.name)
        if old is None:
            by_name[b.name] = b
            out.append(b)
            if current:
                changes.append(ColumnChange("add", b.name, None, b.type))
            continue
        if old.type == b.type:
            if old.encoding != b.encoding:  # the wire changed (e.g. a schema envelope appeared): follow it
                out[out.index(old)] = by_name[b.name] = Col(old.name, old.type, b.encoding, b.scale)
            continue
        if b.name in declared:
            continue
        wide = widen(parse_type(old.type), parse_type(b.type))
        wide_t = wide.spark_ddl() if wide else old.type
        if wide_t == old.type:  # the table's type holds the batch's values: decode them as this batch carries them
            if (old.encoding, old.scale) != (b.encoding, b.scale):
                out[out.index(old)] = by_name[b.name] = Col(old.name, old.type, b.encoding, b.scale)
            continue
        kind = "widen" if promotable(old.type, wide_t) else "incompatible"
        new = Col(old.name, wide_t, b.encoding if wide_t == b.type else PLAIN, b.scale)
        out[out.index(old)] = by_name[b.name] = new
        changes.append(ColumnChange(kind, b.name, old.type, wide_t))
    for name, t in declared.items():  # a declared column the data has not shown yet still exists
        if name not in by_name:
            col = Col(name, _spark(t))
            by_name[name] = col
            out.append(col)
    return out, changes
