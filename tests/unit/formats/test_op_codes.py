"""The Spark `_op` column's (columns.OP's) codes are spelled once, in formats/vocabulary.py: no module compares
`_op` with a literal or writes one into it."""

from __future__ import annotations

import re
from pathlib import Path

from cdcsync.formats import vocabulary as v

ROOT = Path(__file__).resolve().parents[3]
CODE = "|".join(map(re.escape, v.SPARK_OP.values()))
COMPARED = rf"""F\.col\((?:"_op"|C\.OP)\)\s*(?:[!=]=\s*|\.isin\([^)]*)["'](?:{CODE})["']"""  # == "d", .isin("u", …)
WRITTEN = rf"""F\.when\([^()]*,\s*["'](?:{CODE})["']\)"""  # F.when(cond, "s")
LITERAL = re.compile(f"{COMPARED}|{WRITTEN}")


def test_the_op_codes_are_distinct_single_letters():
    assert sorted(v.SPARK_OP.values()) == ["d", "s", "u"] and v.CHANGE_OPS == (v.OP_UPSERT, v.OP_DELETE)


def test_no_module_spells_an_op_code():
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in sorted((ROOT / "cdcsync").rglob("*.py"))
             if p.name != "vocabulary.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if LITERAL.search(line)]
    assert not found, "use formats/vocabulary.py's OP_UPSERT, OP_DELETE, OP_SKIP, CHANGE_OPS:\n" + "\n".join(found)


def test_the_check_finds_a_literal():
    assert LITERAL.search('x = F.col("_op").isin("u", "d")') and LITERAL.search("F.col(\"_op\") == 's'")
    assert LITERAL.search('F.when(~keep, "s")') and not LITERAL.search('F.col("_op").isin(*CHANGE_OPS)')
    assert LITERAL.search("F.col(C.OP) == 'd'") and not LITERAL.search("F.col(C.OP).isin(*CHANGE_OPS)")
