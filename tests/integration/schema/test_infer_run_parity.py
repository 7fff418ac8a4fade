"""Issue 49, acceptance 5: `infer-schema -o spark-ddl` predicts the table `run` creates, column by column.

For every in-repo CDC file (tests/fixtures/cdc) and for generated messy records of every format
(tests/integration/formats/messy.py, from a fixed seed each), one topic on the session broker: `cdcsync
infer-schema <config> -o spark-ddl` (a real process, no JVM, sampling the whole topic) against the schema of the
Hudi table `run --once` writes from the same config (the session's SparkSession), without Hudi's `_hoodie_*`
columns, `_cdc_order` and the configured `[source] metadata_columns` (`_kafka_*`). Names, order and Spark types
must be equal; a difference is shown as a table of both sides.
"""

from __future__ import annotations

import json
from random import Random

import pytest

from tests.cli import infer_schema
from tests.fixtures import cdc_cases
from tests.integration.engine.helpers import run_once, write_config
from tests.integration.formats import messy

pytestmark = [pytest.mark.integration, pytest.mark.soak]  # 17 topics, each an infer-schema process and a run: ~10 min

SAMPLE = 10_000  # records per partition infer-schema reads: every record of every case


def parse_ddl(text: str) -> dict[str, list[tuple[str, str]]]:
    """infer-schema's spark-ddl output as {table: [(column, DDL type)]} (a `-- table` line before each table when
    there are several; "" names the one table otherwise). NOT NULL is set aside: Hudi reads every column back
    nullable."""
    tables: dict[str, list[tuple[str, str]]] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith("-- "):
            if not line.startswith("-- `"):  # `-- `col` = …: left out` notes a column infer-schema cannot type
                name = line[3:]
            continue
        if line.strip():
            tables[name] = [_column(part) for part in _split(line)]
    return tables


def _split(ddl: str) -> list[str]:
    """The DDL's columns: split at the commas outside backticks, <> and ()."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(ddl):
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in "<(":
            depth += 1
        elif not quoted and ch in ">)":
            depth -= 1
        elif not quoted and depth == 0 and ch == ",":
            parts.append(ddl[start:i].strip())
            start = i + 1
    parts.append(ddl[start:].strip())
    return parts


def _column(part: str) -> tuple[str, str]:
    assert part.startswith("`"), part
    end = 1
    while True:  # a backtick inside a name is doubled
        end = part.index("`", end)
        if part[end + 1:end + 2] != "`":
            break
        end += 2
    name, ctype = part[1:end].replace("``", "`"), part[end + 1:].strip()
    return name, ctype.removesuffix(" NOT NULL")


def spark_type(spark, ddl_type: str) -> str:
    """A DDL type as Spark's simpleString (the form DataFrame.dtypes gives): parsed by Spark itself."""
    from pyspark.sql.types import _parse_datatype_string

    return _parse_datatype_string(ddl_type).simpleString()


def table_columns(spark, path: str, metadata: list[str]) -> list[tuple[str, str]]:
    """The table's (column, Spark type) in order, without Hudi's columns, _cdc_order and the metadata columns."""
    from cdcsync.sinks.hudi import ORDER
    from cdcsync.transform.types import metadata_view

    left_out = {ORDER, *metadata_view(metadata)}
    df = spark.read.format("hudi").load(path)
    return [(n, t) for n, t in df.dtypes if not n.startswith("_hoodie_") and n not in left_out]


def assert_same_columns(case: str, predicted: list[tuple[str, str]], created: list[tuple[str, str]]) -> None:
    if predicted == created:
        return
    width = max([len(n) for n, _ in predicted + created] + [6])
    lines = [f"{case}: infer-schema's spark-ddl and run's table differ (column by column):",
             f"    {'#':>3}  {'infer-schema':<{width + 22}}  run"]
    for i in range(max(len(predicted), len(created))):
        p = " ".join(predicted[i]) if i < len(predicted) else "-"
        c = " ".join(created[i]) if i < len(created) else "-"
        lines.append(f"{'  ' if p == c else '!!'}  {i:>3}  {p:<{width + 22}}  {c}")
    only_p = sorted({n for n, _ in predicted} - {n for n, _ in created})
    only_c = sorted({n for n, _ in created} - {n for n, _ in predicted})
    typed = {n: t for n, t in predicted}
    retyped = sorted(f"{n}: {typed[n]} vs {t}" for n, t in created if n in typed and typed[n] != t)
    lines += [f"    only in infer-schema: {only_p}", f"    only in run: {only_c}", f"    types differ: {retyped}"]
    raise AssertionError("\n".join(lines))


def check_parity(spark, case: str, cfg, tmp_path) -> None:
    """infer-schema's prediction for `cfg`, then run --once, then the table's columns against the prediction."""
    from cdcsync.config import load_config

    proc = infer_schema(cfg, "-o", "spark-ddl", "-n", SAMPLE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tables = parse_ddl(proc.stdout)
    loaded = load_config(cfg)
    run_once(cfg, spark)
    created = table_columns(spark, str(tmp_path / "table"), loaded.source.metadata_columns)
    assert created, f"{case}: run created a table without columns"
    assert len(tables) == 1, (f"{case}: infer-schema reports {len(tables)} tables ({', '.join(tables)}); run wrote "
                              f"one: {created}")
    predicted = [(n, spark_type(spark, t)) for n, t in next(iter(tables.values()))]
    assert_same_columns(case, predicted, created)


# -- the in-repo CDC files -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("cdc_file", cdc_cases.names())
def test_infer_schema_predicts_the_table_of_each_fixture(cdc_file, spark, bootstrap, make_topic, produce, tmp_path):
    fmt = cdc_cases.format_of(cdc_file)
    topic = make_topic(partitions=1)
    records = cdc_cases.records(cdc_file)
    produce(topic, [v for _, v in records], keys=[k for k, _ in records])
    extra = {} if fmt in ("canal-json", "maxwell-json") else {"sink.primary_key": cdc_cases.key_columns(cdc_file)}
    cfg = write_config(tmp_path, bootstrap, topic, fmt, "COPY_ON_WRITE", **extra)
    check_parity(spark, cdc_file, cfg, tmp_path)


# -- generated messy records ---------------------------------------------------------------------------------------

MESSY_RECORDS = 300
SEED = 495  # issue 49, acceptance 5: one fixed draw per format, so a failure reproduces
CSV_COLUMNS = ["a", "b"]


def _messy(fmt: str) -> list[tuple[bytes | None, bytes | None]]:
    draw = {"debezium-json": messy.debezium, "canal-json": messy.canal, "maxwell-json": messy.maxwell,
            "json": messy.plain_json, "csv": lambda rnd: messy.csv(rnd, "|"), "raw": messy.raw,
            "avro-confluent": messy.avro, "avro": messy.plain_avro}[fmt]
    rnd = Random(f"{SEED}-{fmt}")
    records = [draw(rnd) for _ in range(MESSY_RECORDS)]
    return [(k, v) for k, v in records if k is not None or v is not None]  # Kafka clients send no empty record


def _registered(registry_url: str, topic: str) -> dict[int, int]:
    """messy.avro's schema ids (1, 2: the envelope's versions; 7: the key) → the ids the real registry gives them
    under <topic>-value and <topic>-key."""
    import urllib.request

    from tests.fixtures.avro_cases import ENVELOPE, ENVELOPE_V2, KEY

    def register(subject: str, schema: dict) -> int:
        body = json.dumps({"schema": json.dumps(schema)}).encode()
        req = urllib.request.Request(f"{registry_url}/subjects/{subject}/versions", data=body, method="POST",
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
        with urllib.request.urlopen(req) as r:
            return json.load(r)["id"]

    return {1: register(f"{topic}-value", ENVELOPE), 2: register(f"{topic}-value", ENVELOPE_V2),
            7: register(f"{topic}-key", KEY)}


def _renumbered(value: bytes | None, ids: dict[int, int]) -> bytes | None:
    """A Confluent wire-format record with its schema id mapped to the registry's (other bytes unchanged)."""
    if value is None or len(value) < 5 or value[0] != 0:
        return value
    sid = int.from_bytes(value[1:5], "big")
    return value if sid not in ids else b"\x00" + ids[sid].to_bytes(4, "big") + value[5:]


MESSY_FORMATS = ["debezium-json", "canal-json", "maxwell-json", "json", "csv", "raw", "avro-confluent", "avro"]


@pytest.mark.parametrize("fmt", MESSY_FORMATS)
def test_infer_schema_predicts_the_table_of_messy_records(fmt, request, spark, bootstrap, make_topic, produce,
                                                          tmp_path):
    from tests.fixtures.avro_cases import KEY, ROW

    topic = make_topic(partitions=1)
    records = _messy(fmt)
    extra: dict = {"run.on_bad_record": "skip"}
    if fmt in ("debezium-json", "json", "avro"):
        extra["sink.primary_key"] = ["id"]
    if fmt == "csv":
        extra |= {"source.csv_columns": CSV_COLUMNS, "source.csv_field_delimiter": "|"}
    if fmt == "avro-confluent":
        registry = request.getfixturevalue("registry")
        ids = _registered(registry.url, topic)
        records = [(_renumbered(k, ids), _renumbered(v, ids)) for k, v in records]
        extra |= {"source.schema_registry_url": registry.url, "source.key_format": "avro-confluent"}
    if fmt == "avro":
        (tmp_path / "row.avsc").write_text(json.dumps(ROW))
        (tmp_path / "key.avsc").write_text(json.dumps(KEY))
        extra |= {"source.avro_schema_file": str(tmp_path / "row.avsc"), "source.key_format": "avro",
                  "source.key_avro_schema_file": str(tmp_path / "key.avsc")}
    produce(topic, [v for _, v in records], keys=[k for k, _ in records])
    cfg = write_config(tmp_path, bootstrap, topic, fmt, "COPY_ON_WRITE", **extra)
    check_parity(spark, f"messy {fmt}", cfg, tmp_path)


# -- the rules where the run's Spark inference and a reading of the values part ----------------------------------

EDGE_ROWS = [
    {"id": 1, "zeta": "z", "alpha": 1, "day": "2024-01-01", "big": 2**70, "empty": "", "nothing": None,
     "nested": {"a": 1}, "blank": {}, "when": "2024-01-01T10:00:00Z", "declared_day": "2024-01-02"},
    {"id": 2, "zeta": "y", "alpha": 2.5, "day": "2024-01-03", "big": 5, "empty": "", "nested": [1], "blank": []},
    "\n" + json.dumps({"id": 3, "late": 1.5}),  # a row image after a newline (ltrim trims only spaces)
    {"id": "x4", "zeta": None},  # a key of another JSON type: the key column keeps the majority's BIGINT
    {"id": 5, "flag": True, "count": "7"},
]


def test_infer_schema_predicts_the_table_at_the_edges_of_inference(spark, bootstrap, make_topic, produce, tmp_path):
    """Text that reads as a date, timestamp or number stays STRING; an integer past BIGINT is DECIMAL(its digits, 0);
    fields of only nulls, empty strings, objects or arrays are no columns; the first row's order, then by name; a
    new key column of mixed JSON types keeps the majority's type; [schema.columns] types win and an unseen one
    comes last."""
    topic = make_topic(partitions=1)
    produce(topic, EDGE_ROWS)
    cfg = write_config(tmp_path, bootstrap, topic, "json", "COPY_ON_WRITE", **{
        "sink.primary_key": ["id"], "run.on_bad_record": "skip",
        "schema.columns": {"declared_day": "DATE", "ghost": "BIGINT"}})
    check_parity(spark, "edge rules", cfg, tmp_path)
