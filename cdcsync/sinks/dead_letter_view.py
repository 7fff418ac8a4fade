"""The dead-letter records a command chooses, and `dead-letter list|show` reading them without a JVM (hudi-rs).

`Selection` is the one statement of a choice: its predicates render as a Spark condition for `replay`, which
re-ingests the records through the sync loop, and as a pyarrow expression for `list` and `show`, which only read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from cdcsync import storage
from cdcsync.config.model import dead_letter_path as path_for

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import Column

    from cdcsync.config.model import Config

    _Expr = TypeVar("_Expr", Column, pc.Expression)  # a predicate's two renderings: checked as each

PREVIEW_BYTES = 200
# what `show` prints of a record; `list` reads only the coordinates, the reason and the dates
_RECORD = ("topic", "partition", "offset", "row_index", "kafka_timestamp", "key", "value", "value_text", "reason",
           "error", "batch_id", "first_seen", "replayed", "replayed_at", "cdcsync_version")
_COUNTED = ("topic", "partition", "offset", "reason", "first_seen", "replayed")
KEY = ["topic", "partition", "offset", "row_index"]  # the table's record key, and the log order `show` prints in


@dataclass(frozen=True)
class Selection:
    reasons: tuple[str, ...] = ()
    topic: str | None = None
    partition: int | None = None
    from_offset: int | None = None  # inclusive
    to_offset: int | None = None  # inclusive
    include_replayed: bool = False

    def predicates(self) -> list[tuple[str, str, object]]:
        """(column, operator, value): `in`, `==`, `>=`, `<=`, or `not true` (false or null)."""
        out: list[tuple[str, str, object]] = []
        if self.reasons:
            out.append(("reason", "in", list(self.reasons)))
        if self.topic is not None:
            out.append(("topic", "==", self.topic))
        if self.partition is not None:
            out.append(("partition", "==", self.partition))
        if self.from_offset is not None:
            out.append(("offset", ">=", self.from_offset))
        if self.to_offset is not None:
            out.append(("offset", "<=", self.to_offset))
        if not self.include_replayed:
            out.append(("replayed", "not true", None))
        return out

    def condition(self) -> Column:
        """The predicates as a Spark column."""
        from pyspark.sql import functions as F

        c = F.lit(True)
        for name, op, value in self.predicates():
            c &= _render(F.col(name), op, value, lambda col: col.isNull())
        return c

    def expression(self) -> pc.Expression:
        """The predicates as a pyarrow compute expression."""
        import pyarrow.compute as pc

        c = pc.scalar(True)
        for name, op, value in self.predicates():
            c &= _render(pc.field(name), op, value, lambda col: col.is_null())
        return c


def _render(col: _Expr, op: str, value: Any, is_null: Callable[[_Expr], _Expr]) -> _Expr:
    """One predicate over a Spark column or a pyarrow field: the two spell all but the null test alike."""
    # a comparison with an operand of any type keeps the column's own type: the casts only say so
    if op == "in":
        return col.isin(value)
    if op == "not true":
        return (col == False) | is_null(col)  # noqa: E712 - a column comparison, not a truth test
    if op == ">=":
        return cast("_Expr", col >= value)
    if op == "<=":
        return cast("_Expr", col <= value)
    return cast("_Expr", col == value)


def reason_counts(cfg: Config, sel: Selection) -> list[dict[str, Any]]:
    """Counts per (topic, partition, reason) with the offset span and when they were first / last seen."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = _read(cfg, sel, _COUNTED)
    if t is None or not t.num_rows:
        return []
    # a column filled stays a column (pyarrow-stubs also allow a scalar)
    replayed = cast("pa.ChunkedArray[Any]", pc.fill_null(t["replayed"], pa.scalar(False)))
    t = t.append_column("replayed_n", pc.cast(replayed, pa.int64()))
    g = t.group_by(["topic", "partition", "reason"]).aggregate([
        ("offset", "count"), ("replayed_n", "sum"), ("offset", "min"), ("offset", "max"), ("first_seen", "min"),
        ("first_seen", "max")]).sort_by([("topic", "ascending"), ("partition", "ascending"), ("reason", "ascending")])
    names = {"offset_count": "count", "replayed_n_sum": "replayed", "offset_min": "min_offset",
             "offset_max": "max_offset", "first_seen_min": "first_seen", "first_seen_max": "last_seen"}
    order = ["topic", "partition", "reason", *names.values()]
    return [{k: row[k] for k in order} for row in g.rename_columns([names.get(n, n) for n in g.column_names])
            .to_pylist()]


def records(cfg: Config, sel: Selection, limit: int | None = 20) -> list[dict[str, Any]]:
    """The chosen records in log order, at most `limit`, each with a printable preview of its value."""
    t = _read(cfg, sel, _RECORD)
    if t is None:
        return []
    t = t.sort_by([(c, "ascending") for c in KEY])
    if limit is not None:
        t = t.slice(0, limit)
    out = []
    for d in t.to_pylist():
        value = bytes(d.pop("value") or b"")
        key = d.pop("key")
        d["key"] = None if key is None else bytes(key).decode("utf-8", "backslashreplace")
        d["value_bytes"] = len(value)
        text = d.pop("value_text")
        # a preview that is always printable: undecodable bytes show as \xNN
        d["value_preview"] = text[:PREVIEW_BYTES] if text is not None else \
            value[:PREVIEW_BYTES].decode("utf-8", "backslashreplace")
        out.append(d)
    return out


def _read(cfg: Config, sel: Selection, columns: tuple[str, ...]) -> pa.Table | None:
    """The chosen rows of the dead-letter table (these columns), or None when the table was never written."""
    import pyarrow as pa
    from hudi import HudiReadOptions, HudiTableBuilder

    path = path_for(cfg)
    if ".hoodie" not in storage.Files(cfg.storage).entries(path):
        return None
    uri = "s3://" + path.removeprefix(storage.SCHEME) if storage.is_s3(path) else str(storage.local_path(path))
    table = HudiTableBuilder.from_base_uri(uri).with_storage_options(storage.reader_options(cfg.storage)).build()
    wanted = sel.expression()
    parts = [pa.Table.from_batches([b]).filter(wanted) for b in
             table.read_stream(HudiReadOptions(projection=list(columns)))]
    return pa.concat_tables(parts) if parts else pa.table({c: [] for c in columns})
