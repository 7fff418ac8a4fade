"""The real CDC messages in /work/shared/fixtures/cdc (README.md there says where each came from)."""

from __future__ import annotations

import os
import re
from pathlib import Path

FIXTURES = Path(os.environ.get("CDCSYNC_FIXTURES", Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "cdc"))

FORMAT_OF = {
    "canal.txt": "canal-json",
    "maxwell.txt": "maxwell-json",
    "debezium-mysql-with-schema.txt": "debezium-json",
    "debezium-mysql-no-schema.txt": "debezium-json",
    "debezium-postgres-no-schema.txt": "debezium-json",
    "debezium-mysql-all-types-with-schema.txt": "debezium-json",
}

_LICENSE = re.compile(r"\A\s*/\*.*?\*/", re.S)  # the Paimon file opens with an Apache license comment


def fixture_names() -> list[str]:
    """Every message file in the folder: tests parametrised over this fail when a new file lacks expectations."""
    assert FIXTURES.is_dir(), f"CDC fixtures not found at {FIXTURES} (set CDCSYNC_FIXTURES)"
    return sorted(p.name for p in FIXTURES.iterdir() if p.is_file() and p.name != "README.md")


def messages(name: str) -> list[bytes]:
    """The file's messages as Kafka values: license block stripped, one message per non-blank line."""
    text = _LICENSE.sub("", (FIXTURES / name).read_text(encoding="utf-8"))
    return [line.encode("utf-8") for line in text.splitlines() if line.strip()]


def clean_copy(name: str, directory: Path) -> Path:
    """The file as one-message-per-line input for `infer-schema --from-file`."""
    out = directory / name
    out.write_bytes(b"\n".join(messages(name)) + b"\n")
    return out
