"""The infer-schema command's options, errors and exit codes (from files: no broker needed)."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.cli import cdcsync, infer_schema
from tests.corpus import IN_REPO, corpus_fixture  # noqa: F401 (the fixture `corpus`)

CORPUS = IN_REPO  # tests/conformance/test_schema_cli.py runs the corpus's test on the real-tool corpus


@pytest.fixture
def cli():
    def run(*args) -> tuple[int, str, str]:
        p = infer_schema(*args, timeout=60)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture
def lines(tmp_path):
    def write(*rows, name="msgs.jsonl") -> str:
        path = tmp_path / name
        path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
        return str(path)

    return write


def config(tmp_path, fmt="json", extra=""):
    path = tmp_path / "config.toml"
    path.write_text(f"""
[source]
bootstrap_servers = "127.0.0.1:1"
topics = ["orders"]
format = "{fmt}"

[sink]
path = "{tmp_path / 'table'}"
table_name = "orders"
{extra}
""")
    return path


def test_format_takes_an_output_name_and_the_message_format_from_the_config(cli, lines, tmp_path):
    code, out, _ = cli(config(tmp_path), "--from-file", lines({"id": 1}), "--format", "json-schema")
    assert code == 0 and json.loads(out)["properties"]["id"]["x-cdcsync-type"] == "BIGINT"


def test_format_given_twice_message_and_output(cli, lines):
    code, out, _ = cli("--from-file", lines({"id": 1}), "-f", "json", "-f", "toml")
    assert code == 0 and tomllib.loads(out)["schema"]["columns"] == {"id": "BIGINT"}


@pytest.mark.parametrize("args, words", [
    (["-f", "json", "-f", "csv"], ["two message formats", "json", "csv"]),
    (["-f", "protobuf"], ["'protobuf'", "neither", "debezium-json", "json-schema"]),
    (["-f", "avro"], ["avro format is read from a config file", "source.avro_schema_file"]),
    (["-f", "json", "-f", "toml", "-o", "spark-ddl"], ["several output formats", "spark-ddl", "toml"]),
    (["-f", "json", "-o", "yaml"], ["'yaml'"]),
    ([], ["give the message format"]),
    (["-f", "json", "--column", "price"], ["'price' is not NAME=TYPE"]),
])
def test_usage_errors_exit_2(cli, lines, args, words):
    code, out, err = cli("--from-file", lines({"id": 1}), *args)
    assert code == 2 and out == ""
    assert all(w in err for w in words), err


def test_kafka_needs_servers_and_topics(cli):
    code, _, err = cli("-f", "json", "--topic", "orders")
    assert code == 2 and "--bootstrap-servers" in err


def test_an_unknown_declared_type_is_a_config_error(cli, lines):
    code, _, err = cli("--from-file", lines({"id": 1}), "-f", "json", "--column", "id=NUMBER")
    assert code == 78 and "schema.columns.id" in err


def test_declared_type_too_narrow_exits_79_naming_column_types_and_offset(cli, lines):
    path = lines({"price": 1.5}, {"price": 123.456}, name="prices.jsonl")
    code, out, err = cli("--from-file", path, "-f", "json", "--column", "price=DECIMAL(5,2)", "-o", "toml")
    assert code == 79 and out == ""
    for word in ("'price'", "DECIMAL(5,2)", "DECIMAL(6,3)", "prices.jsonl", "offset 1"):
        assert word in err, (word, err)


def test_declared_types_from_the_config_and_flags_win(cli, lines, tmp_path):
    cfg = config(tmp_path, extra='[schema]\nflatten_nested_columns = true\n[schema.columns]\nprice = "DECIMAL(18,2)"\n')
    path = lines({"price": 1.5, "n": {"a": "2024-01-01"}})
    code, out, _ = cli(cfg, "--from-file", path, "-o", "toml")
    assert code == 0 and tomllib.loads(out)["schema"]["columns"] == {"price": "DECIMAL(18,2)", "n_a": "DATE"}
    code, out, _ = cli(cfg, "--from-file", path, "-o", "toml", "--no-flatten-nested-columns", "--primitive-as-string",
                       "--column", "price=DOUBLE")
    assert code == 0 and tomllib.loads(out)["schema"]["columns"] == {"price": "DOUBLE", "n": "STRING"}


def test_csv_columns_flag(cli, lines):
    path = lines("1,2.5,x", "2,,y")
    code, out, err = cli("--from-file", path, "-f", "csv", "--csv-columns", "id, amount ,name", "-o", "spark-ddl")
    # the table run creates: csv values are text until [schema.columns] types them
    assert (code, out.strip()) == (0, "`id` STRING NOT NULL, `amount` STRING, `name` STRING NOT NULL")
    assert "id: every sampled value reads as BIGINT, and run stores it as STRING" in err
    code, out, _ = cli("--from-file", path, "-f", "csv", "--csv-columns", "id, amount ,name", "-o", "toml")
    assert tomllib.loads(out)["schema"]["columns"] == {"id": "BIGINT", "amount": "DOUBLE", "name": "STRING"}


def test_bad_records_are_reported_on_stderr_and_skipped(cli, lines):
    code, out, err = cli("--from-file", lines({"id": 1}, "not json", "[1]"), "-f", "json", "-o", "toml")
    assert code == 0 and tomllib.loads(out)["schema"]["columns"] == {"id": "BIGINT"}
    assert "invalid_json" in err and "not_an_object" in err and "offset 1" in err


def test_only_bad_records_exit_65_and_an_empty_input_66(cli, lines, tmp_path):
    code, out, err = cli("--from-file", lines("nope", "nope"), "-f", "json")
    assert (code, out) == (65, "") and "none of the 2 sampled records decodes as json" in err
    (tmp_path / "empty").write_text("")
    code, out, err = cli("--from-file", tmp_path / "empty", "-f", "json")
    assert (code, out) == (66, "") and "empty" in err


def test_a_topic_with_several_tables_gets_one_schema_each(cli, corpus, tmp_path):
    name = next(n for n in corpus.names() if corpus.format_of(n) == "canal-json")
    table, key, _, _ = corpus.expected_schema(name)
    path = corpus.clean_copy(name, tmp_path)
    extra = tmp_path / "more.txt"
    extra.write_text(path.read_text() + json.dumps({
        "data": [{"k": "a", "ts": "2024-01-01 10:00:00"}], "database": "inventory", "table": "other",
        "type": "INSERT", "isDdl": False, "mysqlType": {"k": "varchar(3)", "ts": "datetime"}, "pkNames": ["k"],
    }) + "\n")
    code, out, _ = cli("--from-file", extra, "-f", "canal-json", "-f", "json-schema")
    doc = json.loads(out)
    assert code == 0 and set(doc["$defs"]) == {table, "inventory.other"}
    assert doc["$defs"]["inventory.other"]["x-primary-key"] == ["k"]
    assert doc["$defs"][table]["x-primary-key"] == key
    code, out, _ = cli("--from-file", extra, "-f", "canal-json")
    assert table in out and "inventory.other" in out and "primary key: k" in out


def test_a_masked_column_shows_no_example_and_the_type_run_stores(tmp_path, lines):
    extra = ('[[mask]]\ncolumn = "email"\nmethod = "hash"\nsalt_env = "T_INFER_SALT"\n\n'
             '[[mask]]\ncolumn = "age"\nmethod = "redact"\n')
    p = cdcsync("infer-schema", config(tmp_path, extra=extra), "--from-file",
                lines({"id": 1, "email": "alice@example.com", "age": 41}), "--json", env={"T_INFER_SALT": "pepper"},
                timeout=60, jvm_free=True)
    assert p.returncode == 0 and "alice@example.com" not in p.stdout + p.stderr, p.stderr
    cols = {c["name"]: c for c in json.loads(p.stdout)["tables"][0]["columns"]}
    assert (cols["email"]["type"], cols["email"]["example"]) == ("STRING", "***masked***")  # a hash is text
    assert (cols["age"]["type"], cols["age"]["example"], cols["age"]["nullable"]) == ("BIGINT", "***masked***", True)
    assert (cols["id"]["type"], cols["id"]["example"]) == ("BIGINT", 1)


def test_a_masked_column_s_value_stays_out_of_a_declared_type_s_error(tmp_path, lines):
    extra = '[schema.columns]\nssn = "BIGINT"\n\n[[mask]]\ncolumn = "ssn"\nmethod = "hash"\nsalt_env = "T_INFER_SALT"\n'
    p = cdcsync("infer-schema", config(tmp_path, extra=extra), "--from-file", lines({"id": 1, "ssn": "123-45-6789"}),
                env={"T_INFER_SALT": "pepper"}, timeout=60, jvm_free=True)
    assert p.returncode == 79 and "column 'ssn' is declared BIGINT" in p.stderr, p.stderr
    assert "123-45-6789" not in p.stdout + p.stderr and "***masked***" in p.stderr


# [transform] sql: the table view, --json and spark-ddl show the table's columns after it, typed without a JVM (the
# `cli` fixture fails a run that imported pyspark or py4j)
TRANSFORM = ("SELECT id, upper(customer) AS customer_uc, amount * 2 AS double_amount, amount * id AS amount_x_id, "
             "to_date(created_at) AS created_day, updated_at, _kafka_offset FROM source WHERE status <> 'cancelled'")
TRANSFORMED_DDL = ("`id` BIGINT NOT NULL, `customer_uc` STRING, `double_amount` DECIMAL(12,2), "
                   "`amount_x_id` DECIMAL(31,2), `created_day` DATE, `updated_at` TIMESTAMP, "
                   "`_kafka_offset` BIGINT NOT NULL")  # as Spark 3.5 types the SELECT over the run's view


def test_the_config_s_transform_gives_the_table_s_columns(cli, corpus, tmp_path):
    path = corpus.clean_copy(corpus.with_schema, tmp_path)
    cfg = config(tmp_path, "debezium-json", extra=f'primary_key = ["id"]\n\n[transform]\nsql = "{TRANSFORM}"\n')
    code, out, err = cli(cfg, "--from-file", path, "-o", "spark-ddl")
    assert (code, out.strip()) == (0, TRANSFORMED_DDL), err
    code, out, _ = cli(cfg, "--from-file", path, "--json")
    table = json.loads(out)["tables"][0]
    cols = {c["name"]: c for c in table["columns"]}
    assert code == 0 and table["transform"] == "transform.sql" and list(cols)[:2] == ["id", "customer_uc"]
    assert (cols["customer_uc"]["type"], cols["customer_uc"]["from"], cols["customer_uc"]["expression"]) == (
        "STRING", "transform", "UPPER(customer)")
    assert (cols["id"]["from"], cols["_kafka_offset"]["from"]) == ("envelope", "kafka")
    code, out, _ = cli(cfg, "--from-file", path)
    assert code == 0 and "after transform.sql" in out and "DECIMAL(31,2)" in out


def test_toml_and_json_schema_describe_the_source_the_transform_reads(cli, corpus, tmp_path):
    name = corpus.with_schema
    path = corpus.clean_copy(name, tmp_path)
    cfg = config(tmp_path, "debezium-json", extra=f'\n[transform]\nsql = "{TRANSFORM}"\n')
    code, out, err = cli(cfg, "--from-file", path, "-o", "toml")
    assert code == 0 and tomllib.loads(out)["schema"]["columns"] == corpus.expected_schema(name)[2]
    assert "declares the source's columns, which transform.sql reads" in err and "-o spark-ddl" in err
    code, out, err = cli(cfg, "--from-file", path, "-o", "json-schema")
    assert code == 0 and "customer" in json.loads(out)["properties"] and "topic's records" in err


def test_transform_sql_flag_and_what_stays_untyped(cli, lines):
    code, out, err = cli("--from-file", lines({"id": 1, "name": "a"}), "-f", "json", "-o", "spark-ddl",
                         "--transform-sql", "SELECT id, mystery(name) AS m, length(name) AS n, _kafka_partition "
                                            "FROM source")
    assert code == 0 and out.splitlines() == [
        "-- `m` = MYSTERY(name): left out, infer-schema cannot type it (stderr says why)",
        "`id` BIGINT NOT NULL, `n` INT, `_kafka_partition` INT NOT NULL"]
    assert "column 'm' = MYSTERY(name) is left untyped" in err and "Spark decides its type" in err


def test_what_the_run_would_refuse_of_a_table_is_a_warning(cli, lines):
    code, out, err = cli("--from-file", lines({"id": 1}), "-f", "json", "-o", "spark-ddl", "--transform-sql",
                         "SELECT id, upper(nme) AS n FROM source")
    assert (code, out.strip()) == (0, "-- `n` = UPPER(nme): left out, infer-schema cannot type it (stderr says why)\n"
                                      "`id` BIGINT NOT NULL")
    assert "run would stop" in err and "reads column 'nme'" in err and "no sampled record has" in err


@pytest.mark.parametrize("where, sql, words", [
    ("flag", "SELECT id FROM orders", ["command line: --transform-sql", "FROM source"]),
    ("flag", "SELECT count(*) AS n FROM source", ["--transform-sql", "aggregate"]),
    ("flag", "SELECT id, rand() AS r FROM source", ["--transform-sql", "not deterministic"]),
    ("flag", "SELECT customer FROM source", ["--transform-sql", "drops the primary-key column 'id'"]),
    ("config", "SELECT id, amount * 2 AS id2 FROM source, other", ["transform.sql"]),
])
def test_a_transform_its_checks_refuse_exits_78(cli, lines, tmp_path, where, sql, words):
    extra = 'primary_key = ["id"]\n' + (f'\n[transform]\nsql = "{sql}"\n' if where == "config" else "")
    args = ["--transform-sql", sql] if where == "flag" else []
    code, out, err = cli(config(tmp_path, extra=extra), "--from-file", lines({"id": 1, "customer": "c"}), *args)
    assert (code, out) == (78, ""), err
    assert all(w in err for w in words), err


def test_a_route_s_transform_sql_applies_to_the_tables_it_takes(cli, corpus, tmp_path):
    path = corpus.clean_copy(corpus.with_schema, tmp_path)  # shop.orders
    routes = ('\n[transform]\nsql = "SELECT * FROM source"\n\n[[route]]\nsource_table = \'shop\\.ord.*\'\n'
              'sink_table = "orders"\nprimary_key = ["id"]\ntransform_sql = "SELECT id, amount * 100 AS cents FROM '
              'source"\n')
    cfg = config(tmp_path, "debezium-json", extra=routes)
    code, out, err = cli(cfg, "--from-file", path, "-o", "spark-ddl")
    assert (code, out.strip()) == (0, "`id` BIGINT NOT NULL, `cents` DECIMAL(14,2)"), err
    cfg.write_text(cfg.read_text().replace("shop\\.ord.*", "shop\\.customers"))
    code, out, err = cli(cfg, "--from-file", path, "-o", "spark-ddl")
    assert code == 0 and out.startswith("`id` BIGINT NOT NULL, `customer` STRING NOT NULL")
    assert "no [[route]] takes shop.orders" in err and "skips its changes" in err
