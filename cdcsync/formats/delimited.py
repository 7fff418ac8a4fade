"""csv: one record per message, fields mapped by position to the configured column names.

An empty field is null (CSV has no other way to say so). Without configured names, columns are _c0, _c1 … (Spark's
convention), and every record must then have as many fields as the first one seen.
"""

from __future__ import annotations

import csv
import io

from cdcsync import columns as C
from cdcsync.formats.base import BadRecord, Change, skip
from cdcsync.formats.vocabulary import BAD_FIELD_COUNT, INVALID_CSV, INVALID_UTF8, OVERSIZED, TOMBSTONE, UPSERT


class CsvDecoder:
    name = "csv"

    def __init__(self, typed: bool = False, max_bytes: int | None = None, columns: list[str] | None = None,
                 field_delimiter: str = ","):
        if len(field_delimiter) != 1:
            raise ValueError("field_delimiter must be one character")
        self.columns = list(columns) if columns else None
        self.delimiter = field_delimiter
        self.max_bytes = max_bytes

    def parse(self, value: bytes | None, key: bytes | None = None) -> list[Change]:
        if value is None:
            return skip(TOMBSTONE)
        if self.max_bytes is not None and len(value) > self.max_bytes:
            raise BadRecord(OVERSIZED, f"{len(value)} bytes is more than the limit of {self.max_bytes}")
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BadRecord(INVALID_UTF8, f"not UTF-8 at byte {e.start}") from None
        text = text.rstrip("\r\n")
        try:
            records = list(csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter, strict=True))
        except csv.Error as e:
            raise BadRecord(INVALID_CSV, f"not a CSV record: {e}") from None
        if len(records) != 1:  # a line break outside quotes
            raise BadRecord(INVALID_CSV, f"expected one CSV record, got {len(records)}")
        fields = records[0]
        if self.columns is None:
            self.columns = [f"{C.CSV_FIELD}{i}" for i in range(len(fields))]
        if len(fields) != len(self.columns):
            names = ", ".join(self.columns)
            raise BadRecord(BAD_FIELD_COUNT, f"{len(fields)} fields, expected {len(self.columns)} ({names})")
        row = {c: (f if f != "" else None) for c, f in zip(self.columns, fields, strict=True)}
        return [Change(UPSERT, None, row, None, None, None, text_values=True)]
