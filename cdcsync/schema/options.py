"""The inference options: the `[schema]` section of config.toml, without needing the config loader."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cdcsync.errors import ConfigError
from cdcsync.schema.types import ColumnType, parse_type

if TYPE_CHECKING:
    from cdcsync.config.model import SchemaConfig

FLATTEN_SEP = "_"  # joins a flattened column's path: Hudi column names take letters, digits and _ only


@dataclass(frozen=True)
class InferOptions:
    columns: dict[str, ColumnType] = field(default_factory=dict)  # `[schema.columns]`: declared types win
    flatten_nested_columns: bool = False
    primitive_as_string: bool = False

    def __post_init__(self) -> None:
        parsed: dict[str, ColumnType] = {}
        for name, t in (self.columns or {}).items():
            if isinstance(t, ColumnType):
                parsed[name] = t
                continue
            try:
                parsed[name] = parse_type(t)
            except ValueError as e:
                raise ConfigError(f"schema.columns.{name}: {e}", hint='write a type such as "DECIMAL(18,2)", '
                                  '"BIGINT", "DOUBLE", "STRING", "DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "TIME"',
                                  key=f"schema.columns.{name}") from None
        object.__setattr__(self, "columns", parsed)

    @classmethod
    def from_config(cls, schema_config: SchemaConfig) -> InferOptions:
        """From a `cdcsync.config.SchemaConfig` (or anything with the same attributes)."""
        return cls(columns=dict(getattr(schema_config, "columns", None) or {}),
                   flatten_nested_columns=bool(getattr(schema_config, "flatten_nested_columns", False)),
                   primitive_as_string=bool(getattr(schema_config, "primitive_as_string", False)))
