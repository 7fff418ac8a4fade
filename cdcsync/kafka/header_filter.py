"""The Flink Kafka connector's header filter: `depart:toy|depart:book&!env:test`.

`key:value` terms (split at the first colon, so values may hold colons) joined by `&` and `|`, each optionally
negated by `!`, evaluated strictly left to right with no precedence and no parentheses: the example reads
((depart:toy OR depart:book) AND NOT env:test). A term holds when any header with that key has that value,
compared as UTF-8 text. The same parse drives the Spark SQL condition and the pure-Python evaluator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cdcsync.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import Column


@dataclass(frozen=True)
class Term:
    key: str
    value: str
    negated: bool = False


@dataclass(frozen=True)
class HeaderFilter:
    first: Term
    rest: tuple[tuple[str, Term], ...]  # ("&" | "|", term)

    def matches(self, headers: list[tuple[str, bytes | None]]) -> bool:
        result = _holds(self.first, headers)
        for op, term in self.rest:
            result = (result and _holds(term, headers)) if op == "&" else (result or _holds(term, headers))
        return result

    def spark_condition(self, headers_col: Column) -> Column:
        """A Column over Spark's Kafka `headers` (array<struct<key: string, value: binary>>)."""
        from pyspark.sql import functions as F

        cond = _spark_term(self.first, headers_col)
        for op, term in self.rest:
            nxt = _spark_term(term, headers_col)
            cond = (cond & nxt) if op == "&" else (cond | nxt)
        return F.coalesce(cond, F.lit(False))


def parse(text: str, where: str = "source.header_filter") -> HeaderFilter:
    parts = re.split(r"([&|])", text)
    terms, ops = parts[0::2], parts[1::2]
    parsed = [_term(t, where, text) for t in terms]
    return HeaderFilter(parsed[0], tuple(zip(ops, parsed[1:], strict=True)))


def _term(raw: str, where: str, whole: str) -> Term:
    negated = raw.startswith("!")
    body = raw[1:] if negated else raw
    key, sep, value = body.partition(":")
    if not sep or not key:
        raise ConfigError(
            f"{where}: {raw!r} in {whole!r} is not a key:value term",
            hint='write terms as key:value joined by & and |, e.g. "depart:toy|depart:book&!env:test"', key=where,
        )
    return Term(key, value, negated)


def _holds(term: Term, headers: list[tuple[str, bytes | None]]) -> bool:
    want = term.value.encode("utf-8")
    found = any(k == term.key and (v or b"") == want for k, v in headers)
    return found != term.negated


def _spark_term(term: Term, headers_col: Column) -> Column:
    from pyspark.sql import functions as F

    found = F.exists(headers_col, lambda h: (h["key"] == F.lit(term.key))
                     & (F.coalesce(h["value"].cast("string"), F.lit("")) == F.lit(term.value)))
    found = F.coalesce(found, F.lit(False))  # no headers at all: no term is present
    return ~found if term.negated else found
