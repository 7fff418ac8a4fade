"""`cdcsync infer-schema`: sample a topic (or a file), infer one schema per source table, print it. No JVM."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cdcsync.cli.app import app
from cdcsync.formats.spec import format_spec

if TYPE_CHECKING:
    from cdcsync.config.model import Config, MaskConfig, SchemaConfig, SourceConfig
    from cdcsync.errors import CdcsyncError
    from cdcsync.formats.base import Decoder
    from cdcsync.kafka.sample import Sampled
    from cdcsync.schema import InferOptions, TableSchema
    from cdcsync.schema.stored import RunRules
    from cdcsync.transform.sql import Transform

OUTPUTS = ("table", "json-schema", "spark-ddl", "toml")


@app.command("infer-schema")
def infer_schema(
    config: Annotated[Path | None, typer.Argument(help="config.toml; the flags below override its settings.")] = None,
    bootstrap_servers: Annotated[str | None, typer.Option("--bootstrap-servers", "-b",
                                                          help="host:port[,host:port]")] = None,
    topic: Annotated[list[str] | None, typer.Option("--topic", "-t", help="Topic to sample (repeatable).")] = None,
    formats: Annotated[list[str] | None, typer.Option(
        "--format", "-f",
        help="Message format (debezium-json, canal-json, maxwell-json, json, csv, raw; avro and avro-confluent "
             "from a config with their .avsc file or registry). Also accepts an output format (table, json-schema, "
             "spark-ddl, toml): the two sets of names do not overlap, so "
             "'--format json-schema' and '--format canal-json --format toml' both work. Repeatable.")] = None,
    output: Annotated[str | None, typer.Option("--output", "-o",
                                               help="table (default) | json-schema | spark-ddl | toml")] = None,
    max_records: Annotated[int, typer.Option("--max-records-per-partition", "-n", min=1,
                                             help="Records read from the start of each partition.")] = 50,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds to wait for the sample.")] = 30.0,
    from_file: Annotated[Path | None, typer.Option(
        "--from-file", help="Read messages from a file (one per line) instead of Kafka.")] = None,
    flatten: Annotated[bool | None, typer.Option("--flatten-nested-columns/--no-flatten-nested-columns",
                                                 help="Nested objects become `a.b` columns.")] = None,
    as_string: Annotated[bool | None, typer.Option("--primitive-as-string/--no-primitive-as-string",
                                                   help="Infer every primitive value as STRING.")] = None,
    columns: Annotated[list[str] | None, typer.Option(
        "--column", help="NAME=TYPE declared type (repeatable), added to schema.columns, "
                         "e.g. --column 'price=DECIMAL(18,2)'.")] = None,
    csv_columns: Annotated[str | None, typer.Option("--csv-columns",
                                                    help="Comma-separated names of the csv fields.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what the table view shows as one JSON object "
                                                          "(tables, columns, types, samples).")] = False,
    transform_sql: Annotated[str | None, typer.Option(
        "--transform-sql", help="A SELECT ... FROM source [WHERE ...] for every table, over the config's "
                                "\\[transform] sql and \\[\\[route]] transform_sql: the table view, --json and "
                                "spark-ddl show the table's columns after it (typed without a JVM).")] = None,
) -> None:
    """Infer the schema of a CDC topic from a sample of its records and print it.

    stdout carries only the schema (a table, JSON Schema 2020-12, Spark DDL, or a schema.columns TOML block);
    progress and warnings go to stderr. With \\[transform] sql (or --transform-sql) the table view, --json and
    spark-ddl show the table's columns after it; JSON Schema and TOML describe the source's, which it reads.
    Reads from the beginning of each partition without a consumer group and never commits or creates topics.
    Exit 66 when a topic is missing or holds no records (or the config's header filter leaves none), 65 when no
    sampled record decodes, 79 when the data contradicts a declared type, 78 for a transform the checks of
    \\[transform] sql refuse.
    """
    from cdcsync.formats import FORMATS

    message_fmt, out = _split_formats(formats or [], output, FORMATS)
    if json_out and out != "table":
        raise _usage(f"--json prints the table view as JSON; it cannot be combined with the output {out}")
    out = "json" if json_out else out
    src = _Source.build(config, bootstrap_servers, topic, message_fmt, from_file, csv_columns)
    options = _options(src.schema_config, flatten, as_string, columns)
    flag = _transform_flag(transform_sql, src)
    tables = _infer(src, options, max_records, timeout, out in _AFTER_TRANSFORM)
    _print(_transformed(tables, src, options, flag, out), out)


def _split_formats(values: list[str], output: str | None, message_formats: tuple[str, ...]) -> tuple[str | None, str]:
    message, outs = None, []
    for v in values:
        if v in message_formats:
            if message and message != v:
                raise _usage(f"two message formats given: {message} and {v}")
            message = v
        elif v in OUTPUTS:
            outs.append(v)
        else:
            raise _usage(f"{v!r} is neither a message format ({', '.join(message_formats)}) nor an "
                                     f"output format ({', '.join(OUTPUTS)})")
    if output is not None and output not in OUTPUTS:
        raise _usage(f"{output!r} is not one of {', '.join(OUTPUTS)}")
    chosen = set(outs) | ({output} if output else set())
    if len(chosen) > 1:
        raise _usage(f"several output formats given: {', '.join(sorted(chosen))}")
    return message, (chosen.pop() if chosen else "table")


def _usage(message: str) -> CdcsyncError:
    """A usage error as a CdcsyncError (exit 2): main() renders those without depending on click's classes."""
    from cdcsync.errors import CdcsyncError
    from cdcsync.exit_codes import ExitCode

    return CdcsyncError(message, hint="see 'cdcsync infer-schema --help'", exit_code=ExitCode.USAGE)


class _Source:
    """Where the sample comes from and how to decode it: config.toml with flags on top."""

    def __init__(self) -> None:
        self.servers: str | None = None
        self.topics: list[str] | None = None
        self.pattern: str | None = None
        self.format: str | None = None
        self.config_source: SourceConfig | None = None  # the config's [source], when it decides how records decode
        self.csv_columns: list[str] | None = None
        self.client_kwargs: dict[str, Any] = {}
        self.schema_config: SchemaConfig | None = None
        self.file: Path | None = None
        self.config: Path | None = None  # the config file, when one was given
        self.header_filter: str | None = None  # the config's: records for other consumers are not sampled
        self.filtered = 0  # records the header filter left out
        self.masks: list[MaskConfig] = []  # the config's [[mask]]: their columns' examples are never shown
        self.primary_key: list[str] | None = None  # the config's [sink]: decides whether a tombstone deletes
        self.cfg: Config | None = None  # the loaded config: its [transform] sql, [[route]] and metadata columns

    @classmethod
    def build(cls, config: Path | None, servers: str | None, topics: list[str] | None, fmt: str | None,
              from_file: Path | None, csv_columns: str | None) -> _Source:
        s = cls()
        if config is not None:
            from cdcsync.config import load_config
            from cdcsync.kafka.security import for_clients

            cfg = load_config(config)
            src = cfg.source
            s.servers, s.topics, s.pattern, s.format = src.bootstrap_servers, src.topics, src.topic_pattern, src.format
            s.config_source = src
            s.client_kwargs = for_clients(src.properties, f"{config} [source.properties]")[0].kafka_python_kwargs()
            s.schema_config = cfg.schema
            s.config, s.header_filter, s.masks = config, src.header_filter, cfg.masks
            s.primary_key = cfg.sink.primary_key
            s.cfg = cfg
        s.servers = servers or s.servers
        if topics:
            s.topics, s.pattern = list(topics), None
        s.format = fmt or s.format
        if csv_columns:
            s.csv_columns = [c.strip() for c in csv_columns.split(",") if c.strip()]
        s.file = from_file
        if s.format is None:
            raise _usage("give the message format (--format debezium-json …) or a config file")
        if s.file is None and not (s.servers and (s.topics or s.pattern)):
            raise _usage("give --bootstrap-servers and --topic, a config file, or --from-file")
        if format_spec(s.format).writer_schema and (s.config_source is None or s.config_source.format != s.format):
            raise _usage(f"the {s.format} format is read from a config file (its writer schemas: "
                         f"{'source.avro_schema_file' if s.format == 'avro' else 'source.schema_registry_url'})")
        return s

    def decoder(self) -> Decoder:
        """The config's decoder (its key settings and writer schemas included), with the flags on top."""
        from dataclasses import replace

        from cdcsync.config.model import SourceConfig
        from cdcsync.formats import decoder_for
        from cdcsync.formats.registry import RegistryClient

        fmt = self.format
        assert fmt is not None  # build() refuses a source without a format
        src = self.config_source or SourceConfig(bootstrap_servers="", format=fmt)
        if src.format != fmt:  # --format over the config's: the key settings were for the other format
            src = SourceConfig(bootstrap_servers="", format=fmt, max_message_bytes=src.max_message_bytes,
                               csv_columns=src.csv_columns, csv_field_delimiter=src.csv_field_delimiter)
        if self.csv_columns:
            src = replace(src, csv_columns=self.csv_columns)
        registry = RegistryClient(reg) if (reg := src.registry()) is not None else None  # over HTTP: still no JVM
        return decoder_for(src, registry, self.primary_key)

    def records(self, max_records: int, timeout: float, warn: Callable[[str], None]) -> Iterator[Sampled]:
        if self.file is not None:
            return _file_records(self.file)
        from cdcsync.kafka.sample import TopicSet, sample

        assert self.servers is not None  # build() refuses a source with neither servers nor a file
        where = TopicSet(self.servers, self.topics, self.pattern, self.client_kwargs or {})
        return sample(where, max_per_partition=max_records, timeout_s=timeout, warn=warn, keep=self._keep())

    def _keep(self) -> Callable[[list[tuple[str, bytes | None]]], bool] | None:
        """The header filter as a test of a record's headers, counting what it leaves out; None without one."""
        if not self.header_filter:
            return None
        from cdcsync.kafka.header_filter import parse

        test = parse(self.header_filter).matches

        def keep(headers: list[tuple[str, bytes | None]]) -> bool:
            kept = test(headers)
            self.filtered += not kept
            return kept

        return keep

    def run_rules(self) -> RunRules:
        """The config's settings (with the flags on top) that shape the run's table (schema/stored.py)."""
        from cdcsync.schema.stored import RunRules

        src, cfg = self.config_source, self.cfg
        order = (self.csv_columns or (src.csv_columns if src else None)) if self.format == "csv" else None
        if src is None or cfg is None:
            return RunRules(order)
        return RunRules(order, src.key_fields, src.deleted_field, cfg.sink.primary_key,
                        cfg.schema.on_type_conflict == "dead-letter")

    def describe(self) -> str:
        if self.file is not None:
            return str(self.file)
        return ", ".join(self.topics) if self.topics else f"topics matching {self.pattern!r}"


def _file_records(path: Path) -> Iterator[Sampled]:
    from cdcsync.errors import ConfigError
    from cdcsync.formats import Coord

    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}", hint="pass a readable file to --from-file") from None
    for i, line in enumerate(data.splitlines()):
        if line.strip():
            yield Coord(path.name, 0, i), None, line


def _options(schema_config: SchemaConfig | None, flatten: bool | None, as_string: bool | None,
             columns: list[str] | None) -> InferOptions:
    from cdcsync.schema import InferOptions

    base = InferOptions.from_config(schema_config) if schema_config is not None else InferOptions()
    declared: dict[str, Any] = dict(base.columns)  # ColumnTypes, and --column's type texts InferOptions parses
    for item in columns or []:
        name, sep, ctype = item.partition("=")
        if not sep or not name.strip():
            raise _usage(f"{item!r} is not NAME=TYPE")
        declared[name.strip()] = ctype.strip()
    return InferOptions(
        columns=declared,
        flatten_nested_columns=base.flatten_nested_columns if flatten is None else flatten,
        primitive_as_string=base.primitive_as_string if as_string is None else as_string,
    )


def _infer(src: _Source, options: InferOptions, max_records: int, timeout: float, as_run: bool
           ) -> dict[str, TableSchema]:
    """The sampled tables; `as_run`: as the run's tables (schema/stored.py), else the source tables' records."""
    from cdcsync.errors import CdcsyncError
    from cdcsync.exit_codes import ExitCode
    from cdcsync.formats import BadRecord
    from cdcsync.reporting import make_reporter
    from cdcsync.schema import SchemaInferrer, stored

    reporter = make_reporter()
    decoder = src.decoder()
    cfg = src.cfg
    one_table = cfg.sink.table_name if as_run and cfg is not None and not cfg.routes else None  # as run writes them
    inferrer = SchemaInferrer(options, masked=frozenset(m.column for m in src.masks), one_table=one_table)
    read = 0
    bad: Counter[str] = Counter()
    examples: list[str] = []
    reporter.info(f"sampling {src.describe()} ({src.format}, up to {max_records} records per partition)")
    for coord, key, value in src.records(max_records, timeout, reporter.warn):
        read += 1
        try:
            changes = decoder.parse(value, key)
        except BadRecord as e:
            bad[e.reason_code] += 1
            if len(examples) < 3:
                examples.append(f"{coord}: {e.reason_code}: {e.message}")
            continue
        for ch in changes:
            inferrer.observe(ch, coord)
    for line in examples:
        reporter.warn(f"bad record at {line}")
    for w in inferrer.warnings[:10]:
        reporter.warn(w)
    for name in inferrer.unseen_declared():
        reporter.warn(f"schema.columns.{name} is declared but no sampled record has it")
    tables, notes = stored.stored(inferrer, src.run_rules()) if as_run else (inferrer.result(), [])
    for note in notes[:10] + ([f"… and {len(notes) - 10} more notes"] if len(notes) > 10 else []):
        reporter.info(f"note: {note}")
    tables = stored.masked(tables, src.masks)
    reporter.event("sampled", records=read, bad=sum(bad.values()), bad_reasons=dict(bad),
                   skipped=dict(inferrer.skipped), filtered=src.filtered, tables=inferrer.source_tables())
    if read == 0 and src.filtered:
        raise CdcsyncError(f"no records to infer a schema from: {src.config}: source.header_filter left out all "
                           f"{src.filtered} records sampled from {src.describe()}", hint="check source.header_filter "
                           "against the records' headers", exit_code=ExitCode.TOPIC_MISSING,
                           file=str(src.config), key="source.header_filter")
    if read == 0:
        raise CdcsyncError(f"no records to infer a schema from: {src.describe()} is empty",
                           hint="produce some records first, or point at a topic that has them",
                           exit_code=ExitCode.TOPIC_MISSING)
    if not tables and bad:
        raise CdcsyncError(f"none of the {read} sampled records decodes as {src.format}",
                           hint="check source.format / --format against a record (see the warnings above)",
                           exit_code=ExitCode.BAD_RECORD, bad_reasons=dict(bad))
    return tables


def _transform_flag(sql: str | None, src: _Source) -> Transform | None:
    """--transform-sql checked as the config's [transform] sql is (exit 78 for what it refuses)."""
    if sql is None:
        return None
    from cdcsync.transform.sql import parse

    sink = src.cfg.sink if src.cfg is not None else None
    return parse(sql, key="--transform-sql", path="command line", primary_key=sink.primary_key if sink else None,
                 ordering_field=sink.ordering_field if sink else None,
                 partition_by=list(sink.partition_by) if sink else [])


_AFTER_TRANSFORM = ("table", "json", "spark-ddl")  # the outputs that show the table; the others the source


def _transformed(tables: dict[str, TableSchema], src: _Source, options: InferOptions, flag: Transform | None,
                 out: str) -> dict[str, TableSchema]:
    """The tables as the run's [transform] sql makes them (transform/types.py), for the outputs that show the
    table. Each source table goes through the transform the run applies to it: --transform-sql, else its
    [[route]]'s transform_sql (source_table matched with Python's re, which reads ordinary patterns as Java
    does), else [transform] sql."""
    from cdcsync.cli.infer_transform import transform_for
    from cdcsync.reporting import make_reporter

    reporter = make_reporter()
    chosen = {name: transform_for(name, src.cfg, flag, reporter.warn) for name in tables}
    keys = sorted({tf.key for tf in chosen.values() if tf is not None})
    if not keys:
        return tables
    if out not in _AFTER_TRANSFORM:
        what = "JSON Schema describes the topic's records" if out == "json-schema" else \
            "a [schema.columns] block declares the source's columns"
        reporter.warn(f"{what}, which {', '.join(keys)} reads: the table's columns after it are shown by the table "
                      "view, --json and -o spark-ddl")
        return tables
    from cdcsync.config.model import DEFAULT_METADATA
    from cdcsync.transform.types import project

    metadata = src.cfg.source.metadata_columns if src.cfg is not None else list(DEFAULT_METADATA)
    result = {}
    for name, table in tables.items():
        tf = chosen[name]
        if tf is None:
            result[name] = table
            continue
        p = project(table, tf, metadata, options.columns)
        if p.refused is not None:
            reporter.warn(f"{name}: run would stop on this table's changes: {p.refused.message}"
                          + (f" (fix: {p.refused.hint})" if p.refused.hint else ""))
        for c in p.columns:
            if c.spark_type is None:
                reporter.warn(f"{name}: column {c.name!r} = {c.sql} is left untyped: {c.why}")
        result[name] = p.table
    return result


def _print(tables: dict[str, TableSchema], out: str) -> None:
    from cdcsync.reporting import emit_json
    from cdcsync.schema import render

    if out == "json-schema":
        emit_json(render.json_schema(tables))
    elif out == "json":
        emit_json(render.facts(tables))
    elif out == "spark-ddl":
        typer.echo(render.spark_ddl(tables))
    elif out == "toml":
        typer.echo(render.toml_columns(tables))
    else:
        from rich.console import Console

        console = Console(file=sys.stdout, width=None if sys.stdout.isatty() else 200)
        for table in render.rich_tables(tables):
            console.print(table)
