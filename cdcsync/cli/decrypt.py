"""`cdcsync decrypt`: read back values a [[mask]] method = "encrypt" wrote (base64 of Spark's AES-GCM output),
with the same Spark built-in that wrote them, so no second crypto implementation can disagree."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import typer

from cdcsync.cli.app import app

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@app.command("decrypt")
def decrypt(
    values: list[str] = typer.Argument(None, help="Encrypted values (base64); read one per line from stdin if none."),
    key_env: str = typer.Option(..., "--key-env", help="Environment variable holding the base64 AES key."),
    json_out: bool = typer.Option(False, "--json", help='Print {"values": [{"value", "plaintext"}]} on stdout.'),
) -> None:
    """Decrypt masked values: prints one plaintext per line (an empty line for a value that does not decrypt)."""
    from cdcsync.errors import ConfigError

    key = os.environ.get(key_env)
    if not key:
        raise ConfigError(f"environment variable {key_env} is not set (or empty)",
                          hint=f"export {key_env}=… (the key the [[mask]] used)", variable=key_env)
    if not values:
        values = [line.strip() for line in sys.stdin if line.strip()]
    texts = plaintexts(_session(), values, key)
    if json_out:
        from cdcsync.reporting import emit_json

        emit_json({"values": [{"value": v, "plaintext": t} for v, t in zip(values, texts, strict=True)]})
        return
    for text in texts:
        typer.echo("" if text is None else text)


def plaintexts(spark: SparkSession, values: list[str], key_b64: str) -> list[str | None]:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i INT, v STRING")
    from cdcsync.schema.spark.columns import base64_bytes

    out = df.select("i", F.try_aes_decrypt(base64_bytes(F.col("v")), F.unbase64(F.lit(key_b64)), F.lit("GCM"))
                    .cast("string").alias("p")).orderBy("i").collect()
    return [r["p"] for r in out]


def _session() -> SparkSession:
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    from cdcsync.runtime.session import build_session

    return build_session("cdcsync-decrypt", "local[1]", {})
