"""The smallest valid config.toml, for tests that vary one part of it."""

from __future__ import annotations

from pathlib import Path


def minimal(sink_path: str = "/tmp/x", fmt: str = "debezium-json") -> str:
    return f"""[source]
bootstrap_servers = "localhost:9092"
topics = ["t"]
format = "{fmt}"

[sink]
path = "{sink_path}"
table_name = "t"
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(text)
    return p
