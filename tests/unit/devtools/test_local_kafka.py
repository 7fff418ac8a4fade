"""The local broker helper: the KRaft cluster id it formats storage with."""
from __future__ import annotations

import uuid
from pathlib import Path

from devtools import local_kafka


def test_cluster_id_never_starts_with_a_dash(monkeypatch):
    # 0xF8 encodes to '-' in base64url: kafka-storage's argparse once read such an id as an option (CI failure)
    dashed = uuid.UUID(bytes=b"\xf8" + b"\x01" * 15)
    plain = uuid.UUID(bytes=b"\x10" + b"\x01" * 15)
    draws = iter([dashed, dashed, plain])
    monkeypatch.setattr(local_kafka.uuid, "uuid4", lambda: next(draws))
    cid = local_kafka._cluster_id()
    assert cid == "EAEBAQEBAQEBAQEBAQEBAQ"
    assert len(cid) == 22


def test_format_args_keep_the_cluster_id_one_token():
    args = local_kafka.format_args(Path("/d/server.properties"), "-AbC", [("SCRAM-SHA-256", "u", "p")])
    assert args == [
        "format", "--cluster-id=-AbC", "-c", "/d/server.properties",
        "--add-scram", "SCRAM-SHA-256=[name=u,password=p]",
    ]
