"""`python -m bench.run --only transform` (issue 45): one batch of the workload through cdcsync without and with a
[transform] sql, interleaved in one process (A B A B …), and the ratio of their median wall times.

Both variants read one topic of the workload with `created_at` (Workload.created_days: a key's creation time, a
function of its key, so every other value is the plain workload's) and run with the same settings; the transform
variant adds SQL, which derives a `day` partition from `created_at` and rejects ~10 % of the row images, and
`partition_by = ["day"]` (Hudi's GLOBAL_SIMPLE index). Its expected table is computed apart from Spark: DuckDB runs
the same SELECT, transpiled by sqlglot, over the workload's own final state (view semantics: the table is the SELECT
over the source table), and the table read back by hudi-rs must hold exactly those rows, each in its `day=` folder.
"""

from __future__ import annotations

import io
import statistics
import zlib
from pathlib import Path

SQL = "SELECT *, to_date(created_at) AS day FROM source WHERE balance_cents % 10 <> 0"
PARTITION_BY = ["day"]
DAYS = 30  # created_at spans a month: 30 day partitions
COLUMNS = ["id", "name", "segment", "balance_cents", "created_at", "updated_at"]
PARTITION_PATH = "_hoodie_partition_path"


def expected(rows, sql: str = SQL) -> list[dict]:
    """The table `sql` makes of the source table `rows` (dicts of COLUMNS): DuckDB running sqlglot's transpilation of
    the Spark SQL, a reading of the SELECT that shares no code with Spark's."""
    import duckdb
    import pyarrow as pa
    import sqlglot

    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("segment", pa.string()),
                        ("balance_cents", pa.int64()), ("created_at", pa.string()), ("updated_at", pa.int64())])
    con = duckdb.connect()
    try:
        con.register("source", pa.Table.from_pylist([{c: r[c] for c in COLUMNS} for r in rows], schema=schema))
        result = con.execute(sqlglot.transpile(sql, read="spark", write="duckdb")[0])
        names = [d[0] for d in result.description]
        return [dict(zip(names, row, strict=True)) for row in result.fetchall()]
    finally:
        con.close()


def digest(row: dict) -> int:
    day = row.get("day")
    text = "|".join(str(row[c]) for c in COLUMNS) + f"|{day.isoformat() if day is not None else ''}"
    return zlib.crc32(text.encode())


def checksum(rows) -> tuple[int, int]:
    """(row count, order-independent checksum) over COLUMNS and `day`, where a row has one."""
    n, total = 0, 0
    for r in rows:
        n += 1
        total = (total + digest(r)) % (1 << 61)
    return n, total


def partition_folders(table: Path) -> set[str]:
    """The table's partition folders (Hive style: `day=2025-11-01`)."""
    return {p.name for p in Path(table).iterdir() if p.is_dir() and "=" in p.name}


def days(rows) -> set[str]:
    """The partition folders a table of `rows` has."""
    return {f"day={r['day'].isoformat()}" for r in rows}


def data_files(table: Path) -> int:
    """The table's base and log files (outside .hoodie)."""
    return sum(1 for p in Path(table).rglob("*") if p.is_file() and ".hoodie" not in p.relative_to(table).parts
               and (p.name.endswith(".parquet") or ".log." in p.name))


def operations(table: Path) -> list[str]:
    """The operation of each completed write on the table's timeline (Hudi 1.x: `<requested>_<completed>.commit` or
    `.deltacommit`, Avro; JSON in 0.x), oldest first: a first load is a bulk_insert, which looks no key up."""
    import json

    from fastavro import reader

    out = []
    for f in sorted((Path(table) / ".hoodie" / "timeline").glob("*_*")):
        if f.suffix in (".commit", ".deltacommit"):
            raw = f.read_bytes()
            md = next(iter(reader(io.BytesIO(raw))), {}) if raw[:4] == b"Obj\x01" else json.loads(raw or b"{}")
            out.append(str((md or {}).get("operationType")))
    return out


def table_state(table: Path) -> dict:
    """hudi-rs's reading of a table: (rows, checksum), whether each row lies in its own `day` partition (None for an
    unpartitioned table); its partition folders, how many data files it has, and its commits' operations."""
    import pyarrow as pa
    from hudi import HudiTableBuilder

    read = pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(table)).build().read())
    names = COLUMNS + (["day"] if "day" in read.column_names else [])
    rows = read.select([*names, PARTITION_PATH]).to_pylist()
    placed = all(r[PARTITION_PATH] == f"day={r['day'].isoformat()}" for r in rows) if "day" in names else None
    return {"state": checksum(rows), "placed": placed, "folders": partition_folders(table), "files": data_files(table),
            "operations": operations(table)}


def verdict(got: dict, want: tuple[int, int], folders: set[str]) -> bool:
    """Does a table read by table_state hold `want`, in exactly the partition `folders` (none: unpartitioned)?"""
    return got["state"] == want and got["folders"] == folders and got["placed"] is not False


def summary(runs: list[dict]) -> dict:
    """Per table type: each variant's median, fastest and slowest wall time, its spread ((max - min) / median) and
    its median CPU time; and the transform's rate against the plain run's, as the ratio of the wall-time medians
    (the same messages in both), and the same ratio of the CPU medians."""
    out = {}
    for kind in dict.fromkeys(r["table"] for r in runs):
        row = {}
        for variant in ("plain", "transform"):
            mine = [r for r in runs if r["table"] == kind and r["variant"] == variant and r["ok"]]
            if mine:
                secs = [r["seconds"] for r in mine]
                med = statistics.median(secs)
                row[variant] = {"runs": len(secs), "median_s": round(med, 2), "min_s": min(secs),
                                "max_s": max(secs), "spread": round((max(secs) - min(secs)) / med, 3)}
                if all("cpu_s" in r for r in mine):
                    row[variant]["cpu_median_s"] = round(statistics.median(r["cpu_s"] for r in mine), 1)
        if "plain" in row and "transform" in row:
            row["transform_over_plain"] = round(row["plain"]["median_s"] / row["transform"]["median_s"], 3)
            if "cpu_median_s" in row["plain"] and "cpu_median_s" in row["transform"]:
                row["cpu_transform_over_plain"] = round(
                    row["plain"]["cpu_median_s"] / row["transform"]["cpu_median_s"], 3)
        out[kind] = row
    return out
