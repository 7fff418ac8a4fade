"""[[mask]]: column masking in Spark SQL, applied to the row image before any table write, dead-letter or log.

hash    sha2(salt || value, 256) as hex text (deterministic: joins and upserts by a hashed key still work)
redact  NULL, or a fixed text
encrypt base64(aes_encrypt(value, key, 'GCM')): 12-byte IV || ciphertext || tag, what `cdcsync decrypt` and
        Spark's aes_decrypt(unbase64(v), unbase64(key), 'GCM') read back
"""

from __future__ import annotations

import re
from dataclasses import replace

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdcsync.errors import ConfigError
from cdcsync.schema.spark.columns import Col

MASKED_TEXT = "***masked***"  # what a masked field's value becomes inside dead-lettered raw JSON


def for_table(masks, table: str) -> dict:
    """{column: mask} for one target table (a mask with `tables` applies where that regex matches in full)."""
    return {m.column: m for m in masks if not m.tables or re.fullmatch(m.tables, table)}


def retype(cols: list[Col], masks: dict) -> list[Col]:
    """Masked values are text, except a NULL redaction, which keeps the column's type."""
    out = []
    for c in cols:
        m = masks.get(c.name)
        keep = m is None or (m.method == "redact" and m.value is None)
        out.append(c if keep else replace(c, type="STRING"))
    return out


def check_key(masks: dict, primary_key: list[str], table: str) -> None:
    """Only a hash keeps keys distinct and stable; GCM's random IV and redaction would break upserts."""
    for k in primary_key:
        m = masks.get(k)
        if m is not None and m.method != "hash":
            raise ConfigError(f"mask on column {k!r} ({m.method}) would destroy the primary key of table {table!r}",
                              hint="use method = \"hash\" for key columns (deterministic), or mask another column",
                              key="mask", column=k)


def apply(value: Column, mask) -> Column:
    """The masked value of one column (NULL stays NULL)."""
    if mask.method == "hash":
        return F.sha2(F.concat(F.lit(mask.secret), value.cast("string")), 256)
    if mask.method == "redact":
        return F.when(value.isNotNull(), F.lit(mask.value)).cast("string") if mask.value is not None \
            else F.when(F.lit(False), value)
    key = F.unbase64(F.lit(mask.secret))
    return F.base64(F.aes_encrypt(value.cast("string").cast("binary"), key, F.lit("GCM")))


def protect_plans(spark, masks) -> None:
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


def scrub_raw(df: DataFrame, masks: dict, fmt: str = "json") -> DataFrame:
    """Bad rows carry the raw message: mask its fields before the dead-letter table and samples see it.
    A csv or raw body has no field names to find, so with any mask its value is dropped (NULL) instead."""
    if not masks:
        return df
    if fmt in ("csv", "raw"):
        return (df.withColumn("_value", F.lit(None).cast("string"))
                .withColumn("_raw_value", F.lit(None).cast("binary"))
                .withColumn("_kafka_key", F.lit(None).cast("binary")))
    names = sorted(masks)
    value = _scrub_text(F.col("_value"), names)
    key = _scrub_text(F.col("_kafka_key").cast("string"), names)
    return (df.withColumn("_value", value).withColumn("_raw_value", F.encode(value, "UTF-8"))
            .withColumn("_kafka_key", F.encode(key, "UTF-8")))
