"""Replay changes in order into the table state they leave: what a correct sink must end up holding."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cdcsync.formats.base import Change
from cdcsync.formats.vocabulary import DELETE, UPSERT


def final_state(changes: Iterable[Change], key_columns: list[str] | None = None,
                table: str | None = None) -> dict[tuple[Any, ...], dict[str, Any]]:
    """{key tuple: row} after applying upserts (the newest image wins) and deletes, in order.

    `key_columns` defaults to each change's own primary key; `table` keeps only that source table's changes.
    """
    state: dict[tuple[Any, ...], dict[str, Any]] = {}
    for ch in changes:
        if ch.op not in (UPSERT, DELETE) or (table is not None and ch.table != table):
            continue
        cols = key_columns or ch.key_columns
        if not cols:
            raise ValueError(f"no primary key for a {ch.op} of table {ch.table!r}: pass key_columns")
        row = ch.row or {}  # a change without a row lacks every key column
        missing = [c for c in cols if c not in row]
        if missing:
            raise ValueError(f"{ch.op} of table {ch.table!r} lacks key column(s) {missing}: {ch.row}")
        key = tuple(row[c] for c in cols)
        if ch.op == UPSERT:
            state[key] = row
        else:
            state.pop(key, None)
    return state
