"""formats/spec.py is the one place a format's traits are declared: each spec names decoders that exist, the
config schema admits exactly its formats, and no other module lists format names to decide by."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cdcsync.config.schema import SOURCE
from cdcsync.formats import spec as specs
from cdcsync.formats.base import Decoder
from cdcsync.formats.spark import envelope

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("fmt", specs.FORMATS)
def test_each_spec_names_its_two_decoders(fmt):
    s = specs.format_spec(fmt)
    assert isinstance(s.decoder_class(), type) and hasattr(s.decoder_class(), "parse")
    assert isinstance(s.decoder_class().parse, type(Decoder.parse))
    assert callable(getattr(envelope, s.spark_decoder))
    assert s.reads_as in specs.SPECS  # an envelope that is itself a format


def test_the_config_schema_admits_exactly_the_declared_formats():
    assert SOURCE["properties"]["format"]["enum"] == list(specs.FORMATS)


def test_traits_as_the_docs_state_them():
    assert specs.with_trait(schemaless=True) == ("debezium-json", "canal-json", "maxwell-json", "json")
    assert specs.with_trait(changes=True) == ("debezium-json", "canal-json", "maxwell-json", "avro",
                                              "avro-confluent")
    assert specs.with_trait(named_fields=True) == ("json", "csv", "avro", "avro-confluent")
    assert specs.with_trait(drop_events=True) == ("debezium-json", "canal-json", "maxwell-json")
    assert specs.with_trait(field_names_in_body=False) == ("csv", "raw")
    with pytest.raises(ValueError, match="unknown format 'protobuf'; expected one of debezium-json"):
        specs.format_spec("protobuf")


def _format_name_groups(tree: ast.AST):
    """Tuples, lists and sets of two or more string literals that are all format names."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2:
            values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(values) == len(node.elts) and set(values) <= set(specs.FORMATS):
                yield node.lineno, values


def test_no_module_decides_by_a_list_of_format_names():
    found = [f"{path.relative_to(ROOT)}:{line}: {names}"
             for path in sorted((ROOT / "cdcsync").rglob("*.py")) if path.name != "spec.py"
             for line, names in _format_name_groups(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, "declare the trait in formats/spec.py instead:\n" + "\n".join(found)
