"""The batch's column names are spelled once, in cdcsync/columns.py: no other module of cdcsync/ writes one as a
string (plain, or the text of an f-string), so a stage's columns are found by reading one module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from cdcsync import columns as C

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"_[a-z][a-z0-9]*(?:_[a-z0-9]+)*_?")  # how every name in columns.py is spelled
# strings shaped like a column name that are not one: attributes, modules, folder and key suffixes, sqlglot aliases
NOT_COLUMNS = {
    "cdcsync/engine/pipeline.py": {"_inner", "_lock"},  # its own attributes
    "cdcsync/runtime/session.py": {"_submit"},  # the package run by spark-submit
    "cdcsync/jvm_errors.py": {"_origin"},  # py4j's attribute
    "cdcsync/probe/net.py": {"_ssl", "_test_decode_cert"},  # CPython's attributes
    "cdcsync/toolchain/jars.py": {"_cdcsync_pyspark_version"},  # a module name
    "cdcsync/sinks/hudi.py": {"_cdcsync"},  # the commit metadata's key prefix ("_cdcsync.")
    "cdcsync/stages/deletes.py": {"_cdcsync_delete_markers", "_cdcsync_deletes"},  # folder suffixes
    "cdcsync/transform/types.py": {"_c"},  # positional aliases inside one sqlglot expression
}


def strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Each string constant's line and text, in order: an f-string's text before its first expression counts (the
    rest follows a value, so starts no name), its expressions are walked."""
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values[1:]}
    found = [(n.lineno, n.col_offset, n.value) for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in inner]
    return [(line, text) for line, _, text in sorted(found)]


def spelled(text: str) -> str | None:
    """The column-like name a string starts with (`_t` of "_t.`x`"), else None."""
    m = NAME.match(text)
    return m.group(0) if m and (m.end() == len(text) or text[m.end()] in ".`{") else None


def test_columns_py_spells_each_name_once():
    names = [v for k, v in vars(C).items() if k.isupper() and isinstance(v, str)]
    assert len(names) == len(set(names)) and all(spelled(n) for n in names)


def test_no_other_module_spells_a_column_name():
    found = []
    for path in sorted((ROOT / "cdcsync").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "cdcsync/columns.py":
            continue
        allowed = NOT_COLUMNS.get(rel, set())
        for line, text in strings(ast.parse(path.read_text(encoding="utf-8"))):
            name = spelled(text)
            if name and name.rstrip("_") not in {a.rstrip("_") for a in allowed} and not _docstring_like(text):
                found.append(f"{rel}:{line}: {text!r}")
    assert not found, "name the column in cdcsync/columns.py and use it from there:\n" + "\n".join(found)


def _docstring_like(text: str) -> bool:
    return " " in text


def test_the_check_finds_each_spelling():
    tree = ast.parse('F.col("_op"); F.col(f"_t.`{c}`"); x = "_prev_"; F.col(f"_held_{n}"); r["_kafka_topic"]; '
                     'f"{out}_avro_{n}"')
    assert [spelled(t) for _, t in strings(tree)] == ["_op", "_t", "_prev_", "_held_", "_kafka_topic"]
    assert spelled("_cdcsync.") == "_cdcsync" and spelled("__init__") is None and spelled("_ ok") is None
