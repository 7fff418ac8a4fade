"""A value that does not fit its column's type: widen the column, stop, or dead-letter the record.

One mechanism behind `[schema] on_incompatible` (changes Hudi cannot apply to a column) and `on_type_conflict`
(changes it could apply, in types inferred from schemaless row images). Under "dead-letter" the column keeps its
type ("pinned"), the typed row then fails to convert the outlier, and that record is bad with reason
`incompatible_type`. Key columns always keep their type: a key that changes type splits one row into two.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats.vocabulary import CHANGE_OPS
from cdcsync.schema.spark.columns import PLAIN, Col
from cdcsync.schema.spark.evolution import promotable
from cdcsync.schema.spark.shape import rows_decide_types
from cdcsync.schema.types import parse_type, widen

if TYPE_CHECKING:
    from cdcsync.config.model import Config

REASON = "incompatible_type"
_NARROWER = {"STRING": ("BIGINT", "DOUBLE", "BOOLEAN"), "DOUBLE": ("BIGINT",)}  # narrowest first


@dataclass(frozen=True)
class Pin:
    column: str
    kept: str  # the type the column keeps
    seen: str  # the type this batch's values would have given it
    why: str  # the setting that kept it

    def describe(self) -> str:
        return f"{self.column} keeps {self.kept} (this batch's values need {self.seen}; {self.why})"


@dataclass(frozen=True)
class Policy:
    key: frozenset[str]  # the table's primary-key columns
    declared: frozenset[str]  # [schema.columns]: their types never move with the data
    incompatible: str = "fail"  # [schema] on_incompatible
    conflict: str = "widen"  # [schema] on_type_conflict (non-key columns)

    @staticmethod
    def of(cfg: Config, primary_key: list[str]) -> Policy:
        s = cfg.schema
        return Policy(frozenset(primary_key), frozenset(s.columns), s.on_incompatible, s.on_type_conflict)

    def keeps_type(self, name: str) -> str | None:
        """Why a widening of `name` in schemaless data is refused (None: it widens)."""
        if name in self.key:
            return "key columns keep their type"
        return 'on_type_conflict = "dead-letter"' if self.conflict == "dead-letter" else None


Decision = tuple[list[Col], list[Pin], list[Col]]  # (columns, pins, new columns a majority vote settles)


def decide(table: list[Col], batch: list[Col], policy: Policy, rows_typed: bool) -> Decision:
    """(batch columns with pinned types, the pins, new columns whose type a majority vote must settle).
    `rows_typed`: the batch's types came from the row images' JSON values (schemaless)."""
    by_name = {c.name: c for c in table or []}
    out, pins, vote = [], [], []
    for b in batch:
        old = by_name.get(b.name)
        why = policy.keeps_type(b.name) if rows_typed else None
        if b.name in policy.declared or (old is not None and old.type == b.type):
            out.append(b)
            continue
        if old is None:
            out.append(b)
            if why and b.encoding == PLAIN and b.type in _NARROWER:
                vote.append(b)
            continue
        wide = widen(parse_type(old.type), parse_type(b.type))
        wide_t = wide.spark_ddl() if wide else old.type
        if wide_t != old.type and not promotable(old.type, wide_t) and policy.incompatible == "dead-letter":
            why = 'on_incompatible = "dead-letter"'
        elif wide_t == old.type or not promotable(old.type, wide_t):
            why = None  # narrower data, or an incompatible change left to on_incompatible = "fail"
        if why:
            out.append(old)
            pins.append(Pin(b.name, old.type, wide_t, why))
        else:
            out.append(b)
    return out, pins, vote


def pin(env: DataFrame, table: list[Col], batch: list[Col], cfg: Config,
        primary_key: list[str]) -> tuple[list[Col], list[Pin]]:
    """`decide` over this batch; new columns under dead-letter get the type most of their values have."""
    policy = Policy.of(cfg, primary_key)
    cols, pins, vote = decide(table, batch, policy, rows_typed=False)
    # primitive_as_string: the values' JSON types decide nothing, so none of them is an outlier
    if not cfg.schema.primitive_as_string and decide(table, batch, policy, rows_typed=True)[1:] != (pins, vote) \
            and rows_decide_types(env, cfg.source.format):  # one Spark job, only when the answer matters
        cols, pins, vote = decide(table, batch, policy, rows_typed=True)
    for name, kept in _majority(env, vote).items():
        b = next(c for c in vote if c.name == name)
        cols[cols.index(b)] = replace(b, type=kept)
        why = policy.keeps_type(name)
        assert why is not None  # decide() puts a column to the vote only when its type is kept
        pins.append(Pin(name, kept, b.type, why))
    return cols, pins


def majority_type(counts: dict[str, int], present: int, candidates: tuple[str, ...]) -> str | None:
    """The narrowest candidate type more than half of the `present` values are, or None."""
    return next((t for t in candidates if counts.get(t, 0) * 2 > present), None)


def _majority(env: DataFrame, vote: list[Col]) -> dict[str, str]:
    """{column: type} for new columns whose values are mostly one narrower JSON type (one pass over the batch)."""
    if not vote:
        return {}
    image = C.ROW_NESTED if C.ROW_NESTED in env.columns else C.ROW  # flattening re-encodes values as text
    text = F.when(F.col(C.OP).isin(*CHANGE_OPS), F.coalesce(image, C.KEY_ROW))
    aggs = []
    for c in vote:
        aggs.append(F.count(F.from_json(text, f"`{c.name}` STRING")[c.name]))
        aggs += [F.count(F.from_json(text, f"`{c.name}` {t}")[c.name]) for t in _NARROWER[c.type]]
    row = env.agg(*aggs).first()
    assert row is not None  # an aggregate without grouping has exactly one row
    out: dict[str, str] = {}
    i = 0
    for c in vote:
        narrower = _NARROWER[c.type]
        counts: dict[str, int] = dict(zip(narrower, row[i + 1:i + 1 + len(narrower)], strict=True))
        kept = majority_type(counts, row[i], narrower)
        if kept:
            out[c.name] = kept
        i += 1 + len(narrower)
    return out


def relabel(df: DataFrame, pins: list[Pin]) -> DataFrame:
    """Bad values in pinned columns are type conflicts: reason incompatible_type, naming the kept type."""
    if not pins:
        return df
    says = F.create_map(*[x for p in pins for x in (F.lit(p.column), F.lit(p.describe()))])
    hit = F.array_intersect(F.col(C.CAST_BAD), F.array(*[F.lit(p.column) for p in pins]))
    is_hit = (F.col(C.REASON) == "bad_value") & (F.size(hit) > 0)
    detail = F.concat(F.lit("a value does not fit its column's type: "),
                      F.array_join(F.transform(hit, lambda n: says[n]), "; "))
    return df.withColumns({C.REASON: F.when(is_hit, F.lit(REASON)).otherwise(F.col(C.REASON)),
                           C.REASON_DETAIL: F.when(is_hit, detail).otherwise(F.col(C.REASON_DETAIL))})
