"""[transform] sql: one Spark SQL SELECT over a table's changes (the view `source`), parsed and checked with
sqlglot's Spark dialect without a JVM, then bound to the batch's columns as Spark SQL expressions over one struct
(the batch's one pass evaluates them: transform/spark.py).

View semantics: the table equals the SELECT applied to the source table. A delete passes by key; an upsert whose
image the WHERE rejects deletes its key. So the key and a custom ordering column pass through unchanged, and the
SELECT is row by row (no join, aggregate, window, generator or subquery) and deterministic (replays write the same).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, UnsupportedError

from cdcsync import columns as C
from cdcsync.errors import ConfigError
from cdcsync.transform.dialect import SparkAsWritten, to_sql

VIEW = "source"
STRUCT = C.VIEW  # the struct column the bound expressions read the view's columns from
_SRC = re.compile(r"<SRC>")  # Hudi Streamer's SqlQueryBasedTransformer names the view so

_NONDETERMINISTIC = tuple(getattr(exp, n) for n in (
    "Rand", "Randn", "Randstr", "Uniform", "CurrentTimestamp", "CurrentDate", "CurrentTime", "CurrentDatetime",
    "CurrentTimestampLTZ", "Localtimestamp", "Uuid", "Shuffle", "CurrentUser") if hasattr(exp, n))
_NONDETERMINISTIC_NAMES = {"now", "rand", "randn", "random", "randstr", "uniform", "uuid", "shuffle",
                           "monotonically_increasing_id", "spark_partition_id", "input_file_name",
                           "input_file_block_start", "input_file_block_length", "localtimestamp",
                           "current_timestamp", "current_date", "reflect", "java_method", "try_reflect"}
_ROW_BY_ROW = {exp.AggFunc: "an aggregate", exp.Window: "a window function", exp.Explode: "a generator (explode)",
               exp.Posexplode: "a generator (posexplode)", exp.Inline: "a generator (inline)",
               exp.UDTF: "a generator", exp.Subquery: "a subquery"}
_GENERATOR_NAMES = {"json_tuple", "inline_outer", "stack", "explode_outer", "posexplode_outer"}
# the SELECT's clauses as written, for messages (sqlglot's argument names otherwise)
_CLAUSES = {"group": "GROUP BY", "order": "ORDER BY", "sort": "SORT BY", "cluster": "CLUSTER BY",
            "distribute": "DISTRIBUTE BY", "laterals": "LATERAL VIEW", "windows": "WINDOW", "with": "WITH"}
# Hudi's and cdcsync's own columns (_unavailable_tp: stages/unavailable.py carries it beside the table's columns)
_RESERVED = C.RESERVED_PREFIXES


@dataclass(frozen=True)
class Output:
    """One column of the table: its name, its expression (None for `*`), and the source column it passes through
    unchanged, if it does."""

    name: str
    node: exp.Expr | None = field(compare=False, repr=False)
    passes: str | None = None

    @property
    def expression(self) -> exp.Expr:
        """`node` of a named column (Transform.columns() gives only those: it expands `*`)."""
        if self.node is None:
            raise TypeError("`*` has no expression of its own: Transform.columns() expands it")
        return self.node


@dataclass(frozen=True)
class Transform:
    """A checked SELECT. `outputs` in projection order; one Output with node None stands for `*`."""

    sql: str
    key: str  # the config key it came from, for messages: "transform.sql", "route[1].transform_sql"
    path: str
    outputs: tuple[Output, ...]
    where: exp.Expr | None = field(compare=False, repr=False)

    @property
    def star(self) -> bool:
        return any(o.node is None for o in self.outputs)

    def columns(self, view: list[str]) -> list[Output]:
        """The table's columns over a view of columns `view`: `*` expanded in its place, explicit ones kept."""
        named = {o.name.lower() for o in self.outputs if o.node is not None}  # Spark resolves names so
        out: list[Output] = []
        for o in self.outputs:
            if o.node is None:
                out += [Output(c, exp.column(c, quoted=True), c) for c in view if c.lower() not in named]
            else:
                out.append(o)
        return out

    def referenced(self) -> set[str]:
        """The view columns the SELECT reads (explicit references; `*` reads every one)."""
        return _reads([o.node for o in self.outputs if o.node is not None] + ([self.where] if self.where else []))

    def computed_from(self) -> set[str]:
        """The view columns an expression computes from (not merely passed through): the WHERE's and those of
        every computed or renamed column."""
        nodes = [o.node for o in self.outputs if o.node is not None and o.passes != o.name]
        return _reads(nodes + ([self.where] if self.where else []))

    def bind(self, view: list[str], ansi: bool, through: Sequence[str] = ()) -> Bound:
        """Spark SQL over the struct STRUCT holding `view`'s columns; a column the view lacks is a ConfigError
        naming the closest one, and so is a column of `through` (the key the source gave, the ordering column)
        that does not pass through unchanged. `ansi`: Spark's ANSI mode, where a cast that cannot convert fails the
        query; such expressions are rendered in their try_ forms, and the rows they fail on are told apart."""
        outputs = {o.name: o for o in self.columns(view)}
        for k in through:
            if k in view and (k not in outputs or outputs[k].passes != k):
                raise ConfigError(
                    f"{self.path}: {self.key} does not pass the key column {k!r} through unchanged: the table "
                    "finds a change's row by it", hint=f"select it as it is: SELECT {k}, ...", file=self.path,
                    key=self.key, column=k)
        missing = sorted(self.referenced() - set(view))
        if missing:
            close = _close(missing[0], view)
            raise ConfigError(
                f"{self.path}: {self.key} reads column {missing[0]!r}, which the source does not have (its columns: "
                f"{', '.join(view)})" + (f"; did you mean {close!r}?" if close else ""),
                hint="name a column of the source, or declare it in [schema.columns] when no change so far carried "
                     "it", file=self.path, key=self.key, column=missing[0])
        failures: list[tuple[str, str]] = []
        columns = [(o.name, _render(o.expression, ansi, failures)) for o in outputs.values()]
        keep = _render(self.where, ansi, failures) if self.where is not None else None
        return Bound(tuple(columns), keep, tuple(dict.fromkeys(failures)))


@dataclass(frozen=True)
class Bound:
    """A transform over one view: each column's Spark SQL, the WHERE's, and under ANSI mode each strict expression's
    failure test with the detail a bad record carries (Spark SQL too)."""

    columns: tuple[tuple[str, str], ...]
    keep: str | None
    failures: tuple[tuple[str, str], ...] = ()


class _Refuse(Protocol):
    """parse's `refuse`: the ConfigError naming the config key, with its facts (column=, function=)."""

    def __call__(self, what: str, hint: str, **facts: Any) -> ConfigError: ...


def parse(sql: str, *, key: str, path: str, primary_key: list[str] | None, ordering_field: str | None,
          partition_by: list[str]) -> Transform:
    """`sql` checked: one row-by-row, deterministic SELECT from `source` that passes the key and ordering columns
    through and produces the partition columns. Raises ConfigError (exit 78) naming `key`."""
    def refuse(what: str, hint: str, **facts: Any) -> ConfigError:
        return ConfigError(f"{path}: {key}: {what}", hint=hint, file=path, key=key, **facts)

    select = _select(_SRC.sub(VIEW, sql), refuse)
    view_names = _view_names(select, refuse)
    for node in select.walk():
        _row_by_row(node, select, refuse)
    outputs = _outputs(select, view_names, refuse)
    names = [o.name for o in outputs if o.node is not None]
    star = any(o.node is None for o in outputs)
    for k, role in [*((k, "primary-key") for k in primary_key or []),
                    *(((ordering_field, "ordering"),) if ordering_field else ())]:
        out = next((o for o in outputs if o.node is not None and o.name == k), None)
        if out is None and not star:
            close = _close(k, names)
            raise refuse(f"drops the {role} column {k!r}: the table finds a change's row by it (its columns: "
                         f"{', '.join(names)})" + (f"; did you mean {close!r}?" if close else ""),
                         f"select it unchanged: SELECT {k}, ...", column=k)
        if out is not None and out.passes != k:
            raise refuse(f"computes the {role} column {k!r} ({to_sql(out.expression)}): a delete finds its row by "
                         "the source's own value", f"pass {k} through unchanged and compute another column",
                         column=k)
    if not star:
        for p in partition_by:
            if p not in names:
                close = _close(p, names)
                raise ConfigError(
                    f"{path}: partition_by names {p!r}, which {key} does not produce (its columns: "
                    f"{', '.join(names)})" + (f"; did you mean {close!r}?" if close else ""),
                    hint="partition by a column the SELECT gives, e.g. to_date(created_at) AS day",
                    file=path, key=key, column=p)
    where = select.args.get("where")
    tf = Transform(sql, key, path, tuple(outputs), _unqualified(where.this, view_names) if where else None)
    for name, node in [*((o.name, o.node) for o in outputs if o.node is not None), *(
            [("WHERE", tf.where)] if tf.where else [])]:
        for ansi in (False, True):  # what sqlglot cannot write back as Spark SQL unchanged is refused here
            try:
                _render(node, ansi, [])
            except UnsupportedError as e:
                raise refuse(f"{name}: {_unsupported(node)} cannot be handed to Spark as written ({e})",
                             "write it with other functions", column=name) from None
    return tf


def _unsupported(node: exp.Expr) -> str:
    """The innermost part of `node` sqlglot cannot render as Spark SQL, by its function name."""
    def fails(n: exp.Expr) -> bool:
        try:
            return not to_sql(n, strict=True)
        except UnsupportedError:
            return True
    worst = max((n for n in node.walk() if fails(n)), key=lambda n: n.depth, default=node)
    return worst.sql_name() if isinstance(worst, exp.Func) else worst.key.upper()


def _select(text: str, refuse: _Refuse) -> exp.Select:
    """The one SELECT of `text`, without a clause that would relate one row to others."""
    try:
        statements = [s for s in sqlglot.parse(text, read=SparkAsWritten) if s is not None]
    except ParseError as e:
        first = e.errors[0] if e.errors else {}
        raise refuse(f"is not Spark SQL: {first.get('description', e)} (line {first.get('line', '?')}, column "
                     f"{first.get('col', '?')})", "write one SELECT ... FROM source [WHERE ...]") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Select):
        raise refuse("must be one SELECT (no UNION, no second statement)", "write one SELECT ... FROM source")
    select: exp.Select = statements[0]
    if select.args.get("joins"):
        raise refuse("must read FROM source alone, without a JOIN: each change is transformed on its own",
                     "write ... FROM source [WHERE ...]")
    extra = sorted(k.rstrip("_") for k, v in select.args.items()
                   if v and k not in ("expressions", "from_", "where", "hint", "kind"))
    if extra:
        raise refuse(f"takes one row in and gives at most one row out, so {_CLAUSES.get(extra[0], extra[0].upper())}"
                     " has no meaning here", "remove it: each change is transformed on its own")
    return select


def _view_names(select: exp.Select, refuse: _Refuse) -> set[str]:
    """The names the view goes by in `select` (`source`, and its alias)."""
    frm = select.args.get("from_")
    table = frm.this if frm else None
    if not isinstance(table, exp.Table) or table.name.lower() != VIEW or table.db:
        raise refuse("must read FROM source (or Hudi Streamer's <SRC>)", "write ... FROM source")
    alias = table.args.get("alias")
    if [k for k, v in table.args.items() if v and k not in ("this", "alias")] or (alias and alias.columns):
        raise refuse(f"reads {to_sql(table)}: the view is read as it is, one change at a time (no TABLESAMPLE, "
                     "PIVOT, time travel or column aliases)", "write ... FROM source [AS s]")
    return {VIEW, table.alias} - {""}


def _row_by_row(node: exp.Expr, select: exp.Select, refuse: _Refuse) -> None:
    """Refuses `node` when it relates rows (aggregate, window, generator, subquery) or is not deterministic."""
    what = next((w for t, w in _ROW_BY_ROW.items() if isinstance(node, t)), None)
    if isinstance(node, exp.Anonymous) and node.name.lower() in _GENERATOR_NAMES:
        what = f"a generator ({node.name.lower()})"
    if what or (isinstance(node, exp.Select) and node is not select):
        raise refuse(f"{what or 'a subquery'} ({to_sql(node)}) cannot transform one change on its own",
                     "use functions of the row's own columns")
    unix_now = isinstance(node, exp.StrToUnix) and (node.this is None or isinstance(node.this, exp.CurrentTimestamp))
    if unix_now or isinstance(node, _NONDETERMINISTIC) or (
            isinstance(node, exp.Anonymous) and node.name.lower() in _NONDETERMINISTIC_NAMES):
        written = "unix_timestamp()" if unix_now else to_sql(node)
        raise refuse(f"{written} is not deterministic: a replay of the same changes would write other values",
                     "derive the value from the change's columns (a timestamp column, the Kafka timestamp in "
                     "metadata_columns)", function=written)


def _outputs(select: exp.Select, view_names: set[str], refuse: _Refuse) -> list[Output]:
    out: list[Output] = []
    for item in select.expressions:
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Star) or (isinstance(node, exp.Column) and isinstance(node.this, exp.Star)):
            if isinstance(node, exp.Column) and node.table not in view_names:
                raise refuse(f"{to_sql(node)} expands a struct: the table's columns are the view's", "select its "
                             f"fields by name: {node.table}.a AS a, ...", column=to_sql(node))
            star = node if isinstance(node, exp.Star) else node.this
            if isinstance(item, exp.Alias) or any(star.args.values()):
                raise refuse(f"{to_sql(item)}: `*` stands for the view's columns as they are (no alias, EXCEPT, "
                             "REPLACE)", "write SELECT *, ... or name the columns", column=to_sql(item))
            if any(o.node is None for o in out):
                raise refuse("gives `*` twice", "write `*` once")
            out.append(Output("*", None))
            continue
        node = _unqualified(node.unnest(), view_names)  # (a) is a
        bare = node.name if isinstance(node, exp.Column) and not node.table else None
        name = item.alias if isinstance(item, exp.Alias) else bare
        if name is None:
            raise refuse(f"{to_sql(item)} needs a name: Spark would call the column by its text",
                         f"write {to_sql(item)} AS a_name", column=to_sql(item))
        if isinstance(node, exp.Null):  # Spark types it VOID, which neither Parquet nor Hudi can store
            raise refuse(f"{to_sql(item)}: a bare NULL has no type", "write CAST(NULL AS STRING) AS ...")
        if name.lower().startswith(_RESERVED):
            raise refuse(f"column {name!r}: names starting {', '.join(_RESERVED)} are Hudi's and cdcsync's own",
                         "choose another name", column=name)
        if any(o.name.lower() == name.lower() for o in out):  # Spark's names are case-insensitive
            raise refuse(f"gives column {name!r} twice", "name each column once", column=name)
        out.append(Output(name, node, bare))
    return out


def _close(name: str, names: list[str]) -> str | None:
    """The name of `names` closest to `name` (case aside), if one is close."""
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def _unqualified(node: exp.Expr, view_names: set[str]) -> exp.Expr:
    """`node` with the view's own qualifier (source.x, s.x) dropped; other dotted names are struct fields."""
    def strip(n: exp.Expr) -> exp.Expr:
        parts = n.parts if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star) else []
        if len(parts) > 1 and parts[0].name in view_names:
            return _column([p.copy() for p in parts[1:]])
        return n
    return node.copy().transform(strip)


def _column(parts: Sequence[exp.Expr]) -> exp.Expr:
    """A column reference from its dotted parts (the view column first, then struct fields)."""
    node: exp.Expr = exp.column(parts[0])
    for part in parts[1:]:
        node = exp.Dot(this=node, expression=part)
    return node


def _reads(nodes: list[exp.Expr]) -> set[str]:
    """The view columns `nodes` read: `a` for `a`, and for a struct field `a.b`."""
    return {c.parts[0].name for n in nodes for c in n.find_all(exp.Column) if not isinstance(c.this, exp.Star)}


# ANSI mode: these fail the query on a value they cannot convert; their try_ forms give NULL instead
# (% and div have none in Spark 3.5: a zero divisor, what fails them, becomes NULL)
_TRY: dict[type[exp.Expr], str | None] = {
    exp.Div: "try_divide", exp.Add: "try_add", exp.Sub: "try_subtract", exp.Mul: "try_multiply", exp.Mod: None,
    exp.IntDiv: None}
# inside these a strict expression may never run for a row (a branch not taken, a lambda): no failure test there
_CONDITIONAL = (exp.Case, exp.If, exp.Coalesce, exp.Nvl2, exp.DecodeCase, exp.Lambda)


def _render(node: exp.Expr, ansi: bool, failures: list[tuple[str, str]]) -> str:
    """`node` as Spark SQL over STRUCT; under `ansi` its strict expressions in try_ forms, each failure test
    (the try_ form NULL where its operands are not, where it runs) appended to `failures`."""
    def qualify(n: exp.Expr) -> exp.Expr:
        if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
            return _column([exp.to_identifier(p, quoted=True) for p in (STRUCT, *(p.name for p in n.parts))])
        return n
    out = node.copy().transform(qualify)
    if ansi:
        out = _tried(out, node, failures, None)
    return to_sql(out, strict=True)


def _tried(node: exp.Expr, original: exp.Expr, failures: list[tuple[str, str]],
           runs: exp.Expr | bool | None) -> exp.Expr:
    """Bottom-up: each strict expression replaced by its try_ form and its failure test recorded where it runs:
    `runs` None for every row, a condition for one Spark may skip (the right side of AND, OR: Spark evaluates it
    only when the left does not decide), False where it may not run at all (no test). `original`: the same node as
    written, for the message."""
    for k in sorted(node.args, key=lambda k: k != "this"):  # `this` first: AND's right side runs by its left's value
        v, o, child = node.args[k], original.args.get(k), _runs(node, k, runs)
        if isinstance(v, exp.Expression):
            node.set(k, _tried(v, o if isinstance(o, exp.Expression) else v, failures, child))
        elif isinstance(v, list):
            o = o if isinstance(o, list) and len(o) == len(v) else v
            node.set(k, [_tried(x, y if isinstance(y, exp.Expression) else x, failures, child)
                         if isinstance(x, exp.Expression) else x for x, y in zip(v, o, strict=True)])
    operands: list[exp.Expr]
    tried: exp.Expr
    if isinstance(node, exp.Cast) and not node.args.get("safe"):
        tried, operands = exp.TryCast(this=node.this, to=node.to, safe=True), [node.this]
    elif type(node) in _TRY:
        a, b = operands = [node.this, node.expression]
        tried = exp.Anonymous(this=_TRY[type(node)], expressions=[a, b]) if _TRY[type(node)] else type(node)(
            this=a, expression=exp.Nullif(this=b, expression=exp.Literal.number(0)))
    elif isinstance(node, exp.TsOrDsToDate | exp.StrToTime) and node.args.get("format") is not None:
        fmt = node.args["format"].copy()  # as written (SparkAsWritten keeps patterns)
        tried = exp.Anonymous(this="try_to_timestamp", expressions=[node.this, fmt])
        tried = exp.Cast(this=tried, to=exp.DataType.build("date")) if isinstance(node, exp.TsOrDsToDate) else tried
        operands = [node.this]
    elif isinstance(node, exp.TsOrDsToDate):
        tried, operands = exp.TryCast(this=node.this, to=exp.DataType.build("date"), safe=True), [node.this]
    else:
        return node
    if runs is False:
        return tried
    failed = exp.and_(*([runs] if runs is not None else []), exp.Is(this=tried.copy(), expression=exp.Null()),
                      *(exp.Not(this=exp.Is(this=o.copy(), expression=exp.Null())) for o in operands))
    values = [exp.Anonymous(this="coalesce", expressions=[exp.Cast(this=o.copy(), to=exp.DataType.build("string")),
                                                          exp.Literal.string("NULL")]) for o in operands]
    detail = exp.Anonymous(this="concat", expressions=[
        exp.Literal.string(f"{to_sql(original)} cannot be computed from "),
        exp.Anonymous(this="concat_ws", expressions=[exp.Literal.string(", "), *values])])
    failures.append((to_sql(failed, strict=True), to_sql(detail, strict=True)))
    return tried


def _runs(node: exp.Expr, k: str, runs: exp.Expr | bool | None) -> exp.Expr | bool | None:
    """Where `node`'s argument `k` runs, given where `node` runs (see _tried)."""
    if runs is False or isinstance(node, _CONDITIONAL):
        return False
    if isinstance(node, exp.And | exp.Or) and k == "expression":  # AND: unless its left is false; OR: true
        left = exp.Coalesce(this=node.this.copy(), expressions=[exp.true() if isinstance(node, exp.And)
                                                                 else exp.false()])
        when = left if isinstance(node, exp.And) else exp.Not(this=left)
        return when if runs is None else exp.and_(runs, when)
    return runs
