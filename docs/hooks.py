"""MkDocs hook: the pages that tables in the code already say are generated at build time, never copied by hand —
the configuration reference (the JSON Schema of cdcsync/config/schema.py, with cdcsync/config/reference.py's
defaults and meanings) and the exit codes (cdcsync/exit_codes.py's MEANING)."""

from __future__ import annotations

import re

from mkdocs.structure.files import File

from cdcsync.config.reference import INTROS, KEYS
from cdcsync.config.schema import CONFIG_SCHEMA
from cdcsync.exit_codes import MEANING

_HEADINGS = {"route": "[[route]]", "mask": "[[mask]]"}


def schema_keys(spec: dict) -> list[str]:
    """A section's keys as the schema has them ([spark] takes any spark.* key besides master)."""
    if spec.get("type") == "array":
        spec = spec.get("items", {})
    return list(spec.get("properties", {})) + (["spark.*"] if spec.get("patternProperties") else [])


def _up(text: str) -> str:
    """Links written relative to docs/, from a page one folder down."""
    return re.sub(r"\]\((?!https?:|#)", "](../", text)


def _allowed(spec: dict) -> str:
    if "enum" in spec:
        return " · ".join(f"`{v}`" for v in spec["enum"])
    kind = spec.get("type", "")
    return " or ".join(kind) if isinstance(kind, list) else kind


def configuration_page() -> str:
    out = ["# Configuration reference", "",
           "Generated from the config's JSON Schema (`cdcsync/config/schema.py`) and the meanings in "
           "`cdcsync/config/reference.py`; how the keys work together is in [Configuration](../configuration.md).",
           ""]
    for section, spec in CONFIG_SCHEMA["properties"].items():
        out += [f"## `{_HEADINGS.get(section, f'[{section}]')}`", ""]
        if section in INTROS:
            out += [_up(INTROS[section]), ""]
        props = (spec.get("items", spec)).get("properties", {})
        out += ["| key | default | allowed | meaning |", "|---|---|---|---|"]
        for key in schema_keys(spec):
            default, meaning = KEYS[section][key]
            out.append(f"| `{key}` | {default} | {_allowed(props.get(key, {}))} | "
                       f"{_up(meaning)} |")
        out.append("")
    return "\n".join(out)


def exit_codes_page() -> str:
    out = ["# Exit codes", "",
           "One table in `cdcsync/exit_codes.py`, from which this page is generated; each code has a test.", "",
           "| code | name | meaning |", "|---|---|---|"]
    out += [f"| {int(code)} | {code.name} | {text} |" for code, text in MEANING.items()]
    return "\n".join(out) + "\n"


def on_files(files, config):
    for path, content in (("reference/configuration.md", configuration_page()),
                          ("reference/exit-codes.md", exit_codes_page())):
        files.append(File.generated(config, path, content=content))
    return files
