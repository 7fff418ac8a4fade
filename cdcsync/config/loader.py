"""Load config.toml: parse, expand ${ENV}, validate against the JSON Schema, and build the typed model.

Every problem names the file and the key; unknown keys get the closest valid key; secrets are never echoed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdcsync.config.model import (
    CatalogConfig,
    Config,
    MaskConfig,
    RouteConfig,
    RunConfig,
    SchemaConfig,
    SinkConfig,
    SourceConfig,
    StorageConfig,
)
from cdcsync.config.schema import FREE_FORM
from cdcsync.config.validation import key_text, validate
from cdcsync.errors import ConfigError
from cdcsync.formats.spec import Body, format_spec, with_trait
from cdcsync.kafka import client_keys

if TYPE_CHECKING:
    from cdcsync.transform.sql import Transform

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def load_config(path: str | Path) -> Config:
    path = Path(path)
    raw = read_toml(path)
    data = _flatten_free_form(raw)
    data = _expand_env(data, path, ())
    validate(data, path)
    return _build(data, path)


def read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist", hint="pass the path of your config.toml") from None
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:  # TOML is UTF-8; say where, without echoing the bytes (a secret may be near)
        line = e.object[:e.start].count(b"\n") + 1
        raise ConfigError(f"{path}: not UTF-8 (byte 0x{e.object[e.start]:02x} on line {line})",
                          hint="save the file as UTF-8", file=str(path)) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}", hint="fix the syntax at the line shown",
                          file=str(path)) from None


def _flatten_free_form(data: dict[str, Any]) -> dict[str, Any]:
    """`[sink.options] hoodie.x.y = 1` parses as nested tables; these sections take dotted keys as written."""
    out = dict(data)
    for trail in FREE_FORM:
        parent: dict[str, Any] = out
        for part in trail[:-1]:  # a missing step leaves an empty table, which holds nothing to flatten
            parent = child if isinstance(child := parent.get(part), dict) else {}
        if not isinstance(parent.get(trail[-1]), dict):
            continue
        keep_top = frozenset({"master"}) if trail == ("spark",) else frozenset()
        parent[trail[-1]] = _dotted(parent[trail[-1]], keep_top=keep_top)
    return out


def _dotted(table: dict[str, Any], prefix: str = "", keep_top: frozenset[str] = frozenset()) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and key not in keep_top:
            flat.update(_dotted(v, f"{key}."))
        else:
            flat[key] = v
    return flat


def _expand_env(value: Any, path: Path, trail: tuple[str | int, ...]) -> Any:
    if isinstance(value, dict):
        return {k: _expand_env(v, path, (*trail, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_env(v, path, (*trail, i)) for i, v in enumerate(value)]
    if isinstance(value, str) and "${" in value:

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in os.environ:
                raise ConfigError(
                    f"{path}: {key_text(trail)} refers to ${{{name}}}, which is not set in the environment",
                    hint=f"export {name}=… before running cdcsync",
                    file=str(path), key=key_text(trail),
                )
            return os.environ[name]

        return _ENV.sub(sub, value)
    return value


def _build(d: dict[str, Any], path: Path) -> Config:
    src, sink = d["source"], d["sink"]
    run = d.get("run", {})
    schema = d.get("schema", {})
    spark = {k: str(v) for k, v in d.get("spark", {}).items()}
    props = {k: _str(v) for k, v in src.get("properties", {}).items()}
    client_keys.check(props, path)
    _refuse_unread(src, sink, bool(d.get("route")), path, run)
    source = SourceConfig(**{**{k: v for k, v in src.items() if k != "properties"}, "properties": props})
    sink_cfg = SinkConfig(**{**{k: v for k, v in sink.items() if k != "options"},
                             "options": {k: _str(v) for k, v in sink.get("options", {}).items()}})
    _check_index(sink_cfg.options, sink_cfg.partition_by, path, "sink", "sink.partition_by")
    run_cfg = RunConfig(**{"checkpoint_dir": f"{sink['path'].rstrip('/')}_cdcsync_checkpoint", **run})
    if source.startup_mode == "timestamp" and source.startup_timestamp_ms is None:
        raise ConfigError(f"{path}: startup_mode = 'timestamp' needs 'source.startup_timestamp_ms'",
                          hint="set source.startup_timestamp_ms = <epoch milliseconds>", file=str(path),
                          key="source.startup_timestamp_ms")
    if source.startup_mode == "specific-offsets" and not source.specific_offsets:
        raise ConfigError(f"{path}: startup_mode = 'specific-offsets' needs 'source.specific_offsets'",
                          hint='set source.specific_offsets = "partition:0,offset:42;partition:1,offset:300"',
                          file=str(path), key="source.specific_offsets")
    _check_kafka_addresses(source, path)
    source = _key_and_avro_settings(source, path)
    _upsert_settings(source, sink_cfg, path)
    if source.header_filter:
        from cdcsync.kafka.header_filter import parse as parse_header_filter

        try:
            parse_header_filter(source.header_filter)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e.message}", hint=e.hint, file=str(path), key="source.header_filter") from None
    routes = [_route(r, i, path) for i, r in enumerate(d.get("route", []))]
    for i, r in enumerate(routes):  # a routed table writes with [sink.options], its own options over them
        _check_index({**sink_cfg.options, **r.options}, r.partition_by, path,
                     f"route[{i}]" if "hoodie.index.type" in r.options else "sink", f"route[{i}].partition_by")
    transform = _transform(d.get("transform", {}).get("sql"), "transform.sql", sink_cfg, sink_cfg.primary_key,
                           sink_cfg.partition_by, path)
    routes = [dataclasses.replace(r, transform=_transform(
        r.transform_sql or (transform.sql if transform else None), f"route[{i}].transform_sql" if r.transform_sql
        else "transform.sql", sink_cfg, r.primary_key, r.partition_by, path)) for i, r in enumerate(routes)]
    masks = [_mask(m, i, path) for i, m in enumerate(d.get("mask", []))]
    cfg = Config(path=path, source=source, sink=sink_cfg, run=run_cfg, schema=SchemaConfig(**schema), spark=spark,
                 routes=routes, masks=masks, transform=transform)
    if "storage" in d:
        cfg = dataclasses.replace(cfg, storage=_storage(d["storage"], cfg, path))
    if "catalog" in d:
        cfg = dataclasses.replace(cfg, catalog=CatalogConfig(**d["catalog"]))
    return cfg


# keys that only one setting of another key reads: given without it, they would be accepted and ignored
_READ_ONLY_WITH = (
    ("source", "specific_offsets", "startup_mode", "specific-offsets"),
    ("source", "startup_timestamp_ms", "startup_mode", "timestamp"),
    ("source", "csv_columns", "format", "csv"),
    ("source", "csv_field_delimiter", "format", "csv"),
)


def _refuse_unread(src: dict[str, Any], sink: dict[str, Any], routed: bool, path: Path, run: dict[str, Any]) -> None:
    sections = {"source": (src, SourceConfig)}
    for section, key, by, value in _READ_ONLY_WITH:
        given, model = sections[section]
        now = given.get(by, model.__dataclass_fields__[by].default)
        if key in given and now != value:
            raise ConfigError(f"{path}: '{section}.{key}' is read only with {section}.{by} = '{value}', and "
                              f"{section}.{by} is '{now}'", file=str(path),
                              key=f"{section}.{key}", hint=f'set {by} = "{value}", or remove the key')
    fmt, dbz = src.get("format"), ("Debezium's change events", with_trait(reads_as="debezium-json"))
    for key, (events, fmts) in {"unavailable_value_placeholder": dbz, "on_truncate": dbz,
                                "on_drop_table": ("DROP TABLE events", with_trait(drop_events=True))}.items():
        if key in src and fmt not in fmts:  # read only where those events are
            raise ConfigError(f"{path}: 'source.{key}' is read only for {events} ({', '.join(fmts)}), and "
                              f"source.format is '{fmt}'", file=str(path), key=f"source.{key}", hint="remove the key")
    for section, given, key, says in (
            ("sink", sink, "unrouted", "where the tables no [[route]] names go"),
            ("run", run, "table_parallelism", "how many [[route]] tables a batch writes at once"),
            ("run", run, "on_table_failure", "what becomes of a [[route]] table whose write fails")):
        if key in given and not routed:
            raise ConfigError(f"{path}: '{section}.{key}' says {says}, and the config has no [[route]]",
                              file=str(path), key=f"{section}.{key}", hint="add [[route]] tables, or remove the key")


def _check_kafka_addresses(source: SourceConfig, path: Path) -> None:
    """The brokers and the specific offsets read as every command will read them (probe, run), here already."""
    from cdcsync.kafka.offsets import parse_specific_offsets
    from cdcsync.probe.net import parse_servers

    try:
        parse_servers(source.bootstrap_servers)
    except ValueError as e:
        raise ConfigError(f"{path}: source.bootstrap_servers: {e}", hint='list the brokers as "host1:9092,host2:9092"',
                          file=str(path), key="source.bootstrap_servers") from None
    if source.startup_mode == "specific-offsets" and source.specific_offsets:
        try:
            parse_specific_offsets(source.specific_offsets)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e.message}", hint=e.hint, file=str(path), key=e.facts["key"]) from None


def _key_and_avro_settings(source: SourceConfig, path: Path) -> SourceConfig:
    """What the Avro formats and the key need: a registry for the wire format, an .avsc file for plain Avro; a
    setting no format reads would be ignored, so it is refused. Schema files resolve against the config's folder."""
    avro = "avro-confluent" in (source.format, source.key_format)
    if avro and not source.schema_registry_url:
        raise ConfigError(f"{path}: the avro-confluent format needs 'source.schema_registry_url'", file=str(path),
                          key="source.schema_registry_url", hint='set schema_registry_url = "http://registry:8081" '
                          "(Apicurio: http://host:8080/apis/ccompat/v7)")
    given = [k for k in ("schema_registry_url", "schema_registry_user_info", "schema_registry_ca_file")
             if getattr(source, k)]
    if given and not avro:
        raise ConfigError(f"{path}: 'source.{given[0]}' is only read by the avro-confluent format, and neither "
                          "source.format nor source.key_format is avro-confluent", file=str(path),
                          key=f"source.{given[0]}", hint='set format = "avro-confluent", or remove the key')
    if source.key_fields and format_spec(source.format).body is Body.CHANGES:
        raise ConfigError(f"{path}: 'source.key_fields' takes columns from the key into plain rows; "
                          f"{source.format} row images already carry their key columns", file=str(path),
                          key="source.key_fields", hint="remove key_fields (the key still serves deletes)")
    files: dict[str, Any] = {}  # replace()'s keyword arguments
    for key, needed in (("avro_schema_file", source.format == "avro"), ("key_avro_schema_file",
                                                                         source.key_format == "avro")):
        given_file = getattr(source, key)
        side = "key_format" if key.startswith("key") else "format"
        if needed and not given_file:
            raise ConfigError(f"{path}: {side} = 'avro' needs the writer schema in 'source.{key}'", file=str(path),
                              key=f"source.{key}", hint=f'set {key} = "schemas/{side.split("_")[0]}.avsc"')
        if given_file and not needed:
            raise ConfigError(f"{path}: 'source.{key}' is read only with {side} = 'avro'", file=str(path),
                              key=f"source.{key}", hint=f'set {side} = "avro", or remove the key')
        if given_file:
            files[key] = _avsc(Path(given_file) if Path(given_file).is_absolute() else path.parent / given_file,
                               key, path)
    return dataclasses.replace(source, **files)


def _upsert_settings(source: SourceConfig, sink: SinkConfig, path: Path) -> None:
    """tombstones = "delete" and deleted_field need rows (an envelope's own delete events delete) and a key that
    names the row; refused where they could not apply, rather than left to skip or fail record by record."""
    rows, keyed = source.carries_rows(), source.keyed(sink.primary_key)
    kind = f"format = '{source.format}'" + (" (its .avsc is a Debezium envelope)" if source.format == "avro" else "")
    fix_key = ('set source.key_fields = ["id"] (the key\'s fields that name the row)' if source.format == "raw" else
               'set source.key_fields = ["id"] (columns read from the Kafka key) or sink.primary_key = ["id"] '
               "(read from the key's JSON fields)")
    problem = None
    if source.tombstones == "delete" and rows is False:
        problem = ("tombstones", f"{kind} carries its own delete events, and its tombstones follow them",
                   'remove the key (tombstones are then skipped and counted) or set tombstones = "skip"')
    elif source.tombstones == "delete" and not keyed:
        problem = ("tombstones", "a tombstone deletes the row its Kafka key names, and no key is read", fix_key)
    elif source.deleted_field and (not format_spec(source.format).named_fields or rows is False):
        problem = ("deleted_field", f"{kind}: the field marks deletes in flattened rows (json, csv, Avro rows), and "
                   "this format's records are not such rows", "remove the key: the format's own delete events delete")
    elif source.deleted_field and not keyed:
        problem = ("deleted_field", "a flagged row deletes its key, and no key is read", fix_key)
    elif source.deleted_field and source.deleted_field in (*(source.key_fields or ()), *(sink.primary_key or ()),
                                                           sink.ordering_field):
        problem = ("deleted_field", f"'{source.deleted_field}' is taken out of every row, and is also a key or "
                   "ordering column", "name the flag field only in deleted_field")
    elif source.format == "csv" and source.deleted_field and source.deleted_field not in (source.csv_columns or ()):
        problem = ("deleted_field", f"'{source.deleted_field}' is not one of source.csv_columns",
                   "add the field's name to csv_columns at its position")
    if problem:
        key, why, hint = problem
        raise ConfigError(f"{path}: 'source.{key}' cannot apply: {why}", file=str(path), key=f"source.{key}",
                          hint=hint)


def _avsc(file: Path, key: str, path: Path) -> str:
    """An .avsc file's absolute path, once it reads as an Avro schema."""
    from fastavro import parse_schema
    from fastavro.schema import SchemaParseException

    from cdcsync.formats.avro_connect import connect_schema

    try:
        text = file.read_text(encoding="utf-8")
        parse_schema(json.loads(text))
        connect_schema(text)  # and has a Kafka Connect form, which decoding needs
    except OSError as e:
        raise ConfigError(f"{path}: 'source.{key}' cannot be read: {file}: {e.strerror}", file=str(path),
                          key=f"source.{key}", hint="give the .avsc file's path, absolute or relative to the "
                          "config file") from None
    except (ValueError, SchemaParseException, TypeError, KeyError, AttributeError) as e:
        raise ConfigError(f"{path}: 'source.{key}' is not an Avro schema: {file}: {e}", file=str(path),
                          key=f"source.{key}",
                          hint="the file holds the writer schema as JSON (an .avsc file)") from None
    return str(file.resolve())


def _storage(s: dict[str, Any], cfg: Config, path: Path) -> StorageConfig:
    """[storage] serves s3a:// paths only; credentials come as a pair (or not at all: AWS's default chain)."""
    if not any(p.startswith("s3a://") for p in cfg.paths()):
        raise ConfigError(f"{path}: [storage] configures s3a:// paths, and none of sink.path, run.checkpoint_dir "
                          "and run.dead_letter_path is one", file=str(path), key="storage",
                          hint='write the table to "s3a://bucket/prefix/table", or remove [storage]')
    if ("access_key_id" in s) != ("secret_access_key" in s) or ("session_token" in s and "access_key_id" not in s):
        missing = "access_key_id" if "access_key_id" not in s else "secret_access_key"
        raise ConfigError(f"{path}: [storage] credentials need both access_key_id and secret_access_key; "
                          f"'storage.{missing}' is missing", file=str(path), key=f"storage.{missing}",
                          hint='set both from the environment (secret_access_key = "${AWS_SECRET_ACCESS_KEY}"), '
                          "or neither to use AWS's default credential chain")
    return StorageConfig(**s)


def _regex(text: str, path: Path, key: str) -> None:
    try:
        re.compile(text)
    except re.error as e:
        raise ConfigError(f"{path}: {key} = {text!r} is not a regular expression: {e}",
                          hint="escape literal dots as \\. (TOML basic strings) or use 'single quotes'",
                          file=str(path), key=key) from None


def _transform(sql: str | None, key: str, sink: SinkConfig, primary_key: list[str] | None,
               partition_by: list[str], path: Path) -> Transform | None:
    """[transform] sql (or a route's transform_sql) checked against the table it writes; None when not given."""
    if not sql:
        return None
    from cdcsync.transform.sql import parse

    return parse(sql, key=key, path=str(path), primary_key=primary_key, ordering_field=sink.ordering_field,
                 partition_by=partition_by)


def _route(r: dict[str, Any], i: int, path: Path) -> RouteConfig:
    # source_table is a Java regex (Spark's rlike): the run compiles it in the JVM (engine.routing.check_patterns);
    # Python's re would refuse valid Java (\p{Lower}, \Q…\E) and accept what Java refuses
    return RouteConfig(**{**r, "options": {k: _str(v) for k, v in _dotted(r.get("options", {})).items()}})


# Hudi's indexes that look a key up in its own partition only (a global one finds it in any)
_PARTITION_SCOPED = ("SIMPLE", "BLOOM", "BUCKET", "INMEMORY")


def _check_index(options: dict[str, str], partition_by: list[str], path: Path, section: str, where: str) -> None:
    """With partition_by, a delete that only knows its key, or a row whose partition value changed, must find the
    row in any partition: a partition-scoped index would leave the old row there."""
    index = options.get("hoodie.index.type", "").upper()
    if partition_by and index in _PARTITION_SCOPED:
        raise ConfigError(
            f"{path}: {section}.options 'hoodie.index.type' = {index!r} looks a key up in its own partition only, "
            f"and {where} is set: a key-only delete or a row moving partitions would leave the old row behind",
            file=str(path), key=f"{section}.options.hoodie.index.type",
            hint="use a global index (GLOBAL_SIMPLE, the default with partition_by; GLOBAL_BLOOM; RECORD_INDEX), or "
            "drop partition_by")


def _mask(m: dict[str, Any], i: int, path: Path) -> MaskConfig:
    """Resolve the mask's secret from the environment now, so a missing variable stops before Spark starts."""
    import base64
    import binascii

    where = f"mask[{i}] (column {m['column']!r}, {m['method']})"
    need = {"hash": "salt_env", "encrypt": "key_env"}.get(m["method"])
    for other in ("salt_env", "key_env", "value"):
        allowed = {"hash": "salt_env", "encrypt": "key_env", "redact": "value"}[m["method"]]
        if other in m and other != allowed:
            raise ConfigError(f"{path}: {where} does not take '{other}'", file=str(path), key=f"mask[{i}].{other}",
                              hint={"hash": "hash takes salt_env", "encrypt": "encrypt takes key_env",
                                    "redact": "redact takes an optional value"}[m["method"]])
    if m.get("tables"):
        _regex(m["tables"], path, f"mask[{i}].tables")
    secret = None
    if need:
        var = m.get(need)
        if not var:
            raise ConfigError(f"{path}: {where} needs '{need}', the environment variable holding the "
                              f"{'salt' if need == 'salt_env' else 'key'}", file=str(path), key=f"mask[{i}].{need}",
                              hint=f'set {need} = "CDCSYNC_MASK_{m["method"].upper()}" and export that variable')
        secret = os.environ.get(var)
        if not secret:
            raise ConfigError(f"{path}: {where}: environment variable {var} is not set (or empty)",
                              hint=f"export {var}=… before running cdcsync", file=str(path),
                              key=f"mask[{i}].{need}", variable=var)
        if need == "key_env":
            try:
                n = len(base64.b64decode(secret, validate=True))
            except (binascii.Error, ValueError):
                n = -1
            if n not in (16, 24, 32):  # the value itself is never echoed
                raise ConfigError(f"{path}: {where}: {var} must hold a base64 AES key of 16, 24 or 32 bytes",
                                  hint=f"export {var}=$(openssl rand -base64 32)", file=str(path),
                                  key=f"mask[{i}].key_env", variable=var)
    return MaskConfig(**m, secret=secret)


def _str(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)
