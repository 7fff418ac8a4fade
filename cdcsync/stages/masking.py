"""[[mask]]: column masking in Spark SQL, applied to the row image before any table write, dead-letter or log.

hash    sha2(salt || value, 256) as hex text (deterministic: joins and upserts by a hashed key still work)
redact  NULL, or a fixed text
encrypt base64(aes_encrypt(value, key, 'GCM')): 12-byte IV || ciphertext || tag, what `cdcsync decrypt` and
        Spark's aes_decrypt(unbase64(v), unbase64(key), 'GCM') read back
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync import columns as C
from cdcsync.config.model import MASKED_TEXT
from cdcsync.errors import ConfigError
from cdcsync.formats.spec import format_spec
from cdcsync.schema.spark.columns import Col

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pyspark.sql import SparkSession

    from cdcsync.config.model import MaskConfig


def for_table(masks: Iterable[MaskConfig], table: str) -> dict[str, MaskConfig]:
    """{column: mask} for one target table (a mask with `tables` applies where that regex matches in full)."""
    return {m.column: m for m in masks if not m.tables or re.fullmatch(m.tables, table)}


def retype(cols: list[Col], masks: dict[str, MaskConfig]) -> list[Col]:
    """Masked values are text, except a NULL redaction's (MaskConfig.stores_text)."""
    out = []
    for c in cols:
        m = masks.get(c.name)
        out.append(replace(c, type="STRING") if m is not None and m.stores_text else c)
    return out


def check_key(masks: dict[str, MaskConfig], primary_key: list[str], table: str) -> None:
    """Only a hash keeps keys distinct and stable; GCM's random IV and redaction would break upserts."""
    for k in primary_key:
        m = masks.get(k)
        if m is not None and m.method != "hash":
            raise ConfigError(f"mask on column {k!r} ({m.method}) would destroy the primary key of table {table!r}",
                              hint="use method = \"hash\" for key columns (deterministic), or mask another column",
                              key="mask", column=k)


def apply(value: Column, mask: MaskConfig) -> Column:
    """The masked value of one column (NULL stays NULL)."""
    if mask.method == "hash":
        return F.sha2(F.concat(F.lit(mask.secret), value.cast("string")), 256)
    if mask.method == "redact":
        return F.when(value.isNotNull(), F.lit(mask.value)).cast("string") if mask.value is not None \
            else F.when(F.lit(False), value)
    key = F.unbase64(F.lit(mask.secret))
    return F.base64(F.aes_encrypt(value.cast("string").cast("binary"), key, F.lit("GCM")))


def protect_plans(spark: SparkSession, masks: Iterable[MaskConfig]) -> None:
    """Salts and keys are literals in the query plans: redact them wherever Spark prints a plan (explain, the
    SQL tab of the UI, event logs)."""
    secrets = sorted({m.secret for m in masks if m.secret})
    if secrets:
        spark.conf.set("spark.sql.redaction.string.regex", "|".join(r"\Q" + s + r"\E" for s in secrets))


def _scrub_text(text: Column, names: list[str]) -> Column:
    """Replace the value of every masked field inside JSON text (any depth, quoted or not, even truncated)."""
    alt = "|".join(r"\Q" + n + r"\E" for n in names)
    # possessive and unrolled: Java recurses per character on (a|b)*, and a long value would overflow the stack
    pattern = r'("(?:' + alt + r')"\s*:\s*)("[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"?|[^,}\]\s]+)'
    # an object or array value has no end a regex can find: drop the whole text rather than leave part in clear
    nested = text.rlike(r'"(?:' + alt + r')"\s*:\s*[\[{]')
    return F.when(nested, F.lit(None)).otherwise(F.regexp_replace(text, pattern, '$1"' + MASKED_TEXT + '"'))


def scrub_raw(df: DataFrame, masks: dict[str, MaskConfig], fmt: str = "json") -> DataFrame:
    """Bad rows carry the raw message: mask its fields before the dead-letter table and samples see it.
    A csv or raw body has no field names to find, so with any mask its value is dropped (NULL) instead."""
    if not masks:
        return df
    if not format_spec(fmt).field_names_in_body:
        value = F.lit(None).cast("string")
    else:
        value = _scrub_text(F.col(C.VALUE), sorted(masks))
    df = df.withColumn(C.VALUE, value).withColumn(C.RAW_VALUE, F.encode(value, "UTF-8"))
    if C.REASON in df.columns:  # a JSON Schema message quotes the failing value, which may be (or hold) a masked one
        where = F.regexp_extract(F.col(C.REASON_DETAIL), r"^(JSON Schema: [^:]*):", 1)
        hidden = F.concat(where, F.lit(": fails validate_with (message withheld: it may quote a masked value)"))
        df = df.withColumn(C.REASON_DETAIL, F.when(F.col(C.REASON) == "schema_validation", hidden)
                           .otherwise(F.col(C.REASON_DETAIL)))
    return scrub_metadata(df, masks, fmt)


def scrub_metadata(df: DataFrame, masks: dict[str, MaskConfig], fmt: str = "json") -> DataFrame:
    """The Kafka key and headers, wherever they are copied (metadata columns, dead letters): a JSON-object key
    has its masked fields replaced as in a value; any other key is dropped (it may be the masked value itself);
    a header named after a masked column is replaced, and masked fields inside a JSON header value too."""
    if not masks:
        return df
    names = sorted(masks)
    text = F.col(C.KEY).cast("string")
    json_key = F.ltrim(text).startswith("{") & F.lit(format_spec(fmt).field_names_in_body)
    df = df.withColumn(C.KEY, F.when(json_key, F.encode(_scrub_text(text, names), "UTF-8")))
    if not dict(df.dtypes)[C.HEADERS].startswith("array"):  # a source without headers: nothing to scrub
        return df
    return df.withColumn(C.HEADERS, _scrub_headers(F.col(C.HEADERS), names))


def _scrub_headers(headers: Column, names: list[str]) -> Column:
    masked = F.encode(F.lit(MASKED_TEXT), "UTF-8")
    alt = "|".join(r"\Q" + n + r"\E" for n in names)

    def one(h: Column) -> Column:
        text = F.decode(h["value"], "UTF-8")
        value = (F.when(h["key"].isin(names) & h["value"].isNotNull(), masked)
                 .when(text.rlike(r'"(?:' + alt + r')"\s*:'), F.encode(_scrub_text(text, names), "UTF-8"))
                 .otherwise(h["value"]))
        return F.struct(h["key"].alias("key"), value.alias("value"))

    return F.transform(headers, one)
