"""json: each message is one JSON object, and that object is the row (always an upsert)."""

from __future__ import annotations

from cdcsync.formats.base import Change, load_object, skip
from cdcsync.formats.vocabulary import TOMBSTONE, UPSERT


class JsonDecoder:
    name = "json"

    def __init__(self, typed: bool = False, max_bytes: int | None = None):
        self.max_bytes = max_bytes

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip(TOMBSTONE)
        return [Change(UPSERT, None, load_object(value, self.max_bytes), None, None, None)]
