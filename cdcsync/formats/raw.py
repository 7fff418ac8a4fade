"""raw: the message text in one column, `value`."""

from __future__ import annotations

from cdcsync.formats.base import BadRecord, Change, skip
from cdcsync.formats.vocabulary import INVALID_UTF8, OVERSIZED, TOMBSTONE, UPSERT


class RawDecoder:
    name = "raw"

    def __init__(self, typed: bool = False, max_bytes: int | None = None, encoding: str = "utf-8"):
        self.max_bytes = max_bytes
        self.encoding = encoding

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip(TOMBSTONE)
        if self.max_bytes is not None and len(value) > self.max_bytes:
            raise BadRecord(OVERSIZED, f"{len(value)} bytes is more than the limit of {self.max_bytes}")
        try:
            text = value.decode(self.encoding)
        except UnicodeDecodeError as e:
            raise BadRecord(INVALID_UTF8, f"not {self.encoding} at byte {e.start}") from None
        return [Change(UPSERT, None, {"value": text}, None, None, None)]
