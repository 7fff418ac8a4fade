"""The committed CDC files in tests/fixtures/cdc are exactly what the generator writes now, and each is described."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import cdc_cases, generate

ROOT = Path(__file__).resolve().parents[2]


def test_committed_files_equal_the_generator_output():
    want = generate.rendered()
    assert cdc_cases.names() == sorted(want), "a file without a history, or a history without its file"
    for name, text in want.items():
        assert (cdc_cases.FIXTURES / name).read_text(encoding="utf-8") == text, (
            f"{name} drifted from tests/fixtures/histories.py: run `python -m tests.fixtures.generate`")


def test_generate_check_agrees():
    # the command a developer runs after editing a history; here it must find nothing to rewrite
    p = subprocess.run([sys.executable, "-m", "tests.fixtures.generate", "--check"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_every_file_has_a_readme_row():
    readme = (cdc_cases.FIXTURES.parent / "README.md").read_text(encoding="utf-8")
    assert all(f"| `{name}` |" in readme for name in cdc_cases.names())


@pytest.mark.parametrize("name", cdc_cases.names())
def test_values_are_json_objects_and_keys_json_or_absent(name):
    records = cdc_cases.records(name)
    assert 1 <= len(records) <= 40  # small files: tens of messages
    for key, value in records:
        assert key is None or isinstance(json.loads(key), dict)
        assert value is None or isinstance(json.loads(value), dict)


@pytest.mark.parametrize("name", cdc_cases.names())
def test_every_delete_is_followed_by_its_tombstone(name):
    # Debezium's tombstones.on.delete: the key again, with a null value (Canal and Maxwell send none)
    records = cdc_cases.records(name)
    for i, (key, value) in enumerate(records):
        if value is None:
            prev_key, prev = records[i - 1]
            doc = json.loads(prev)
            assert prev_key == key and doc.get("payload", doc)["op"] == "d"
    if cdc_cases.format_of(name) == "debezium-json":
        deletes = sum(e.op == "delete" for e in cdc_cases.case(name).table.events)
        assert sum(v is None for _, v in records) == deletes > 0
