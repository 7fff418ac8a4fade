"""Topics of plain keyed rows in Spark: a tombstone that deletes its key (`[source] tombstones = "delete"`), and a
flattened stream's row whose `[source] deleted_field` is true or "true" (Debezium's ExtractNewRecordState), which
deletes its key, with that field taken out of the row image's text so that no later step (the columns, the check
that a batch fits the known ones, the typed parse) ever meets it — what formats/upserts.py does in Python."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.formats import vocabulary as v
from cdcsync.formats.spark.key_fields import key_object, key_text, member_json
from cdcsync.formats.upserts import Upserts, deleted_field_detail, missing_key_detail

# a JSON value that is no object or array; strings unrolled and possessive (Java's engine recurses per character)
_SCALAR = r'(?:true|false|null|"[^"\\]*+(?:\\.[^"\\]*+)*+"|-?[0-9][0-9.eE+-]*+)'


def with_upserts(env: DataFrame, upserts: Upserts, key_fields: list[str] | None) -> DataFrame:
    """The decoded stream (envelope.decode_envelope's, `key_fields` taken in) with the deletes `upserts` reads."""
    if upserts.tombstones:
        env = _tombstone_deletes(env, key_fields or [])
    return _flattened(env, upserts.deleted_field) if upserts.deleted_field else env


def _key_image(env: DataFrame, key_fields: list[str]) -> Column:
    """formats.upserts.tombstone_delete's image: the key's row, or its `key_fields` members; NULL when empty."""
    obj = key_object(key_text(env))
    if not key_fields:
        return F.when(F.coalesce(F.size(F.json_object_keys(obj)) > 0, F.lit(False)), obj)
    members = F.concat_ws(",", *[F.when(m.isNotNull(), F.concat(F.lit(f'"{n}":'), m))
                                 for n in key_fields for m in [member_json(obj, n)]])
    return F.when(members != "", F.concat(F.lit("{"), members, F.lit("}")))


def _tombstone_deletes(env: DataFrame, key_fields: list[str]) -> DataFrame:
    env = env.withColumn(C.TOMBSTONE_KEY, F.when((F.col(C.SKIP) == v.TOMBSTONE) & F.col(C.RAW_VALUE).isNull(),
                                             F.coalesce(_key_image(env, key_fields), F.lit(""))))
    tomb, image = F.col(C.TOMBSTONE_KEY).isNotNull(), F.col(C.TOMBSTONE_KEY)
    lost = image == ""  # a tombstone whose key names no row
    return env.withColumns({  # one projection: each plan step is analysed again over the whole plan
        C.OP: F.when(tomb, F.when(~lost, v.OP_DELETE)).otherwise(F.col(C.OP)),
        C.SKIP: F.when(tomb, None).otherwise(F.col(C.SKIP)),
        C.BAD: F.when(tomb & lost, v.MISSING_KEY).otherwise(F.col(C.BAD)),
        C.BAD_DETAIL: F.when(tomb & lost, missing_key_detail(key_fields)).otherwise(F.col(C.BAD_DETAIL)),
        C.KEY_ROW: F.when(tomb & ~lost, image).otherwise(F.col(C.KEY_ROW))}).drop(C.TOMBSTONE_KEY)


def _flattened(env: DataFrame, name: str) -> DataFrame:
    """`name` is a plain name (config.schema), so it needs no quoting inside the patterns."""
    row = F.col(C.ROW)
    member = rf'\s*+"{name}"\s*+:\s*+{_SCALAR}\s*+'
    live = F.col(C.OP).isin(*v.CHANGE_OPS) & row.isNotNull()
    carried = live & F.coalesce(F.array_contains(F.json_object_keys(row), name), F.lit(False))
    value = F.get_json_object(row, f"$.{name}")
    # the one member found by a text search over the image, at any depth, must be the row's own
    found = F.size(F.regexp_extract_all(row, F.lit(f"[{{,]{member}(?=[,}}])"), 0))
    nested = F.ltrim(value).startswith("{") | F.ltrim(value).startswith("[")
    # "!": the flag cannot be told; else "=" and its text (a JSON true and "true" both read as true)
    env = env.withColumn(C.FLAG, F.when(carried, F.when((found != 1) | F.coalesce(nested, F.lit(False)), "!")
                                         .otherwise(F.concat(F.lit("="), F.coalesce(value, F.lit(""))))))
    flag = F.col(C.FLAG)
    bad, ok = flag == "!", flag.startswith("=")
    # the member is the last one (its comma before it goes), or followed by a comma (which goes with it)
    stripped = F.regexp_replace(F.regexp_replace(row, f",{member}(?=\\}})", ""),
                                f"([{{,]){member}(?:,|(?=\\}}))", "$1")
    return env.withColumns({
        C.ROW: F.when(ok, stripped).otherwise(row),
        C.OP: F.when(bad, None).when(flag == f"={v.DELETED_TEXT}", v.OP_DELETE).otherwise(F.col(C.OP)),
        C.BAD: F.when(bad, v.BAD_VALUE).otherwise(F.col(C.BAD)),
        C.BAD_DETAIL: F.when(bad, deleted_field_detail(name)).otherwise(F.col(C.BAD_DETAIL))}).drop(C.FLAG)
