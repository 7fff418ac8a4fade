"""A config against its JSON Schema (config/schema.py): each problem as one line naming the key, the closest valid
key for a typo, and a value only when it cannot hold a secret."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from cdcsync.config.schema import CONFIG_SCHEMA
from cdcsync.errors import ConfigError
from cdcsync.secrets import is_secret_key

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jsonschema import ValidationError


def validate(data: dict[str, Any], path: Path) -> None:
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(CONFIG_SCHEMA).iter_errors(data), key=lambda e: list(map(str, e.path)))
    if not errors:
        return
    lines = [_describe(e) for e in errors]
    first_key = key_text(tuple(errors[0].absolute_path)) or "(top level)"
    raise ConfigError(
        f"{path}: {len(lines)} problem{'s' if len(lines) > 1 else ''} in the configuration:\n  - "
        + "\n  - ".join(lines),
        hint="see docs/reference/configuration.md (make docs) for every key",
        file=str(path), key=first_key, problems=lines,
    )


def _describe(err: ValidationError) -> str:
    trail = tuple(err.absolute_path)
    where = key_text(trail)
    v = err.validator
    instance: Any = err.instance  # set on every error iter_errors yields (Unset is only the constructor's default)
    if v == "additionalProperties":
        schema = cast("Mapping[str, Any]", err.schema)  # an additionalProperties error comes from an object schema
        known = sorted(schema.get("properties", {}))
        extra = [k for k in instance if k not in schema.get("properties", {}) and not _pattern_ok(schema, k)]
        prefixes = [p.strip("^\\").replace("\\.", ".") for p in schema.get("patternProperties", {})]
        out = []
        for k in extra:
            full = key_text((*trail, k))
            close = difflib.get_close_matches(k, known, n=1, cutoff=0.6)
            valid = ", ".join(known) + "".join(f", or keys starting with '{p}'" for p in prefixes)
            tip = f"; did you mean '{key_text((*trail, close[0]))}'?" if close else f"; valid keys here: {valid}"
            out.append(f"unknown key '{full}'{tip}")
        return "; ".join(out)
    if v == "required":
        missing = err.message.split("'")[1]
        return f"missing required key '{key_text((*trail, missing))}'"
    if v == "oneOf" and trail == ("source",):
        return "[source] needs exactly one of 'topics' or 'topic_pattern'"
    if v == "oneOf" and trail == ("catalog",):
        return ("[catalog] needs exactly one of 'metastore_uri' (a Hive metastore, thrift://host:9083) or "
                "'metastore_dir' (an embedded one on this machine)")
    if v == "enum":
        allowed: Any = err.validator_value
        close = difflib.get_close_matches(str(instance), [str(a) for a in allowed], n=1, cutoff=0.5)
        tip = f" (did you mean '{close[0]}'?)" if close else ""
        return f"'{where}' is {_safe(trail, instance)}, expected one of {', '.join(map(str, allowed))}{tip}"
    if v == "type":
        want: Any = err.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        got = f"{type(instance).__name__} {_safe(trail, instance)}"
        return f"'{where}' must be {_article(want)} {want}, not {got}"
    if v == "pattern":
        return f"'{where}' = {_safe(trail, instance)} does not match the expected form {err.validator_value}"
    return f"'{where}': {err.message}"


def _pattern_ok(schema: Mapping[str, Any], key: str) -> bool:
    return any(re.search(p, key) for p in schema.get("patternProperties", {}))


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _safe(trail: tuple[str | int, ...], value: Any) -> str:
    """The value for a message, unless it could hold a secret: under a secret key, a table or list (its members'
    keys are not looked at), or text that names one (a JAAS line, `password=`)."""
    if isinstance(value, (dict, list)) or any(is_secret_key(p) for p in trail if isinstance(p, str)) or \
            (isinstance(value, str) and is_secret_key(value)):
        return "(hidden)"
    return repr(value)


def key_text(trail: tuple[str | int, ...]) -> str:
    """A key's path as the config spells it: `source.properties."sasl.mechanism"`, `route[0].sink_table`."""
    out = ""
    for part in trail:
        if isinstance(part, int):
            out += f"[{part}]"
        else:  # dotted free-form keys (hoodie.x.y) are quoted, as TOML would need them
            name = f'"{part}"' if "." in str(part) else str(part)
            out += f".{name}" if out else name
    return out
