"""The real CDC messages of the conformance corpus (README.md there says where each came from): the folder named by
CDCSYNC_FIXTURES, else ../shared/fixtures/cdc beside the repository. Missing, it fails the run, never skips."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

FIXTURES = Path(os.environ.get("CDCSYNC_FIXTURES", Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "cdc"))

FORMAT_OF = {
    "canal.txt": "canal-json",
    "maxwell.txt": "maxwell-json",
    "debezium-mysql-with-schema.txt": "debezium-json",
    "debezium-mysql-no-schema.txt": "debezium-json",
    "debezium-postgres-no-schema.txt": "debezium-json",
    "debezium-mysql-all-types-with-schema.txt": "debezium-json",
}

_LICENSE = re.compile(r"\A\s*/\*.*?\*/", re.S)  # the Paimon file opens with an Apache license comment


def require_corpus() -> Path:
    """The corpus folder; a missing one fails (at collection too), naming where it was looked for."""
    if not FIXTURES.is_dir():
        pytest.fail(f"conformance corpus not found at {FIXTURES}: set CDCSYNC_FIXTURES to the folder of real CDC "
                    "messages (make conformance needs it; make test does not)", pytrace=False)
    return FIXTURES


def fixture_names() -> list[str]:
    """Every message file in the folder: tests parametrised over this fail when a new file lacks expectations."""
    require_corpus()
    return sorted(p.name for p in FIXTURES.iterdir() if p.is_file() and p.name != "README.md")


def messages(name: str) -> list[bytes]:
    """The file's messages as Kafka values: license block stripped, one message per non-blank line."""
    text = _LICENSE.sub("", (require_corpus() / name).read_text(encoding="utf-8"))
    return [line.encode("utf-8") for line in text.splitlines() if line.strip()]


def clean_copy(name: str, directory: Path) -> Path:
    """The file as one-message-per-line input for `infer-schema --from-file`."""
    out = directory / name
    out.write_bytes(b"\n".join(messages(name)) + b"\n")
    return out


FORMAT_BY_PREFIX = {"debezium": "debezium-json", "canal": "canal-json", "maxwell": "maxwell-json"}


def fixture_format(path: Path) -> str:
    return FORMAT_BY_PREFIX[path.name.split("-")[0].split(".")[0]]


def fixture_messages(path: Path) -> list[str]:
    """One Kafka message per fixture message (the all-types file is one JSON document after a license block)."""
    import json

    text = path.read_text()
    if text.lstrip().startswith("/*"):
        text = re.sub(r"/\*.*?\*/", "", text, count=1, flags=re.S)
        return [json.dumps(json.loads(text))]
    return [line for line in text.splitlines() if line.strip()]
