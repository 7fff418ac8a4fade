"""The Kafka key in Spark: its text (an Avro key decoded to JsonConverter's text), the object it holds, and
`key_fields` (Flink's `key.fields`): columns taken from that object for each row image — what
formats/key_fields.py does in Python."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats.vocabulary import CHANGE_OPS


def key_text(df: DataFrame) -> Column:
    """The key as JSON text: the decoded Avro key when there is one, else the key's bytes as UTF-8."""
    return F.col(C.KEY_TEXT) if C.KEY_TEXT in df.columns else F.col(C.KEY).cast("string")


def key_object(text: Column) -> Column:
    """The key's row: JsonConverter's `payload` when it wraps one, else the key itself."""
    return F.coalesce(F.get_json_object(text, "$.payload"), text)


def member_json(obj: Column, name: str) -> Column:
    """The JSON text of member `name` of the object text `obj` as written, NULL when absent or null.
    get_json_object gives a string unquoted, so a member that does not parse as a number, boolean, array or object
    is quoted again."""
    text = F.get_json_object(obj, f"$.{name}")  # names are plain: config.schema

    def parses_as(ddl: str) -> Column:
        return F.from_json(obj, f"`{name}` {ddl}", {"allowNonNumericNumbers": "false"})[name].isNotNull()

    bare = parses_as("DOUBLE") | parses_as("BOOLEAN") | parses_as("ARRAY<STRING>") | parses_as("MAP<STRING,STRING>")
    quoted = F.to_json(F.array(text))
    return F.when(text.isNull(), None).when(bare, text).otherwise(quoted.substr(F.lit(2), F.length(quoted) - 2))


def with_key_fields(env: DataFrame, names: list[str]) -> DataFrame:
    """Each row image with the key's members `names` in front: the row's own member of a name, later in the text,
    wins (Flink's value.fields-include = ALL), so the key fills the columns the value lacks. Spliced at the row's
    first '{', as text after the object stays where it was."""
    obj = key_object(key_text(env))
    members = [F.when(m.isNotNull(), F.concat(F.lit(f'"{n}":'), m)) for n in names for m in [member_json(obj, n)]]
    extra = F.concat_ws(",", *members)
    row = F.col(C.ROW)
    at = F.instr(row, "{")
    rest = row.substr(at + 1, F.length(row))
    spliced = F.concat(row.substr(F.lit(1), at), extra, F.when(rest.rlike(r"^\s*\}"), "").otherwise(","), rest)
    keep = row.isNull() | ~F.col(C.OP).isin(*CHANGE_OPS) | (extra == "") | (at == 0)
    return env.withColumn(C.ROW, F.when(keep, row).otherwise(spliced))
