"""Schema inference and evolution, JVM-free: types and their widening lattice, the streaming inferrer, renderers."""

from cdcsync.schema.infer import SchemaInferrer
from cdcsync.schema.model import ColumnSchema, TableSchema
from cdcsync.schema.options import InferOptions
from cdcsync.schema.types import ColumnType, Kind, holds, is_widening, parse_type, widen

__all__ = ["ColumnSchema", "ColumnType", "InferOptions", "Kind", "SchemaInferrer", "TableSchema",
           "holds", "is_widening", "parse_type", "widen"]
