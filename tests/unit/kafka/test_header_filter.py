"""The header-filter grammar (issue 8): strictly left-to-right evaluation, negation, values with colons."""

from __future__ import annotations

import pytest

from cdcsync.errors import ConfigError
from cdcsync.kafka.header_filter import Term, parse


def h(**kv):
    return [(k, v.encode()) for k, v in kv.items()]


def test_parse_reads_terms_operators_and_negation():
    f = parse("depart:toy|depart:book&!env:test")
    assert f.first == Term("depart", "toy")
    assert f.rest == (("|", Term("depart", "book")), ("&", Term("env", "test", negated=True)))


@pytest.mark.parametrize("headers, expected", [
    (h(depart="toy"), True),
    (h(depart="book"), True),
    (h(depart="toy", env="test"), False),
    (h(depart="food"), False),
    (h(depart="book", env="prod"), True),
])
def test_reference_example(headers, expected):
    assert parse("depart:toy|depart:book&!env:test").matches(headers) is expected


def test_strictly_left_to_right_not_and_before_or():
    # a&b|c is (a&b)|c; "a|b&c" is (a|b)&c, not a|(b&c) as operator precedence would read it
    f = parse("a:1|b:1&c:1")
    assert f.matches(h(a="1")) is False  # precedence would say True
    assert f.matches(h(a="1", c="1")) is True
    g = parse("a:1&b:1|c:1")
    assert g.matches(h(c="1")) is True


def test_values_with_colons_split_at_the_first_colon():
    f = parse("url:http://x:8080/path")
    assert f.first == Term("url", "http://x:8080/path")
    assert f.matches([("url", b"http://x:8080/path")]) is True


def test_negation_of_a_missing_header_holds():
    assert parse("!env:test").matches([]) is True
    assert parse("!env:test").matches(h(env="test")) is False


def test_any_header_with_the_key_may_match_and_values_compare_as_utf8():
    f = parse("tag:é")
    assert f.matches([("tag", b"x"), ("tag", "é".encode())]) is True
    assert f.matches([("tag", b"e")]) is False


def test_empty_value_matches_an_empty_or_null_header():
    assert parse("k:").matches([("k", None)]) is True


@pytest.mark.parametrize("bad", ["depart", "depart:toy|", ":toy", "a:1&&b:2"])
def test_malformed_filters_are_config_errors(bad):
    with pytest.raises(ConfigError) as e:
        parse(bad)
    assert "source.header_filter" in str(e.value)
